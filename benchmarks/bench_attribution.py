"""What attribution costs a write: the product's write statements with and without it, side by side.

Every write records who made it (docs/team.md#attribution): ``created_by`` on each node and relationship
it creates, ``changed_by`` and a ``v_by`` entry on each relation ``update_relations`` changes.  This
benchmark runs the store's own calls (``GraphStore.create_entities``, ``add_observations``,
``create_relations``, ``update_relations``: Python rows, the executor, the named statement) against two
namespaces of one database: one store runs the shipped statements, the other the same statements with
every attribution assignment taken out (checked: no ``$actor`` left).  Both namespaces are first filled
with ``--n`` entities (3 observations each, one relation each); then ``--rounds`` rounds time each call
once per variant, in an order shuffled every round, so both variants see the same noise.  Embeddings
off.  The namespaces are deleted at the end.

    .venv/bin/python benchmarks/bench_attribution.py --n 10000 --rounds 60
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from neo4j import AsyncGraphDatabase

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    RELATION_TYPES,
    connection,
    delete_namespace,
    entity_arg,
    entity_row,
    log,
    new_namespace,
    ring_relation,
    summary_ms,
    sync_driver,
    table,
)

from kg_neo4j.models import EntityIn, ObservationAdd, RelationIn, RelationUpdate  # noqa: E402
from kg_neo4j.store import GraphStore  # noqa: E402
from kg_neo4j.store.connection import bootstrap  # noqa: E402
from kg_neo4j.store.type_labels import type_labels  # noqa: E402

STATEMENTS = ("create_entities", "add_observations", "create_relations", "update_relations")

#: the attribution assignments of those statements, as the shipped text writes them
ATTRIBUTION = [
    re.compile(r"\s*// who made each change, beside v_until[^\n]*\n\s*SET x\.v_by = [^\n]*\n\s*\+ \$actor"),
    re.compile(r" (?:n|r)\.created_by = \$actor,"),
    re.compile(r" created_by: \$actor,"),
    re.compile(r", x\.changed_by = \$actor"),
]


def unattributed(text: str) -> str:
    for pattern in ATTRIBUTION:
        text = pattern.sub("", text)
    code = re.sub(r"//[^\n]*", "", text)
    assert "$actor" not in code and not re.search(r"\w_by\s*[=:]", code), text
    return text


def db_hits(plan: dict[str, Any]) -> int:
    return int(plan.get("dbHits", 0)) + sum(db_hits(c) for c in plan.get("children", []))


async def profiled(driver: Any, database: str, text: str, params: dict[str, Any]) -> int:
    """The database hits of one run of ``text`` (PROFILE), rolled back: deterministic, unlike a time."""
    async with driver.session(database=database) as session:
        tx = await session.begin_transaction()
        try:
            summary = await (await tx.run("CYPHER runtime=slotted PROFILE " + text, params)).consume()
        finally:
            await tx.rollback()
    return db_hits(summary.profile or {})


async def work_done(driver: Any, database: str, stores: dict[str, GraphStore], n: int) -> list[list[Any]]:
    """create_entities of 100 new entities (3 observations each) and create_relations of 10, profiled."""
    rng = random.Random(7)
    rows = []
    for i in range(100):
        row = entity_row(n + 900_000 + i, rng)
        rows.append({**row, "type_labels": type_labels(row["entityType"])})
    rels = [
        {
            **ring_relation(i, n),
            "to": f"Entity-{(i + 1) % n:07d}",
            "valid_from": None,
            "valid_until": None,
            "reasoning": None,
            "source": None,
        }
        for i in range(10)
    ]
    out = []
    for name, params in (("create_entities", {"rows": rows}), ("create_relations", {"rows": rels})):
        hits = {}
        for variant, store in stores.items():
            text = store.x.q[name]
            hits[variant] = await profiled(driver, database, text, store.x.shared.apply(dict(params)))
        out.append([name, hits["without"], hits["with"], hits["with"] / hits["without"]])
    return out


class Overlay:
    """The executor's statements with some texts replaced."""

    def __init__(self, base: Any, texts: dict[str, str]) -> None:
        self.base, self.texts = base, texts

    def __getitem__(self, name: str) -> str:
        return self.texts.get(name) or self.base[name]


