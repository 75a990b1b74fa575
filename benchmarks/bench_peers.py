"""The same workload through a real MCP stdio client against kg-neo4j and its peers, side by side.

Systems (one after the other, each on a fresh store; ``--systems`` picks them):

* ``kg``: ``kg-neo4j serve --tools reference --embedding-model none`` on the project's Neo4j, in a fresh
  ``bench-peers-...`` namespace; beside each of its ``create_entities`` batches the raw-driver floor
  (one bare ``UNWIND`` of the same rows, same data model, another namespace) is timed.
* ``kg-embed``: the same with the default embedding model; beside each batch the bare
  ``model.encode`` of exactly the texts the server embeds (observations + ``name (type)``).
* ``reference``: ``@modelcontextprotocol/server-memory`` (npm, pinned ``REFERENCE_VERSION``), installed
  into ``~/.cache/kg-neo4j-bench/`` on first use, on a fresh JSONL file.
* ``neo4j-memory``: ``mcp-neo4j-memory`` (PyPI, pinned ``NEO4J_MEMORY_VERSION``, its own venv in the same
  cache) on its own local Neo4j (``kg-neo4j neo4j start`` under another home and ports: it writes
  ``:Memory`` nodes across the whole database), stopped at the end.  Its tools and fields are renamed
  (``search_memories``, ``find_memories_by_name``, ``type``, ``source``/``target``), and its search is
  Lucene terms over a fulltext index, not a substring search: its hits per query are printed.

Workload for each size N: N entities (3 observations) in ``create_entities`` batches of 100, N relations
(i -> i + 7919 mod N) in ``create_relations`` batches of 100, then ``--calls`` timed calls (after 10
warm-ups) of ``search_nodes`` (a name prefix hitting 10 names), ``open_nodes`` (5 names),
``add_observations`` (1 new observation), ``--read-calls`` of ``read_graph``, and ``--calls`` single-entity
creates (3 observations).  Times are request -> validated answer as the client sees them (the client checks
every answer against the tool's output schema; that part is shown apart for read_graph).

    python -m benchmarks.bench_peers --sizes 1000 --calls 20 --read-calls 3     # quick
    python -m benchmarks.bench_peers --sizes 10000                               # the figures
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    Results,
    Server,
    arguments,
    connection,
    delete_namespace,
    ensure_schema,
    entity_arg,
    entity_name,
    kg_serve,
    log,
    mcp_session,
    new_namespace,
    own_neo4j,
    p50_ms,
    percentile,
    ring_relation,
    sync_driver,
    text_of,
)

REFERENCE_VERSION = "2026.8.31"
NEO4J_MEMORY_VERSION = "0.4.5"
CACHE = Path.home() / ".cache" / "kg-neo4j-bench"
PEER_HOME = CACHE / "neo4j-peer"
PEER_BOLT, PEER_HTTP, PEER_GUIDE = 7697, 7484, 7488
BATCH = 100
DEFAULT_MODEL = "all-MiniLM-L6-v2"  # the product's default (Settings.embedding_model), packaged
SYSTEMS = ("kg", "kg-embed", "reference", "neo4j-memory")
ROWS = (
    "create_entities (100)",
    "create_relations (100)",
    "search_nodes",
    "open_nodes (5)",
    "add_observations (1)",
    "read_graph",
    "read_graph after a write",
    "create_entities (1)",
)


# --- kg's raw-driver floor: the same rows in one bare UNWIND, same data model ----------------------------------------
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


def floor_row(e: dict[str, Any]) -> dict[str, Any]:
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


# --- the peers: install, start, map their dialect ---------------------------------------------------------------
def reference_js() -> Path:
    prefix = CACHE / f"reference-{REFERENCE_VERSION}"
    js = prefix / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if not js.exists():
        log(f"installing @modelcontextprotocol/server-memory@{REFERENCE_VERSION} into {prefix}")
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                f"@modelcontextprotocol/server-memory@{REFERENCE_VERSION}",
            ],
            check=True,
            stdout=sys.stderr,
        )
    return js


def neo4j_memory_bin() -> Path:
    venv = CACHE / f"mcp-neo4j-memory-{NEO4J_MEMORY_VERSION}"
    exe = venv / "bin" / "mcp-neo4j-memory"
    if not exe.exists():
        log(f"installing mcp-neo4j-memory=={NEO4J_MEMORY_VERSION} into {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"mcp-neo4j-memory=={NEO4J_MEMORY_VERSION}"],
            check=True,
            stdout=sys.stderr,
        )
    return exe


def peer_neo4j(command: str) -> dict[str, str]:
    """``kg-neo4j neo4j start|stop|env`` for the peer's own local Neo4j (never the project's)."""
    return own_neo4j(command, PEER_HOME, (PEER_BOLT, PEER_HTTP, PEER_GUIDE), "1g", "512m")


def _peer_entity(e: dict[str, Any]) -> dict[str, Any]:
    return {"name": e["name"], "type": e["entityType"], "observations": e["observations"]}


def _peer_relation(r: dict[str, Any]) -> dict[str, Any]:
    return {"source": r["from"], "target": r["to"], "relationType": r["relationType"]}


class System:
    """How to start one system and how to say each call in its dialect."""

    def __init__(self, name: str, server: Server) -> None:
        self.name, self.server = name, server
        self.peer = name == "neo4j-memory"

    def tool(self, call: str) -> str:
        return (
            {"search_nodes": "search_memories", "open_nodes": "find_memories_by_name"}.get(call, call)
            if self.peer
            else call
        )

    def entities(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"entities": [_peer_entity(e) for e in items] if self.peer else items}

    def relations(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"relations": [_peer_relation(r) for r in items] if self.peer else items}

    def observation(self, name: str, text: str) -> dict[str, Any]:
        key = "observations" if self.peer else "contents"
        return {"observations": [{"entityName": name, key: [text]}]}


# --- one system, one size ----------------------------------------------------------------------------------------
class Floor:
    """kg's raw-driver floor: the batch's rows written by one bare UNWIND into its own namespace."""

    def __init__(self, conn: Any, ns: str) -> None:
        from neo4j import AsyncGraphDatabase

        self.conn, self.ns = conn, ns
        self.drv = AsyncGraphDatabase.driver(
            conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
        )

    async def write(self, items: list[dict[str, Any]]) -> float:
        from datetime import UTC, datetime

        rows = [floor_row(e) for e in items]
        t0 = time.perf_counter()
        await self.drv.execute_query(
            FLOOR_ENTITIES, rows=rows, ns=self.ns, now=datetime.now(UTC), database_=self.conn.database
        )
        return time.perf_counter() - t0


async def run_system(
    sys_: System,
    n: int,
    calls: int,
    read_calls: int,
    ingest_cap: float,
    extra: Callable[[list[dict[str, Any]]], Any] | None,
    extra_every: int = 1,
) -> dict[str, Any]:
    """The workload through one MCP stdio session; returns per-row durations and notes."""
    rng = random.Random(7)
    out: dict[str, Any] = {row: [] for row in ROWS}
    out.update(
        extra=[],
        extra_batches=[],
        extra_single=[],
        validation=[],
        notes=[],
        hits=[],
        read_bytes=0,
        read_entities=0,
    )
    async with mcp_session(sys_.server) as s:
        validate = s.validate_tool_result
        spent: list[float] = []

        async def timed_validate(name: str, result: Any) -> None:
            t0 = time.perf_counter()
            await validate(name, result)
            spent.append(time.perf_counter() - t0)

        s.validate_tool_result = timed_validate  # type: ignore[method-assign]

        async def call(name: str, args: dict[str, Any]) -> tuple[float, Any]:
            t0 = time.perf_counter()
            res = await s.call_tool(sys_.tool(name), args)
            dt = time.perf_counter() - t0
            if res.is_error:
                raise RuntimeError(f"{sys_.name} {name}: {text_of(res)[:300]}")
            return dt, res

        # ingest
        t_start = time.perf_counter()
        done = 0
        for start in range(0, n, BATCH):
            items = [entity_arg(i, rng) for i in range(start, min(n, start + BATCH))]
            dt, _ = await call("create_entities", sys_.entities(items))
            out["create_entities (100)"].append(dt)
            if extra is not None and (start // BATCH) % extra_every == 0:
                out["extra"].append(await extra(items))
                out["extra_batches"].append(len(out["create_entities (100)"]) - 1)
            done = start + len(items)
            if time.perf_counter() - t_start > ingest_cap and done < n:
                out["notes"].append(
                    f"{sys_.name}: ingest capped at {ingest_cap:.0f} s after {done:,} of {n:,} "
                    "entities; the rows below ran on that smaller graph"
                )
                break
        ent_s = time.perf_counter() - t_start
        m = done
        t_rel = time.perf_counter()
        rels_done = 0
        for start in range(0, m, BATCH):
            rels = [
                {k: v for k, v in ring_relation(i, m).items() if k != "weight"}
                for i in range(start, min(m, start + BATCH))
            ]
            dt, _ = await call("create_relations", sys_.relations(rels))
            out["create_relations (100)"].append(dt)
            rels_done = start + len(rels)
            if time.perf_counter() - t_rel > ingest_cap and rels_done < m:
                out["notes"].append(
                    f"{sys_.name}: relation ingest capped at {ingest_cap:.0f} s after {rels_done:,} "
                    f"of {m:,} relations; the rows below ran on that graph"
                )
                break
        out["ingest_s"] = (ent_s, time.perf_counter() - t_rel, m, rels_done)
        log(
            f"  {sys_.name}: ingest {m:,} entities {ent_s:.1f} s, {rels_done:,} relations {out['ingest_s'][1]:.1f} s"
        )

        def prefix() -> str:  # 13 characters of a name: 10 names share it
            return entity_name(rng.randrange(max(1, m // 10)) * 10)[:-1]

        def search() -> dict[str, Any]:
            # the peer's search is a Lucene query: "Entity-000004" would be the terms "entity" OR "000004"
            # (every entity); the same 10 names are the prefix query "000004*"
            q = prefix()
            return {"query": q.removeprefix("Entity-") + "*" if sys_.peer else q}

        jobs: list[tuple[str, Callable[[], tuple[str, dict[str, Any]]]]] = [
            ("search_nodes", lambda: ("search_nodes", search())),
            (
                "open_nodes (5)",
                lambda: ("open_nodes", {"names": [entity_name(rng.randrange(m)) for _ in range(5)]}),
            ),
            (
                "add_observations (1)",
                lambda: (
                    "add_observations",
                    sys_.observation(entity_name(rng.randrange(m)), f"added {rng.random():.12f}"),
                ),
            ),
        ]
        for row, make in jobs:
            for k in range(calls + 10):
                dt, res = await call(*make())
                if k >= 10:
                    out[row].append(dt)
                    if row == "search_nodes":
                        out["hits"].append(len((res.structured_content or {}).get("entities", [])))
            log(f"  {sys_.name}: {row} p50 {percentile(out[row], 50) * 1000:.1f} ms")
        for k in range(read_calls + 1):
            spent.clear()
            t0 = time.perf_counter()
            res = await s.call_tool(sys_.tool("read_graph"), {})
            dt = time.perf_counter() - t0
            if res.is_error:  # kg-neo4j past its answer cap (by design): the paged read is timed instead
                out["notes"].append(f"{sys_.name}: read_graph answers an error: {text_of(res)[:120]}...")
                break
            if k > 0:  # the first call warms up
                out["read_graph"].append(dt)
                out["validation"].append(spent[-1] if spent else 0.0)
            out["read_bytes"] = len(text_of(res).encode())
            out["read_entities"] = len((res.structured_content or {}).get("entities", []))
        log(f"  {sys_.name}: read_graph p50 {percentile(out['read_graph'], 50) * 1000:.0f} ms")
        # The same read right after a write (not timed): kg-neo4j cannot reuse its kept answer
        # (docs/performance.md#speed-mechanisms), so this row is its full build every time.
        for _ in range(read_calls if out["read_graph"] else 0):
            await call(
                "add_observations",
                sys_.observation(entity_name(rng.randrange(m)), f"touch {rng.random():.12f}"),
            )
            t0 = time.perf_counter()
            res = await s.call_tool(sys_.tool("read_graph"), {})
            out["read_graph after a write"].append(time.perf_counter() - t0)
        if out["read_graph after a write"]:
            log(
                f"  {sys_.name}: read_graph after a write p50 "
                f"{percentile(out['read_graph after a write'], 50) * 1000:.0f} ms"
            )
        for k in range(calls):
            one = entity_arg(n + 1_000_000 + k, rng)
            one["name"] = f"Single-{k:06d}"
            dt, _ = await call("create_entities", sys_.entities([one]))
            out["create_entities (1)"].append(dt)
            if extra is not None:
                out["extra_single"].append(await extra([one]))
    return out


async def echo_floor(calls: int) -> dict[str, list[float]]:
    """The MCP round trip without any work: ``calls`` create_entities of 100 and of 1 entity (after 10
    warm-ups each) through the same client against ``mcp_echo_server.py`` (same schemas, no database)."""
    rng = random.Random(11)
    out: dict[str, list[float]] = {"100": [], "1": []}
    echo = Server(sys.executable, ["-m", "benchmarks.mcp_echo_server"], dict(os.environ))
    async with mcp_session(echo) as s:
        k = 0
        for size, key in ((BATCH, "100"), (1, "1")):
            for i in range(calls + 10):
                items = [entity_arg(k + j, rng) for j in range(size)]
                k += size
                t0 = time.perf_counter()
                res = await s.call_tool("create_entities", {"entities": items})
                dt = time.perf_counter() - t0
                if res.is_error or res.structured_content != {"entities": items}:
                    raise RuntimeError(f"mcp-echo: unexpected answer {text_of(res)[:300]}")
                if i >= 10:
                    out[key].append(dt)
    return out


async def paged_read(sys_: System, page: int) -> tuple[float, int, int]:
    """kg-neo4j's whole graph read in pages of ``page`` (the default profile's read_graph paging)."""
    srv = sys_.server
    args = [
        *srv.args[: srv.args.index("--tools")],
        "--tools",
        "default",
        *srv.args[srv.args.index("--tools") + 2 :],
    ]
    async with mcp_session(Server(srv.command, args, srv.env)) as s:
        t0 = time.perf_counter()
        cursor, entities, pages = None, 0, 0
        while True:
            res = await s.call_tool("read_graph", {"limit": page, **({"cursor": cursor} if cursor else {})})
            if res.is_error:
                raise RuntimeError(text_of(res)[:300])
            sc = res.structured_content or {}
            entities += len(sc["entities"])
            pages += 1
            cursor = sc.get("nextCursor")
            if not cursor:
                return time.perf_counter() - t0, entities, pages


# --- the run -----------------------------------------------------------------------------------------------------
def kg_system(name: str, conn: Any, ns: str, model: str) -> System:
    return System(name, kg_serve(conn, ns, "--tools", "reference", "--embedding-model", model))


def clear_peer(env: dict[str, str]) -> None:
    from neo4j import GraphDatabase

    with (
        GraphDatabase.driver(
            env["NEO4J_URI"],
            auth=(env["NEO4J_USERNAME"], env["NEO4J_PASSWORD"]),
            notifications_min_severity="OFF",
        ) as drv,
        drv.session() as s,
    ):
        s.run("MATCH (m:Memory) CALL (m) { DETACH DELETE m } IN TRANSACTIONS OF 5000 ROWS").consume()


def embed_extra() -> Callable[[list[dict[str, Any]]], Any]:
    """The bare encode of a batch's texts, exactly those the server embeds, in this process."""
    from kg_neo4j.embeddings import load_embedder
    from kg_neo4j.store.records import entity_text

    emb = load_embedder(DEFAULT_MODEL, background=False)
    assert emb is not None
    emb.encode(["warm up"])

    async def encode(items: list[dict[str, Any]]) -> tuple[float, int]:
        texts = [t for e in items for t in (*e["observations"], entity_text(e["name"], e["entityType"]))]
        t0 = time.perf_counter()
        emb.encode(texts)
        return time.perf_counter() - t0, len(texts)

    return encode


