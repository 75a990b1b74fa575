"""The namespace's write order (each observation's ``turn``) and search_memory's turn-context re-rank.

docs/recall.md#recall-search_memory: the observations add_observations writes are numbered in the order they are
written, across entities and calls; search_memory re-scores its best candidates with the question's cosine against each candidate
averaged with the turn written just before it (a reply is found through the question it answers).
"""

from __future__ import annotations

import asyncio
import math

import pytest

from kg_neo4j.errors import NotFoundError
from kg_neo4j.fusion import FusionWeights, turn_context
from kg_neo4j.models import EntityIn, ObservationAdd
from kg_neo4j.store import GraphStore
from support.servers import Neo4jInfo, server_env, stdio_session
from support.stores import with_fusion


def turns_of(sync_driver, ns: str) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    records, _, _ = sync_driver.execute_query(
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN e.name AS name, o.text AS text, "
        "o.turn AS turn ORDER BY o.turn",
        ns=ns,
    )
    return [(r["name"], r["text"], r["turn"]) for r in records]


def counter_of(sync_driver, ns: str) -> int | None:  # type: ignore[no-untyped-def]
    records, _, _ = sync_driver.execute_query(
        "OPTIONAL MATCH (m:KgMeta {key: 'turns:' + $ns}) RETURN m.turn_next AS n", ns=ns
    )
    return records[0]["n"]


def adds(*pairs: tuple[str, str]) -> list[ObservationAdd]:
    return [ObservationAdd(entityName=who, contents=[text]) for who, text in pairs]


async def two_speakers(store: GraphStore) -> None:
    await store.create_entities(
        [
            EntityIn(name="Ann", entityType="person", observations=[]),
            EntityIn(name="Ben", entityType="person", observations=[]),
        ]
    )


