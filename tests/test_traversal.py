"""Issue 4: ``traverse_graph`` on a real Neo4j, through ``GraphStore.traverse`` with a ManualClock.

Every answer is also checked for internal consistency (``consistent``): each path starts at a
start entity, ends at an entity whose depth is the path's length, and every hop of it is a
relation of the answer walked in the requested direction.  The per-hop fan-out cap is checked on
a hub with 10,000 neighbours, seeded with one create_entities and one create_relations call.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta
from typing import Any

import pydantic
import pytest
import pytest_asyncio

from kg_neo4j.clock import ManualClock
from kg_neo4j.models import (
    MAX_TRAVERSE_FANOUT,
    MAX_TRAVERSE_LIMIT,
    EntityIn,
    RelationIn,
    RelationInvalidate,
    Traversal,
    TraverseIn,
)
from kg_neo4j.store import GraphStore

# --------------------------------------------------------------------------- helpers


def entities(*names: str) -> list[EntityIn]:
    return [EntityIn(name=n, entityType="node", observations=[f"about {n}"]) for n in names]


def r_in(a: str, b: str, rtype: str = "next", **kw: Any) -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": rtype, **kw})


def req(start: str | list[str], **kw: Any) -> TraverseIn:
    """A traversal request; a lone start name is the one-item list the tool's schema asks for."""
    return TraverseIn.model_validate({"start": [start] if isinstance(start, str) else start, **kw})


def depths(tr: Traversal) -> dict[str, int]:
    return {e.name: e.depth for e in tr.entities}


def reached(tr: Traversal) -> set[str]:
    return {e.name for e in tr.entities if e.depth > 0}


def rel_keys(tr: Traversal) -> list[tuple[str, str, str]]:
    return sorted((r.from_, r.to, r.relationType) for r in tr.relations)


def path_of(tr: Traversal, name: str) -> tuple[list[str], list[str]]:
    found = [(p.nodes, p.relationTypes) for p in tr.paths if p.nodes[-1] == name]
    assert len(found) == 1, f"expected one path to {name}, got {found}"
    return found[0]


def consistent(tr: Traversal, direction: str = "both") -> None:
    """Checks every traversal answer must pass, whatever the graph."""
    d = depths(tr)
    assert len(d) == len(tr.entities), "an entity is listed twice"
    assert all(d[s] == 0 for s in tr.start), "start entities have depth 0"
    assert {n for n, k in d.items() if k == 0} == set(tr.start)
    assert all(k >= 1 for n, k in d.items() if n not in tr.start)
    # one path per reached entity
    assert sorted(p.nodes[-1] for p in tr.paths) == sorted(n for n in d if n not in tr.start)
    walked = {(r.from_, r.to, r.relationType) for r in tr.relations}
    for p in tr.paths:
        assert p.nodes[0] in tr.start, f"path {p.nodes} does not begin at a start entity"
        assert len(p.relationTypes) == len(p.nodes) - 1
        assert d[p.nodes[-1]] == len(p.relationTypes), f"depth of {p.nodes[-1]} != path length"
        assert len(set(p.nodes)) == len(p.nodes), f"path {p.nodes} repeats a node"
        for i, (u, v, t) in enumerate(zip(p.nodes[:-1], p.nodes[1:], p.relationTypes, strict=True)):
            assert u in d and v in d, f"path {p.nodes} leaves the answer"
            assert d[u] == i and d[v] == i + 1, f"path {p.nodes} is not a shortest (BFS) path"
            allowed = {"out": [(u, v, t)], "in": [(v, u, t)], "both": [(u, v, t), (v, u, t)]}[direction]
            assert any(k in walked for k in allowed), (
                f"hop {u}-[{t}]-{v} of {p.nodes} is not among the relations"
            )
    for r in tr.relations:
        assert r.from_ in d and r.to in d, f"relation {r} touches an entity not in the answer"
        assert 0.0 <= r.weight <= 1.0
        assert r.createdAt is not None and r.validFrom is not None
    assert set(tr.cappedAt) <= set(d), "cappedAt names entities of the answer"
    if tr.cappedAt:
        assert tr.truncated, "a cap that cut the answer must set truncated"


# --------------------------------------------------------------------------- depth and direction

CHAIN = ["A", "B", "C", "D", "E", "F"]