async def run_size(n: int, systems: list[str], a: argparse.Namespace) -> dict[str, dict[str, Any]]:
    conn = connection()
    await asyncio.to_thread(ensure_schema, conn)  # it runs its own event loop
    drv = sync_driver(conn)
    results: dict[str, dict[str, Any]] = {}
    for name in systems:
        log(f"N={n:,}: {name}")
        cleanup: list[Callable[[], Any]] = []
        try:
            if name in ("kg", "kg-embed"):
                ns = new_namespace("peers", n)
                cleanup.append(partial(delete_namespace, drv, conn.database, ns))
                sys_ = kg_system(name, conn, ns, "none" if name == "kg" else DEFAULT_MODEL)
                if name == "kg":
                    floor = Floor(conn, new_namespace("peers-floor", n))
                    cleanup.append(partial(delete_namespace, drv, conn.database, floor.ns))
                    extra: Callable[[list[dict[str, Any]]], Any] | None = floor.write
                else:
                    extra = embed_extra()
            elif name == "reference":
                tmp = Path(tempfile.mkdtemp(prefix="bench-peers-ref-"))
                cleanup.append(partial(shutil.rmtree, tmp, ignore_errors=True))
                sys_ = System(
                    name,
                    Server(
                        "node",
                        [str(reference_js())],
                        {**os.environ, "MEMORY_FILE_PATH": str(tmp / "memory.jsonl")},
                    ),
                )
                extra = None
            else:
                exe = neo4j_memory_bin()
                peer_neo4j("start")
                peer_neo4j_env = peer_neo4j("env")
                clear_peer(peer_neo4j_env)
                cleanup.append(partial(clear_peer, peer_neo4j_env))
                sys_ = System(
                    name,
                    Server(
                        str(exe),
                        [],
                        {
                            **{k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")},
                            "NEO4J_URL": peer_neo4j_env["NEO4J_URI"],
                            "NEO4J_USERNAME": peer_neo4j_env["NEO4J_USERNAME"],
                            "NEO4J_PASSWORD": peer_neo4j_env["NEO4J_PASSWORD"],
                            "NEO4J_DATABASE": "neo4j",
                        },
                    ),
                )
                extra = None
            cap = a.peer_ingest_cap if name == "neo4j-memory" else float("inf")
            res = await run_system(
                sys_, n, a.calls, a.read_calls, cap, extra, a.encode_every if name == "kg-embed" else 1
            )
            if name == "kg" and not res["read_graph"]:
                res["paged"] = await paged_read(sys_, 10_000)
            if name == "kg":
                res["echo"] = await echo_floor(a.calls)
            results[name] = res
        finally:
            for c in cleanup:
                c()
    drv.close()
    return results


def report(results: Results, n: int, res: dict[str, dict[str, Any]]) -> str:
    names = list(res)
    ratio_to = [p for p in ("reference", "neo4j-memory") if p in res and "kg" in res]
    headers = ["p50 ms", *names, *(f"kg / {p}" for p in ratio_to)]
    rows: list[list[Any]] = []

    def line(label: str, values: dict[str, float], ratios: bool = True) -> None:
        rows.append(
            [
                label,
                *(values.get(s, float("nan")) for s in names),
                *(
                    (values.get("kg", float("nan")) / values[p] if ratios and values.get(p) else float("nan"))
                    for p in ratio_to
                ),
            ]
        )

    for row in ROWS:
        line(row, {s: p50_ms(r[row]) for s, r in res.items()})
    if "kg" in res and res["kg"]["extra"]:
        line("  raw-driver floor, 100 entities", {"kg": p50_ms(res["kg"]["extra"])}, ratios=False)
        line("  raw-driver floor, 1 entity", {"kg": p50_ms(res["kg"]["extra_single"])}, ratios=False)
    if "kg" in res and "echo" in res["kg"]:
        echo = res["kg"]["echo"]
        line("  MCP round trip alone (echo server), 100 entities", {"kg": p50_ms(echo["100"])}, ratios=False)
        line("  MCP round trip alone (echo server), 1 entity", {"kg": p50_ms(echo["1"])}, ratios=False)
        if res["kg"]["extra"]:
            for size, row, floor in (
                ("100", "create_entities (100)", "extra"),
                ("1", "create_entities (1)", "extra_single"),
            ):
                both = p50_ms(res["kg"][floor]) + p50_ms(echo[size])
                line(
                    f"  kg {row} / (raw floor + MCP round trip)",
                    {"kg": p50_ms(res["kg"][row]) / both},
                    ratios=False,
                )
    if "kg-embed" in res and res["kg-embed"]["extra"]:
        line(
            "  bare encode, a batch's texts",
            {"kg-embed": p50_ms([t for t, _ in res["kg-embed"]["extra"]])},
            ratios=False,
        )
        line(
            "  bare encode, 1 entity's texts",
            {"kg-embed": p50_ms([t for t, _ in res["kg-embed"]["extra_single"]])},
            ratios=False,
        )
    line("ingest, entities + relations (s)", {s: sum(r["ingest_s"][:2]) for s, r in res.items()})
    line("ingest, entities/s", {s: r["ingest_s"][2] / r["ingest_s"][0] for s, r in res.items()}, ratios=False)
    line(
        "ingest, relations/s", {s: r["ingest_s"][3] / r["ingest_s"][1] for s, r in res.items()}, ratios=False
    )
    line("read_graph answer (MB)", {s: r["read_bytes"] / 1e6 for s, r in res.items() if r["read_graph"]})
    line("  of which client validation", {s: p50_ms(r["validation"]) for s, r in res.items()})
    line(
        "search hits per query",
        {s: sum(r["hits"]) / max(1, len(r["hits"])) for s, r in res.items()},
        ratios=False,
    )
    out = [
        results.table(
            f"{n}",
            headers,
            rows,
            title=f"N = {n:,} entities (3 observations each) and {n:,} relations; batches of {BATCH}",
        )
    ]
    notes: list[str] = []
    if "kg" in res and "paged" in res["kg"]:
        secs, ents, pages = res["kg"]["paged"]
        notes.append(
            f"kg read_graph past the answer cap: paged read (limit 10,000, default profile) "
            f"{secs * 1000:,.0f} ms for {ents:,} entities in {pages} pages"
        )
    if "kg-embed" in res and res["kg-embed"]["extra"]:
        r = res["kg-embed"]
        texts = sum(k for _, k in r["extra"])
        mcp = texts / sum(r["create_entities (100)"][b] for b in r["extra_batches"])
        raw = texts / sum(t for t, _ in r["extra"])
        notes.append(
            f"kg-embed ingest: {mcp:,.0f} texts/s through MCP vs {raw:,.0f} texts/s bare model.encode of the "
            f"same texts ({100 * mcp / raw:.0f}%; {len(r['extra'])} batches of {BATCH}, each encoded right after its call)"
        )
    for r in res.values():
        notes += r["notes"]
    if "neo4j-memory" in res:
        notes.append(
            "neo4j-memory's search_memories is a Lucene query over a fulltext index (terms, not substrings; "
            "asked the prefix query '000004*' where the others get the substring 'Entity-000004'): its row "
            "is not the same operation as search_nodes"
        )
    return "\n".join([*out, *(results.note(x) for x in notes)])


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument(
        "--sizes", default="10000", help="entities per run, comma-separated (e.g. 1000,10000,100000)"
    )
    ap.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {', '.join(SYSTEMS)}"
    )
    ap.add_argument("--calls", type=int, default=200, help="timed calls per latency row")
    ap.add_argument("--read-calls", type=int, default=20, help="timed read_graph calls")
    ap.add_argument(
        "--encode-every",
        type=int,
        default=4,
        help="kg-embed: encode every k-th batch's texts bare, beside its call (1 = every batch)",
    )
    ap.add_argument(
        "--peer-ingest-cap",
        type=float,
        default=1800.0,
        help="seconds after which neo4j-memory's entity ingest stops, and then its relation ingest "
        "(its MERGE scans every :Memory)",
    )
    a = ap.parse_args()
    if a.tiny:  # kg-neo4j alone (the peers need npm and PyPI), both models, twenty entities
        a.sizes, a.systems, a.calls, a.read_calls, a.encode_every = "20", "kg,kg-embed", 3, 1, 1
    systems = [s for s in a.systems.split(",") if s]
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        ap.error(f"--systems: unknown {bad}; allowed: {', '.join(SYSTEMS)}")
    sizes = [int(x) for x in a.sizes.split(",")]
    results = Results(
        "peers-"
        + "-".join(_size(n) for n in sizes)
        + ("" if systems == list(SYSTEMS) else "-" + "-".join(systems)),
        a,
    )
    try:
        for n in sizes:
            print(report(results, n, asyncio.run(run_size(n, systems, a))) + "\n", flush=True)
    finally:
        if "neo4j-memory" in systems:
            peer_neo4j("stop")
    results.save(connection())


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


if __name__ == "__main__":
    main()
