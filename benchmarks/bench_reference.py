"""Ingest through a real stdio MCP session vs. the raw-driver floor, and per-tool latency.

For each size N (default 10,000 and 100,000 entities; 3 observations and 1 relation each):

(a) MCP ingest: ``kg-neo4j serve --namespace bench-ref-...`` started as a subprocess and driven
    by the MCP Python client over stdio: ``create_entities`` in batches of 1,000, then
    ``create_relations`` in batches of 1,000.  Embeddings off (``--embedding-model none``; the
    in-process GraphStore path has no embedder either).
(b) Raw-driver floor: the same batches written with the fastest plain ``UNWIND`` statements
    (printed below the tables) into another fresh namespace, under the same constraints and
    indexes (the product's own schema bootstrap), writing the same data model.  MCP batch k and
    floor batch k run back to back, so both see the same background load on a shared machine.
(c) Latency of ``search_nodes`` (a substring hitting 10 entities), ``open_nodes`` (5 names) and
    ``add_observations`` (1 entity, 2 observations) through the MCP session, ~200 calls each; and
    the same calls straight on ``GraphStore`` in-process (no MCP), to split MCP overhead from
    Neo4j time.

Times are wall-clock sums of the per-batch calls as the client sees them (MCP: request to
validated answer; floor: ``execute_query`` call), batch construction excluded on both sides.
The MCP client validates every answer against the tool's output schema (jsonschema); that
client-side time is measured separately and shown in its own column.

    .venv/bin/python benchmarks/bench_reference.py --sizes 10000,100000 [--calls 200] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    KG,
    chunks,
    connection,
    count_namespace,
    delete_namespace,
    ensure_schema,
    entity_arg,
    entity_name,
    log,
    new_namespace,
    ring_relation,
    server_env,
    summary_ms,
    sync_driver,
    table,
)

BATCH = 1000

# --- (b) the floor: plain UNWIND statements, one per batch, same data model ---------------------
FLOOR_ENTITIES = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:KgText {namespace: $ns, name: row.name, entityType: row.entityType,
                                name_lower: row.name_lower, type_lower: row.type_lower,
                                text_lower: row.name_lower + '\n' + row.type_lower,
                                created_at: $now, obs_next: size(row.observations)})
SET n:$(row.type_labels), n.type_labels = row.type_labels
WITH n, row
UNWIND range(0, size(row.observations) - 1) AS i
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.observations[i],
                                              text_lower: row.observations_lower[i], seq: i,
                                              created_at: $now})
""".strip()

FLOOR_RELATIONS = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.relationType)]->(b)
SET r.weight = row.weight, r.valid_from = $now, r.created_at = $now
""".strip()

COUNTS = """
MATCH (e:Entity) WHERE e.namespace = $ns AND e.name IS NOT NULL
RETURN count(e) AS entities, sum(count { (e)-[:HAS_OBSERVATION]->() }) AS observations,
       sum(count { (e)-[]->(:KgNode) }) AS relations
""".strip()


def counts(drv: Any, db: str, ns: str) -> tuple[int, int, int]:
    rec = drv.execute_query(COUNTS, ns=ns, database_=db)[0][0]
    return int(rec["entities"]), int(rec["observations"]), int(rec["relations"])


def _check(result: Any, what: str) -> Any:
    if result.is_error:
        raise RuntimeError(f"{what} failed: {result.content[0].text if result.content else result}")
    return result


def _row_of(e: dict[str, Any]) -> dict[str, Any]:
    """The floor's row for an MCP entity item (the same fields GraphStore.create_entities sends, the
    type label included: it is part of the data model, docs/neo4j-versions.md#neo4j-browser)."""
    from kg_neo4j.store.type_labels import type_labels

    return {
        "name": e["name"],
        "entityType": e["entityType"],
        "name_lower": e["name"].lower(),
        "type_labels": type_labels(e["entityType"]),
        "type_lower": e["entityType"].lower(),
        "observations": e["observations"],
        "observations_lower": [o.lower() for o in e["observations"]],
    }


