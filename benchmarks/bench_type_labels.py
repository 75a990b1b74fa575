"""The type-label backfill (kg_neo4j/store/type_labels.py) on a database written before type labels.

Seeds N entities with the raw seeding statement (no product code: entities without type labels, as
an older kg-neo4j wrote them), then runs the product's backfill on that namespace, batch by batch,
and prints entities per second; reads back that every entity has its label; deletes the namespace.

    .venv/bin/python benchmarks/bench_type_labels.py [--size 50000] [--batch-size 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    connection,
    delete_namespace,
    ensure_schema,
    log,
    new_namespace,
    seed_entities,
    sync_driver,
)
from neo4j import AsyncGraphDatabase  # noqa: E402

from kg_neo4j.store.type_labels import backfill  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=5000)
    args = parser.parse_args()
    conn = connection()
    ensure_schema(conn)
    drv = sync_driver(conn)
    ns = new_namespace("type-labels", args.size)
    try:
        log(f"seeding {args.size} unlabelled entities in {ns}")
        seed_entities(drv, conn.database, ns, args.size, created_at=datetime(2026, 1, 1, tzinfo=UTC), n_obs=0)

        async def run() -> tuple[int, float]:
            adrv = AsyncGraphDatabase.driver(conn.uri, auth=(conn.username, conn.password))
            try:
                t0 = time.perf_counter()
                n = await backfill(adrv, conn.database, ns, batch=args.batch_size, progress=False)
                return n, time.perf_counter() - t0
            finally:
                await adrv.close()

        n, seconds = asyncio.run(run())
        records, _, _ = drv.execute_query(
            "MATCH (e:Entity) WHERE e.namespace = $ns RETURN count(e) AS all, "
            "count(CASE WHEN size(e.type_labels) = 1 AND e.type_labels[0] IN labels(e) THEN 1 END) AS labelled",
            ns=ns,
            database_=conn.database,
        )
        print(
            f"backfill: {n} entities in {seconds:.2f} s ({n / seconds:,.0f} entities/s, batches of "
            f"{args.batch_size}); labelled read back: {records[0]['labelled']}/{records[0]['all']}"
        )
    finally:
        delete_namespace(drv, conn.database, ns)
        drv.close()


if __name__ == "__main__":
    main()
