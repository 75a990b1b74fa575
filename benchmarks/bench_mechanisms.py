"""read_graph's answer cache, hit against rebuild, on a call users wait on (issue 28, the product rule).

The rule (README, development; docs/performance.md): a mechanism that adds a concept across many files
must buy a gain users notice, >= 20 % and >= 20 ms on a call they wait on.  Measured here: read_graph
when its answer cache (kg_neo4j/store/answer_cache.py) answers, nothing committed since the previous
read, against when it must rebuild because a trivial write (one entity, raw driver) went into ANOTHER
namespace just before the call: the cache's position is database-wide, so that write invalidates it.

Method: one ``kg-neo4j serve --tools reference --embedding-model none`` on the project's Neo4j, called
through a real MCP stdio client (the SDK's, as benchmarks/bench_peers.py), in a fresh
``bench-mechanisms-...`` namespace of ``--entities`` entities (3 observations each) and as many
relations (i -> i + 7919 mod N), written through the same server in batches of 100 as bench_peers
writes them.  After two warm-up rounds, each round is write, read (a rebuild), read (a hit).  Times
are request -> validated answer as the client sees them, and the same without the client's check of
the answer against the tool's output schema.  Both namespaces are deleted at the end.

Each timed read is classified by the server's own cache marker, not by what was intended: another
client's commit turns an intended hit into a rebuild, counted with the rebuilds.  The server does not
report hits, so it is started by ``LAUNCHER`` (``python -P -c LAUNCHER serve ...``), which wraps
``AnswerCache.get_or_build`` to write ``cache hit``/``cache miss`` to the server's stderr, writes which
kg_neo4j it imported (checked to be this checkout's) and runs ``kg_neo4j.cli.main``; nothing on disk is
edited.

gc.freeze at start and the event-loop stdio path were measured with this script at 02cd605 (git
history: 733fc89) and removed; their figures are in docs/performance.md.

    .venv/bin/python benchmarks/bench_mechanisms.py                               # 10k entities
    .venv/bin/python benchmarks/bench_mechanisms.py --entities 1000 --rounds 5    # quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    ROOT,
    SEED_ENTITIES,
    connection,
    delete_namespace,
    ensure_schema,
    entity_arg,
    entity_row,
    log,
    new_namespace,
    percentile,
    ring_relation,
    server_env,
    sync_driver,
    table,
)

BATCH = 100
MARK = "bench-mechanisms:"

#: Run as ``python -P -c LAUNCHER <kg-neo4j arguments>`` (-P: the working directory is not put on
#: sys.path, so the kg_neo4j imported is the one PYTHONPATH or the installed package names).
LAUNCHER = r"""
import sys
import kg_neo4j
from kg_neo4j.store.answer_cache import AnswerCache

def mark(msg):
    print("bench-mechanisms:", msg, file=sys.stderr, flush=True)

mark("kg_neo4j " + kg_neo4j.__file__)
get_or_build = AnswerCache.get_or_build

async def classified(self, kind, at, build):
    hits = self.hits
    answer = await get_or_build(self, kind, at, build)
    mark("cache " + ("hit" if self.hits > hits else "miss"))
    return answer

