"""Traversal latency and the cost of as-of (validity) predicates on a 100k-entity graph.

Seeds (raw ``UNWIND``, ~10k rows per transaction) N entities (2 observations each) and 3N random
relationships (a few types, random weights), with a time model such that every node and
relationship already exists and is valid at ``AT_PAST`` -- so an as-of read at ``AT_PAST`` and the
same read without any validity predicate return the same rows, and the difference between them is
the cost of the predicates alone:

* entities created in [T0, T0 + 30 d); relationships created in [T0 + 30 d, T0 + 60 d), some with a
  backdated valid_from; 10% of relationships closed (valid_until) in [T0 + 90 d, T0 + 120 d)
  -- after AT_PAST = T0 + 75 d, but before now (so a read of *now* hides them).

Reports:
1. p50/p95 of ``GraphStore.traverse`` at depth 2 and 3 (random start entity, default fanout 50,
   limit 100), for now (no asOf) and for asOf = AT_PAST.
2. As-of vs. no-validity baseline, at the Cypher level (same driver call, same parameters, the
   two statements interleaved call by call): the store's ``read_graph_page`` (limit 100, a random
   cursor), ``open_nodes`` (5 random names) and ``traverse_graph`` (depth 2 and 3) with
   at = AT_PAST, vs. the BASELINE: the same statement with every created_at / valid_from /
   valid_until predicate removed (see BASELINE_PATTERNS; the baselines are printed at the end).
   Target: as-of at most 1.5x the baseline.

    .venv/bin/python benchmarks/bench_traversal.py [--size 100000] [--rels-per-entity 3] [--calls 200] [--keep]
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
    RELATION_TYPES,
    connection,
    delete_namespace,
    ensure_schema,
    entity_name,
    log,
    new_namespace,
    seed_entities,
    seed_relations,
    summary_ms,
    sync_driver,
    table,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
AT_PAST = T0 + timedelta(days=75)


# =====================================================================================================
# BASELINE statements.  The product's own statements (read_graph_page, open_nodes, traverse_graph, read
# from cypher/*.cypher at run time, so the comparison follows the product as it changes), with every
# validity predicate replaced by `true`:
#     x.created_at <= $at                                   (entities, observations, relations)
#     r.valid_from <= $at
#     (r.valid_until IS NULL OR r.valid_until > $at)
# Cypher simplifies `true AND p` to `p` and drops `WHERE true`, so this is the statement with the
# predicates removed and nothing else changed.  Each pattern must match (else the product changed its
# predicates and the baseline would silently not be one: the run stops), and the result must contain no
# comparison against $at any more.  The baselines are printed at the end of the output (--print-baselines
# prints them and exits).  They are NOT product code: they exist only to price the as-of predicates.
# =====================================================================================================
_X = r"\b[a-z]\w*(?:\(\w+\))?"  # a variable (`r`) or a function of one (`startNode(r)`)
BASELINE_PATTERNS = [
    (rf"\(\s*({_X})\.valid_until\s+IS\s+NULL\s+OR\s+\1\.valid_until\s*>\s*\$at\s*\)", "true"),
    (rf"{_X}\.valid_from\s*<=\s*\$at\b", "true"),
    (rf"{_X}\.created_at\s*<=\s*\$at\b", "true"),
]
BASELINE_OF = ("read_graph_page", "open_nodes", "traverse_graph")


def baseline_text(name: str) -> str:
    import re

    from kg_neo4j.cypher import queries

    text = queries()[name]
    for pattern, repl in BASELINE_PATTERNS:
        text, k = re.subn(pattern, repl, text)
        if k == 0:
            raise AssertionError(
                f"baseline for {name}: pattern {pattern!r} no longer matches the product statement"
            )
    code = [line.split("//")[0] for line in text.splitlines()]  # comments may mention $at
    if any("$at" in line for line in code):
        left = [line.strip() for line in code if "$at" in line]
        raise AssertionError(f"baseline for {name} still compares against $at: {left}")
    return text


# --- seeding -----------------------------------------------------------------------------------------
def seed(drv: Any, db: str, ns: str, n: int, n_rel: int) -> None:
    def created(i: int) -> datetime:
        # deterministic spread over 30 days
        return T0 + timedelta(seconds=(i * 2654435761) % (30 * 86400))

    t_e = seed_entities(drv, db, ns, n, created_at=created, n_obs=2)
    log(f"  {n} entities in {t_e:.1f}s")

    def rel(_k: int, rng: random.Random) -> dict[str, Any]:
        a = rng.randrange(n)
        b = rng.randrange(n - 1)
        b = b + 1 if b >= a else b  # no self loops
        c = T0 + timedelta(days=30, seconds=rng.randrange(30 * 86400))
        vf = c - timedelta(days=rng.randrange(10)) if rng.random() < 0.3 else c
        vu = T0 + timedelta(days=90, seconds=rng.randrange(30 * 86400)) if rng.random() < 0.1 else None
        return {
            "from": entity_name(a),
            "to": entity_name(b),
            "relationType": rng.choice(RELATION_TYPES),
            "weight": round(rng.random(), 3),
            "valid_from": vf,
            "valid_until": vu,
            "created_at": c,
        }

    t_r = seed_relations(drv, db, ns, n, n_rel, row_fn=rel)
    log(f"  {n_rel} relations in {t_r:.1f}s")


# --- measuring ---------------------------------------------------------------------------------------
async def measure(conn: Any, ns: str, n: int, calls: int) -> dict[str, Any]:
    from neo4j import AsyncGraphDatabase, RoutingControl

    from kg_neo4j.models import TraverseIn
    from kg_neo4j.store import GraphStore

    adrv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    store = GraphStore(adrv, database=conn.database, namespace=ns)
    rng = random.Random(11)
    out: dict[str, Any] = {"traverse": {}, "asof": {}}

    async def baseline(text: str, **params: Any) -> list[Any]:
        # Exactly what the store executor's read does (one managed read transaction), with the baseline text.
        params.setdefault("ns", ns)
        params.setdefault("now", datetime.now(UTC))
        params.setdefault("at", params["now"])
        records, _, _ = await adrv.execute_query(
            text, parameters_=params, database_=conn.database, routing_=RoutingControl.READ
        )
        return records

    try:
        # 1. GraphStore.traverse, end to end (query + Python assembly of paths).
        for depth in (2, 3):
            for label, as_of in (("now", None), ("asOf past", AT_PAST)):
                for _ in range(10):  # warm-up
                    await store.traverse(
                        TraverseIn(start=[entity_name(rng.randrange(n))], maxDepth=depth, asOf=as_of)
                    )
                samples, reached, truncated = [], 0, 0
                for _ in range(calls):
                    req = TraverseIn(start=[entity_name(rng.randrange(n))], maxDepth=depth, asOf=as_of)
                    t0 = time.perf_counter()
                    res = await store.traverse(req)
                    samples.append(time.perf_counter() - t0)
                    reached += len(res.entities)
                    truncated += res.truncated
                out["traverse"][(depth, label)] = (samples, reached / calls, truncated)
                p50, p95, _ = summary_ms(samples)
                log(
                    f"  traverse depth {depth} {label}: p50 {p50:.1f} ms p95 {p95:.1f} ms, "
                    f"{reached / calls:.1f} entities/answer"
                )

        # 2. as-of (store's statement, at = AT_PAST) vs baseline, interleaved call by call.
        def page_params() -> dict[str, Any]:
            return {"after": entity_name(rng.randrange(n)), "limit": 100}

        def open_params() -> dict[str, Any]:
            return {"names": [entity_name(rng.randrange(n)) for _ in range(5)]}

        def trav_params(depth: int) -> Any:
            def make() -> dict[str, Any]:
                return {
                    "start": [entity_name(rng.randrange(n))],
                    "max_depth": depth,
                    "direction": "both",
                    "types": None,
                    "min_weight": 0.0,
                    "fanout": 50,
                    "fanout_probe": 51,
                    "frontier_cap": 101,
                }

            return make

        cases = [
            ("read_graph_page (limit 100)", "read_graph_page", baseline_text("read_graph_page"), page_params),
            ("open_nodes (5 names)", "open_nodes", baseline_text("open_nodes"), open_params),
            ("traverse_graph depth 2", "traverse_graph", baseline_text("traverse_graph"), trav_params(2)),
            ("traverse_graph depth 3", "traverse_graph", baseline_text("traverse_graph"), trav_params(3)),
        ]
        for label, name, base_text, make in cases:
            for _ in range(10):  # warm-up both
                p = make()
                await store.x.read(name, at=AT_PAST, **p)
                await baseline(base_text, **p)
            s_asof, s_base, s_now = [], [], []
            mismatches = 0
            for i in range(calls):
                p = make()
                order = ("asof", "base", "now") if i % 2 == 0 else ("now", "base", "asof")
                got: dict[str, Any] = {}
                for which in order:
                    t0 = time.perf_counter()
                    if which == "asof":
                        got[which] = await store.x.read(name, at=AT_PAST, **dict(p))
                        s_asof.append(time.perf_counter() - t0)
                    elif which == "now":
                        got[which] = await store.x.read(name, **dict(p))
                        s_now.append(time.perf_counter() - t0)
                    else:
                        got[which] = await baseline(base_text, **dict(p))
                        s_base.append(time.perf_counter() - t0)
                if _shape(got["asof"]) != _shape(got["base"]):
                    mismatches += 1
            out["asof"][label] = (s_asof, s_base, s_now, mismatches)
            a50, a95, _ = summary_ms(s_asof)
            b50, b95, _ = summary_ms(s_base)
            log(f"  {label}: as-of p50 {a50:.1f} / baseline p50 {b50:.1f} ms; mismatches {mismatches}")
    finally:
        await adrv.close()
    return out


def _shape(records: list[Any]) -> tuple[int, int]:
    """(entities, relations/edges) of one answer: as-of at AT_PAST and the baseline must agree."""
    rec = records[0]
    if "edges" in rec.keys():
        return len(rec["entities"]), len(rec["edges"])
    return len(rec["entities"]), len(rec["relations"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="entities")
    ap.add_argument("--rels-per-entity", type=int, default=3, help="relationships = this x entities")
    ap.add_argument("--calls", type=int, default=200, help="timed calls per measurement")
    ap.add_argument("--keep", action="store_true", help="keep the seeded namespace")
    ap.add_argument("--namespace", help="reuse an already seeded namespace (skips seeding; implies --keep)")
    ap.add_argument("--print-baselines", action="store_true", help="print the baseline statements and exit")
    args = ap.parse_args()
    baselines = {
        name: baseline_text(name) for name in BASELINE_OF
    }  # fails early if the product changed shape
    if args.print_baselines:
        _print_baselines(baselines)
        return 0

    conn = connection()
    ensure_schema(conn)
    drv = sync_driver(conn)
    db = conn.database
    n, n_rel = args.size, args.size * args.rels_per_entity
    ns = args.namespace or new_namespace("trav", n)
    keep = args.keep or bool(args.namespace)
    try:
        if not args.namespace:
            log(f"seeding {ns}: {n} entities, {n_rel} relationships")
            seed(drv, db, ns, n, n_rel)
        res = asyncio.run(measure(conn, ns, n, args.calls))
    finally:
        if not keep:
            log(f"deleting {ns} ({delete_namespace(drv, db, ns):.1f}s)")
        drv.close()

    print()
    print(
        f"Graph: {n:,} entities (2 observations each), {n_rel:,} random relationships "
        f"({len(RELATION_TYPES)} types, random weights); {args.calls} timed calls each, random start/names"
    )
    print()
    print("GraphStore.traverse (end to end: one query + path assembly), fanout 50, limit 100, direction both")
    rows = []
    for (depth, label), (samples, reached, truncated) in res["traverse"].items():
        p50, p95, mean = summary_ms(samples)
        rows.append([depth, label, p50, p95, mean, f"{reached:.1f}", truncated])
    print(
        table(["depth", "asOf", "p50 ms", "p95 ms", "mean ms", "entities/answer", "truncated answers"], rows)
    )
    print()
    print(
        f"As-of reads (at = {AT_PAST.date()}, every row visible) vs. the same statement without validity "
        "predicates (BASELINE: the same statement, validity predicates -> true); Cypher level, same driver call, interleaved"
    )
    rows = []
    for label, (s_asof, s_base, s_now, mism) in res["asof"].items():
        a50, a95, am = summary_ms(s_asof)
        b50, b95, bm = summary_ms(s_base)
        n50, n95, _ = summary_ms(s_now)
        ratio = a50 / b50
        rows.append(
            [
                label,
                a50,
                a95,
                b50,
                b95,
                f"{ratio:.2f}x",
                f"{a95 / b95:.2f}x",
                "PASS" if ratio <= 1.5 else "FAIL",
                n50,
                n95,
                mism,
            ]
        )
    print(
        table(
            [
                "statement",
                "as-of p50",
                "as-of p95",
                "baseline p50",
                "baseline p95",
                "ratio p50",
                "ratio p95",
                "target <= 1.5x (p50)",
                "now p50",
                "now p95",
                "answer mismatches",
            ],
            rows,
        )
    )
    print(
        "  ms; 'now' = the store's statement with at = now (10% of relationships are closed by then, "
        "so it returns slightly less); 'answer mismatches' = calls where as-of and baseline returned "
        "different entity/relation counts (expected 0)."
    )
    print()
    _print_baselines(baselines)
    return 0


def _print_baselines(baselines: dict[str, str]) -> None:
    for name, text in baselines.items():
        print(f"-- BASELINE (not product code): {name} with every validity predicate replaced by true")
        print(text)
        print()


if __name__ == "__main__":
    raise SystemExit(main())