def calls(store: GraphStore, n: int, r: int) -> dict[str, Any]:
    """Round ``r``'s calls on ``store`` (fresh names each round; the updates and additions act on the fill)."""
    rng = random.Random(r)
    base = n + r * 1000
    batch = [EntityIn(**entity_arg(base + i, rng)) for i in range(100)]
    one = [EntityIn(**entity_arg(base + 500, rng))]
    targets = [f"Entity-{rng.randrange(n):07d}" for _ in range(10)]
    adds = [ObservationAdd(entityName=targets[0], contents=[f"round {r} note {k}" for k in range(3)])]
    rels = [
        # types that exist already: a new relationship type is a token write of its own
        RelationIn(**{"from": t}, to=f"Entity-{(base + k) % n:07d}", relationType=RELATION_TYPES[k % 4])
        for k, t in enumerate(targets)
    ]
    ups = [RelationUpdate(**{**ring_relation(int(t[7:]), n), "weight": 0.5}) for t in dict.fromkeys(targets)]
    return {
        "create_entities x100": lambda: store.create_entities(batch),
        "create_entities x1": lambda: store.create_entities(one),
        "add_observations 1x3": lambda: store.add_observations(adds),
        "create_relations x10": lambda: store.create_relations(rels),
        "update_relations x10": lambda: store.update_relations(ups),
    }


async def fill(store: GraphStore, n: int) -> None:
    rng = random.Random(0)
    for start in range(0, n, 500):
        stop = min(n, start + 500)
        await store.create_entities([EntityIn(**entity_arg(i, rng)) for i in range(start, stop)])
        await store.create_relations([RelationIn(**ring_relation(i, n)) for i in range(start, stop)])


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=10000, help="entities each namespace holds first")
    ap.add_argument("--rounds", type=int, default=60)
    args = ap.parse_args()
    conn = connection()
    driver = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    await bootstrap(driver, conn.database)
    stores = {
        "with": GraphStore(driver, database=conn.database, namespace=new_namespace("attr-with", args.n)),
        "without": GraphStore(
            driver, database=conn.database, namespace=new_namespace("attr-without", args.n)
        ),
    }
    stripped = stores["without"]
    stripped.x.q = Overlay(stripped.x.q, {name: unattributed(stripped.x.q[name]) for name in STATEMENTS})
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for variant, store in stores.items():
            t0 = time.perf_counter()
            await fill(store, args.n)
            log(f"{variant}: {args.n} entities in {time.perf_counter() - t0:.1f} s")
        for r in range(args.rounds):
            work = [(v, op, fn) for v, s in stores.items() for op, fn in calls(s, args.n, r).items()]
            random.Random(1000 + r).shuffle(work)
            for variant, op, fn in work:
                t0 = time.perf_counter()
                await fn()
                times.setdefault((op, variant), []).append(time.perf_counter() - t0)
        rows = []
        for op in calls(stores["with"], args.n, 0):
            w, wo = summary_ms(times[(op, "with")]), summary_ms(times[(op, "without")])
            # paired: the two variants of one call ran in the same round, so a busy moment hits both
            pairs = zip(times[(op, "with")], times[(op, "without")], strict=True)
            paired = statistics.median(a / b for a, b in pairs)
            rows.append([op, wo[0], w[0], w[0] / wo[0], paired, wo[2], w[2]])
        print(f"n={args.n} rounds={args.rounds}; ms")
        headers = ["call", "p50 without", "p50 with", "p50 ratio", "median paired ratio", "mean without"]
        print(table([*headers, "mean with"], rows, left_first=True))
        print("database hits of one call (PROFILE, rolled back)")
        hits = await work_done(driver, conn.database, stores, args.n)
        print(table(["statement", "without", "with", "ratio"], hits, left_first=True))
    finally:
        await driver.close()
        drv = sync_driver(conn)
        for store in stores.values():
            delete_namespace(drv, conn.database, store.namespace)
        drv.close()


if __name__ == "__main__":
    asyncio.run(main())
