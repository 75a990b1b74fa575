"""The decay sweep on a large namespace: 1,000,000 knowledge nodes by default.

Seeds (raw ``UNWIND``, 10k rows per transaction, no product code) N knowledge nodes in the
documented layout (docs/knowledge-model.md: ``:KgNode:Entity:Knowledge`` with their content
observation, no vectors) and one semantic edge per 20 nodes (node 20j -> 20j + 13), then runs the product's sweep
(``MaintenanceStore.decay_sweep``, the statement ``kg-neo4j maintain --actions prune`` and the
session-start hook run) once at a fixed ``NOW``.  The groups, by node index:

* ~12% due to expire: inferences (S = 3 days) untouched for 150-400 days (R < 0.02 after ~117 days);
* ~5% due for promotion to level 3: 20-60 days old, 5-49 accesses, last access 1-10 days ago;
* ~10% fading (R < 0.3) but not expiring: patterns (S = 7) untouched for 40-120 days;
* 5% fundamentals (never decay, already level 4) and the rest fresh (0-10 days, no change).

Prints the figures READ BACK from the graph after the sweep (not from the sweep's own
counters): knowledge nodes left, nodes expired with reason 'decay' at NOW, nodes at level 3,
the open edges left on expired nodes (must be 0), and the sweep's record on its :KgMeta node;
then the seconds, and the same sweep again (must write nothing).  The namespace is deleted
afterwards, in batches.

    .venv/bin/python benchmarks/bench_decay.py [--size 1000000] [--batch-size 2000] [--keep]

Run it alone (`pgrep -fa benchmarks/` empty): it needs both cores.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    chunks,
    connection,
    delete_namespace,
    ensure_schema,
    log,
    new_namespace,
    sync_driver,
    table,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)

SEED_KNOWLEDGE = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:Knowledge:KgText {
  namespace: $ns, name: row.name, name_lower: row.name_lower, entityType: row.type, type_lower: row.type,
  text_lower: row.name_lower + '\n' + row.type,
  content: row.content, trust: row.trust, category: row.category, source: 'bench',
  stability: row.stability, memory_level: row.level, access_count: row.accesses, last_access: row.last_access,
  sessions: row.sessions, created_at: row.created_at, updated_at: row.created_at, obs_next: 1})
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.content, text_lower: row.content_lower,
                                              seq: 0, created_at: row.created_at, role: 'content'})
""".strip()

SEED_EDGES = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.type)]->(b)
SET r.weight = row.weight, r.valid_from = row.created_at, r.created_at = row.created_at, r.source = 'bench'
""".strip()

#: _common's batched namespace delete, for the expired nodes it does not see (they lost :KgNode)

READ_BACK = """
CALL () { MATCH (k:Knowledge) WHERE k.namespace = $ns RETURN count(k) AS knowledge,
          count(CASE WHEN k.memory_level = 3 THEN 1 END) AS level3 }
CALL () { MATCH (k:ExpiredKnowledge) WHERE k.namespace = $ns
          RETURN count(CASE WHEN k.expired_reason = 'decay' AND k.expired_at = $now THEN 1 END) AS expired }
CALL () { MATCH (k:ExpiredKnowledge)-[r]-() WHERE k.namespace = $ns AND type(r) <> 'HAS_OBSERVATION'
            AND (r.valid_until IS NULL OR r.valid_until > $now)
          RETURN count(r) AS open_edges_on_expired }
CALL () { MATCH (k:ExpiredKnowledge)-[r]-() WHERE k.namespace = $ns AND type(r) <> 'HAS_OBSERVATION' AND r.valid_until = $now
          RETURN count(DISTINCT r) AS edges_closed }
OPTIONAL MATCH (m:KgMeta {key: 'decay_sweep:' + $ns})
RETURN knowledge, level3, expired, open_edges_on_expired, edges_closed, m.scanned AS meta_scanned,
       m.expired AS meta_expired, m.promoted AS meta_promoted, m.seconds AS meta_seconds, m.cursor AS meta_cursor
