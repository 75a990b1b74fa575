"""Issue 4: weighted, time-aware relations on a real Neo4j.

Store-level tests drive a ``GraphStore`` whose clock is a ``ManualClock`` (fixture ``clock``):
time is moved, never slept.  What the database really holds is checked with Cypher through
``sync_driver`` (``type(r)``, properties, counts).  The last tests go through a real MCP
session (stdio and HTTP) in the default and the strict ``reference`` profile.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic
import pytest

from kg_neo4j.errors import KgError, NotFoundError, ValidationError
from kg_neo4j.models import (
    EntityIn,
    ObservationAdd,
    RelationIn,
    RelationInvalidate,
    RelationUpdate,
    TraverseIn,
)
from support.kg import ent, err, names, ok, rel, rel_keys, session, text_of

# --------------------------------------------------------------------------- helpers


def entities(*names_: str, observations: list[str] | None = None) -> list[EntityIn]:
    return [EntityIn(name=n, entityType="thing", observations=list(observations or [])) for n in names_]


def r_in(a: str, b: str, rtype: str = "knows", **kw: Any) -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": rtype, **kw})


def r_upd(a: str, b: str, rtype: str = "knows", **kw: Any) -> RelationUpdate:
    return RelationUpdate.model_validate({"from": a, "to": b, "relationType": rtype, **kw})


def r_inv(a: str, b: str, rtype: str = "knows", **kw: Any) -> RelationInvalidate:
    return RelationInvalidate.model_validate({"from": a, "to": b, "relationType": rtype, **kw})


def cypher(sync_driver: Any, info: Any, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = sync_driver.execute_query(query, parameters_=params, database_=info.database)
    return [r.data() for r in records]


def native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


def db_relations(sync_driver: Any, info: Any, ns: str) -> list[dict[str, Any]]:
    """Every user relationship of namespace ``ns`` (observation edges excluded), with its real type."""
    rows = cypher(
        sync_driver,
        info,
        """
        MATCH (a:KgNode {namespace: $ns})-[r]->(b:KgNode)
        RETURN a.name AS from, b.name AS to, type(r) AS type, properties(r) AS props,
               valueType(r.created_at) AS created_type, valueType(r.valid_from) AS from_type,
               valueType(r.valid_until) AS until_type, valueType(r.weight) AS weight_type
        ORDER BY r.created_at, a.name, b.name, type(r)""",
        ns=ns,
    )
    for row in rows:
        row["props"] = {k: native(v) for k, v in row["props"].items()}
    return rows


def copies(rows: list[dict[str, Any]], a: str, b: str, rtype: str) -> list[dict[str, Any]]:
    return [r["props"] for r in rows if (r["from"], r["to"], r["type"]) == (a, b, rtype)]


def graph_keys(graph: Any) -> list[tuple[str, str, str]]:
    return sorted((r.from_, r.to, r.relationType) for r in graph.relations)


def graph_names(graph: Any) -> list[str]:
    return sorted(e.name for e in graph.entities)


def observations_of(graph: Any, name: str) -> list[str] | None:
    for e in graph.entities:
        if e.name == name:
            return list(e.observations)
    return None


# Types that only work if the product passes them as real, dynamic relationship types
# (no string-built Cypher): spaces, dashes, quotes, backticks, non-ASCII, reserved-looking words.
ODD_TYPES = [
    "knows",
    "works with",
    "co-author-of",
    "it's",
    'says "hi"',
    "back`tick`s",
    "``",
    "Zoë visited 東京",
    "🚀 launches",
    "MATCH (n) DETACH DELETE n",
    "lower_case",
    "HAS_OBSERVATION",
]


# --------------------------------------------------------------------------- relationship types


async def test_relationship_types_in_db_equal_api_strings(store, sync_driver, neo4j_info, namespace):
    await store.create_entities(entities("A", "B", "C", observations=["keep me"]))
    created = await store.create_relations([r_in("A", "B", t) for t in ODD_TYPES])
    assert sorted(r.relationType for r in created) == sorted(ODD_TYPES)

    rows = db_relations(sync_driver, neo4j_info, namespace)
    assert sorted(r["type"] for r in rows) == sorted(ODD_TYPES), (
        "type(r) must be exactly the API relationType"
    )
    assert {(r["from"], r["to"]) for r in rows} == {("A", "B")}
    # nothing was written outside this namespace's two nodes (e.g. by an injected statement)
    assert cypher(
        sync_driver, neo4j_info, "MATCH (n:KgNode {namespace: $ns}) RETURN count(n) AS c", ns=namespace
    ) == [{"c": 3}]

    graph = await store.read_graph()
    assert graph_keys(graph) == sorted(("A", "B", t) for t in ODD_TYPES)
    # a user type named like the internal observation edge does not disturb observations
    assert observations_of(graph, "A") == ["keep me"]
    assert observations_of(graph, "B") == ["keep me"]
    assert graph_keys(await store.open_nodes(["B"])) == sorted(("A", "B", t) for t in ODD_TYPES)
    assert graph_keys(await store.search_nodes("keep")) == sorted(("A", "B", t) for t in ODD_TYPES)

    # and every relation tool addresses them by the same string
    changed = await store.update_relations([r_upd("A", "B", "back`tick`s", weight=0.5)])
    assert [(c.relationType, c.weight) for c in changed] == [("back`tick`s", pytest.approx(0.75))]
    closed = await store.invalidate_relations([r_inv("A", "B", "Zoë visited 東京")])
    assert [c.relationType for c in closed] == ["Zoë visited 東京"]
    await store.delete_relations([r_in("A", "B", 'says "hi"'), r_in("A", "B", "HAS_OBSERVATION")])
    rows = db_relations(sync_driver, neo4j_info, namespace)
    remaining = sorted(r["type"] for r in rows)
    assert remaining == sorted(t for t in ODD_TYPES if t not in ('says "hi"', "HAS_OBSERVATION"))
    assert copies(rows, "A", "B", "back`tick`s")[0]["weight"] == pytest.approx(0.75)
    assert copies(rows, "A", "B", "Zoë visited 東京")[0]["valid_until"] is not None
    assert observations_of(await store.open_nodes(["A"]), "A") == ["keep me"]


# --------------------------------------------------------------------------- weights


async def test_weight_bounds_and_default(store, clock, sync_driver, neo4j_info, namespace):
    for bad in (-0.1, 1.1):
        with pytest.raises(pydantic.ValidationError):
            r_in("A", "B", weight=bad)
        with pytest.raises(pydantic.ValidationError):
            r_upd("A", "B", weight=bad)

    await store.create_entities(entities("A", "B"))
    created = await store.create_relations(
        [
            r_in("A", "B", "zero", weight=0),
            r_in("A", "B", "one", weight=1),
            r_in("A", "B", "half", weight=0.5),
            r_in("A", "B", "default"),
        ]
    )
    assert {r.relationType: r.weight for r in created} == {
        "zero": 0.0,
        "one": 1.0,
        "half": 0.5,
        "default": 1.0,
    }

    rows = db_relations(sync_driver, neo4j_info, namespace)
    weights = {r["type"]: r["props"]["weight"] for r in rows}
    assert weights == {"zero": 0.0, "one": 1.0, "half": 0.5, "default": 1.0}
    assert all(isinstance(w, float) for w in weights.values()), weights
    assert {r["weight_type"] for r in rows} == {"FLOAT NOT NULL"}

    # every relationship carries the documented properties
    t0 = clock.now()
    for row in rows:
        props = row["props"]
        assert props["created_at"] == t0
        assert props["valid_from"] == t0
        assert "valid_until" not in props or props["valid_until"] is None
        assert row["created_type"].startswith("ZONED DATETIME"), row["created_type"]
        assert row["from_type"].startswith("ZONED DATETIME"), row["from_type"]

    # reasoning and source are stored when given
    await store.create_relations(
        [r_in("A", "B", "cited", weight=0.3, reasoning="paper says so", source="doi:1")]
    )
    cited = copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "cited")
    assert len(cited) == 1
    assert (cited[0]["weight"], cited[0]["reasoning"], cited[0]["source"]) == (0.3, "paper says so", "doi:1")


async def test_types_and_weights_through_mcp(neo4j_info, namespace, sync_driver):
    async with session("stdio", neo4j_info, namespace) as s:
        await ok(s, "create_entities", {"entities": [ent("A"), ent("B")]})
        # relation types with spaces, quotes and backticks become real relationship types
        created = await ok(
            s, "create_relations", {"relations": [rel("A", "B", "works with"), rel("A", "B", "it's `odd`")]}
        )
        assert rel_keys(created) == [("A", "B", "it's `odd`"), ("A", "B", "works with")]
        assert sorted(r["type"] for r in db_relations(sync_driver, neo4j_info, namespace)) == [
            "it's `odd`",
            "works with",
        ]
        assert rel_keys(await ok(s, "read_graph")) == [("A", "B", "it's `odd`"), ("A", "B", "works with")]
        await ok(
            s, "delete_relations", {"relations": [rel("A", "B", "works with"), rel("A", "B", "it's `odd`")]}
        )
        assert db_relations(sync_driver, neo4j_info, namespace) == []

        # weight out of [0, 1] is an error and the whole batch writes nothing
        for bad in (-0.1, 1.1):
            msg = await err(
                s,
                "create_relations",
                {"relations": [rel("A", "B", "ok"), {**rel("A", "B", "bad"), "weight": bad}]},
            )
            assert "weight" in msg
        assert db_relations(sync_driver, neo4j_info, namespace) == [], "a rejected batch writes nothing"
        await ok(
            s,
            "create_relations",
            {
                "relations": [
                    {**rel("A", "B", "zero"), "weight": 0},
                    {**rel("A", "B", "one"), "weight": 1},
                    rel("A", "B", "default"),
                ]
            },
        )
        rows = db_relations(sync_driver, neo4j_info, namespace)
        assert {r["type"]: r["props"]["weight"] for r in rows} == {"zero": 0.0, "one": 1.0, "default": 1.0}
        assert {r["weight_type"] for r in rows} == {"FLOAT NOT NULL"}, "JSON integers are stored as floats"
        await err(s, "update_relations", {"relations": [{**rel("A", "B", "zero"), "weight": 1.5}]})
        assert db_relations(sync_driver, neo4j_info, namespace) == rows


async def test_update_averages_weight_with_new_evidence(store, clock, sync_driver, neo4j_info, namespace):
    """docs/memorymesh.md#edge-weights: 1.0 -> (update 0.6) 0.8 -> (update 0.4) 0.6 -> (update 1.0) 0.8."""
    await store.create_entities(entities("A", "B"))
    await store.create_relations([r_in("A", "B")])

    def stored() -> dict[str, Any]:
        got = copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "knows")
        assert len(got) == 1, got
        return got[0]

    assert stored()["weight"] == 1.0
    for new, expected in ((0.6, 0.8), (0.4, 0.6), (1.0, 0.8)):
        clock.advance(hours=1)
        changed = await store.update_relations([r_upd("A", "B", weight=new)])
        assert len(changed) == 1
        assert changed[0].weight == pytest.approx(expected)
        assert stored()["weight"] == pytest.approx(expected)

    # without a weight the weight stays; reasoning and source change
    clock.advance(hours=1)
    changed = await store.update_relations([r_upd("A", "B", reasoning="second source agrees", source="s2")])
    assert changed[0].weight == pytest.approx(0.8)
    assert (changed[0].reasoning, changed[0].source) == ("second source agrees", "s2")
    props = stored()
    assert props["weight"] == pytest.approx(0.8)
    assert (props["reasoning"], props["source"]) == ("second source agrees", "s2")

    # validity can be updated too
    until = clock.now() + timedelta(days=30)
    changed = await store.update_relations([r_upd("A", "B", validUntil=until)])
    assert changed[0].validUntil is not None
    assert datetime.fromisoformat(changed[0].validUntil) == until
    assert stored()["valid_until"] == until
    assert graph_keys(await store.read_graph()) == [("A", "B", "knows")], "still valid until then"
    assert graph_keys(await store.read_graph(as_of=until + timedelta(seconds=1))) == []
    changed = await store.update_relations([r_upd("A", "B", clearValidUntil=True)])
    assert changed[0].validUntil is None
    assert stored().get("valid_until") is None


