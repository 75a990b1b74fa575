"""The decay sweep and maintain_graph on a real Neo4j, with the injected clock.

What the sweep wrote is read back from the graph and compared with the pure rules of
``kg_neo4j.knowledge.decay`` (``level_at``, ``expiry_due``); dry runs are checked against a
full dump of the namespace.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock
from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.vocabulary import Category
from kg_neo4j.models import KnowledgeIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import ensure_vector_indexes
from kg_neo4j.store.knowledge import KnowledgeStore
from kg_neo4j.store.maintenance import MaintenanceStore
from support.servers import Neo4jInfo

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DAY = timedelta(days=1)
DIM = 384  # the dimension of the vector indexes in the test database (all-MiniLM-L6-v2)

SEED = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:Knowledge {
  namespace: $ns, name: row.name, name_lower: toLower(row.name), entityType: row.type, type_lower: row.type,
  content: row.content, trust: row.trust, category: row.category, quote: row.quote, source: 'test',
  stability: row.stability, memory_level: row.level, access_count: row.accesses, last_access: row.last_access,
  sessions: row.sessions, created_at: row.created_at, updated_at: row.created_at, obs_next: 1})
CREATE (n)-[:HAS_OBSERVATION]->(:Observation {namespace: $ns, text: row.content, text_lower: toLower(row.content),
                                              seq: 0, created_at: row.created_at, role: 'content',
                                              embedding: row.vector,
                                              embedding_model: CASE WHEN row.vector IS NULL THEN null ELSE 'test' END})
"""

