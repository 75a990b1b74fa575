"""maintain_graph's actions (prune, merge, validate, orphans) on a real Neo4j: a dry run changes
nothing (full dump before/after) and names exactly what applying then changes; applying twice
changes nothing the second time."""

from __future__ import annotations

import math
import random

import pytest
from neo4j import AsyncDriver
from test_maintenance import DAY, DIM, NOW, dump, edges, knowledge, node, seed

from kg_neo4j.clock import ManualClock
from kg_neo4j.server.maintenance import MaintainGraphOut, maintain_graph
from kg_neo4j.server.registry import Runtime, call
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import ensure_vector_indexes
from kg_neo4j.store.maintenance import MaintenanceStore
from support.servers import Neo4jInfo

pytestmark = pytest.mark.asyncio

OLD = NOW - 400 * DAY


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def random_vector(rng: random.Random) -> list[float]:
    return unit([rng.gauss(0, 1) for _ in range(DIM)])


def near(v: list[float], rng: random.Random, noise: float) -> list[float]:
    return unit([x + rng.gauss(0, noise) for x in v])


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture
def ms(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock) -> MaintenanceStore:
    clock.set(NOW)
    return MaintenanceStore(
        GraphStore(driver, database=neo4j_info.database, namespace=namespace, clock=clock)
    )


async def entity(driver: AsyncDriver, db: str, ns: str, name: str) -> None:
    await driver.execute_query(
        "CREATE (:KgNode:Entity {namespace: $ns, name: $name, name_lower: toLower($name), entityType: 'person', "
        "type_lower: 'person', created_at: $at})",
        ns=ns,
        name=name,
        at=OLD,
        database_=db,
    )


async def open_edges(driver: AsyncDriver, db: str, ns: str) -> set[tuple[str, str, str]]:
    records, _, _ = await driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE a.namespace = $ns AND NOT type(r) IN ['HAS_OBSERVATION', 'HAD_OBSERVATION'] "
        "AND (r.valid_until IS NULL OR r.valid_until > $now) RETURN a.name AS a, type(r) AS t, b.name AS b",
        ns=ns,
        now=NOW,
        database_=db,
    )
    return {(r["a"], r["t"], r["b"]) for r in records}


async def test_prune(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("decayed", trust="inference", created_at=OLD),
            knowledge("a", created_at=NOW - DAY),
            knowledge("b", created_at=NOW - DAY),
        ],
    )
    await entity(driver, db, namespace, "Alice")
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "a", "to": "b", "type": "implies", "weight": 0.2},  # weak semantic edge: closed
            {"from": "b", "to": "a", "type": "refines", "weight": 0.8},  # strong: stays
            {"from": "a", "to": "Alice", "type": "observed_in", "weight": 0.1},  # to a plain entity: stays
            {"from": "b", "to": "a", "type": "knows", "weight": 0.1},  # not a semantic edge type: stays
        ],
    )
    before = await dump(driver, db, namespace)
    dry = await ms.maintain(["prune"])
    assert await dump(driver, db, namespace) == before
    prune = dry["actions"]["prune"]
    assert dry["dryRun"] is True
    assert prune["expire"] == {"count": 1, "names": ["decayed"]}
    assert prune["weakEdges"] == {
        "count": 1,
        "edges": [{"from": "a", "to": "b", "relationType": "implies", "weight": 0.2}],
    }
    assert "would expire 1 decayed" in dry["summary"] and "nothing was changed" in dry["summary"]

    applied = await ms.maintain(["prune"], apply=True, batch_size=1)
    assert applied["actions"]["prune"]["expire"]["count"] == 1
    assert applied["actions"]["prune"]["weakEdges"]["closed"] == 1
    assert "ExpiredKnowledge" in (await node(driver, db, namespace, "decayed"))["labels"]
    assert await open_edges(driver, db, namespace) == {
        ("b", "refines", "a"),
        ("a", "observed_in", "Alice"),
        ("b", "knows", "a"),
    }
    after = await dump(driver, db, namespace, meta=False)
    again = await ms.maintain(["prune"], apply=True)
    assert again["actions"]["prune"]["expire"]["count"] == 0
    assert again["actions"]["prune"]["weakEdges"] == {"count": 0, "edges": [], "closed": 0}
    assert await dump(driver, db, namespace, meta=False) == after