# --------------------------------------------------------------------------- as of


async def test_as_of_three_moments(store, clock, sync_driver, neo4j_info, namespace):
    """Create at t0, add an observation at t1, invalidate the relation at t2; read at four moments."""
    t0 = clock.now()
    await store.create_entities(
        [
            EntityIn(name="Alice", entityType="person", observations=["first fact"]),
            EntityIn(name="Bob", entityType="person", observations=[]),
        ]
    )
    await store.create_relations([r_in("Alice", "Bob", "knows")])

    t1 = clock.advance(days=1)
    await store.add_observations([ObservationAdd(entityName="Alice", contents=["later fact"])])
    await store.create_entities([EntityIn(name="Carol", entityType="person", observations=["carol fact"])])

    t2 = clock.advance(days=1)
    closed = await store.invalidate_relations([r_inv("Alice", "Bob", "knows")])
    assert len(closed) == 1 and datetime.fromisoformat(closed[0].validUntil or "") == t2

    clock.advance(days=1)  # "now" is after everything

    # -- before creation: nothing
    before = t0 - timedelta(days=1)
    for graph in (
        await store.read_graph(as_of=before),
        await store.open_nodes(["Alice", "Bob", "Carol"], as_of=before),
        await store.search_nodes("fact", as_of=before),
    ):
        assert graph.entities == [] and graph.relations == []

    # -- between creation and the added observation: the relation, only the first observation, no Carol
    early = t0 + timedelta(hours=1)
    graph = await store.read_graph(as_of=early)
    assert graph_names(graph) == ["Alice", "Bob"]
    assert observations_of(graph, "Alice") == ["first fact"]
    assert graph_keys(graph) == [("Alice", "Bob", "knows")]
    opened = await store.open_nodes(["Alice", "Carol"], as_of=early)
    assert graph_names(opened) == ["Alice"] and observations_of(opened, "Alice") == ["first fact"]
    assert graph_keys(opened) == [("Alice", "Bob", "knows")]
    assert (await store.search_nodes("later fact", as_of=early)).entities == []
    assert graph_names(await store.search_nodes("first", as_of=early)) == ["Alice"]

    # -- after the observation, before invalidation: both observations, Carol, the relation
    mid = t1 + timedelta(hours=1)
    graph = await store.read_graph(as_of=mid)
    assert graph_names(graph) == ["Alice", "Bob", "Carol"]
    assert observations_of(graph, "Alice") == ["first fact", "later fact"]
    assert graph_keys(graph) == [("Alice", "Bob", "knows")]
    searched = await store.search_nodes("later fact", as_of=mid)
    assert graph_names(searched) == ["Alice"] and graph_keys(searched) == [("Alice", "Bob", "knows")]
    assert graph_keys(await store.open_nodes(["Bob"], as_of=mid)) == [("Alice", "Bob", "knows")]

    # -- after invalidation: entities and observations stay, the relation is gone
    late = t2 + timedelta(hours=1)
    for graph in (await store.read_graph(as_of=late), await store.read_graph()):
        assert graph_names(graph) == ["Alice", "Bob", "Carol"]
        assert observations_of(graph, "Alice") == ["first fact", "later fact"]
        assert graph.relations == []
    assert (await store.open_nodes(["Alice", "Bob"], as_of=late)).relations == []
    assert (await store.open_nodes(["Alice", "Bob"])).relations == []
    assert (await store.search_nodes("fact")).relations == []

    # the exact boundaries: visible at t2 - 1 µs, gone at t2 (valid_until is exclusive)
    assert graph_keys(await store.read_graph(as_of=t2 - timedelta(microseconds=1))) == [
        ("Alice", "Bob", "knows")
    ]
    assert (await store.read_graph(as_of=t2)).relations == []
    assert graph_keys(await store.read_graph(as_of=t0)) == [("Alice", "Bob", "knows")]

    # paged read_graph honours asOf as well
    page = await store.read_graph(limit=10, as_of=early)
    assert graph_names(page) == ["Alice", "Bob"] and graph_keys(page) == [("Alice", "Bob", "knows")]
    page = await store.read_graph(limit=10, as_of=late)
    assert graph_names(page) == ["Alice", "Bob", "Carol"] and page.relations == []

    # history really is in the database
    rows = copies(db_relations(sync_driver, neo4j_info, namespace), "Alice", "Bob", "knows")
    assert len(rows) == 1 and rows[0]["valid_until"] == t2 and rows[0]["created_at"] == t0