async def test_a_dialogue_keeps_its_order_across_speakers(store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    await two_speakers(store)
    assert counter_of(sync_driver, store.namespace) is None  # entities without observations take no turns
    await store.add_observations(adds(("Ann", "a1"), ("Ben", "b1"), ("Ann", "a2"), ("Ben", "b2")))
    await store.add_observations(adds(("Ben", "b3"), ("Ann", "a3")))
    assert turns_of(sync_driver, store.namespace) == [
        ("Ann", "a1", 0),
        ("Ben", "b1", 1),
        ("Ann", "a2", 2),
        ("Ben", "b2", 3),
        ("Ben", "b3", 4),
        ("Ann", "a3", 5),
    ]
    assert counter_of(sync_driver, store.namespace) == 6


async def test_create_entities_takes_no_turns(store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    """create_entities lists each entity's observations apart, so a call has no order across speakers
    to keep: its observations get no turn (and its cost stays that of the plain create path)."""
    await store.create_entities(
        [
            EntityIn(name="X", entityType="t", observations=["x1", "x2"]),
            EntityIn(name="Y", entityType="t", observations=["y1"]),
        ]
    )
    await store.add_observations(adds(("Y", "y2"), ("X", "x3")))
    assert sorted(turns_of(sync_driver, store.namespace), key=lambda t: (t[2] is None, t[2] or 0, t[1])) == [
        ("Y", "y2", 0),
        ("X", "x3", 1),
        ("X", "x1", None),
        ("X", "x2", None),
        ("Y", "y1", None),
    ]
    assert counter_of(sync_driver, store.namespace) == 2


@pytest.mark.parametrize("call", ["repeat", "known"])
async def test_texts_written_once_keep_the_order(store: GraphStore, sync_driver, call: str) -> None:  # type: ignore[no-untyped-def]
    """A text given twice, or one the entity already has, is written once: the others keep their order
    (a skipped text leaves a gap, never a reordering)."""
    await two_speakers(store)
    if call == "known":
        await store.add_observations(adds(("Ann", "hello")))
        await store.add_observations(adds(("Ann", "hello"), ("Ben", "hi"), ("Ann", "bye")))
        want = [("Ann", "hello", 0), ("Ben", "hi", 2), ("Ann", "bye", 3)]
    else:
        await store.add_observations(adds(("Ann", "hello"), ("Ben", "hi"), ("Ann", "hello"), ("Ann", "bye")))
        want = [("Ann", "hello", 0), ("Ben", "hi", 1), ("Ann", "bye", 3)]
    assert turns_of(sync_driver, store.namespace) == want


async def test_a_refused_call_takes_no_turns(store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    await two_speakers(store)
    await store.add_observations(adds(("Ann", "a1")))
    with pytest.raises(NotFoundError):
        await store.add_observations(adds(("Ben", "b1"), ("Nobody", "n1")))
    assert counter_of(sync_driver, store.namespace) == 1
    assert turns_of(sync_driver, store.namespace) == [("Ann", "a1", 0)]


async def test_namespaces_count_apart(store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    other = GraphStore(
        store.driver, database=store.database, namespace=store.namespace + "-b", clock=store.clock
    )
    for s in (store, other):
        await s.create_entities([EntityIn(name="Ann", entityType="person", observations=[])])
        await s.add_observations(adds(("Ann", "one"), ("Ann", "two")))
    assert [t[2] for t in turns_of(sync_driver, store.namespace)] == [0, 1]
    assert [t[2] for t in turns_of(sync_driver, other.namespace)] == [0, 1]


async def test_concurrent_writers_never_share_a_turn(store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    await store.create_entities(
        [EntityIn(name=f"P{i}", entityType="person", observations=[]) for i in range(6)]
    )
    await asyncio.gather(
        *(store.add_observations(adds(*((f"P{i}", f"p{i}-{k}") for k in range(5)))) for i in range(6))
    )
    rows = turns_of(sync_driver, store.namespace)
    assert sorted(t[2] for t in rows) == list(range(30))
    for i in range(6):  # each call's texts are consecutive, in their order
        mine = [t[2] for t in rows if t[0] == f"P{i}"]
        assert mine == list(range(mine[0], mine[0] + 5))


@pytest.mark.unit
@pytest.mark.parametrize(
    ("own", "prev", "pair", "want"),
    [
        (0.5, None, None, 0.5),  # no previous turn: the candidate's own cosine
        (0.4, 0.4, 1.0, 0.4),  # the same vector twice: unchanged
        (0.6, 0.0, 0.0, 0.6 / math.sqrt(2)),  # orthogonal and unrelated: halved in the sum, scaled by |v + p|
        (0.1, 0.9, 0.2, 1.0 / math.sqrt(2.4)),
    ],
)
def test_turn_context_is_the_cosine_of_the_averaged_vector(
    own: float, prev: float | None, pair: float | None, want: float
) -> None:
    assert turn_context(own, prev, pair) == pytest.approx(want)


@pytest.mark.unit
def test_turn_context_against_vectors() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    q, v, p = (x / np.linalg.norm(x) for x in rng.standard_normal((3, 16)))
    avg = (v + p) / np.linalg.norm(v + p)
    assert turn_context(float(q @ v), float(q @ p), float(v @ p)) == pytest.approx(float(q @ avg))


def fused(*scores: tuple[str, int | None, float]) -> dict:  # type: ignore[type-arg]
    """Hits as score_channels leaves them: (name, seq or None for an entity hit, score)."""
    from kg_neo4j.fusion import Hit

    return {
        (n, q): Hit(
            n,
            "person",
            None if q is None else f"{n}{q}",
            q,
            score=sc,
            oid=None if q is None else f"id-{n}{q}",
        )
        for n, q, sc in scores
    }


@pytest.mark.unit
def test_the_head_is_the_best_observations_only() -> None:
    from kg_neo4j.fusion import rerank_head

    hits = fused(("A", 0, 3.0), ("B", None, 2.5), ("A", 1, 2.0), ("B", 0, 1.0))
    weights = FusionWeights(rerank_depth=3)
    assert [h.oid for h in rerank_head(hits, weights)] == ["id-A0", "id-A1"]  # B0 is 4th; B is an entity hit
    assert rerank_head(hits, FusionWeights(turn_context=0)) == []


@pytest.mark.unit
def test_the_re_rank_adds_a_share_of_the_top_score() -> None:
    from kg_neo4j.fusion import rerank_by_context, rerank_head

    hits = fused(("A", 0, 2.0), ("A", 1, 1.8), ("B", 0, 1.0), ("B", None, 1.5))
    head = rerank_head(hits, FusionWeights())
    rerank_by_context(hits, head, {"id-A0": 0.2, "id-A1": 0.3, "id-B0": 0.6}, FusionWeights())
    # min-max over the head: A0 0, A1 0.25, B0 1; times turn_context (0.3) x the best score (2.0)
    assert FusionWeights().turn_context == 0.3
    assert {k: round(h.score, 6) for k, h in hits.items()} == {
        ("A", 0): 2.0,
        ("A", 1): 1.95,
        ("B", 0): 1.6,
        ("B", None): 1.5,
    }
    assert hits[("B", 0)].channels["turn"] == 1.0


@pytest.mark.unit
@pytest.mark.parametrize("context", [{}, {"id-A0": 0.5}, {"id-A0": 0.5, "elsewhere": 0.9}])
def test_too_little_context_changes_nothing(context: dict[str, float]) -> None:
    from kg_neo4j.fusion import rerank_by_context, rerank_head

    hits = fused(("A", 0, 2.0), ("A", 1, 1.8))
    rerank_by_context(hits, rerank_head(hits, FusionWeights()), context, FusionWeights())
    assert [h.score for h in hits.values()] == [2.0, 1.8]


# A reply that names nothing the question asks about, after the other speaker's question that does.
DIALOGUE = [
    ("Maya", "Morning! I finally finished painting the spare room last night."),
    ("Tom", "Nice, what colour did you go with in the end?"),
    ("Maya", "A pale sage green, it looks calm."),
    ("Tom", "Did you ever get round to visiting the flat on Mill Road that the agent sent you?"),
    ("Maya", "Yes, on Saturday. Honestly, it was way too far from everything, I'd spend hours on buses."),
    ("Tom", "My sister is coming to stay next week, she wants to see the castle."),
    ("Maya", "The castle tours on Sunday mornings are the best ones."),
    ("Tom", "I have been running every day before work this month."),
    ("Maya", "I'm reading a novel about a lighthouse keeper, it's quite slow."),
    ("Tom", "We should try the new ramen place near the station."),
    ("Maya", "Our cat knocked the plant pot off the windowsill again."),
    ("Tom", "The football match got cancelled because of the storm."),
]
QUESTION = "What was wrong with the flat on Mill Road?"
REPLY = DIALOGUE[4][1]


async def write_dialogue(store: GraphStore) -> None:
    await store.create_entities(
        [EntityIn(name=n, entityType="person", observations=[]) for n in ("Maya", "Tom")]
    )
    await store.add_observations(adds(*DIALOGUE))


def rank_of(hits: list, text: str) -> int | None:  # type: ignore[type-arg]
    observations = [h.observation for h in hits]
    return observations.index(text) + 1 if text in observations else None


async def test_a_reply_is_found_through_the_question_it_answers(semantic_store: GraphStore) -> None:
    await write_dialogue(semantic_store)
    off = with_fusion(semantic_store, turn_context=0)
    without = (await off.search_memory(QUESTION, limit=10)).hits
    with_context = (await semantic_store.search_memory(QUESTION, limit=10)).hits
    before, after = rank_of(without, REPLY), rank_of(with_context, REPLY)
    assert after is not None and before is not None
    assert after < before, (before, after)


async def test_the_re_rank_reads_the_stored_vectors(semantic_store: GraphStore, sync_driver) -> None:  # type: ignore[no-untyped-def]
    """The statement's cosines are those of the stored vectors of the candidate and the turn before it."""
    import numpy as np

    from kg_neo4j.store.hybrid_search import mentioned

    await write_dialogue(semantic_store)
    records, _, _ = sync_driver.execute_query(
        "MATCH (o:Observation {namespace: $ns}) RETURN elementId(o) AS id, o.turn AS turn, o.embedding AS v "
        "ORDER BY o.turn",
        ns=semantic_store.namespace,
    )
    _, content = await mentioned(semantic_store, QUESTION, semantic_store.clock.now())
    q = np.array((await semantic_store.embed([content]))[0])
    rows = await semantic_store.x.read(
        "search_memory_context", ids=[r["id"] for r in records], vector=list(q), at=semantic_store.clock.now()
    )
    got = {r["id"]: r for r in rows}
    assert len(got) == len(DIALOGUE)
    for i, r in enumerate(records):
        v = np.array(r["v"])
        row = got[r["id"]]
        assert 2 * row["own"] - 1 == pytest.approx(
            float(q @ v) / np.linalg.norm(q) / np.linalg.norm(v), abs=1e-5
        )
        if i == 0:
            assert row["prev"] is None and row["pair"] is None
        else:
            p = np.array(records[i - 1]["v"])
            assert 2 * row["pair"] - 1 == pytest.approx(
                float(v @ p) / np.linalg.norm(v) / np.linalg.norm(p), abs=1e-5
            )


async def test_end_to_end_over_mcp(neo4j_info: Neo4jInfo, namespace: str, sync_driver) -> None:  # type: ignore[no-untyped-def]
    """Through a real MCP session with the model: one add_observations call of a whole dialogue, then the question."""
    env = server_env(neo4j_info, KG_NEO4J_EMBEDDING_MODEL="all-MiniLM-L6-v2")
    async with stdio_session(neo4j_info, "--namespace", namespace, env=env) as session:
        result = await session.call_tool(
            "create_entities",
            {"entities": [{"name": n, "entityType": "person", "observations": []} for n in ("Maya", "Tom")]},
        )
        assert not result.is_error, result.content[0].text
        result = await session.call_tool(
            "add_observations",
            {"observations": [{"entityName": who, "contents": [text]} for who, text in DIALOGUE]},
        )
        assert not result.is_error, result.content[0].text
        result = await session.call_tool("search_memory", {"query": QUESTION, "limit": 5})
        assert not result.is_error, result.content[0].text
        data = result.structured_content
    assert [t[2] for t in turns_of(sync_driver, namespace)] == list(range(len(DIALOGUE)))
    assert data["mode"] == "hybrid"
    assert REPLY in [h["observation"] for h in data["hits"][:3]]