AnswerCache.get_or_build = classified
from kg_neo4j.cli import main
sys.exit(main(sys.argv[1:]))
"""


class Server:
    """One ``kg-neo4j serve`` in an MCP stdio session; its stderr in a file."""

    def __init__(self, ns: str, env: dict[str, str], workdir: Path) -> None:
        self.ns, self.env, self.workdir = ns, env, workdir
        self.errlog_path = workdir / "server.stderr"
        self.session: Any = None
        self.validation = 0.0  # seconds the client spent validating answers, all calls so far

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        args = ["-P", "-c", LAUNCHER, "serve", "--tools", "reference", "--namespace", self.ns]
        args += ["--log-level", "WARNING", "--embedding-model", "none"]
        params = StdioServerParameters(command=sys.executable, args=args, env=self.env, cwd=str(self.workdir))
        errlog = stack.enter_context(self.errlog_path.open("w"))
        r, w = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        self.session = await stack.enter_async_context(ClientSession(r, w))
        await self.session.initialize()
        await self.session.list_tools()  # the client validates every answer against the output schemas
        validate = self.session.validate_tool_result

        async def timed_validate(name: str, result: Any) -> None:
            t0 = time.perf_counter()
            await validate(name, result)
            self.validation += time.perf_counter() - t0

        self.session.validate_tool_result = timed_validate

    async def call(self, tool: str, args: dict[str, Any]) -> float:
        t0 = time.perf_counter()
        res = await self.session.call_tool(tool, args)
        dt = time.perf_counter() - t0
        if res.is_error:
            block = res.content[0] if res.content else None
            raise RuntimeError(f"{tool}: {getattr(block, 'text', '')[:300]}")
        return dt

    def marks(self, prefix: str = "") -> list[str]:
        """The launcher's marker lines on the server's stderr that start with ``prefix`` (stripped)."""
        lines = self.errlog_path.read_text(errors="replace").splitlines()
        marks = [ln.removeprefix(MARK).strip() for ln in lines if ln.startswith(MARK)]
        return [m.removeprefix(prefix) for m in marks if m.startswith(prefix)]


class Touch:
    """A trivial write into another namespace (one entity, raw driver): a new database position."""

    def __init__(self, drv: Any, database: str, ns: str) -> None:
        self.drv, self.database, self.ns, self.k = drv, database, ns, 0
        self.rng = random.Random(3)

    def __call__(self) -> None:
        row = entity_row(10_000_000 + self.k, self.rng)
        row["created_at"] = datetime.now(UTC)
        self.k += 1
        self.drv.execute_query(SEED_ENTITIES, rows=[row], ns=self.ns, database_=self.database)


async def seed(server: Server, n: int) -> float:
    rng = random.Random(7)
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        items = [entity_arg(i, rng) for i in range(start, min(n, start + BATCH))]
        await server.call("create_entities", {"entities": items})
    for start in range(0, n, BATCH):
        rels = [
            {k: v for k, v in ring_relation(i, n).items() if k != "weight"}
            for i in range(start, min(n, start + BATCH))
        ]
        await server.call("create_relations", {"relations": rels})
    return time.perf_counter() - t0


async def reads(srv: Server, touch: Touch, rounds: int) -> dict[str, list[float]]:
    """Per round: touch, read (a rebuild), read (a hit unless someone else committed).  Returns the
    times by the server's own hit/miss marker, with and without the client's validation."""
    for _ in range(2):  # warm-up: a first build, a kept answer
        touch()
        await srv.call("read_graph", {})
        await srv.call("read_graph", {})
    skip = len(srv.marks("cache "))
    timed: list[tuple[float, float]] = []
    for _ in range(rounds):
        touch()
        for _ in range(2):
            spent = srv.validation
            dt = await srv.call("read_graph", {})
            timed.append((dt, dt - (srv.validation - spent)))
    cache = srv.marks("cache ")[skip:]
    if len(cache) != len(timed):
        raise RuntimeError(f"{len(cache)} cache markers for {len(timed)} reads")
    out: dict[str, list[float]] = {"hit": [], "miss": [], "hit unvalidated": [], "miss unvalidated": []}
    for (dt, unvalidated), outcome in zip(timed, cache, strict=True):
        out[outcome].append(dt)
        out[f"{outcome} unvalidated"].append(unvalidated)
    return out


def ms(xs: list[float], p: float) -> float:
    return percentile(xs, p) * 1000  # nan when empty


def compare(label: str, with_: list[float], without: list[float]) -> list[Any]:
    """A row: p50/p90 with the mechanism and without it, the p50 gain in ms and %, the rule's verdict."""
    w50, w90, o50, o90 = ms(with_, 50), ms(with_, 90), ms(without, 50), ms(without, 90)
    gain = o50 - w50
    pct = 100 * gain / o50 if o50 else float("nan")
    meets = "yes" if gain >= 20 and pct >= 20 else "no"
    n = f"{len(with_)}/{len(without)}"
    return [label, n, w50, w90, o50, o90, o50 / w50 if w50 else float("nan"), gain, pct, meets]


async def run(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    conn = connection()
    await asyncio.to_thread(ensure_schema, conn)  # it runs its own event loop
    drv = sync_driver(conn)
    ns, other = new_namespace("mechanisms", a.entities), new_namespace("mechanisms-touch", a.entities)
    load = [os.getloadavg()]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-mechanisms-") as tmp:
            srv = Server(ns, server_env(conn), Path(tmp))
            async with contextlib.AsyncExitStack() as stack:
                await srv.open(stack)
                log(f"seeding {a.entities:,} entities and relations through MCP into {ns}")
                log(f"  seeded in {await seed(srv, a.entities):.1f} s")
                log(f"read_graph: {a.rounds} rounds")
                read = await reads(srv, Touch(drv, conn.database, other), a.rounds)
                marks = srv.marks("kg_neo4j ")
            load.append(os.getloadavg())
    finally:
        for n in (ns, other):
            delete_namespace(drv, conn.database, n)
        drv.close()

    expected = str(ROOT / "kg_neo4j")
    if not any(m.startswith(expected) for m in marks):
        raise RuntimeError(f"the server did not import kg_neo4j from {expected}: {marks}")
    headers = ["p50/p90 ms", "n hit/rebuild", "hit p50", "hit p90", "rebuild p50", "rebuild p90"]
    headers += ["rebuild/hit", "gain ms", "gain %", ">=20% and >=20 ms"]
    rows = [
        compare("answer cache: read_graph, hit vs rebuild", read["hit"], read["miss"]),
        compare(
            "the same without the client's validation", read["hit unvalidated"], read["miss unvalidated"]
        ),
    ]
    lines = [
        f"N = {a.entities:,} entities (3 observations each) and {a.entities:,} relations; "
        f"kg_neo4j from {expected}",
        f"load average (1, 5, 15 min) before {load[0][0]:.2f} {load[0][1]:.2f} {load[0][2]:.2f}, "
        f"after {load[-1][0]:.2f} {load[-1][1]:.2f} {load[-1][2]:.2f}",
        table(headers, rows, left_first=True),
        f"reads by the server's own cache marker: hit {len(read['hit'])}, miss {len(read['miss'])}",
    ]
    raw = {"entities": a.entities, "namespace": ns, "load": load, "reads": read, "marks": marks}
    return "\n".join(lines), raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="entities in the namespace")
    ap.add_argument("--rounds", type=int, default=40, help="read_graph rounds (a rebuild and a hit each)")
    ap.add_argument("--json", type=Path, help="also write every timing to this file")
    a = ap.parse_args()
    text, raw = asyncio.run(run(a))
    print(text, flush=True)
    if a.json:
        a.json.write_text(json.dumps(raw, indent=1, default=str))


if __name__ == "__main__":
    main()