async def test_as_of_honours_explicit_validity_window(store, clock):
    t0 = clock.now()
    await store.create_entities(entities("A", "B"))
    start, end = t0 + timedelta(days=10), t0 + timedelta(days=20)
    await store.create_relations(
        [r_in("A", "B", "leases", validFrom=start.isoformat(), validUntil=end.isoformat())]
    )
    assert (await store.read_graph()).relations == [], "not valid yet"
    assert (await store.read_graph(as_of=start - timedelta(seconds=1))).relations == []
    assert graph_keys(await store.read_graph(as_of=start)) == [("A", "B", "leases")]
    assert graph_keys(await store.read_graph(as_of=t0 + timedelta(days=15))) == [("A", "B", "leases")]
    assert (await store.read_graph(as_of=end)).relations == []
    clock.set(t0 + timedelta(days=15))
    assert graph_keys(await store.read_graph()) == [("A", "B", "leases")], "valid now that the clock moved"


# --------------------------------------------------------------------------- history, dedupe, deletes


async def test_invalidation_keeps_history_and_recreate_makes_fresh_copy(
    store, clock, sync_driver, neo4j_info, namespace
):
    t0 = clock.now()
    await store.create_entities(entities("A", "B"))
    assert len(await store.create_relations([r_in("A", "B", weight=0.9, reasoning="met at work")])) == 1
    # dedupe against the still-valid copy
    assert await store.create_relations([r_in("A", "B", weight=0.2)]) == []
    assert len(copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "knows")) == 1

    t1 = clock.advance(days=1)
    await store.invalidate_relations([r_inv("A", "B")])
    rows = copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "knows")
    assert len(rows) == 1, "invalidate must not delete"
    assert rows[0]["valid_until"] == t1
    assert (rows[0]["weight"], rows[0]["reasoning"]) == (0.9, "met at work")
    assert (await store.read_graph()).relations == []

    # invalidating again: nothing currently valid -> error
    with pytest.raises(NotFoundError):
        await store.invalidate_relations([r_inv("A", "B")])

    t2 = clock.advance(days=1)
    again = await store.create_relations([r_in("A", "B", weight=0.4)])
    assert [(r.from_, r.to, r.relationType) for r in again] == [("A", "B", "knows")]
    rows = copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "knows")
    assert len(rows) == 2, rows
    closed = [r for r in rows if r.get("valid_until") is not None]
    open_ = [r for r in rows if r.get("valid_until") is None]
    assert len(closed) == 1 and len(open_) == 1
    assert (closed[0]["created_at"], closed[0]["valid_until"], closed[0]["weight"]) == (t0, t1, 0.9)
    assert (open_[0]["created_at"], open_[0]["valid_from"], open_[0]["weight"]) == (t2, t2, 0.4)

    # now shows the fresh copy once; the past shows the old one
    now_graph = await store.read_graph()
    assert [(r.from_, r.to, r.relationType, r.weight) for r in now_graph.relations] == [
        ("A", "B", "knows", 0.4)
    ]
    past = await store.read_graph(as_of=t0 + timedelta(hours=1))
    assert [(r.from_, r.to, r.relationType, r.weight) for r in past.relations] == [("A", "B", "knows", 0.9)]
    assert (await store.read_graph(as_of=t1 + timedelta(hours=1))).relations == []

    # update touches only the valid copy
    await store.update_relations([r_upd("A", "B", weight=0.8)])
    rows = copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "knows")
    assert sorted(r["weight"] for r in rows) == pytest.approx([0.6, 0.9])

    # delete_relations really deletes: every copy, open and closed
    await store.delete_relations([r_in("A", "B")])
    assert db_relations(sync_driver, neo4j_info, namespace) == []
    assert (await store.read_graph(as_of=t0 + timedelta(hours=1))).relations == []
    assert graph_names(await store.read_graph()) == ["A", "B"], "entities survive delete_relations"


