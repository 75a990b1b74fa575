"""PROFILE the product's read statements on a seeded 100k-entity namespace and flag label scans.

Seeds N entities (3 observations each, one relation each) with raw ``UNWIND`` statements under
the product's schema (its own bootstrap), then runs ``PROFILE`` of the exact statements of
``cypher/read.cypher`` -- ``search_nodes``, ``open_nodes``, ``read_graph_page`` -- and of
``traverse_graph``, with the parameters ``GraphStore`` passes (``ns``, ``now``, ``at`` and the
statement's own: ``q``/``max_entities``, ``names``, ``after``/``limit``, ...).

For each it prints the operator tree (operator, rows, db hits, details) and a verdict: any
``AllNodesScan``, ``NodeByLabelScan``, relationship type/all scans or full ``NodeIndexScan``
is flagged, and so is a "prefix scan": an index seek on ``namespace = $ns AND x IS NOT NULL``,
which reads every entity of the namespace (the goal is selective index seeks /
``NodeIndexContainsScan`` only).  Exit status 1 if any statement has one.  A seek that reads
more than 10x the page it returns gets a WARNING.  The query cache is cleared before each
statement (``--no-clear-cache`` to keep it), so each plan is made for its own parameter values.

``--other N`` also seeds a second namespace with the *same* N names, to show what the other
namespaces of a shared database cost a namespaced read.

    .venv/bin/python benchmarks/profile_search_nodes.py [--size 100000] [--other 0] [--keep]
"""

from __future__ import annotations

import argparse
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
    sync_driver,
)

from kg_neo4j.cypher import queries  # noqa: E402
from kg_neo4j.store.answer_cap import DEFAULT_MAX_ANSWER_BYTES  # noqa: E402

#: Operators that read every node / relationship (of a label or type) instead of seeking.
BAD = {
    "AllNodesScan",
    "NodeByLabelScan",
    "UnionNodeByLabelsScan",
    "IntersectionNodeByLabelsScan",
    "SubtractionNodeByLabelsScan",
    "DirectedRelationshipTypeScan",
    "UndirectedRelationshipTypeScan",
    "DirectedAllRelationshipsScan",
    "UndirectedAllRelationshipsScan",
    "NodeIndexScan",
    "DirectedRelationshipIndexScan",
    "UndirectedRelationshipIndexScan",
    "PartitionedAllNodesScan",
    "PartitionedNodeByLabelScan",
}

