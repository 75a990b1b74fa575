"""The knowledge layer on a real Neo4j (docs/knowledge-model.md): what the Cypher writes agrees with the
pure rules of kg_neo4j.knowledge, every anti-fabrication rule holds, and time is the
injected clock (never slept)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from kg_neo4j.clock import ManualClock
from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.vocabulary import AccessGrade, Category
from kg_neo4j.models import ConnectIn, ExperienceIn, KnowledgeIn, KnowledgeUpdate
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore


@pytest.fixture
def ks(store: GraphStore) -> KnowledgeStore:
    return KnowledgeStore(store)


def k(name: str, trust: str = "pattern", category: str = "creative", **kw: Any) -> KnowledgeIn:
    kw.setdefault("content", f"content of {name}")
    kw.setdefault("type", "rule")
    if trust == "principle":
        kw.setdefault("quote", f"the expert said {name}")
    return KnowledgeIn(name=name, trust=trust, category=category, **kw)


async def node(store: GraphStore, name: str) -> dict[str, Any]:
    """Every property of a node as Cypher wrote it, with its labels."""
    records, _, _ = await store.driver.execute_query(
        "MATCH (n {namespace: $ns, name: $name}) RETURN properties(n) AS p, labels(n) AS labels",
        ns=store.namespace,
        name=name,
        database_=store.database,
    )
    assert len(records) == 1, records
    return {**records[0]["p"], "labels": sorted(records[0]["labels"])}


async def count_nodes(store: GraphStore) -> int:
    records, _, _ = await store.driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS n", ns=store.namespace, database_=store.database
    )
    return int(records[0]["n"])


# --- store_knowledge ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trust", "category", "stability", "level"),
    [
        ("principle", "fundamental", 365.0, 4),
        ("pattern", "fundamental", 365.0, 4),
        ("principle", "creative", 30.0, 1),
        ("pattern", "creative", 7.0, 1),
        ("inference", "creative", 3.0, 1),
    ],
)
async def test_initial_stability_and_level_follow_the_table(
    ks: KnowledgeStore, store: GraphStore, trust: str, category: str, stability: float, level: int
) -> None:
    [stored] = await ks.store([k("K", trust, category)])
    assert (stored.stability, stored.memoryLevel) == (stability, level)
    props = await node(store, "K")
    assert props["stability"] == stability == decay.initial_stability(trust, category)
    assert props["memory_level"] == level
    type_and_trust = {
        "principle": "TrustPrinciple",
        "pattern": "TrustPattern",
        "inference": "TrustInference",
    }[trust]
    assert props["labels"] == sorted(["Entity", "KgNode", "KgText", "Knowledge", "rule", type_and_trust])
    assert (props["trust"], props["category"], props["access_count"]) == (trust, category, 0)


async def test_principle_without_quote_is_rejected_and_nothing_is_written(
    ks: KnowledgeStore, store: GraphStore
) -> None:
    with pytest.raises(ValidationError, match="exact words") as err:
        await ks.store(
            [k("fine", "pattern"), KnowledgeIn(name="P", content="x", type="rule", trust="principle")]
        )
    assert err.value.field == "quote"
    with pytest.raises(ValidationError):
        await ks.store([KnowledgeIn(name="P", content="x", type="rule", trust="principle", quote="   ")])
    assert await count_nodes(store) == 0


async def test_a_taken_name_writes_nothing_unless_skipped(ks: KnowledgeStore, store: GraphStore) -> None:
    from kg_neo4j.models import EntityIn

    await store.create_entities([EntityIn(name="Alice", entityType="person", observations=["hi"])])
    with pytest.raises(ValidationError, match="Alice"):
        await ks.store([k("new one"), k("Alice")])
    assert await ks.list() == []
    stored = await ks.store([k("new one"), k("Alice")], existing="skip")
    assert [s.name for s in stored] == ["new one"]
    assert (await node(store, "Alice"))["labels"] == [
        "Entity",
        "KgNode",
        "KgText",
        "person",
    ]  # as create_entities left it


async def test_knowledge_is_an_entity_for_the_reference_reads(ks: KnowledgeStore, store: GraphStore) -> None:
    await ks.store([k("Deploy rule", content="Run the migrations before every deploy", type="procedure")])
    graph = await store.open_nodes(["Deploy rule"])
    assert [(e.name, e.entityType, e.observations) for e in graph.entities] == [
        ("Deploy rule", "procedure", ["Run the migrations before every deploy"])
    ]
    found = await store.search_nodes("migrations")
    assert [e.name for e in found.entities] == ["Deploy rule"]


async def test_a_placeholder_becomes_knowledge(ks: KnowledgeStore, store: GraphStore) -> None:
    from kg_neo4j.models import RelationIn

    await store.create_relations([RelationIn(**{"from": "X", "to": "Later"}, relationType="needs")])
    [stored] = await ks.store([k("Later")])
    assert stored.name == "Later"
    assert (await node(store, "Later"))["labels"] == [
        "Entity",
        "KgNode",
        "KgText",
        "Knowledge",
        "TrustPattern",
        "rule",
    ]


async def test_similar_knowledge_is_suggested(ks: KnowledgeStore) -> None:
    await ks.store([k("A", content="Always run the database migrations before deploying the service")])
    [b] = await ks.store([k("B", content="Run database migrations before a deploy")])
    assert [s.name for s in b.similar] == ["A"]
    [c] = await ks.store([k("C", content="Lunch is at noon")])
    assert c.similar == []


# --- connect_knowledge: real relationship types, anti-fabrication ---------------------------


async def test_an_inference_cannot_originate_must_precede_or_reason_for(
    ks: KnowledgeStore, store: GraphStore
) -> None:
    await ks.store([k("guess", "inference"), k("taught", "principle"), k("seen", "pattern")])
    for rel in ("must_precede", "reason_for"):
        with pytest.raises(ValidationError, match="inference") as err:
            await ks.connect(
                [
                    ConnectIn(**{"from": "seen", "to": "taught"}, relationType="implies"),
                    ConnectIn(**{"from": "guess", "to": "taught"}, relationType=rel),
                ]
            )
        assert err.value.field == "relationType"
    records, _, _ = await store.driver.execute_query(
        "MATCH (a:Knowledge)-[r]->(:KgNode) WHERE a.namespace = $ns RETURN count(r) AS n",
        ns=store.namespace,
        database_=store.database,
    )
    assert records[0]["n"] == 0  # the allowed edge of the same call was not written either
    # the weaker relations are fine from an inference, and the strong ones from a principle or pattern
    made = await ks.connect(
        [
            ConnectIn(
                **{"from": "guess", "to": "taught"}, relationType="implies", weight=0.4, reasoning="seems so"
            ),
            ConnectIn(**{"from": "taught", "to": "guess"}, relationType="reason_for"),
            ConnectIn(**{"from": "seen", "to": "guess"}, relationType="must_precede"),
        ]
    )
    assert {(r.from_, r.relationType, r.to) for r in made} == {
        ("guess", "implies", "taught"),
        ("taught", "reason_for", "guess"),
        ("seen", "must_precede", "guess"),
    }
    records, _, _ = await store.driver.execute_query(
        "MATCH (a:Knowledge {name: 'guess'})-[r]->(b:KgNode) WHERE a.namespace = $ns "
        "RETURN type(r) AS t, r.weight AS w, r.reasoning AS why, r.valid_from AS vf",
        ns=store.namespace,
        database_=store.database,
    )
    assert [(r["t"], r["w"], r["why"]) for r in records] == [("implies", 0.4, "seems so")]
    assert records[0]["vf"] is not None
    # an open edge is not repeated
    assert await ks.connect([ConnectIn(**{"from": "guess", "to": "taught"}, relationType="implies")]) == []


async def test_connect_needs_knowledge_at_the_start_and_an_entity_at_the_end(
    ks: KnowledgeStore, store: GraphStore
) -> None:
    from kg_neo4j.models import EntityIn

    await ks.store([k("rule")])
    await store.create_entities([EntityIn(name="service", entityType="system", observations=[])])
    with pytest.raises(NotFoundError, match="nobody"):
        await ks.connect([ConnectIn(**{"from": "rule", "to": "nobody"}, relationType="observed_in")])
    with pytest.raises(NotFoundError, match="Knowledge with name service"):
        await ks.connect([ConnectIn(**{"from": "service", "to": "rule"}, relationType="causes")])
    made = await ks.connect([ConnectIn(**{"from": "rule", "to": "service"}, relationType="observed_in")])
    assert [(r.from_, r.to) for r in made] == [("rule", "service")]
    with pytest.raises(ValueError, match="two different"):
        ConnectIn(**{"from": "rule", "to": "rule"}, relationType="refines")
    with pytest.raises(ValueError):
        ConnectIn(**{"from": "rule", "to": "service"}, relationType="likes")


# --- growth on access: Cypher against the pure rules ---------------------------------------------


@pytest.mark.parametrize(("r_target", "gain"), [(0.9, 1.11), (0.3, 2.01)])
async def test_stability_gain_at_the_source_retentions(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock, r_target: float, gain: float
) -> None:
    await ks.store([k("K", "pattern")])  # S = 7 days
    clock.advance(days=decay.days_until_retention(r_target, 7.0))
    [rec] = await ks.record_access(["K"])
    assert rec["retention"] == pytest.approx(r_target, abs=1e-6)
    written = (await node(store, "K"))["stability"]
    assert written == pytest.approx(decay.grow_stability(7.0, r_target, AccessGrade.ACCESSED), rel=1e-9)
    assert round(written / 7.0, 2) == gain


@pytest.mark.parametrize("grade", [AccessGrade.APPLIED, AccessGrade.CORRECTED])
async def test_grades_applied_and_corrected(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock, grade: AccessGrade
) -> None:
    await ks.store([k("K", "inference")])  # S = 3 days
    clock.advance(days=2.5)
    r = decay.retention(2.5, 3.0, category=Category.CREATIVE)
    await ks.update(
        KnowledgeUpdate(name="K", feedback="applied" if grade is AccessGrade.APPLIED else "corrected")
    )
    props = await node(store, "K")
    assert props["stability"] == pytest.approx(decay.grow_stability(3.0, r, grade), rel=1e-9)
    assert props["access_count"] == 1


async def test_stability_is_capped_and_fundamentals_keep_r_1(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("F", "pattern", "fundamental")])
    clock.advance(days=3000)
    [rec] = await ks.record_access(["F"])
    assert rec["retention"] == 1.0
    assert (await node(store, "F"))["stability"] == decay.MAX_STABILITY_DAYS  # 365 x e^0 x 1 stays at the cap


async def test_retention_in_cypher_matches_the_pure_function(ks: KnowledgeStore, clock: ManualClock) -> None:
    """list_knowledge's R (computed in Cypher) at many ages, for each initial stability."""
    await ks.store([k("principle", "principle"), k("pattern", "pattern"), k("inference", "inference")])
    start = clock.now()
    for days in (0.0, 0.5, 3.0, 7.0, 30.0, 70.0, 300.0, 1000.0):
        clock.set(start)
        clock.advance(days=days)
        got = {i.name: i.retention for i in await ks.list()}
        for name, s in (("principle", 30.0), ("pattern", 7.0), ("inference", 3.0)):
            assert got[name] == pytest.approx(decay.retention(days, s, category=Category.CREATIVE), abs=1e-6)