async def test_create_dedupes_against_not_yet_valid_copy(store, clock, sync_driver, neo4j_info, namespace):
    """A copy that starts in the future has not been closed: creating the same relation again
    must not store a second, overlapping copy (a later read would list the relation twice)."""
    t0 = clock.now()
    start = (t0 + timedelta(days=5)).isoformat()
    await store.create_entities(entities("A", "B"))
    assert len(await store.create_relations([r_in("A", "B", "joins", validFrom=start)])) == 1
    assert await store.create_relations([r_in("A", "B", "joins", validFrom=start)]) == []
    assert len(copies(db_relations(sync_driver, neo4j_info, namespace), "A", "B", "joins")) == 1
    later = await store.read_graph(as_of=t0 + timedelta(days=6))
    assert graph_keys(later) == [("A", "B", "joins")], "the relation is listed once"


async def test_validity_window_stays_ordered_on_invalidate_and_update(
    store, clock, sync_driver, neo4j_info, namespace
):
    """create_relations rejects validUntil <= validFrom; invalidate and update must not build such a
    window either (the relation would silently vanish from every asOf read, history included)."""
    t0 = clock.now()
    with pytest.raises(pydantic.ValidationError):
        r_in("A", "B", validFrom=t0.isoformat(), validUntil=(t0 - timedelta(days=1)).isoformat())
    await store.create_entities(entities("A", "B"))
    await store.create_relations([r_in("A", "B")])
    clock.advance(days=1)
    before = db_relations(sync_driver, neo4j_info, namespace)
    too_early = (t0 - timedelta(days=1)).isoformat()
    with pytest.raises((KgError, pydantic.ValidationError)):
        await store.invalidate_relations([r_inv("A", "B", validUntil=too_early)])
    with pytest.raises((KgError, pydantic.ValidationError)):
        await store.update_relations([r_upd("A", "B", validUntil=too_early)])
    with pytest.raises((KgError, pydantic.ValidationError)):
        await store.update_relations(
            [
                r_upd(
                    "A",
                    "B",
                    validFrom=(t0 + timedelta(days=3)).isoformat(),
                    validUntil=(t0 + timedelta(days=2)).isoformat(),
                )
            ]
        )
    assert db_relations(sync_driver, neo4j_info, namespace) == before
    assert graph_keys(await store.read_graph(as_of=t0 + timedelta(hours=1))) == [("A", "B", "knows")]