async def test_validate(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("unquoted", trust="principle"),  # a principle without the expert's words
            knowledge("quoted", trust="principle", quote="always test first"),
            knowledge("guess", trust="inference"),
            knowledge("seen"),
            knowledge("gone"),
        ],
    )
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "guess", "to": "seen", "type": "must_precede"},  # inference as a causal source: closed
            {"from": "guess", "to": "seen", "type": "implies"},  # allowed for an inference
            {"from": "seen", "to": "guess", "type": "reason_for"},  # a pattern may be a causal source
            {"from": "seen", "to": "gone", "type": "refines"},  # 'gone' will be expired without closing it
        ],
    )
    await driver.execute_query(  # an expiry that left its edge open (e.g. an old import)
        "MATCH (k:Knowledge {namespace: $ns, name: 'gone'}) REMOVE k:KgNode:Entity:Knowledge "
        "SET k:ExpiredKnowledge, k.expired_at = $at, k.expired_reason = 'forgotten'",
        ns=namespace,
        at=NOW - DAY,
        database_=db,
    )
    before = await dump(driver, db, namespace)
    dry = (await ms.maintain(["validate"]))["actions"]["validate"]
    assert await dump(driver, db, namespace) == before
    assert dry["unquotedPrinciples"] == {"count": 1, "names": ["unquoted"]}
    assert dry["inferenceCausalEdges"]["count"] == 1
    assert dry["inferenceCausalEdges"]["edges"][0] | {} == {
        "from": "guess",
        "to": "seen",
        "relationType": "must_precede",
        "weight": 1.0,
    }
    assert dry["danglingEdges"]["count"] == 1
    assert dry["danglingEdges"]["edges"][0]["to"] == "gone"

    applied = (await ms.maintain(["validate"], apply=True))["actions"]["validate"]
    assert applied["inferenceCausalEdges"]["closed"] == 1 and applied["danglingEdges"]["closed"] == 1
    assert applied["unquotedPrinciples"]["count"] == 1  # reported, never changed
    assert await open_edges(driver, db, namespace) == {
        ("guess", "implies", "seen"),
        ("seen", "reason_for", "guess"),
    }
    after = await dump(driver, db, namespace, meta=False)
    again = (await ms.maintain(["validate"], apply=True))["actions"]["validate"]
    assert again["inferenceCausalEdges"]["count"] == 0 and again["danglingEdges"]["count"] == 0
    assert await dump(driver, db, namespace, meta=False) == after


async def test_orphans(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    await seed(driver, db, namespace, [knowledge(n) for n in ("alone", "linked", "target", "history")])
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "linked", "to": "target", "type": "implies"},
            {
                "from": "history",
                "to": "target",
                "type": "causes",
                "until": NOW - DAY,
            },  # closed: does not count
        ],
    )
    before = await dump(driver, db, namespace)
    dry = await ms.maintain(["orphans"])
    applied = await ms.maintain(["orphans"], apply=True)
    assert (
        dry["actions"]["orphans"]
        == applied["actions"]["orphans"]
        == {"count": 2, "names": ["alone", "history"]}
    )
    assert await dump(driver, db, namespace) == before  # report only, even when applied