# --- (a) + (b) interleaved, then (c) -----------------------------------------------------------------
async def run_size(
    conn: Any, ns_mcp: str, ns_floor: str, ns_store: str, n: int, calls: int
) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from neo4j import AsyncGraphDatabase

    from kg_neo4j.models import EntityIn, RelationIn
    from kg_neo4j.store import GraphStore

    params = StdioServerParameters(
        command=KG,
        args=["serve", "--namespace", ns_mcp, "--log-level", "WARNING", "--embedding-model", "none"],
        env=server_env(conn),
    )
    # The floor uses the same driver class as the server (the async driver), one execute_query per batch.
    adrv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    db = conn.database
    # The third path: the product's GraphStore in this process (same Cypher as the server, no MCP layer).
    store = GraphStore(adrv, database=db, namespace=ns_store)
    out: dict[str, Any] = {}
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # the client caches output schemas (it validates every answer)

            # Time the client's own output-schema validation (jsonschema) separately.
            validation = [0.0]
            original = session.validate_tool_result

            async def timed_validate(name: str, result: Any) -> None:
                t0 = time.perf_counter()
                try:
                    await original(name, result)
                finally:
                    validation[0] += time.perf_counter() - t0

            session.validate_tool_result = timed_validate  # type: ignore[method-assign]

            rng = random.Random(1)
            now = datetime.now(UTC)
            t = {
                "mcp_ent": 0.0,
                "mcp_rel": 0.0,
                "floor_ent": 0.0,
                "floor_rel": 0.0,
                "val_ent": 0.0,
                "val_rel": 0.0,
                "store_ent": 0.0,
                "store_rel": 0.0,
            }
            for batch in chunks(n, BATCH):
                args = {"entities": [entity_arg(i, rng) for i in batch]}
                rows = [_row_of(e) for e in args["entities"]]
                v0 = validation[0]
                t0 = time.perf_counter()
                res = _check(await session.call_tool("create_entities", args), "create_entities")
                t["mcp_ent"] += time.perf_counter() - t0
                t["val_ent"] += validation[0] - v0
                if len(res.structured_content["entities"]) != len(batch):
                    raise RuntimeError(
                        f"create_entities created {len(res.structured_content['entities'])} of {len(batch)}"
                    )
                t0 = time.perf_counter()
                await adrv.execute_query(FLOOR_ENTITIES, rows=rows, ns=ns_floor, now=now, database_=db)
                t["floor_ent"] += time.perf_counter() - t0
                items = [EntityIn.model_validate(e) for e in args["entities"]]
                t0 = time.perf_counter()
                await store.create_entities(items)
                t["store_ent"] += time.perf_counter() - t0
                if batch.stop % 20_000 == 0:
                    log(f"  {batch.stop}/{n} entities: MCP {t['mcp_ent']:.1f}s, floor {t['floor_ent']:.1f}s")
            for batch in chunks(n, BATCH):
                rel_args = {"relations": [ring_relation(i, n) for i in batch]}
                v0 = validation[0]
                t0 = time.perf_counter()
                res = _check(await session.call_tool("create_relations", rel_args), "create_relations")
                t["mcp_rel"] += time.perf_counter() - t0
                t["val_rel"] += validation[0] - v0
                if len(res.structured_content["relations"]) != len(batch):
                    raise RuntimeError("create_relations did not create the whole batch")
                t0 = time.perf_counter()
                await adrv.execute_query(
                    FLOOR_RELATIONS, rows=rel_args["relations"], ns=ns_floor, now=now, database_=db
                )
                t["floor_rel"] += time.perf_counter() - t0
                ritems = [RelationIn.model_validate(r) for r in rel_args["relations"]]
                t0 = time.perf_counter()
                await store.create_relations(ritems)
                t["store_rel"] += time.perf_counter() - t0
                if batch.stop % 20_000 == 0:
                    log(f"  {batch.stop}/{n} relations: MCP {t['mcp_rel']:.1f}s, floor {t['floor_rel']:.1f}s")
            out["ingest"] = t
            log(
                f"  ingest: MCP entities {t['mcp_ent']:.1f}s relations {t['mcp_rel']:.1f}s "
                f"(client schema validation {t['val_ent']:.1f}s + {t['val_rel']:.1f}s); "
                f"floor entities {t['floor_ent']:.1f}s relations {t['floor_rel']:.1f}s; "
                f"GraphStore entities {t['store_ent']:.1f}s relations {t['store_rel']:.1f}s"
            )

            out["latency"] = await _latency(session, n, calls, validation)
    finally:
        await adrv.close()
    out["direct"] = await _direct_latency(conn, ns_mcp, n, calls)
    return out