async def test_update_and_invalidate_missing_relation_change_nothing(
    store, clock, sync_driver, neo4j_info, namespace
):
    await store.create_entities(entities("A", "B", "C"))
    await store.create_relations([r_in("A", "B", weight=1.0), r_in("B", "C", "likes", weight=0.5)])
    before = db_relations(sync_driver, neo4j_info, namespace)
    clock.advance(hours=1)

    missing_cases = [
        r_upd("A", "C"),  # no such relation
        r_upd("A", "B", "likes"),  # wrong type
        r_upd("B", "A"),  # wrong direction
        r_upd("A", "Nobody"),  # unknown entity
    ]
    for missing in missing_cases:
        with pytest.raises(NotFoundError) as info:
            await store.update_relations([r_upd("A", "B", weight=0.0, reasoning="changed"), missing])
        assert missing.to in str(info.value) and missing.relationType in str(info.value)
        with pytest.raises(NotFoundError):
            await store.invalidate_relations(
                [r_inv("A", "B"), r_inv(missing.from_, missing.to, missing.relationType)]
            )
        # missing first, valid second: same
        with pytest.raises(NotFoundError):
            await store.update_relations([missing, r_upd("B", "C", "likes", weight=0.0)])
        with pytest.raises(NotFoundError):
            await store.invalidate_relations(
                [r_inv(missing.from_, missing.to, missing.relationType), r_inv("B", "C", "likes")]
            )
    assert db_relations(sync_driver, neo4j_info, namespace) == before, "a failed batch must change nothing"
    assert (
        cypher(
            sync_driver,
            neo4j_info,
            "MATCH (n:KgNode {namespace: $ns, name: 'Nobody'}) RETURN n",
            ns=namespace,
        )
        == []
    ), "a failed batch must not create placeholders"

    # an invalidated relation is not "current": updating it is an error too and leaves it closed
    await store.invalidate_relations([r_inv("B", "C", "likes")])
    closed = db_relations(sync_driver, neo4j_info, namespace)
    with pytest.raises(NotFoundError):
        await store.update_relations([r_upd("A", "B", weight=0.0), r_upd("B", "C", "likes", weight=0.0)])
    assert db_relations(sync_driver, neo4j_info, namespace) == closed