#: GraphStore's cap: search_nodes passes max_entities = max_answer_bytes // 16 + 1.
MAX_ENTITIES = max(1, DEFAULT_MAX_ANSWER_BYTES // 16) + 1


def seed(drv: Any, db: str, ns: str, n: int, created: datetime) -> None:
    t_e = seed_entities(drv, db, ns, n, created_at=created)

    def rel(k: int, _rng: Any) -> dict[str, Any]:
        return {
            "from": entity_name(k),
            "to": entity_name((k + 7919) % n),
            "relationType": RELATION_TYPES[k % len(RELATION_TYPES)],
            "weight": 0.5,
            "valid_from": created,
            "valid_until": None,
            "created_at": created,
        }

    t_r = seed_relations(drv, db, ns, n, n, row_fn=rel)
    log(f"  seeded {ns}: {n} entities in {t_e:.1f}s, {n} relations in {t_r:.1f}s")


def op_name(plan: dict[str, Any]) -> str:
    return str(plan["operatorType"]).split("@")[0]


def walk(
    plan: dict[str, Any],
    depth: int = 0,
    out: list[str] | None = None,
    bad: list[str] | None = None,
    total: list[int] | None = None,
) -> tuple[list[str], list[str], int]:
    out = [] if out is None else out
    bad = [] if bad is None else bad
    total = [0] if total is None else total
    name = op_name(plan)
    args = plan.get("args", {})
    details = str(args.get("Details", "")).replace("\n", " ")
    if len(details) > 110:
        details = details[:107] + "..."
    rows = plan.get("rows", args.get("Rows", "?"))
    hits = plan.get("dbHits", args.get("DbHits", 0)) or 0
    total[0] += int(hits)
    prefix_scan = "Seek" in name and " IS NOT NULL" in details
    flag = (
        "  <-- SCAN"
        if name in BAD
        else "  <-- PREFIX SCAN (reads the whole namespace)"
        if prefix_scan
        else ""
    )
    out.append(
        f"{'  ' * depth}{name:<{max(1, 34 - 2 * depth)}} rows={rows!s:>7} dbHits={hits!s:>8}  {details}{flag}"
    )
    if name in BAD or prefix_scan:
        bad.append(f"{name} rows={rows}: {details}")
    for child in plan.get("children", []):
        walk(child, depth + 1, out, bad, total)
    return out, bad, total[0]


def entry_rows(plan: dict[str, Any]) -> list[tuple[str, int]]:
    """(operator, rows) of every leaf seek/scan operator."""
    found = []
    name = op_name(plan)
    if "Seek" in name or "Scan" in name:
        found.append((name, int(plan.get("rows", 0) or 0)))
    for child in plan.get("children", []):
        found.extend(entry_rows(child))
    return found


def profile(
    drv: Any,
    db: str,
    title: str,
    name: str,
    params: dict[str, Any],
    text: str | None = None,
    clear_cache: bool = True,
) -> list[str]:
    text = text or queries()[name]
    if clear_cache:
        # Plan this statement afresh for these parameter values (else the first plan cached for the
        # statement text would be reused whatever the parameters).
        drv.execute_query("CALL db.clearQueryCaches()", database_=db)
    # One unprofiled run first (page cache), then the profiled one.
    drv.execute_query(text, parameters_=params, database_=db)
    t0 = time.perf_counter()
    records, summary, _ = drv.execute_query("PROFILE " + text, parameters_=params, database_=db)
    ms = (time.perf_counter() - t0) * 1000
    lines, bad, hits = walk(summary.profile)
    shown = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in params.items()}
    print(f"=== {title}: PROFILE {name}")
    print(f"    params: {shown}")
    print(f"    {len(records)} record(s), {hits:,} db hits in total, {ms:.1f} ms (profiled)")
    for line in lines:
        print("    " + line)
    if bad:
        print(f"    VERDICT: {name}: FAIL -- {len(bad)} scan operator(s): " + "; ".join(bad))
    else:
        ops = sorted(
            {line.split()[0] for line in lines if "Seek" in line.split()[0] or "Scan" in line.split()[0]}
        )
        print(
            f"    VERDICT: {name}: OK -- no AllNodesScan / NodeByLabelScan / full or prefix scans; "
            f"entry operators: {', '.join(ops) or '(none)'}"
        )
    # A seek is not enough: flag a seek that reads far more index entries than the page it returns.
    limit = params.get("limit")
    for op, rows in entry_rows(summary.profile):
        if limit and rows > 10 * limit:
            print(f"    WARNING: {op} reads {rows:,} index entries to return a page of {limit:,}")
    print()
    return bad


