"""Shared helpers of the benchmarks: connection, namespaces, raw-driver seeding, cleanup, stats.

Nothing here is product code: the benchmarks only *call* the product (the MCP server over
stdio, ``GraphStore`` and the named Cypher of ``cypher/*.cypher``).  Every benchmark uses
its own ``bench-...`` namespace and deletes it afterwards in batches, so a shared Neo4j
does not bloat.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neo4j import Driver, GraphDatabase

from kg_neo4j.settings import Settings
from kg_neo4j.store import resolve_connection
from kg_neo4j.store.connection import Connection

ROOT = Path(__file__).resolve().parent.parent
KG = str(ROOT / ".venv" / "bin" / "kg-neo4j")

ENTITY_TYPES = ["person", "project", "concept", "tool", "place"]
RELATION_TYPES = ["knows", "uses", "depends_on", "part_of"]

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def connection() -> Connection:
    return resolve_connection(Settings())


def server_env(conn: Connection) -> dict[str, str]:
    """Environment for ``kg-neo4j serve``: ours minus any KG_NEO4J_/NEO4J_ settings, plus the connection."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(
        {
            "NEO4J_URI": conn.uri,
            "NEO4J_USERNAME": conn.username,
            "NEO4J_PASSWORD": conn.password,
            "NEO4J_DATABASE": conn.database,
        }
    )
    return env


def sync_driver(conn: Connection) -> Driver:
    drv = GraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    drv.verify_connectivity()
    return drv


def new_namespace(kind: str, size: int) -> str:
    return f"bench-{kind}-{size}-{uuid.uuid4().hex[:8]}"


def ensure_schema(conn: Connection) -> None:
    """The product's own schema bootstrap (constraints + indexes), so raw seeding writes under the same schema."""
    import asyncio

    from neo4j import AsyncGraphDatabase

    from kg_neo4j.store.connection import bootstrap

    async def _go() -> None:
        drv = AsyncGraphDatabase.driver(
            conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
        )
        try:
            await bootstrap(drv, conn.database)
        finally:
            await drv.close()

    asyncio.run(_go())


# --- the synthetic data set ---------------------------------------------------------------
def entity_name(i: int) -> str:
    return f"Entity-{i:07d}"


def entity_row(i: int, rng: random.Random, n_obs: int = 3) -> dict[str, Any]:
    """One entity in the store's row shape (same fields GraphStore.create_entities sends)."""
    name = entity_name(i)
    etype = ENTITY_TYPES[i % len(ENTITY_TYPES)]
    obs = [f"obs {k}: {' '.join(rng.choices(WORDS, k=6))} #{i}" for k in range(n_obs)]
    return {
        "name": name,
        "entityType": etype,
        "name_lower": name.lower(),
        "type_lower": etype.lower(),
        "observations": obs,
        "observations_lower": [o.lower() for o in obs],
    }


def entity_arg(i: int, rng: random.Random, n_obs: int = 3) -> dict[str, Any]:
    """The same entity as an MCP ``create_entities`` argument item."""
    r = entity_row(i, rng, n_obs)
    return {"name": r["name"], "entityType": r["entityType"], "observations": r["observations"]}


def ring_relation(i: int, n: int) -> dict[str, Any]:
    """Entity i's one relation of the ingest benchmark: i -> i+7919 (mod n), one of a few types."""
    return {
        "from": entity_name(i),
        "to": entity_name((i + 7919) % n),
        "relationType": RELATION_TYPES[i % len(RELATION_TYPES)],
        "weight": round(((i * 37) % 100) / 100, 2),
    }


def chunks(n: int, size: int) -> Iterator[range]:
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


# --- raw-driver seeding (fast UNWIND; no product code, same data model) ----------------------
SEED_ENTITIES = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:KgText {namespace: $ns, name: row.name, entityType: row.entityType,
                                name_lower: row.name_lower, type_lower: row.type_lower,
                                text_lower: row.name_lower + '\n' + row.type_lower,
                                created_at: row.created_at, obs_next: size(row.observations)})
WITH n, row
UNWIND range(0, size(row.observations) - 1) AS i
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.observations[i],
                                                     text_lower: row.observations_lower[i], seq: i,
                                                     created_at: row.created_at})
""".strip()

SEED_RELATIONS = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.relationType)]->(b)
SET r.weight = row.weight, r.valid_from = row.valid_from, r.valid_until = row.valid_until,
    r.created_at = row.created_at
""".strip()