async def test_delete_entities_removes_relationships_both_directions(
    store, clock, sync_driver, neo4j_info, namespace
):
    await store.create_entities(entities("Hub", "Out", "In", "Other", observations=["o"]))
    await store.create_relations(
        [
            r_in("Hub", "Out", "points to"),
            r_in("In", "Hub", "points to"),
            r_in("Hub", "Hub", "self"),
            r_in("Out", "Other", "keeps"),
            r_in("Hub", "Ghost", "refers"),  # a placeholder end
        ]
    )
    clock.advance(hours=1)
    await store.invalidate_relations([r_inv("In", "Hub", "points to")])
    await store.create_relations([r_in("In", "Hub", "points to", weight=0.5)])  # closed + open copy
    assert len(db_relations(sync_driver, neo4j_info, namespace)) == 6

    assert await store.delete_entities(["Hub"]) == 1
    rows = db_relations(sync_driver, neo4j_info, namespace)
    assert [(r["from"], r["to"], r["type"]) for r in rows] == [("Out", "Other", "keeps")]
    left = cypher(
        sync_driver,
        neo4j_info,
        """
        MATCH (n:KgNode {namespace: $ns}) RETURN n.name AS name ORDER BY name""",
        ns=namespace,
    )
    assert [r["name"] for r in left] == ["In", "Other", "Out"], "Hub and its orphan placeholder are gone"
    dangling = cypher(
        sync_driver,
        neo4j_info,
        """
        MATCH (o:Observation {namespace: $ns}) WHERE NOT EXISTS { (:Entity)-[:HAS_OBSERVATION]->(o) }
        RETURN count(o) AS c""",
        ns=namespace,
    )
    assert dangling == [{"c": 0}], "the entity's observations go with it"
    graph = await store.read_graph()
    assert graph_names(graph) == ["In", "Other", "Out"]
    assert graph_keys(graph) == [("Out", "Other", "keeps")]
    past = await store.read_graph(as_of=clock.now() - timedelta(minutes=30))
    assert graph_keys(past) == [("Out", "Other", "keeps")], "history of a deleted entity is deleted too"


async def test_created_at_is_the_clock_time(store, clock, sync_driver, neo4j_info, namespace):
    t0 = clock.now()
    await store.create_entities(
        [
            EntityIn(name="A", entityType="t", observations=["a1", "a2"]),
            EntityIn(name="B", entityType="t", observations=[]),
        ]
    )
    t1 = clock.advance(minutes=5)
    await store.add_observations([ObservationAdd(entityName="A", contents=["a3"])])
    t2 = clock.advance(minutes=5)
    created = await store.create_relations([r_in("A", "B"), r_in("A", "Placeholder end", "mentions")])
    assert len(created) == 2

    ents = cypher(
        sync_driver,
        neo4j_info,
        """
        MATCH (n:KgNode {namespace: $ns}) RETURN n.name AS name, n.created_at AS at,
        valueType(n.created_at) AS vt ORDER BY name""",
        ns=namespace,
    )
    assert [(r["name"], native(r["at"])) for r in ents] == [("A", t0), ("B", t0), ("Placeholder end", t2)]
    assert all(r["vt"].startswith("ZONED DATETIME") for r in ents), ents

    obs = cypher(
        sync_driver,
        neo4j_info,
        """
        MATCH (:KgNode {namespace: $ns, name: 'A'})-[:HAS_OBSERVATION]->(o:Observation)
        RETURN o.text AS text, o.created_at AS at ORDER BY o.seq""",
        ns=namespace,
    )
    assert [(r["text"], native(r["at"])) for r in obs] == [("a1", t0), ("a2", t0), ("a3", t1)]

    rows = db_relations(sync_driver, neo4j_info, namespace)
    assert [(r["to"], r["props"]["created_at"], r["props"]["valid_from"]) for r in rows] == [
        ("B", t2, t2),
        ("Placeholder end", t2, t2),
    ]

    # the API reports the same instants
    graph = await store.read_graph()
    assert {r.to: datetime.fromisoformat(r.createdAt or "") for r in graph.relations} == {
        "B": t2,
        "Placeholder end": t2,
    }
    assert {r.to: datetime.fromisoformat(r.validFrom or "") for r in graph.relations} == {
        "B": t2,
        "Placeholder end": t2,
    }