async def _chain(store: GraphStore) -> None:
    await store.create_entities(entities(*CHAIN))
    await store.create_relations([r_in(a, b, f"step {a}{b}") for a, b in zip(CHAIN, CHAIN[1:], strict=False)])


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4])
async def test_depth_on_a_chain(store, max_depth):
    await _chain(store)
    tr = await store.traverse(req("A", direction="out", maxDepth=max_depth))
    consistent(tr, "out")
    assert tr.start == ["A"]
    assert depths(tr) == {n: i for i, n in enumerate(CHAIN[: max_depth + 1])}
    assert [e.name for e in tr.entities] == CHAIN[: max_depth + 1], "start first, then by depth"
    assert rel_keys(tr) == [
        (a, b, f"step {a}{b}") for a, b in zip(CHAIN[:max_depth], CHAIN[1 : max_depth + 1], strict=True)
    ]
    last = CHAIN[max_depth]
    assert path_of(tr, last) == (
        CHAIN[: max_depth + 1],
        [f"step {a}{b}" for a, b in zip(CHAIN[:max_depth], CHAIN[1 : max_depth + 1], strict=True)],
    )
    assert tr.truncated is False and tr.cappedAt == []
    # entities come with their observations and type
    assert all(e.observations == [f"about {e.name}"] and e.entityType == "node" for e in tr.entities)


async def test_default_depth_is_two_and_depth_over_four_rejected(store):
    await _chain(store)
    tr = await store.traverse(req("A", direction="out"))
    assert depths(tr) == {"A": 0, "B": 1, "C": 2}
    for bad in (5, 0, -1, 100):
        with pytest.raises(pydantic.ValidationError):
            req("A", maxDepth=bad)
    assert depths(await store.traverse(req("A", direction="out", maxDepth=4))) == {
        "A": 0,
        "B": 1,
        "C": 2,
        "D": 3,
        "E": 4,
    }, "F at depth 5 is never reached"


async def test_direction_out_in_both(store):
    await _chain(store)
    out = await store.traverse(req("C", direction="out", maxDepth=2))
    consistent(out, "out")
    assert depths(out) == {"C": 0, "D": 1, "E": 2}
    assert path_of(out, "E") == (["C", "D", "E"], ["step CD", "step DE"])

    inn = await store.traverse(req("C", direction="in", maxDepth=2))
    consistent(inn, "in")
    assert depths(inn) == {"C": 0, "B": 1, "A": 2}
    assert path_of(inn, "A") == (["C", "B", "A"], ["step BC", "step AB"])
    # relations keep their real direction even when walked backwards
    assert rel_keys(inn) == [("A", "B", "step AB"), ("B", "C", "step BC")]

    both = await store.traverse(req("C", direction="both", maxDepth=2))
    consistent(both, "both")
    assert depths(both) == {"C": 0, "B": 1, "D": 1, "A": 2, "E": 2}
    assert rel_keys(both) == [
        ("A", "B", "step AB"),
        ("B", "C", "step BC"),
        ("C", "D", "step CD"),
        ("D", "E", "step DE"),
    ]
    # 'both' is the default
    assert depths(await store.traverse(req("C", maxDepth=1))) == {"C": 0, "B": 1, "D": 1}

    # the ends of the chain
    assert depths(await store.traverse(req("A", direction="in", maxDepth=4))) == {"A": 0}
    assert depths(await store.traverse(req("F", direction="out", maxDepth=4))) == {"F": 0}
    with pytest.raises(pydantic.ValidationError):
        req("A", direction="sideways")


# --------------------------------------------------------------------------- filters


async def test_relation_types_filter(store):
    await store.create_entities(entities("A", "B", "C", "D", "E"))
    await store.create_relations(
        [
            r_in("A", "B", "knows"),
            r_in("A", "C", "likes"),
            r_in("B", "D", "knows"),
            r_in("C", "E", "knows"),
            r_in("B", "E", "works with"),
        ]
    )
    tr = await store.traverse(req("A", direction="out", relationTypes=["knows"]))
    consistent(tr, "out")
    assert depths(tr) == {"A": 0, "B": 1, "D": 2}
    assert {r.relationType for r in tr.relations} == {"knows"}

    tr = await store.traverse(req("A", direction="out", relationTypes=["likes", "knows"]))
    consistent(tr, "out")
    assert depths(tr) == {"A": 0, "B": 1, "C": 1, "D": 2, "E": 2}
    assert "works with" not in {r.relationType for r in tr.relations}

    tr = await store.traverse(req("A", direction="out", relationTypes=["works with"]))
    assert depths(tr) == {"A": 0} and tr.relations == [] and tr.paths == []

    tr = await store.traverse(req("B", direction="out", maxDepth=1, relationTypes=["works with"]))
    assert depths(tr) == {"B": 0, "E": 1}
    assert path_of(tr, "E") == (["B", "E"], ["works with"])

    # no filter: every type
    tr = await store.traverse(req("A", direction="out"))
    assert depths(tr) == {"A": 0, "B": 1, "C": 1, "D": 2, "E": 2}