@pytest.mark.parametrize(
    ("name", "trust", "half_life"),
    [("choice", "principle", 30.0), ("pattern", "pattern", 7.0), ("guess", "inference", 3.0)],
)
async def test_half_lives_per_knowledge_type(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock, name: str, trust: str, half_life: float
) -> None:
    """From what was written (S) and what Cypher computes (R): the fast part halves every S days,
    the slow part every 10 S days."""
    await ks.store([k(name, trust)])
    s = (await node(store, name))["stability"]
    assert decay.half_lives(s) == (half_life, 10 * half_life)
    start = clock.now()

    async def r_at(days: float) -> float:
        clock.set(start)
        clock.advance(days=days)
        return (await ks.list())[0].retention

    for t in (0.0, half_life):
        # R(t) - R(t + S) / ... : solve the two components from R at t, t + S, t + 10S
        r0, r1 = await r_at(t), await r_at(t + half_life)
        fast0 = decay.W_FAST * math.exp(-t * math.log(2) / half_life)
        slow0 = decay.W_SLOW * math.exp(-t * math.log(2) / (10 * half_life))
        assert r0 == pytest.approx(fast0 + slow0, abs=1e-6)
        assert r1 == pytest.approx(fast0 / 2 + slow0 * 2**-0.1, abs=1e-6)
    assert await r_at(10 * half_life) == pytest.approx(decay.W_FAST * 2**-10 + decay.W_SLOW / 2, abs=1e-6)