# --------------------------------------------------------------------------- through MCP


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


async def test_mcp_default_profile_temporal_tools(transport, neo4j_info, namespace, sync_driver):
    async with session(transport, neo4j_info, namespace) as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        for tool in ("traverse_graph", "update_relations", "invalidate_relations"):
            assert tool in listed, f"{tool} must be listed in the default profile"
            assert listed[tool].output_schema is not None
        for tool in ("read_graph", "search_nodes", "open_nodes"):
            assert "asOf" in listed[tool].input_schema["properties"], f"{tool} must take asOf"

        await ok(
            s,
            "create_entities",
            {
                "entities": [
                    ent("Alice", "person", ["likes tea"]),
                    ent("Bob", "person"),
                    ent("Carol", "person"),
                ]
            },
        )
        await ok(
            s, "create_relations", {"relations": [rel("Alice", "Bob", "knows"), rel("Bob", "Carol", "knows")]}
        )
        between = datetime.now(UTC)

        # update_relations: averaged weight, structured content
        result = await s.call_tool(
            "update_relations",
            {"relations": [{**rel("Alice", "Bob", "knows"), "weight": 0.6, "reasoning": "seen together"}]},
        )
        assert not result.is_error, text_of(result)
        sc = result.structured_content
        assert sc is not None and json.loads(text_of(result)) == sc
        assert len(sc["relations"]) == 1
        changed = sc["relations"][0]
        assert (changed["from"], changed["to"], changed["relationType"]) == ("Alice", "Bob", "knows")
        assert changed["weight"] == pytest.approx(0.8) and changed["reasoning"] == "seen together"
        assert changed["createdAt"] is not None and changed["validUntil"] is None

        # traverse_graph
        # start is an array (a lone string is a type error: no coercion, docs/input-validation.md#input-validation-and-limits)
        lone = await s.call_tool("traverse_graph", {"start": "Alice", "direction": "out", "maxDepth": 2})
        assert lone.is_error and "start" in text_of(lone), text_of(lone)
        result = await s.call_tool("traverse_graph", {"start": ["Alice"], "direction": "out", "maxDepth": 2})
        assert not result.is_error, text_of(result)
        tr = result.structured_content
        assert tr is not None and json.loads(text_of(result)) == tr
        assert tr["start"] == ["Alice"]
        assert [(e["name"], e["depth"]) for e in tr["entities"]] == [("Alice", 0), ("Bob", 1), ("Carol", 2)]
        assert tr["entities"][0]["observations"] == ["likes tea"]
        assert sorted((r["from"], r["to"], r["weight"]) for r in tr["relations"]) == [
            ("Alice", "Bob", pytest.approx(0.8)),
            ("Bob", "Carol", 1.0),
        ]
        assert {"nodes": ["Alice", "Bob", "Carol"], "relationTypes": ["knows", "knows"]} in tr["paths"]
        assert tr["truncated"] is False and tr["cappedAt"] == []
        assert "maxDepth" in await err(s, "traverse_graph", {"start": ["Alice"], "maxDepth": 5})
        assert await err(s, "traverse_graph", {"start": ["Alice"], "direction": "sideways"})

        # invalidate_relations: structured content with validUntil; history readable with asOf
        result = await s.call_tool("invalidate_relations", {"relations": [rel("Alice", "Bob", "knows")]})
        assert not result.is_error, text_of(result)
        inv = result.structured_content
        assert inv is not None and json.loads(text_of(result)) == inv
        assert [(r["from"], r["to"], r["relationType"]) for r in inv["relations"]] == [
            ("Alice", "Bob", "knows")
        ]
        assert inv["relations"][0]["validUntil"] is not None
        assert datetime.fromisoformat(inv["relations"][0]["validUntil"]) > between

        assert rel_keys(await ok(s, "read_graph")) == [("Bob", "Carol", "knows")]
        assert rel_keys(await ok(s, "read_graph", {"asOf": _iso(between)})) == [
            ("Alice", "Bob", "knows"),
            ("Bob", "Carol", "knows"),
        ]
        assert rel_keys(await ok(s, "open_nodes", {"names": ["Alice"], "asOf": _iso(between)})) == [
            ("Alice", "Bob", "knows")
        ]
        assert rel_keys(await ok(s, "open_nodes", {"names": ["Alice"]})) == []
        assert rel_keys(await ok(s, "search_nodes", {"query": "tea", "asOf": _iso(between)})) == [
            ("Alice", "Bob", "knows")
        ]
        assert rel_keys(await ok(s, "search_nodes", {"query": "tea"})) == []
        # before anything existed: empty
        long_ago = "2000-01-01T00:00:00Z"
        assert await ok(s, "read_graph", {"asOf": long_ago}) == {"entities": [], "relations": []}
        assert await ok(s, "search_nodes", {"query": "tea", "asOf": long_ago}) == {
            "entities": [],
            "relations": [],
        }
        assert await ok(s, "open_nodes", {"names": ["Alice"], "asOf": long_ago}) == {
            "entities": [],
            "relations": [],
        }
        # traverse asOf: the invalidated edge is walked in the past only
        now_tr = (
            await s.call_tool("traverse_graph", {"start": ["Alice"], "direction": "out"})
        ).structured_content
        assert [e["name"] for e in now_tr["entities"]] == ["Alice"]
        past_tr = (
            await s.call_tool(
                "traverse_graph", {"start": ["Alice"], "direction": "out", "asOf": _iso(between)}
            )
        ).structured_content
        assert [e["name"] for e in past_tr["entities"]] == ["Alice", "Bob", "Carol"]

        # bad asOf values are tool errors
        assert "asOf" in await err(s, "read_graph", {"asOf": "yesterday"})
        assert "asOf" in await err(s, "open_nodes", {"names": ["Alice"], "asOf": "2026-01-01T00:00:00"})

        # update/invalidate of a missing relation: error, nothing changed
        before = db_relations(sync_driver, neo4j_info, namespace)
        await err(
            s,
            "update_relations",
            {
                "relations": [
                    {**rel("Bob", "Carol", "knows"), "weight": 0.0},
                    {**rel("Carol", "Bob", "knows"), "weight": 0.0},
                ]
            },
        )
        await err(
            s, "invalidate_relations", {"relations": [rel("Bob", "Carol", "knows"), rel("X", "Y", "knows")]}
        )
        assert db_relations(sync_driver, neo4j_info, namespace) == before


