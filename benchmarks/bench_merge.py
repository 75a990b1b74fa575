"""merge_entities of a pair with 1k observations and 1k relations in one call, and its undo (issue 31's
target: the merge < 2 s).

Per run, a fresh namespace holds the kept entity (OBS/2 observations, RELS/2 relations) and the merged one
(OBS observations, a tenth of them texts the kept one has too; RELS relations: to entities of their own, a
tenth to entities the kept one already relates to the same way, a few to the kept entity itself), written
through the product's own store.  Then ``merge_entities`` and ``unmerge_entities`` are timed:

* through the store (``kg_neo4j.store.merges``, the call the tool makes), and
* through a real MCP stdio session (``kg-neo4j serve``), the time of ``call_tool``.

Prints p50 / p95 / mean over the runs.

    .venv/bin/python benchmarks/bench_merge.py [--obs 1000] [--rels 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    KG,
    connection,
    delete_namespace,
    log,
    new_namespace,
    server_env,
    summary_ms,
    sync_driver,
    table,
)

from kg_neo4j.models import EntityIn, ObservationAdd, RelationIn  # noqa: E402
from kg_neo4j.store.graph import GraphStore  # noqa: E402
from kg_neo4j.store.merges import MergeIn, UnmergeIn  # noqa: E402

KEEP, DUP = "Kept Entity", "Merged Entity"


def pair(obs: int, rels: int) -> tuple[list[EntityIn], list[ObservationAdd], list[RelationIn]]:
    shared = obs // 10
    keep_obs = [f"kept fact {i}" for i in range(obs // 2 - shared)] + [
        f"shared fact {i}" for i in range(shared)
    ]
    dup_obs = [f"merged fact {i}" for i in range(obs - shared)] + [f"shared fact {i}" for i in range(shared)]
    entities = [
        EntityIn(name=KEEP, entityType="person", observations=[]),
        EntityIn(name=DUP, entityType="person", observations=[]),
    ]
    adds = [
        ObservationAdd(entityName=KEEP, contents=keep_obs),
        ObservationAdd(entityName=DUP, contents=dup_obs),
    ]
    common = rels // 10
    relations: list[RelationIn] = []
    for i in range(rels // 2):
        relations.append(
            RelationIn(**{"from": KEEP, "to": f"Target {i}", "relationType": "knows", "weight": 0.9})
        )
    for i in range(rels):
        # a tenth collide with the kept entity's (same target and type), three are self-loops, the rest move
        target = f"Target {i}" if i < common else (KEEP if i < common + 3 else f"Other {i}")
        relations.append(
            RelationIn(
                **{
                    "from": DUP,
                    "to": target,
                    "relationType": "knows",
                    "weight": 0.5,
                    "reasoning": f"seen {i}",
                }
            )
        )
    return entities, adds, relations


async def seed(store: GraphStore, obs: int, rels: int) -> None:
    entities, adds, relations = pair(obs, rels)
    await store.create_entities(entities)
    await store.add_observations(adds)
    await store.create_relations(relations)


async def via_store(driver: Any, database: str, obs: int, rels: int) -> tuple[float, float, dict[str, int]]:
    ns = new_namespace("merge-store", obs)
    store = GraphStore(driver, database=database, namespace=ns)
    try:
        await seed(store, obs, rels)
        t0 = time.perf_counter()
        merged = await store.merge_entities(MergeIn(into=KEEP, names=[DUP]))
        t_merge = time.perf_counter() - t0
        t0 = time.perf_counter()
        await store.unmerge_entities(UnmergeIn(name=KEEP))
        t_unmerge = time.perf_counter() - t0
        return t_merge, t_unmerge, merged.counts.model_dump()
    finally:
        cleanup(ns)


async def via_mcp(driver: Any, database: str, obs: int, rels: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    ns = new_namespace("merge-mcp", obs)
    store = GraphStore(driver, database=database, namespace=ns)
    env = {**server_env(CONN), "KG_NEO4J_EMBEDDING_MODEL": "none"}
    params = StdioServerParameters(command=KG, args=["serve", "--namespace", ns], env=env)
    try:
        await seed(store, obs, rels)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            t0 = time.perf_counter()
            res = await s.call_tool("merge_entities", {"into": KEEP, "names": [DUP]})
            t_merge = time.perf_counter() - t0
            assert not res.is_error, res.content[0].text
            t0 = time.perf_counter()
            res = await s.call_tool("unmerge_entities", {"name": KEEP})
            t_unmerge = time.perf_counter() - t0
            assert not res.is_error, res.content[0].text
        return t_merge, t_unmerge
    finally:
        cleanup(ns)


def cleanup(ns: str) -> None:
    drv = sync_driver(CONN)
    try:
        delete_namespace(drv, CONN.database, ns)
        drv.execute_query("MATCH (m:KgMergeRecord {namespace: $ns}) DELETE m", ns=ns, database_=CONN.database)
    finally:
        drv.close()


CONN = connection()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--obs", type=int, default=1000)
    ap.add_argument("--rels", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from neo4j import AsyncGraphDatabase

    driver = AsyncGraphDatabase.driver(CONN.uri, auth=(CONN.username, CONN.password))
    rows = []
    try:
        store_m, store_u, mcp_m, mcp_u = [], [], [], []
        counts: dict[str, int] = {}
        for run in range(args.runs):
            m, u, counts = await via_store(driver, CONN.database, args.obs, args.rels)
            store_m.append(m)
            store_u.append(u)
            m, u = await via_mcp(driver, CONN.database, args.obs, args.rels)
            mcp_m.append(m)
            mcp_u.append(u)
            log(
                f"run {run + 1}/{args.runs}: store {store_m[-1]:.3f}/{store_u[-1]:.3f} s, mcp {m:.3f}/{u:.3f} s"
            )
        for label, values in [
            ("merge_entities (store)", store_m),
            ("merge_entities (MCP stdio)", mcp_m),
            ("unmerge_entities (store)", store_u),
            ("unmerge_entities (MCP stdio)", mcp_u),
        ]:
            p50, p95, mean = summary_ms(values)
            rows.append([label, len(values), round(p50), round(p95), round(mean)])
    finally:
        await driver.close()
    print(
        f"merge of a pair: {args.obs} observations and {args.rels} relations on the merged entity; {counts}"
    )
    print(table(["call", "runs", "p50 ms", "p95 ms", "mean ms"], rows, left_first=True))
    print("target: merge_entities < 2000 ms")


if __name__ == "__main__":
    asyncio.run(main())