class _Calls:
    """Argument makers of the latency phase (the same random sequence for the MCP and direct runs)."""

    def __init__(self, n: int, tag: str) -> None:
        self.n = n
        self.rng = random.Random(7)
        self.k = 0
        self.tag = tag

    def search(self) -> dict[str, Any]:
        # 'entity-000421' matches Entity-0004210 .. Entity-0004219: 10 entities (names only).
        return {"query": f"entity-{self.rng.randrange(self.n // 10):06d}"}

    def open(self) -> dict[str, Any]:
        return {"names": [entity_name(self.rng.randrange(self.n)) for _ in range(5)]}

    def add(self) -> dict[str, Any]:
        self.k += 1
        return {
            "observations": [
                {
                    "entityName": entity_name(self.rng.randrange(self.n)),
                    "contents": [f"bench note {self.tag} {self.k}a", f"bench note {self.tag} {self.k}b"],
                }
            ]
        }


TOOLS = ("search_nodes", "open_nodes", "add_observations")


def _makers(mk: _Calls) -> dict[str, Any]:
    return {"search_nodes": mk.search, "open_nodes": mk.open, "add_observations": mk.add}


def _expect(tool: str, data: dict[str, Any]) -> None:
    if tool == "search_nodes" and len(data["entities"]) != 10:
        raise RuntimeError(f"search_nodes hit {len(data['entities'])} entities, expected 10")
    if tool == "open_nodes" and not 1 <= len(data["entities"]) <= 5:
        raise RuntimeError("open_nodes returned no entity")
    if tool == "add_observations" and len(data["results"][0]["addedObservations"]) != 2:
        raise RuntimeError("add_observations did not add 2 observations")