# --- levels ----------------------------------------------------------------------------------------


async def test_level_2_needs_three_sessions_not_three_accesses(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("K")], session="s1")
    for _ in range(4):
        clock.advance(hours=1)
        await ks.record_access(["K"], session="s1")
    assert (await node(store, "K"))["memory_level"] == 1  # 5 accesses, one session, 4 hours old
    await ks.record_access(["K"], session="s2")
    assert (await node(store, "K"))["memory_level"] == 1
    await ks.record_access(["K"], session="s3")
    props = await node(store, "K")
    assert (props["memory_level"], props["sessions"]) == (2, ["s1", "s2", "s3"])


async def test_level_3_needs_14_days_and_5_accesses(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("K")])
    for _ in range(5):
        clock.advance(days=2)
        await ks.record_access(["K"])
    assert (await node(store, "K"))["memory_level"] == 1  # 5 accesses at 10 days
    clock.advance(days=4)  # 14 days
    await ks.record_access(["K"])
    assert (await node(store, "K"))["memory_level"] == 3


async def test_level_4_after_50_accesses_and_trust_stays(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("K", "inference")])
    for _ in range(49):
        clock.advance(minutes=1)
        await ks.record_access(["K"])
    assert (await node(store, "K"))["memory_level"] == 1
    clock.advance(minutes=1)
    await ks.record_access(["K"])
    props = await node(store, "K")
    assert (props["memory_level"], props["trust"]) == (
        4,
        "inference",
    )  # level-4 inference: still the AI's idea