EDGE = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.type)]->(b)
SET r.weight = row.weight, r.valid_from = row.at, r.created_at = row.at, r.valid_until = row.until
"""


def knowledge(
    name: str,
    *,
    trust: str = "pattern",
    category: str = "creative",
    stability: float | None = None,
    level: int = 1,
    accesses: int = 0,
    last_access: datetime | None = None,
    sessions: int = 1,
    created_at: datetime = NOW,
    content: str | None = None,
    type: str = "rule",
    quote: str | None = None,
    vector: list[float] | None = None,
) -> dict[str, Any]:
    """One knowledge node in the documented layout (docs/knowledge-model.md)."""
    return {
        "name": name,
        "trust": trust,
        "category": category,
        "stability": stability if stability is not None else decay.initial_stability(trust, category),
        "level": level,
        "accesses": accesses,
        "last_access": last_access,
        "sessions": [f"s{i}" for i in range(sessions)],
        "created_at": created_at,
        "content": content or f"content of {name}",
        "type": type,
        "quote": quote,
        "vector": vector,
    }


async def seed(driver: AsyncDriver, database: str, ns: str, rows: list[dict[str, Any]]) -> None:
    await driver.execute_query(SEED, rows=rows, ns=ns, database_=database)


async def edges(driver: AsyncDriver, database: str, ns: str, rows: list[dict[str, Any]]) -> None:
    rows = [{"weight": 1.0, "at": NOW - 400 * DAY, "until": None, **r} for r in rows]
    await driver.execute_query(EDGE, rows=rows, ns=ns, database_=database)


def _plain(value: Any) -> Any:
    if hasattr(value, "to_native"):
        return value.to_native().isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def dump(driver: AsyncDriver, database: str, ns: str, *, meta: bool = True) -> dict[str, Any]:
    """Every node of the namespace (labels, properties; with ``meta`` the sweep's :KgMeta record
    too) and every relationship from one."""
    records, _, _ = await driver.execute_query(
        """
        CALL () {
          MATCH (n:KgNode) WHERE n.namespace = $ns RETURN n
          UNION
          MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
          UNION
          MATCH (k:KgNode|ExpiredKnowledge)-[:HAS_OBSERVATION]->(n) WHERE k.namespace = $ns RETURN n
          UNION
          MATCH (n:KgMeta) WHERE $meta AND n.namespace = $ns RETURN n
        }
        // read once per node, not per relationship row: a catch-up relabelling it meanwhile would split it
        // into two records (the same as tests/test_input_sweep.py's FINGERPRINT)
        WITH n, labels(n) AS labels, properties(n) AS props
        OPTIONAL MATCH (n)-[r]->(m)
        RETURN elementId(n) AS id, labels, props,
               collect(CASE WHEN r IS NULL THEN null ELSE [type(r), elementId(m), properties(r)] END) AS rels
        """,
        ns=ns,
        meta=meta,
        database_=database,
    )
    out = {}
    for r in records:
        props = {k: _plain(v) for k, v in r["props"].items()}
        rels = sorted(str([t, m, {k: _plain(v) for k, v in p.items()}]) for t, m, p in r["rels"])
        out[r["id"]] = (sorted(r["labels"]), sorted(props.items(), key=lambda kv: kv[0]).__repr__(), rels)
    return out


async def node(driver: AsyncDriver, database: str, ns: str, name: str) -> dict[str, Any]:
    records, _, _ = await driver.execute_query(
        "MATCH (k) WHERE k.namespace = $ns AND k.name = $name AND (k:Knowledge OR k:ExpiredKnowledge) "
        "RETURN labels(k) AS labels, properties(k) AS props",
        ns=ns,
        name=name,
        database_=database,
    )
    assert len(records) == 1, f"{name}: {len(records)} nodes"
    return {"labels": set(records[0]["labels"]), **records[0]["props"]}


def vec(*head: float) -> list[float]:
    """A 384-dimensional vector that starts with ``head`` (then zeros)."""
    v = [0.0] * DIM
    v[: len(head)] = head
    return v


@pytest.fixture
def ms(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock) -> MaintenanceStore:
    clock.set(NOW)
    return MaintenanceStore(
        GraphStore(driver, database=neo4j_info.database, namespace=namespace, clock=clock)
    )


# --- the decay sweep -------------------------------------------------------------------------


def _grid() -> list[tuple[dict[str, Any], decay.MemoryState]]:
    """Nodes across trust/category, idle time, accesses, sessions and stored level."""
    out = []
    kinds = [
        ("inference", "creative"),
        ("pattern", "creative"),
        ("principle", "creative"),
        ("inference", "fundamental"),
    ]
    idles = [0, 10, 60, 110, 125, 200, 300, 1300]
    for i, ((trust, category), idle, accesses, sessions, level) in enumerate(
        itertools.product(kinds, idles, [0, 5, 50], [1, 3], [1, 2])
    ):
        created = NOW - (idle + (20 if accesses else 0)) * DAY - timedelta(seconds=i)
        last = NOW - idle * DAY if accesses else None
        row = knowledge(
            f"g{i:03d}",
            trust=trust,
            category=category,
            level=level,
            accesses=accesses,
            last_access=last,
            sessions=sessions,
            created_at=created,
        )
        state = decay.MemoryState(
            category=Category(category),
            stability=row["stability"],
            memory_level=level,
            access_count=accesses,
            sessions=tuple(row["sessions"]),
            created_at=created,
            last_access=last,
        )
        out.append((row, state))
    return out


async def test_sweep_agrees_with_the_rules(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    grid = _grid()
    await seed(driver, neo4j_info.database, namespace, [row for row, _ in grid])
    report = await ms.decay_sweep(batch_size=7, chunk_size=50)  # several chunks and batches
    expected_expired = [row["name"] for row, state in grid if decay.expiry_due(state, NOW)]
    assert 10 < len(expected_expired) < len(grid) // 2, "the grid must exercise both outcomes"
    for row, state in grid:
        got = await node(driver, neo4j_info.database, namespace, row["name"])
        due = decay.expiry_due(state, NOW)
        assert ("ExpiredKnowledge" in got["labels"]) is due, row["name"]
        assert got["memory_level"] == int(decay.level_at(state, NOW)), row["name"]
        if due:
            assert not {"KgNode", "Entity", "Knowledge", "KgText"} & got["labels"]
            assert got["expired_reason"] == "decay"
            assert got["expired_at"].to_native() == NOW
        else:
            assert {"KgNode", "Entity", "Knowledge"} <= got["labels"]
            assert "expired_at" not in got
    promoted = sum(
        1
        for row, state in grid
        if not decay.expiry_due(state, NOW) and decay.level_at(state, NOW) > row["level"]
    )
    assert report.scanned == len(grid)
    assert report.expired == len(expected_expired)
    assert report.promoted == promoted
    assert report.written == len(expected_expired) + promoted + report.demoted
    assert report.complete and report.cursor is None
    fading = [
        row["name"]
        for row, state in grid
        if not decay.expiry_due(state, NOW) and decay.retention_at(state, NOW) < decay.FADING_BELOW_RETENTION
    ]
    assert report.fading == len(fading)


async def test_sweep_promotes_by_age_alone(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    """5 accesses at day 1: level 1 until the node is 14 days old, then the sweep makes it 3."""
    created = NOW - 13 * DAY
    await seed(
        driver,
        neo4j_info.database,
        namespace,
        [knowledge("young", accesses=5, last_access=NOW - 12 * DAY, created_at=created)],
    )
    assert (await ms.decay_sweep()).promoted == 0
    assert (await node(driver, neo4j_info.database, namespace, "young"))["memory_level"] == 1
    clock.set(created + 14 * DAY)
    report = await ms.decay_sweep()
    assert report.promoted == 1 and report.level_changes == [{"name": "young", "from": 1, "to": 3}]
    assert (await node(driver, neo4j_info.database, namespace, "young"))["memory_level"] == 3


async def test_expiry_closes_edges_and_drops_vectors(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    await ensure_vector_indexes(driver, db, DIM)
    old = NOW - 400 * DAY
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("stale", trust="inference", created_at=old, vector=vec(1.0)),
            knowledge("fresh", created_at=NOW - DAY),
        ],
    )
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "stale", "to": "fresh", "type": "implies"},
            {"from": "fresh", "to": "stale", "type": "refines", "weight": 0.5},
            {
                "from": "fresh",
                "to": "stale",
                "type": "causes",
                "until": old + DAY,
            },  # already closed: stays as it was
        ],
    )
    report = await ms.decay_sweep()
    assert report.expired == 1 and report.expire_names == ["stale"]
    records, _, _ = await driver.execute_query(
        "MATCH (k:ExpiredKnowledge {namespace: $ns, name: 'stale'})-[r]-(x) "
        "RETURN type(r) AS type, r.valid_until AS until, x.embedding IS NULL AND x.embedding_model IS NULL AS bare",
        ns=namespace,
        database_=db,
    )
    by_type = {r["type"]: r for r in records}
    assert by_type["implies"]["until"].to_native() == NOW
    assert by_type["refines"]["until"].to_native() == NOW
    assert by_type["causes"]["until"].to_native() == old + DAY
    assert by_type["HAS_OBSERVATION"]["bare"] is True
    # the name is free again (no :KgNode), and reads of the current graph do not show it
    store = GraphStore(driver, database=db, namespace=namespace, clock=ms.graph.clock)
    assert [e.name for e in (await store.read_graph()).entities] == ["fresh"]


async def test_second_sweep_changes_nothing(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    await seed(driver, neo4j_info.database, namespace, [row for row, _ in _grid()])
    first = await ms.decay_sweep(batch_size=5)
    assert first.written > 0
    before = await dump(driver, neo4j_info.database, namespace, meta=False)
    second = await ms.decay_sweep(batch_size=5)
    assert (second.written, second.expired, second.promoted, second.demoted) == (0, 0, 0, 0)
    # the knowledge is exactly as it was (only the sweep's :KgMeta record says it ran again)
    assert await dump(driver, neo4j_info.database, namespace, meta=False) == before


async def test_dry_run_sweep_changes_nothing(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    grid = _grid()
    await seed(driver, neo4j_info.database, namespace, [row for row, _ in grid])
    before = await dump(driver, neo4j_info.database, namespace)
    dry = await ms.decay_sweep(apply=False, batch_size=5, chunk_size=40)
    assert await dump(driver, neo4j_info.database, namespace) == before
    assert dry.written == 0 and not dry.applied
    applied = await ms.decay_sweep(batch_size=5, chunk_size=40)
    assert (dry.expired, dry.promoted, dry.demoted) == (applied.expired, applied.promoted, applied.demoted)
    assert dry.expire_names == applied.expire_names
    assert dry.level_changes == applied.level_changes


async def test_interrupted_sweep_resumes(
    ms: MaintenanceStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """A sweep stopped between chunks keeps what it committed; the next run (resume) finishes the rest."""
    grid = _grid()
    await seed(driver, neo4j_info.database, namespace, [row for row, _ in grid])
    expected = sum(1 for _, state in grid if decay.expiry_due(state, NOW))
    stopped = await ms.decay_sweep(chunk_size=60, deadline=0.0)  # a deadline long past: no chunk runs
    assert stopped.scanned == 0 and not stopped.complete
    partial = await ms.decay_sweep(chunk_size=60, max_chunks=1)
    assert not partial.complete and partial.cursor is not None and partial.scanned == 60
    meta = await ms.progress()
    assert meta["cursor"] == partial.cursor and meta["complete"] is False
    rest = await ms.decay_sweep(chunk_size=60, resume=True)
    assert rest.complete and rest.cursor is None
    assert partial.scanned + rest.scanned == len(grid)
    assert partial.expired + rest.expired == expected
    assert (await ms.progress())["cursor"] is None
    assert (await ms.decay_sweep(chunk_size=60)).written == 0


async def test_sweep_on_knowledge_stored_by_the_store(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    """Knowledge stored by KnowledgeStore (the real layout) decays as the rules say."""
    graph = GraphStore(driver, database=neo4j_info.database, namespace=namespace, clock=clock)
    ks = KnowledgeStore(graph)
    ms = MaintenanceStore(graph)
    await ks.store(
        [
            KnowledgeIn(name="guess", content="maybe the cache is stale", type="insight", trust="inference"),
            KnowledgeIn(name="seen", content="deploys fail on fridays", type="observation", trust="pattern"),
            KnowledgeIn(
                name="law",
                content="two plus two is four",
                type="rule",
                trust="pattern",
                category="fundamental",
            ),
        ],
        session="s1",
    )
    clock.advance(days=120)  # the inference crosses R = 0.02 after about 117 days, the pattern after 273
    report = await ms.decay_sweep()
    assert report.expire_names == ["guess"]
    listed = {k.name: k for k in await ks.list(include_expired=True)}
    assert listed["guess"].expired and listed["guess"].expiredReason == "decay"
    assert not listed["seen"].expired and not listed["law"].expired
    assert (await ms.decay_sweep()).written == 0