async def test_min_weight_filter(store):
    await store.create_entities(entities("A", "B", "C", "D"))
    await store.create_relations(
        [r_in("A", "B", weight=0.9), r_in("A", "C", weight=0.3), r_in("B", "D", weight=0.2)]
    )
    assert depths(await store.traverse(req("A", direction="out"))) == {"A": 0, "B": 1, "C": 1, "D": 2}
    tr = await store.traverse(req("A", direction="out", minWeight=0.5))
    consistent(tr, "out")
    assert depths(tr) == {"A": 0, "B": 1}
    assert [(r.to, r.weight) for r in tr.relations] == [("B", 0.9)]
    # inclusive bound
    assert depths(await store.traverse(req("A", direction="out", minWeight=0.3))) == {"A": 0, "B": 1, "C": 1}
    assert depths(await store.traverse(req("A", direction="out", minWeight=0.2))) == {
        "A": 0,
        "B": 1,
        "C": 1,
        "D": 2,
    }
    assert depths(await store.traverse(req("A", direction="out", minWeight=1.0))) == {"A": 0}
    for bad in (-0.1, 1.1):
        with pytest.raises(pydantic.ValidationError):
            req("A", minWeight=bad)


async def test_as_of_walks_the_past(store, clock):
    t0 = clock.now()
    await store.create_entities(entities("A", "B", "C"))
    await store.create_relations([r_in("A", "B", "knew"), r_in("B", "C", "knew")])
    t1 = clock.advance(days=1)
    await store.invalidate_relations(
        [RelationInvalidate.model_validate({"from": "A", "to": "B", "relationType": "knew"})]
    )
    await store.create_entities(entities("Late"))
    await store.create_relations([r_in("A", "Late", "met")])
    clock.advance(days=1)

    now = await store.traverse(req("A", direction="out"))
    consistent(now, "out")
    assert depths(now) == {"A": 0, "Late": 1}, "the invalidated edge is not walked now"

    past = await store.traverse(req("A", direction="out", asOf=(t0 + timedelta(hours=1)).isoformat()))
    consistent(past, "out")
    assert depths(past) == {"A": 0, "B": 1, "C": 2}, (
        "before invalidation the edge is walked; Late did not exist"
    )
    ab = [r for r in past.relations if (r.from_, r.to) == ("A", "B")]
    # exact history: as of then the relation was open, so it shows no validUntil, as a walk of now
    # showed then; the close is in entity_history
    assert len(ab) == 1 and ab[0].validUntil is None, "the relation shows the validUntil it had then"

    # exactly at the invalidation instant the edge is no longer valid (Late, created at t1, already is)
    assert depths(await store.traverse(req("A", direction="out", asOf=t1.isoformat()))) == {"A": 0, "Late": 1}
    # before anything existed: not even the start
    nothing = await store.traverse(req("A", asOf=(t0 - timedelta(days=1)).isoformat()))
    assert nothing.start == [] and nothing.entities == [] and nothing.relations == [] and nothing.paths == []
    # a start created after asOf is not a start
    assert (await store.traverse(req("Late", asOf=(t0 + timedelta(hours=1)).isoformat()))).entities == []


# --------------------------------------------------------------------------- limit, starts, paths


async def test_limit_truncates(store):
    leaves = [f"N{i}" for i in range(5)]
    await store.create_entities(entities("A", *leaves, "Deep"))
    await store.create_relations(
        [r_in("A", n, weight=(i + 1) / 10) for i, n in enumerate(leaves)] + [r_in("N0", "Deep")]
    )
    full = await store.traverse(req("A", direction="out"))
    consistent(full, "out")
    assert reached(full) == {*leaves, "Deep"} and full.truncated is False

    tr = await store.traverse(req("A", direction="out", maxDepth=1, limit=3))
    assert [e.name for e in tr.entities] == ["A", "N4", "N3", "N2"], "every reached entity is listed"
    consistent(tr, "out")
    assert len(reached(tr)) == 3 and tr.truncated is True and tr.cappedAt == []
    assert reached(tr) == {"N4", "N3", "N2"}, "the strongest relations are kept first"
    assert len(tr.paths) == 3 and len(tr.relations) == 3

    exact = await store.traverse(req("A", direction="out", maxDepth=1, limit=5))
    assert reached(exact) == set(leaves) and exact.truncated is False

    deeper = await store.traverse(req("A", direction="out", maxDepth=2, limit=5))
    consistent(deeper, "out")
    assert reached(deeper) == set(leaves) and deeper.truncated is True, "Deep was reachable but cut"

    with pytest.raises(pydantic.ValidationError):
        req("A", limit=0)
    with pytest.raises(pydantic.ValidationError):
        req("A", limit=MAX_TRAVERSE_LIMIT + 1)