async def test_access_cypher_matches_the_pure_state_machine(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    """A sequence of accesses at irregular times: S, count, sessions and level as decay.record_access says."""
    await ks.store([k("K", "inference")], session="a")
    state = decay.new_memory("inference", "creative", now=clock.now(), session="a")
    for days, session in [(1.0, "a"), (4.0, "b"), (0.2, None), (9.0, "c"), (2.0, "b"), (30.0, "d")]:
        clock.advance(days=days)
        await ks.record_access(["K"], session=session)
        state = decay.record_access(state, grade=AccessGrade.ACCESSED, now=clock.now(), session=session)
        props = await node(store, "K")
        assert props["stability"] == pytest.approx(state.stability, rel=1e-9)
        assert props["access_count"] == state.access_count
        assert tuple(props["sessions"]) == state.sessions
        assert props["memory_level"] == int(state.memory_level)


# --- update_knowledge: trust never upgrades by itself ---------------------------------------------


async def test_trust_never_upgrades_by_itself(ks: KnowledgeStore, store: GraphStore) -> None:
    await ks.store([k("K", "inference")])
    with pytest.raises(ValidationError, match="never upgrades"):
        await ks.update(KnowledgeUpdate(name="K", trust="pattern"))
    with pytest.raises(ValidationError, match="exact words"):
        await ks.update(KnowledgeUpdate(name="K", trust="principle", expertConfirmed=True))
    assert (await node(store, "K"))["trust"] == "inference"
    item = await ks.update(
        KnowledgeUpdate(name="K", trust="principle", expertConfirmed=True, quote="yes, exactly")
    )
    assert (item.trust, item.quote) == ("principle", "yes, exactly")
    item = await ks.update(KnowledgeUpdate(name="K", trust="inference"))  # a weaker claim is always allowed
    assert item.trust == "inference"


async def test_a_level_change_cannot_relabel_trust(ks: KnowledgeStore, store: GraphStore) -> None:
    await ks.store([k("K", "pattern")])
    with pytest.raises(ValidationError, match="independent"):
        await ks.update(KnowledgeUpdate(name="K", category="fundamental", trust="inference"))
    props = await node(store, "K")
    assert (props["category"], props["trust"], props["memory_level"]) == ("creative", "pattern", 1)
    item = await ks.update(KnowledgeUpdate(name="K", category="fundamental"))
    assert (item.memoryLevel, item.stability, item.trust) == (4, 365.0, "pattern")


async def test_update_keeps_identity_edges_and_history(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("A", content="old words about caching"), k("B")])
    await ks.connect([ConnectIn(**{"from": "A", "to": "B"}, relationType="refines")])
    await ks.record_access(["A"], session="s1")
    before = await node(store, "A")
    clock.advance(days=1)
    item = await ks.update(KnowledgeUpdate(name="A", content="new words about invalidation", type="insight"))
    after = await node(store, "A")
    assert (item.content, item.type, item.accessCount) == ("new words about invalidation", "insight", 1)
    assert after["created_at"] == before["created_at"] and after["access_count"] == 1
    graph = await store.open_nodes(["A", "B"])
    assert [e.observations for e in graph.entities if e.name == "A"] == [["new words about invalidation"]]
    assert [(r.from_, r.relationType, r.to) for r in graph.relations] == [("A", "refines", "B")]
    assert [e.name for e in (await store.search_nodes("invalidation")).entities] == ["A"]
    assert (await store.search_nodes("caching")).entities == []
    with pytest.raises(NotFoundError):
        await ks.update(KnowledgeUpdate(name="nope", content="x"))