#: NOT product code: read_graph_page with the one change that lets the (namespace, name) range index
#: provide the order (ORDER BY e.namespace, e.name -- namespace is fixed, so the order is the same).
EXPERIMENT_PAGE_ORDER = queries()["read_graph_page"].replace(
    "WITH e ORDER BY e.name\n  LIMIT $limit", "WITH e ORDER BY e.namespace, e.name\n  LIMIT $limit"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument(
        "--other",
        type=int,
        default=0,
        help="also seed another namespace with the same names (this many entities)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the seeded namespaces")
    ap.add_argument("--namespace", help="profile an already seeded namespace (skips seeding; implies --keep)")
    ap.add_argument(
        "--no-clear-cache",
        dest="clear_cache",
        action="store_false",
        help="do not clear the query cache before each profiled statement",
    )
    args = ap.parse_args()

    conn = connection()
    ensure_schema(conn)
    drv = sync_driver(conn)
    db = conn.database
    n = args.size
    ns = args.namespace or new_namespace("profile", n)
    ns_other = new_namespace("profile-other", args.other) if args.other else None
    keep = args.keep or bool(args.namespace)
    created = datetime(2025, 1, 1, tzinfo=UTC)
    failures: dict[str, list[str]] = {}
    try:
        if not args.namespace:
            log(f"seeding {ns}")
            seed(drv, db, ns, n, created)
        if ns_other:
            log(f"seeding {ns_other} (same names, another namespace)")
            seed(drv, db, ns_other, args.other, created)
        now = datetime.now(UTC)
        past = created + timedelta(days=1)
        base = {"ns": ns, "now": now, "at": now}
        mid = n // 2
        runs = [
            (
                "search_nodes, name substring hitting 10 entities",
                "search_nodes",
                {**base, "q": f"entity-{mid // 10:06d}", "max_entities": MAX_ENTITIES},
            ),
            (
                "search_nodes, observation substring hitting 11 entities",
                "search_nodes",
                {**base, "q": f"#{mid // 10}", "max_entities": MAX_ENTITIES},
            ),
            (
                "search_nodes, asOf a past time",
                "search_nodes",
                {**base, "at": past, "q": f"entity-{mid // 10:06d}", "max_entities": MAX_ENTITIES},
            ),
            (
                "open_nodes, 5 names",
                "open_nodes",
                {**base, "names": [entity_name(mid + 17 * k) for k in range(5)]},
            ),
            (
                "read_graph_page, first page (limit 1000)",
                "read_graph_page",
                {**base, "after": "", "limit": 1000},
            ),
            (
                "read_graph_page, page after a middle name (limit 1000)",
                "read_graph_page",
                {**base, "after": entity_name(mid), "limit": 1000},
            ),
            (
                "read_graph_page, last page (50 entities left, limit 1000)",
                "read_graph_page",
                {**base, "after": entity_name(n - 51), "limit": 1000},
            ),
            (
                "read_graph_page, asOf a past time (limit 100)",
                "read_graph_page",
                {**base, "at": past, "after": entity_name(mid), "limit": 100},
            ),
            (
                "traverse_graph, depth 2 from one entity",
                "traverse_graph",
                {
                    **base,
                    "start": [entity_name(mid)],
                    "max_depth": 2,
                    "direction": "both",
                    "types": None,
                    "min_weight": 0.0,
                    "fanout": 50,
                    "fanout_probe": 51,
                    "frontier_cap": 101,
                },
            ),
            (
                "traverse_graph, depth 3 from one entity",
                "traverse_graph",
                {
                    **base,
                    "start": [entity_name(mid)],
                    "max_depth": 3,
                    "direction": "both",
                    "types": None,
                    "min_weight": 0.0,
                    "fanout": 50,
                    "fanout_probe": 51,
                    "frontier_cap": 101,
                },
            ),
        ]
        for title, name, params in runs:
            bad = profile(drv, db, title, name, params, clear_cache=args.clear_cache)
            if bad:
                failures[title] = bad
        if EXPERIMENT_PAGE_ORDER != queries()["read_graph_page"]:
            profile(
                drv,
                db,
                "EXPERIMENT, not product code: read_graph_page with ORDER BY e.namespace, e.name "
                "(first page, limit 1000)",
                "read_graph_page",
                {**base, "after": "", "limit": 1000},
                text=EXPERIMENT_PAGE_ORDER,
            )
        # A broad query: not a plan problem, but shows what an unselective substring costs.
        t0 = time.perf_counter()
        rec = drv.execute_query(
            queries()["search_nodes"],
            parameters_={**base, "q": "project", "max_entities": MAX_ENTITIES},
            database_=db,
        )[0][0]
        print(
            f"=== broad search_nodes('project'): {len(rec['entities']):,} entities, {len(rec['relations']):,} "
            f"relations in {time.perf_counter() - t0:.2f}s (no row cap below {MAX_ENTITIES:,} entities)"
        )
        print()
    finally:
        if not keep:
            for x in (ns, ns_other):
                if x:
                    log(f"deleting {x} ({delete_namespace(drv, db, x):.1f}s)")
        drv.close()

    print("SUMMARY")
    for title, _name, _ in runs:
        print(f"  {'FAIL' if title in failures else 'ok  '}  {title}")
    if failures:
        print(f"VERDICT: {len(failures)} profiled statement(s) contain label/full scans (see above)")
        return 1
    print("VERDICT: no AllNodesScan / NodeByLabelScan / full scans in any profiled statement")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