def seed_entities(
    drv: Driver,
    database: str,
    ns: str,
    n: int,
    *,
    created_at: Any,
    n_obs: int = 3,
    chunk: int = 10_000,
    seed: int = 1,
    progress: bool = True,
) -> float:
    """Create n entities (``created_at`` a datetime or a callable i -> datetime); returns seconds."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for rows_range in chunks(n, chunk):
        rows = []
        for i in rows_range:
            row = entity_row(i, rng, n_obs)
            row["created_at"] = created_at(i) if callable(created_at) else created_at
            rows.append(row)
        drv.execute_query(SEED_ENTITIES, rows=rows, ns=ns, database_=database)
        if progress and (rows_range.stop % 50_000 == 0 or rows_range.stop == n):
            log(f"  seeded {rows_range.stop}/{n} entities")
    return time.perf_counter() - t0


def seed_relations(
    drv: Driver,
    database: str,
    ns: str,
    n_entities: int,
    n_rel: int,
    *,
    row_fn: Any,
    chunk: int = 10_000,
    seed: int = 2,
    progress: bool = True,
) -> float:
    """Create n_rel relations, ``row_fn(k, rng)`` giving each row (from, to, relationType, weight, valid_*,
    created_at); grouped into transactions of ``chunk`` rows.  Returns seconds."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for rows_range in chunks(n_rel, chunk):
        rows = [row_fn(k, rng) for k in rows_range]
        drv.execute_query(SEED_RELATIONS, rows=rows, ns=ns, database_=database)
        if progress and (rows_range.stop % 100_000 == 0 or rows_range.stop == n_rel):
            log(f"  seeded {rows_range.stop}/{n_rel} relations")
    return time.perf_counter() - t0


# --- cleanup -------------------------------------------------------------------------------
DELETE_NAMESPACE = """
MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL
CALL (n) {
  OPTIONAL MATCH (n)-[:HAS_OBSERVATION]->(o:Observation)
  DETACH DELETE o
  WITH DISTINCT n
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
""".strip()

#: The same for expired knowledge (forgotten or merged away: no longer :KgNode).
DELETE_EXPIRED = DELETE_NAMESPACE.replace(
    "MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL",
    "MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns",
)
assert DELETE_EXPIRED != DELETE_NAMESPACE


def delete_namespace(drv: Driver, database: str, ns: str) -> float:
    """Delete every node of ``ns`` (entities, placeholders, expired knowledge, observations, relations)
    in batches."""
    t0 = time.perf_counter()
    with drv.session(database=database) as s:  # auto-commit: required by CALL { } IN TRANSACTIONS
        s.run(DELETE_NAMESPACE, ns=ns).consume()
        # Forgotten or merged-away knowledge left the (namespace, name) key (:KgNode) but keeps its
        # observations; then observations whose entity is gone (belt and braces).  Both batched.
        s.run(DELETE_EXPIRED, ns=ns).consume()
        s.run(
            """
            MATCH (o:Observation) WHERE o.namespace = $ns
            CALL (o) { DETACH DELETE o } IN TRANSACTIONS OF 10000 ROWS
        """,
            ns=ns,
        ).consume()
    return time.perf_counter() - t0


def count_namespace(drv: Driver, database: str, ns: str) -> int:
    records, _, _ = drv.execute_query(
        "MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN count(n) AS c",
        ns=ns,
        database_=database,
    )
    return int(records[0]["c"])


# --- stats ---------------------------------------------------------------------------------
def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return math.nan
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def summary_ms(values: Sequence[float]) -> tuple[float, float, float]:
    """(p50, p95, mean) in milliseconds of durations given in seconds."""
    ms = [v * 1000 for v in values]
    return percentile(ms, 50), percentile(ms, 95), statistics.fmean(ms) if ms else math.nan


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, left_first: bool = False) -> str:
    """A bordered text table; numbers right-aligned (and the first column too unless ``left_first``)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |", line]
    for row in cells[1:]:
        out.append(
            "| "
            + " | ".join(
                c.ljust(w) if left_first and i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            + " |"
        )
    out.append(line)
    return "\n".join(out)


def _fmt(c: Any) -> str:
    if isinstance(c, float):
        if math.isnan(c):
            return "-"
        return f"{c:,.2f}" if abs(c) < 1000 else f"{c:,.0f}"
    if isinstance(c, int):
        return f"{c:,}"
    return str(c)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)