# --- forget_knowledge -------------------------------------------------------------------------------


async def test_forget_expires_and_keeps_history(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("A", content="forget me please"), k("B")])
    await ks.connect([ConnectIn(**{"from": "A", "to": "B"}, relationType="causes")])
    with pytest.raises(NotFoundError):
        await ks.forget(["A", "unknown"])
    assert len(await ks.list()) == 2  # all or nothing
    clock.advance(hours=1)
    done = await ks.forget(["A"], reason="wrong")
    assert done == [{"name": "A", "closedRelations": 1}]
    assert [e.name for e in (await store.read_graph()).entities] == ["B"]
    assert (await store.read_graph()).relations == []
    assert (await store.search_nodes("forget me")).entities == []
    props = await node(store, "A")
    assert props["labels"] == ["ExpiredKnowledge"]
    assert (props["expired_reason"], props["expired_note"], props["content"]) == (
        "forgotten",
        "wrong",
        "forget me please",
    )
    records, _, _ = await store.driver.execute_query(
        "MATCH (a:ExpiredKnowledge {name: 'A'})-[r:causes]->(b) WHERE a.namespace = $ns RETURN r.valid_until AS u",
        ns=store.namespace,
        database_=store.database,
    )
    assert records[0]["u"].to_native() == clock.now()
    listed = await ks.list(include_expired=True)
    assert [(i.name, i.expired) for i in listed] == [("B", False), ("A", True)] or {
        (i.name, i.expired) for i in listed
    } == {("A", True), ("B", False)}
    # the name is free again
    [again] = await ks.store([k("A", content="a new A")])
    assert again.name == "A"


# --- list, stats, experiences ----------------------------------------------------------------------


async def test_list_filters_and_sorts(ks: KnowledgeStore, clock: ManualClock) -> None:
    await ks.store([k("old", "pattern", source="teacher")])
    clock.advance(days=1)
    await ks.store([k("new", "inference", type="insight")])
    clock.advance(days=1)
    await ks.store([k("fund", "principle", "fundamental")])
    for _ in range(3):
        await ks.record_access(["old"])
    assert [i.name for i in await ks.list()] == ["fund", "new", "old"]
    assert [i.name for i in await ks.list(sort="access")][0] == "old"
    clock.advance(days=20)
    assert [i.name for i in await ks.list(sort="strength")] == ["fund", "old", "new"]
    assert [i.name for i in await ks.list(trust="inference")] == ["new"]
    assert [i.name for i in await ks.list(type="insight")] == ["new"]
    assert [i.name for i in await ks.list(category="fundamental")] == ["fund"]
    assert [i.name for i in await ks.list(source="teacher")] == ["old"]
    assert len(await ks.list(limit=2)) == 2
    with pytest.raises(ValidationError):
        await ks.list(trust="gospel")