async def test_multiple_start_nodes(store):
    await store.create_entities(entities("A", "X", "B", "Y", "Z"))
    await store.create_relations(
        [r_in("A", "B"), r_in("X", "Y"), r_in("B", "Y"), r_in("A", "X"), r_in("Y", "Z")]
    )
    tr = await store.traverse(req(["A", "X"], direction="out", maxDepth=2))
    consistent(tr, "out")
    assert tr.start == ["A", "X"]
    assert depths(tr) == {"A": 0, "X": 0, "B": 1, "Y": 1, "Z": 2}
    assert path_of(tr, "Y") == (["X", "Y"], ["next"]), "Y is one hop from X, not two from A"
    assert path_of(tr, "Z") == (["X", "Y", "Z"], ["next", "next"])
    assert path_of(tr, "B") == (["A", "B"], ["next"])

    # duplicates and unknown names among the starts
    tr = await store.traverse(req(["A", "A", "Nobody"], direction="out", maxDepth=1))
    consistent(tr, "out")
    assert tr.start == ["A"]
    assert depths(tr) == {"A": 0, "B": 1, "X": 1}
    assert (await store.traverse(req(["Nobody"]))).entities == []


async def test_paths_on_a_diamond_and_cycle(store):
    # A -> B -> D, A -> C -> D, D -> A (cycle), D -> E
    await store.create_entities(entities("A", "B", "C", "D", "E"))
    await store.create_relations(
        [
            r_in("A", "B", "ab"),
            r_in("A", "C", "ac"),
            r_in("B", "D", "bd"),
            r_in("C", "D", "cd"),
            r_in("D", "A", "da"),
            r_in("D", "E", "de"),
        ]
    )
    tr = await store.traverse(req("A", direction="out", maxDepth=4))
    consistent(tr, "out")
    assert depths(tr) == {"A": 0, "B": 1, "C": 1, "D": 2, "E": 3}
    nodes, types = path_of(tr, "D")
    assert (nodes, types) in ((["A", "B", "D"], ["ab", "bd"]), (["A", "C", "D"], ["ac", "cd"]))
    e_nodes, e_types = path_of(tr, "E")
    assert e_nodes == [*nodes, "E"] and e_types == [*types, "de"]
    assert len(tr.paths) == 4

    both = await store.traverse(req("E", direction="both", maxDepth=4))
    consistent(both, "both")
    assert depths(both) == {"E": 0, "D": 1, "A": 2, "B": 2, "C": 2}
    assert path_of(both, "A") == (["E", "D", "A"], ["de", "da"])


async def test_relations_carry_their_properties(store, clock):
    t0 = clock.now()
    await store.create_entities(entities("A", "B"))
    await store.create_relations(
        [r_in("A", "B", "cites", weight=0.7, reasoning="footnote 3", source="paper.pdf")]
    )
    tr = await store.traverse(req("A"))
    assert len(tr.relations) == 1
    r = tr.relations[0]
    assert (r.from_, r.to, r.relationType, r.weight, r.reasoning, r.source) == (
        "A",
        "B",
        "cites",
        0.7,
        "footnote 3",
        "paper.pdf",
    )
    assert r.createdAt is not None and r.validFrom is not None and r.validUntil is None
    assert datetime.fromisoformat(r.createdAt) == t0 and datetime.fromisoformat(r.validFrom) == t0


# --------------------------------------------------------------------------- the 10,000-neighbour hub

HUB = "hub"
N_LEAVES = 10_000


def leaf(i: int) -> str:
    return f"leaf-{i:05d}"


def leaf_weight(i: int) -> float:
    # the strongest relations go to the LAST names, so weight order and name order disagree
    return i / N_LEAVES


@pytest_asyncio.fixture(scope="module")
async def hub_store(driver, neo4j_info):
    namespace = f"test-traversal-hub-{uuid.uuid4().hex[:8]}"
    store = GraphStore(driver, database=neo4j_info.database, namespace=namespace, clock=ManualClock())
    await store.create_entities([EntityIn(name=HUB, entityType="hub", observations=["the centre"])])
    created = await store.create_entities(
        [EntityIn(name=leaf(i), entityType="leaf", observations=[]) for i in range(N_LEAVES)]
    )
    assert len(created) == N_LEAVES
    rels = await store.create_relations(
        [r_in(HUB, leaf(i), "links", weight=leaf_weight(i)) for i in range(N_LEAVES)]
    )
    assert len(rels) == N_LEAVES
    yield store
    await driver.execute_query(
        "MATCH (n {namespace: $ns}) DETACH DELETE n", ns=namespace, database_=neo4j_info.database
    )