async def test_mcp_reference_profile_hides_temporal_tools(transport, neo4j_info, namespace):
    from importlib import resources

    reference = {
        t["name"]: t
        for t in json.loads(resources.files("kg_neo4j.server").joinpath("reference_tools.json").read_text())
    }
    async with session(transport, neo4j_info, namespace, "--tools", "reference") as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert sorted(listed) == sorted(reference)
        for tool in ("traverse_graph", "update_relations", "invalidate_relations"):
            assert tool not in listed
            assert "Unknown tool" in await err(s, tool, {"relations": [], "start": ["A"]})
        for name, tool in listed.items():
            assert tool.input_schema == reference[name]["inputSchema"], f"{name}: not the reference's schema"
            assert "asOf" not in json.dumps(tool.input_schema)

        await ok(s, "create_entities", {"entities": [ent("A"), ent("B")]})
        await ok(s, "create_relations", {"relations": [rel("A", "B")]})
        # asOf is not part of the strict profile: it is ignored, not honoured
        graph = await ok(s, "read_graph", {"asOf": "2000-01-01T00:00:00Z"})
        assert names(graph) == ["A", "B"] and rel_keys(graph) == [("A", "B", "knows")]


@pytest.mark.unit
def test_traverse_model_rejects_depth_over_cap() -> None:
    with pytest.raises(pydantic.ValidationError):
        TraverseIn.model_validate({"start": ["A"], "maxDepth": 5})
    assert TraverseIn.model_validate({"start": ["A"]}).maxDepth == 2


# --------------------------------------------------------------------------- validity bounds


async def test_a_relation_that_already_ended_is_refused(store, clock) -> None:  # type: ignore[no-untyped-def]
    past = clock.now() - timedelta(days=1)
    with pytest.raises(ValidationError, match="already ended"):
        await store.create_relations(
            [r_in("A", "B", validFrom=(past - timedelta(days=9)).isoformat(), validUntil=past.isoformat())]
        )
    assert (await store.read_graph()).relations == []


async def test_invalidate_never_extends_validity(store, clock) -> None:  # type: ignore[no-untyped-def]
    end = clock.now() + timedelta(days=1)
    await store.create_relations([r_in("A", "B", validUntil=end.isoformat())])
    changed = await store.invalidate_relations(
        [r_inv("A", "B", validUntil=(clock.now() + timedelta(days=30)).isoformat())]
    )
    assert changed[0].validUntil == end.isoformat()