async def test_stats(ks: KnowledgeStore, clock: ManualClock) -> None:
    await ks.store(
        [k("a", "principle"), k("b", "inference"), k("c", "inference", "fundamental", type="core")]
    )
    await ks.connect([ConnectIn(**{"from": "a", "to": "b"}, relationType="reason_for")])
    await ks.record_experience(ExperienceIn(context="c", outcome="o"))
    clock.advance(days=12)  # b (S = 3) fades below 0.3 (R = 0.27); c is fundamental
    await ks.forget(["a"])
    stats = await ks.stats()
    assert stats["knowledge"] == 2
    assert stats["byTrust"] == {"inference": 2}
    assert stats["byType"] == {"core": 1, "rule": 1}
    assert stats["byLevel"] == {"1": 1, "4": 1}
    assert (stats["fading"], stats["expired"], stats["expiredByReason"]) == (1, 1, {"forgotten": 1})
    assert (stats["edges"], stats["experiences"]) == (0, 1)  # a's edge was closed when it was forgotten


async def test_experiences_are_recorded_and_recalled_by_similar_context(semantic_store: GraphStore) -> None:
    ks = KnowledgeStore(semantic_store)
    await ks.record_experience(
        ExperienceIn(
            name="db outage",
            context="The production database ran out of disk space during the nightly backup",
            steps=["Freed space by deleting old WAL files", "Restarted the replica"],
            decisions=["Moved backups to object storage"],
            outcome="Service restored after 40 minutes",
            success=True,
        )
    )
    await ks.record_experience(
        ExperienceIn(
            name="ui bug",
            context="A button on the settings page did not render in Safari",
            steps=["Found a CSS grid bug"],
            outcome="Fixed with a flexbox fallback",
            success=True,
        )
    )
    with pytest.raises(ValidationError, match="already exists"):
        await ks.record_experience(ExperienceIn(name="ui bug", context="x", outcome="y"))
    found = await ks.recall_experience("storage filled up on our postgres server while backing up", limit=2)
    assert found[0].name == "db outage"
    assert found[0].steps == ["Freed space by deleting old WAL files", "Restarted the replica"]
    assert found[0].decisions == ["Moved backups to object storage"] and found[0].success is True
    assert found[0].score is not None


async def test_similar_knowledge_by_meaning(semantic_store: GraphStore) -> None:
    ks = KnowledgeStore(semantic_store)
    await ks.store(
        [
            k("migrate first", content="Run the database migrations before deploying a release"),
            k("lunch", content="The team has lunch at noon on Fridays"),
        ]
    )
    [new] = await ks.store([k("schema first", content="Migrate the DB schema first, then deploy")])
    assert [s.name for s in new.similar] == ["migrate first"]
    assert 0.8 <= new.similar[0].score <= 1.0


# --- review findings: races, stale levels, category changes -------------------------------------------


async def test_concurrent_accesses_are_all_counted(ks: KnowledgeStore, store: GraphStore) -> None:
    await ks.store([k("A"), k("B")])
    await asyncio.gather(
        *[ks.record_access(["A", "B"] if i % 2 else ["B", "A"], session=f"s{i % 3}") for i in range(20)]
    )
    for name in ("A", "B"):
        props = await node(store, name)
        assert props["access_count"] == 20
        assert sorted(props["sessions"]) == ["s0", "s1", "s2"] and props["memory_level"] == 2


async def test_an_access_racing_a_forget_writes_nothing(ks: KnowledgeStore, store: GraphStore) -> None:
    """forget holds the node's lock; an access queued behind it finds expired knowledge and skips it."""
    await ks.store([k("A"), k("B")])
    async with store.driver.session(database=store.database) as db:
        tx = await db.begin_transaction()
        result = await tx.run(
            store.x.q["knowledge_forget"],
            ns=store.namespace,
            now=store.clock.now(),
            names=["A"],
            note=None,
            actor="test",
        )
        await result.consume()  # the forget has run (and holds A's lock) before the others start
        access = asyncio.create_task(ks.record_access(["A"]))
        connect = asyncio.create_task(
            ks.connect([ConnectIn(**{"from": "A", "to": "B"}, relationType="causes")])
        )
        await tx.commit()
    assert await access == []
    with pytest.raises(NotFoundError, match="Knowledge with name A"):
        await connect
    props = await node(store, "A")
    assert props["labels"] == ["ExpiredKnowledge"] and props["access_count"] == 0