def strongest(k: int) -> set[str]:
    return {leaf(i) for i in range(N_LEAVES - k, N_LEAVES)}


async def test_hub_seeded(hub_store, sync_driver, neo4j_info):
    records, _, _ = sync_driver.execute_query(
        "MATCH (:KgNode {namespace: $ns, name: $hub})-[r:links]->(m:Entity) RETURN count(r) AS c, "
        "max(r.weight) AS hi, min(r.weight) AS lo",
        ns=hub_store.namespace,
        hub=HUB,
        database_=neo4j_info.database,
    )
    assert (records[0]["c"], records[0]["hi"], records[0]["lo"]) == (N_LEAVES, leaf_weight(N_LEAVES - 1), 0.0)


async def test_hub_fanout_default_cap(hub_store):
    t = time.monotonic()
    tr = await hub_store.traverse(req(HUB, maxDepth=1))
    elapsed = time.monotonic() - t
    consistent(tr, "both")
    assert len(reached(tr)) == 50, "default fanout is 50"
    assert reached(tr) == strongest(50), "the strongest relations are kept"
    assert tr.truncated is True and tr.cappedAt == [HUB]
    assert len(tr.relations) == 50 and len(tr.paths) == 50
    assert min(r.weight for r in tr.relations) == leaf_weight(N_LEAVES - 50)
    # strongest first in the answer
    assert [e.name for e in tr.entities[1:]] == [leaf(i) for i in range(N_LEAVES - 1, N_LEAVES - 51, -1)]
    assert tr.entities[0].name == HUB and tr.entities[0].observations == ["the centre"]
    assert elapsed < 10, f"a capped hop over 10,000 neighbours took {elapsed:.1f} s"


@pytest.mark.parametrize("fanout", [1, 10, MAX_TRAVERSE_FANOUT])
async def test_hub_fanout_parameter(hub_store, fanout):
    tr = await hub_store.traverse(
        req(HUB, direction="out", maxDepth=1, fanout=fanout, limit=MAX_TRAVERSE_LIMIT)
    )
    consistent(tr, "out")
    assert reached(tr) == strongest(fanout)
    assert tr.truncated is True and tr.cappedAt == [HUB]


@pytest.mark.unit
async def test_hub_fanout_bounds_rejected():
    for bad in (0, MAX_TRAVERSE_FANOUT + 1):
        with pytest.raises(pydantic.ValidationError):
            req(HUB, fanout=bad)


async def test_hub_not_capped_when_filters_leave_few(hub_store):
    tr = await hub_store.traverse(req(HUB, maxDepth=1, minWeight=leaf_weight(N_LEAVES - 10)))
    consistent(tr)
    assert reached(tr) == strongest(10) and tr.truncated is False and tr.cappedAt == []

    inn = await hub_store.traverse(req(HUB, direction="in", maxDepth=2))
    assert depths(inn) == {HUB: 0} and inn.truncated is False and inn.cappedAt == []

    assert reached(await hub_store.traverse(req(HUB, maxDepth=1, relationTypes=["other"]))) == set()


async def test_hub_capped_at_second_hop(hub_store):
    tr = await hub_store.traverse(req(leaf(0), direction="both", maxDepth=2))
    consistent(tr, "both")
    assert depths(tr)[HUB] == 1
    second = {n for n, d in depths(tr).items() if d == 2}
    assert second == strongest(50), "the hub's fan-out is capped on the second hop too"
    assert tr.truncated is True and tr.cappedAt == [HUB]
    assert path_of(tr, leaf(N_LEAVES - 1)) == ([leaf(0), HUB, leaf(N_LEAVES - 1)], ["links", "links"])


async def test_hub_limit_below_fanout(hub_store):
    tr = await hub_store.traverse(req(HUB, maxDepth=1, limit=20))
    assert len(tr.entities) == 21, f"hub + 20 reached entities, got {[e.name for e in tr.entities]}"
    consistent(tr)
    assert reached(tr) == strongest(20) and tr.truncated is True

    tr = await hub_store.traverse(req(HUB, maxDepth=1, fanout=MAX_TRAVERSE_FANOUT, limit=100))
    assert len(tr.entities) == 101, f"hub + 100 reached entities, got {len(tr.entities)}"
    consistent(tr)
    assert reached(tr) == strongest(100) and tr.truncated is True