async def _latency(session: Any, n: int, calls: int, validation: list[float]) -> dict[str, Any]:
    makers = _makers(_Calls(n, "mcp"))
    lat: dict[str, Any] = {}
    for tool in TOOLS:
        make = makers[tool]
        for _ in range(10):  # warm-up (plan cache, page cache), not timed
            _check(await session.call_tool(tool, make()), tool)
        samples = []
        v0 = validation[0]
        for _ in range(calls):
            args = make()
            t0 = time.perf_counter()
            res = _check(await session.call_tool(tool, args), tool)
            samples.append(time.perf_counter() - t0)
            _expect(tool, res.structured_content)
        lat[tool] = {"samples": samples, "validation": validation[0] - v0}
        p50, p95, _ = summary_ms(samples)
        log(f"  MCP {tool}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return lat


async def _direct_latency(conn: Any, ns: str, n: int, calls: int) -> dict[str, list[float]]:
    """The same calls on GraphStore in this process (no MCP, no JSON-RPC, no subprocess)."""
    from neo4j import AsyncGraphDatabase

    from kg_neo4j.models import ObservationAdd
    from kg_neo4j.store import GraphStore

    adrv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    store = GraphStore(adrv, database=conn.database, namespace=ns)

    async def one(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "search_nodes":
            return (await store.search_nodes(args["query"])).reference()
        if tool == "open_nodes":
            return (await store.open_nodes(args["names"])).reference()
        items = [ObservationAdd.model_validate(o) for o in args["observations"]]
        return {"results": [r.model_dump() for r in await store.add_observations(items)]}

    makers = _makers(_Calls(n, "direct"))
    lat: dict[str, list[float]] = {}
    try:
        for tool in TOOLS:
            for _ in range(10):
                await one(tool, makers[tool]())
            samples = []
            for _ in range(calls):
                args = makers[tool]()
                t0 = time.perf_counter()
                data = await one(tool, args)
                samples.append(time.perf_counter() - t0)
                _expect(tool, data)
            lat[tool] = samples
    finally:
        await adrv.close()
    return lat


def _x(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated entity counts")
    ap.add_argument("--calls", type=int, default=200, help="timed calls per tool for the latency table")
    ap.add_argument(
        "--keep", action="store_true", help="keep the benchmark namespaces (default: delete them)"
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    conn = connection()
    ensure_schema(conn)
    drv = sync_driver(conn)
    db = conn.database
    ingest_rows: list[list[Any]] = []
    ratio_rows: list[list[Any]] = []
    latency_rows: list[list[Any]] = []
    notes: list[str] = []
    try:
        for n in sizes:
            ns_mcp = new_namespace("ref", n)
            ns_floor = new_namespace("floor", n)
            ns_store = new_namespace("store", n)
            log(f"N={n}: namespaces MCP {ns_mcp}, floor {ns_floor}, GraphStore {ns_store}")
            try:
                res = asyncio.run(run_size(conn, ns_mcp, ns_floor, ns_store, n, args.calls))
                c_mcp, c_floor = counts(drv, db, ns_mcp), counts(drv, db, ns_floor)
            finally:
                if not args.keep:
                    for ns in (ns_mcp, ns_floor, ns_store):
                        if count_namespace(drv, db, ns):
                            log(f"  deleting {ns} ({delete_namespace(drv, db, ns):.1f}s)")
            t = res["ingest"]
            m_tot, f_tot = t["mcp_ent"] + t["mcp_rel"], t["floor_ent"] + t["floor_rel"]
            v_ent, v_rel = t["val_ent"], t["val_rel"]
            ingest_rows.append([n, "MCP stdio", t["mcp_ent"], t["mcp_rel"], m_tot, n / m_tot])
            ingest_rows.append([n, "  of which client schema validation", v_ent, v_rel, v_ent + v_rel, "-"])
            s_tot = t["store_ent"] + t["store_rel"]
            ingest_rows.append(
                [n, "GraphStore in-process (no MCP)", t["store_ent"], t["store_rel"], s_tot, n / s_tot]
            )
            ingest_rows.append([n, "raw driver floor", t["floor_ent"], t["floor_rel"], f_tot, n / f_tot])
            ratio_rows.append(
                [
                    n,
                    "MCP / floor",
                    _x(t["mcp_ent"], t["floor_ent"]),
                    _x(t["mcp_rel"], t["floor_rel"]),
                    _x(m_tot, f_tot),
                    "PASS" if m_tot / f_tot <= 1.5 else "FAIL",
                ]
            )
            m_ex = m_tot - v_ent - v_rel
            ratio_rows.append(
                [
                    n,
                    "(MCP - client validation) / floor",
                    _x(t["mcp_ent"] - v_ent, t["floor_ent"]),
                    _x(t["mcp_rel"] - v_rel, t["floor_rel"]),
                    _x(m_ex, f_tot),
                    "PASS" if m_ex / f_tot <= 1.5 else "FAIL",
                ]
            )
            ratio_rows.append(
                [
                    n,
                    "GraphStore / floor (product Cypher alone)",
                    _x(t["store_ent"], t["floor_ent"]),
                    _x(t["store_rel"], t["floor_rel"]),
                    _x(s_tot, f_tot),
                    "-",
                ]
            )
            added = 2 * (args.calls + 10)
            notes.append(
                f"N={n}: (entities, observations, relations) written: MCP {c_mcp} "
                f"(incl. {added} observations added by the MCP latency run and {added} by the direct run), "
                f"floor {c_floor}"
            )
            for tool in TOOLS:
                m = res["latency"][tool]
                p50, p95, mean = summary_ms(m["samples"])
                d50, d95, _ = summary_ms(res["direct"][tool])
                latency_rows.append(
                    [
                        n,
                        tool,
                        len(m["samples"]),
                        p50,
                        p95,
                        mean,
                        m["validation"] * 1000 / len(m["samples"]),
                        d50,
                        d95,
                    ]
                )
    finally:
        drv.close()

    print()
    print(
        f"Ingest: N entities x 3 observations, then N relations; batches of {BATCH}; "
        "seconds = sum of the batch calls"
    )
    print(table(["N", "path", "entities s", "relations s", "total s", "entities/s (total)"], ingest_rows))
    print(table(["N", "ratio", "entities", "relations", "total", "target <= 1.5x"], ratio_rows))
    for note in notes:
        print(note)
    print()
    print(f"Latency, milliseconds ({args.calls} timed calls per tool after 10 warm-up calls)")
    print(
        table(
            [
                "N",
                "tool",
                "calls",
                "MCP p50",
                "MCP p95",
                "MCP mean",
                "of which client validation (mean)",
                "GraphStore p50",
                "GraphStore p95",
            ],
            latency_rows,
        )
    )
    print(
        "  MCP = request -> validated answer through the stdio session; GraphStore = the same call in-process,"
        " no MCP."
    )
    print(
        "  search_nodes: substring 'entity-NNNNNN' hitting 10 entities (and their ~20 relations); "
        "open_nodes: 5 random names; add_observations: 1 entity, 2 new observations."
    )
    print()
    print("Floor Cypher (one execute_query = one transaction per batch of 1,000 rows):")
    print("-- entities")
    print(FLOOR_ENTITIES)
    print("-- relations")
    print(FLOOR_RELATIONS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