async def test_an_expert_upgrade_is_not_blocked_by_a_stale_stored_level(
    ks: KnowledgeStore, store: GraphStore, clock: ManualClock
) -> None:
    await ks.store([k("K", "inference")])
    for _ in range(5):
        await ks.record_access(["K"])
    clock.advance(days=15)  # level 3 is earned by age; the stored level is still 1
    item = await ks.update(KnowledgeUpdate(name="K", trust="pattern", expertConfirmed=True))
    assert (item.trust, item.memoryLevel) == ("pattern", 3)


async def test_raising_to_principle_needs_the_quote_in_the_same_call(ks: KnowledgeStore) -> None:
    await ks.store([k("K", "inference", quote="something someone said once")])
    with pytest.raises(ValidationError, match="exact words"):
        await ks.update(KnowledgeUpdate(name="K", trust="principle", expertConfirmed=True))
    with pytest.raises(ValidationError, match="separate updates"):
        await ks.update(KnowledgeUpdate(name="K", trust="pattern", expertConfirmed=True, feedback="applied"))
    item = await ks.update(
        KnowledgeUpdate(name="K", trust="principle", expertConfirmed=True, quote="Exactly so.")
    )
    assert (item.trust, item.quote) == ("principle", "Exactly so.")


async def test_leaving_fundamentals_restarts_the_decay_clock(ks: KnowledgeStore, clock: ManualClock) -> None:
    await ks.store([k("K", "pattern", "fundamental")])
    clock.advance(days=400)
    item = await ks.update(KnowledgeUpdate(name="K", category="creative"))
    assert (item.stability, item.memoryLevel, item.retention) == (7.0, 1, 1.0)
    assert item.lastAccess == clock.now().isoformat() and item.accessCount == 0


async def test_update_and_connect_refuse_what_is_not_knowledge(ks: KnowledgeStore, store: GraphStore) -> None:
    await ks.record_experience(ExperienceIn(name="exp", context="c", outcome="o"))
    await ks.store([k("K")])
    with pytest.raises(NotFoundError, match="Knowledge with name exp"):
        await ks.update(KnowledgeUpdate(name="exp", content="x"))
    with pytest.raises(NotFoundError, match="Knowledge with name exp"):
        await ks.connect([ConnectIn(**{"from": "exp", "to": "K"}, relationType="observed_in")])
    made = await ks.connect([ConnectIn(**{"from": "K", "to": "exp"}, relationType="observed_in")])
    assert [(r.from_, r.to) for r in made] == [("K", "exp")]


async def test_memorymesh_updates_cannot_rewrite_knowledge(ks: KnowledgeStore, store: GraphStore) -> None:
    from kg_neo4j.store.memorymesh import MeshStore, NodeUpdate

    await ks.store([k("K", content="the real content")])
    with pytest.raises(ValidationError, match="update_knowledge"):
        await MeshStore(store).update_nodes([NodeUpdate(name="K", nodeType="banana", metadata=["other"])])
    props = await node(store, "K")
    assert (props["entityType"], props["content"]) == ("rule", "the real content")
    assert (await store.open_nodes(["K"])).entities[0].observations == ["the real content"]


async def test_recorded_experiences_get_distinct_default_names(ks: KnowledgeStore) -> None:
    a = await ks.record_experience(ExperienceIn(context="same", outcome="same"))
    b = await ks.record_experience(ExperienceIn(context="same", outcome="same"))
    assert a.name != b.name


async def test_forgotten_knowledge_stays_without_vectors(semantic_store: GraphStore) -> None:
    """Forgetting drops the vectors; embed_missing (after an import) and reembed leave them dropped."""
    from kg_neo4j.store.embeddings import embed_missing

    ks = KnowledgeStore(semantic_store)
    await ks.store([k("gone", content="an idea we dropped"), k("kept", content="an idea we keep")])
    await ks.forget(["gone"])
    assert semantic_store.embedder is not None
    done = await embed_missing(
        semantic_store.driver, semantic_store.database, semantic_store.embedder, semantic_store.namespace
    )
    assert done == 0
    records, _, _ = await semantic_store.driver.execute_query(
        "MATCH (k {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN k.name AS name, o.embedding IS NULL AS bare",
        ns=semantic_store.namespace,
        database_=semantic_store.database,
    )
    assert {(r["name"], r["bare"]) for r in records} == {("gone", True), ("kept", False)}