async def test_merge(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    await ensure_vector_indexes(driver, db, DIM)
    rng = random.Random(namespace)  # vectors of their own: other tests' vectors never look alike
    base = random_vector(rng)
    twin, other = near(base, rng, 0.005), random_vector(rng)
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge(
                "keeper",
                trust="pattern",
                accesses=3,
                last_access=NOW - DAY,
                created_at=NOW - 30 * DAY,
                content="run migrations before deploying",
                vector=base,
            ),
            knowledge(
                "copy",
                trust="inference",
                created_at=NOW - 2 * DAY,
                content="migrations must run before each deploy",
                vector=twin,
            ),
            knowledge("unrelated", content="the office closes at six", vector=other),
        ],
    )
    await entity(driver, db, namespace, "Alice")
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "copy", "to": "unrelated", "type": "implies", "weight": 0.7},
            {"from": "Alice", "to": "copy", "type": "knows"},
            {"from": "copy", "to": "keeper", "type": "refines"},  # between the pair: closed, not copied
        ],
    )
    before = await dump(driver, db, namespace)
    dry = (await ms.maintain(["merge"]))["actions"]["merge"]
    assert await dump(driver, db, namespace) == before
    assert (
        dry["count"] == 1 and dry["pairs"][0]["keep"] == "keeper" and dry["pairs"][0]["duplicate"] == "copy"
    )
    assert dry["pairs"][0]["similarity"] == pytest.approx(cosine(base, twin), abs=1e-4)

    applied = (await ms.maintain(["merge"], apply=True))["actions"]["merge"]
    assert applied["merged"] == 1
    dup = await node(driver, db, namespace, "copy")
    assert (
        "ExpiredKnowledge" in dup["labels"]
        and dup["expired_reason"] == "merged"
        and dup["merged_into"] == "keeper"
    )
    assert await open_edges(driver, db, namespace) == {
        ("keeper", "implies", "unrelated"),
        ("Alice", "knows", "keeper"),
    }
    records, _, _ = await driver.execute_query(
        "MATCH (k:Knowledge {namespace: $ns, name: 'keeper'})-[:HAS_OBSERVATION]->(o) "
        "RETURN o.text AS text, o.role AS role, o.merged_from AS merged_from, o.embedding IS NOT NULL AS vector "
        "ORDER BY o.seq",
        ns=namespace,
        database_=db,
    )
    assert [dict(r) for r in records] == [
        {"text": "run migrations before deploying", "role": "content", "merged_from": None, "vector": True},
        {
            "text": "migrations must run before each deploy",
            "role": "merged",
            "merged_from": "copy",
            "vector": True,
        },
    ]
    copied, _, _ = await driver.execute_query(
        "MATCH (:Knowledge {namespace: $ns, name: 'keeper'})-[r:implies]->() RETURN r.weight AS w, r.merged_from AS m",
        ns=namespace,
        database_=db,
    )
    assert [(r["w"], r["m"]) for r in copied] == [(0.7, "copy")]
    after = await dump(driver, db, namespace, meta=False)
    again = (await ms.maintain(["merge"], apply=True))["actions"]["merge"]
    assert again["count"] == 0 and again["merged"] == 0
    assert await dump(driver, db, namespace, meta=False) == after


async def test_tool_is_a_dry_run_by_default(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    db = neo4j_info.database
    clock.set(NOW)
    await seed(
        driver, db, namespace, [knowledge("decayed", trust="inference", created_at=OLD), knowledge("ok")]
    )
    store = GraphStore(driver, database=db, namespace=namespace, clock=clock)
    rt = Runtime(store=store, profile="knowledge", max_answer_bytes=1 << 20)
    spec = maintain_graph
    assert spec.name == "maintain_graph" and spec.destructive and "knowledge" in spec.profiles
    tool = spec.tool("knowledge")
    assert tool.annotations is not None and tool.annotations.destructive_hint is True
    before = await dump(driver, db, namespace)
    result = await call(spec, rt, {})
    assert not result.is_error, result.content
    assert await dump(driver, db, namespace) == before
    out = MaintainGraphOut.model_validate(result.structured_content)
    assert out.dryRun and set(out.actions) == {"prune", "merge", "validate", "orphans"}
    assert out.actions["prune"]["expire"] == {"count": 1, "names": ["decayed"]}
    assert out.actions["orphans"]["names"] == ["decayed", "ok"]  # a dry run expires nothing
    applied = await call(spec, rt, {"dryRun": False, "actions": ["prune"]})
    assert not applied.is_error and applied.structured_content is not None
    assert set(applied.structured_content["actions"]) == {"prune"}
    assert "ExpiredKnowledge" in (await node(driver, db, namespace, "decayed"))["labels"]
    bad = await call(spec, rt, {"actions": ["defrag"]})
    assert bad.is_error


async def test_maintain_graph_over_mcp(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str) -> None:
    """The served tool (knowledge profile, stdio): listed as destructive, a dry run unless dryRun is false."""
    from datetime import UTC, datetime

    from support.servers import stdio_session

    db = neo4j_info.database
    now = datetime.now(UTC)
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("decayed", trust="inference", created_at=now - 400 * DAY),
            knowledge("ok", created_at=now - DAY),
        ],
    )
    before = await dump(driver, db, namespace)
    async with stdio_session(neo4j_info, "--namespace", namespace, "--tools", "knowledge") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["maintain_graph"].annotations.destructive_hint is True
        dry = await session.call_tool("maintain_graph", {"actions": ["prune", "orphans"]})
        assert not dry.is_error, dry.content
        assert await dump(driver, db, namespace) == before
        assert dry.structured_content["dryRun"] is True
        assert dry.structured_content["actions"]["prune"]["expire"] == {"count": 1, "names": ["decayed"]}
        applied = await session.call_tool("maintain_graph", {"actions": ["prune"], "dryRun": False})
        assert not applied.is_error and applied.structured_content["actions"]["prune"]["expire"]["count"] == 1
    assert "ExpiredKnowledge" in (await node(driver, db, namespace, "decayed"))["labels"]