""".strip()

TRUSTS = {"principle": 30.0, "pattern": 7.0, "inference": 3.0}


def knowledge_row(i: int, rng: random.Random) -> tuple[dict[str, Any], str]:
    """Node i and the group it was seeded in."""
    g = i % 100
    days = timedelta(days=1)
    row: dict[str, Any] = {
        "name": f"K-{i:07d}",
        "accesses": 0,
        "last_access": None,
        "sessions": ["s0"],
        "level": 1,
        "category": "creative",
    }
    if g < 12:  # due to expire
        group, trust = "expire", "inference"
        row["created_at"] = NOW - days * rng.uniform(150, 400)
    elif g < 17:  # due for promotion to 3 (age >= 14 d, accesses 5..49)
        group, trust = "promote", "pattern"
        row["created_at"] = NOW - days * rng.uniform(20, 60)
        row["accesses"] = rng.randint(5, 49)
        row["last_access"] = NOW - days * rng.uniform(1, 10)
    elif g < 27:  # fading, not expiring
        group, trust = "fading", "pattern"
        row["created_at"] = NOW - days * rng.uniform(40, 120)
    elif g < 32:  # fundamentals: R = 1, level 4 already
        group, trust = "fundamental", "principle"
        row["created_at"] = NOW - days * rng.uniform(0, 1000)
        row["category"], row["level"] = "fundamental", 4
    else:  # fresh
        group, trust = "fresh", rng.choice(list(TRUSTS))
        row["created_at"] = NOW - days * rng.uniform(0, 10)
    row["trust"] = trust
    row["stability"] = 365.0 if row["category"] == "fundamental" else TRUSTS[trust]
    row["type"] = ("rule", "procedure", "observation", "insight", "preference")[i % 5]
    row["content"] = f"knowledge {i}: when {rng.choice(WORDS)} then {rng.choice(WORDS)} ({group})"
    row["content_lower"] = row["content"].lower()
    row["name_lower"] = row["name"].lower()
    return row, group


WORDS = "deploy migrate review test release rollback index cache schema query".split()


def seed(drv: Any, database: str, ns: str, n: int, chunk: int = 10_000) -> dict[str, int]:
    rng = random.Random(7)
    groups: dict[str, int] = {}
    t0 = time.perf_counter()
    for rows_range in chunks(n, chunk):
        rows = []
        for i in rows_range:
            row, group = knowledge_row(i, rng)
            groups[group] = groups.get(group, 0) + 1
            rows.append(row)
        drv.execute_query(SEED_KNOWLEDGE, rows=rows, ns=ns, database_=database)
        if rows_range.stop % 100_000 == 0 or rows_range.stop == n:
            log(f"  seeded {rows_range.stop}/{n} knowledge nodes ({time.perf_counter() - t0:.0f} s)")
    edges = list(range(0, n, 20))
    for part in chunks(len(edges), chunk):
        rows = [
            {
                "from": f"K-{edges[j]:07d}",
                "to": f"K-{(edges[j] + 13) % n:07d}",
                "type": ("refines", "implies", "causes")[j % 3],
                "weight": 0.8,
                "created_at": NOW - timedelta(days=500),
            }
            for j in part
        ]
        drv.execute_query(SEED_EDGES, rows=rows, ns=ns, database_=database)
    groups["edges"] = len(edges)
    log(f"  seeded in {time.perf_counter() - t0:.0f} s: {groups}")
    return groups


async def sweep(conn: Any, ns: str, batch_size: int, progress: bool) -> dict[str, Any]:
    from neo4j import AsyncGraphDatabase
    from tqdm import tqdm

    from kg_neo4j.clock import ManualClock
    from kg_neo4j.store import GraphStore
    from kg_neo4j.store.maintenance import MaintenanceStore

    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    try:
        ms = MaintenanceStore(GraphStore(drv, database=conn.database, namespace=ns, clock=ManualClock(NOW)))
        bar = tqdm(total=0, unit="node", desc="decay sweep", file=sys.stderr, disable=not progress)

        def total(t: int) -> None:
            bar.total = t
            bar.refresh()

        t0 = time.perf_counter()
        report = await ms.decay_sweep(batch_size=batch_size, on_total=total, on_progress=bar.update)
        seconds = time.perf_counter() - t0
        bar.close()
        read_back = (await drv.execute_query(READ_BACK, ns=ns, now=NOW, database_=conn.database))[0][0]
        t1 = time.perf_counter()
        again = await ms.decay_sweep(batch_size=batch_size)
        return {
            "report": report,
            "seconds": seconds,
            "read_back": read_back,
            "again": again,
            "again_seconds": time.perf_counter() - t1,
        }
    finally:
        await drv.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--keep", action="store_true", help="keep the namespace (default: delete it)")
    ap.add_argument("--no-progress", dest="progress", action="store_false")
    args = ap.parse_args()

    conn = connection()
    ensure_schema(conn)
    drv = sync_driver(conn)
    ns = new_namespace("decay", args.size)
    log(f"namespace {ns}")
    try:
        groups = seed(drv, conn.database, ns, args.size)
        log("sweeping")
        out = asyncio.run(sweep(conn, ns, args.batch_size, args.progress))
        rec = out["read_back"]
        report, again = out["report"], out["again"]
        print(
            f"\nDecay sweep over {args.size:,} knowledge nodes (batch {args.batch_size}), NOW = {NOW.isoformat()}"
        )
        print(
            table(
                ["read back from the graph", "value", "seeded / expected"],
                [
                    ["knowledge nodes left", rec["knowledge"], args.size - groups["expire"]],
                    ["expired (reason 'decay', at NOW)", rec["expired"], groups["expire"]],
                    ["at level 3 (promoted)", rec["level3"], groups["promote"]],
                    ["semantic edges closed at NOW", rec["edges_closed"], "-"],
                    ["open edges left on expired nodes", rec["open_edges_on_expired"], 0],
                    [":KgMeta scanned", rec["meta_scanned"], args.size],
                    [":KgMeta expired", rec["meta_expired"], groups["expire"]],
                    [":KgMeta promoted", rec["meta_promoted"], groups["promote"]],
                    [":KgMeta cursor (null = complete)", str(rec["meta_cursor"]), "None"],
                ],
                left_first=True,
            )
        )
        print(
            table(
                ["run", "seconds", "scanned", "written", "expired", "promoted", "fading"],
                [
                    [
                        "sweep",
                        round(out["seconds"], 2),
                        report.scanned,
                        report.written,
                        report.expired,
                        report.promoted,
                        report.fading,
                    ],
                    [
                        "second sweep",
                        round(out["again_seconds"], 2),
                        again.scanned,
                        again.written,
                        again.expired,
                        again.promoted,
                        again.fading,
                    ],
                ],
                left_first=True,
            )
        )
    finally:
        if not args.keep:
            t0 = time.perf_counter()
            delete_namespace(drv, conn.database, ns)
            drv.execute_query(
                "MATCH (m:KgMeta {key: $key}) DELETE m", key=f"decay_sweep:{ns}", database_=conn.database
            )
            log(f"deleted namespace {ns} in {time.perf_counter() - t0:.0f} s")
        drv.close()


if __name__ == "__main__":
    main()
