"""Three speed mechanisms, each with and without, on calls users wait on (issue 28, the product rule).

The rule (README, development; docs/performance.md): a mechanism that adds a concept across many files
must buy a gain users notice, >= 20 % and >= 20 ms on a call they wait on.  Measured here through a real
MCP stdio client (the SDK's, as benchmarks/bench_peers.py) against ``kg-neo4j serve --tools reference
--embedding-model none`` on the project's Neo4j, in a fresh ``bench-mechanisms-...`` namespace holding
``--entities`` entities (3 observations each) and as many relations (i -> i + 7919 mod N), written
through the same MCP server in batches of 100 as bench_peers writes them.  Everything written is
deleted at the end.

1. read_graph's answer cache (kg_neo4j/store/answer_cache.py): read_graph when the cache answers
   (nothing committed since the previous read) against when it must rebuild (a trivial write, one
   entity by the raw driver into ANOTHER namespace, just before the call: the cache's position is
   database-wide, so that write invalidates it).  One server; each round is write, read (a miss),
   read (a hit).
2. ``gc.freeze`` at start (``_freeze_startup_heap`` in kg_neo4j/server/app.py): read_graph forced to
   rebuild (as in 1) on a server that froze its start-up heap against one that did not.
3. The threadless stdio path (``_loop_pipes`` in kg_neo4j/server/stdio.py, used when stdin and stdout
   are pipes, as they are here) against the threaded one (``_thread_pipes``): open_nodes (5 names) and
   create_entities (1 entity, 3 observations).

How the variants are made: every server is started by a small launcher (``LAUNCHER`` below, run as
``python -P -c LAUNCHER <toggles> serve ...``) that imports the product and, before ``kg_neo4j.cli.main``
runs, replaces one function by name; nothing on disk is edited.  ``nofreeze`` replaces
``app._freeze_startup_heap`` by a no-op (what commenting out its call does); ``threaded`` makes
``stdio._is_pipe`` answer False, so ``stdio_transport`` takes ``_thread_pipes`` (what it does for a
regular file or a terminal).  In every variant the launcher also writes marker lines to the server's
stderr: which kg_neo4j it imported (checked to be this checkout's), whether the freeze ran and how many
objects it froze, which stdio path was taken, and for every read_graph whether the answer cache hit or
missed.  Every timed read is classified by that marker, not by what the benchmark intended: other
clients writing to the same database turn an intended hit into a miss, and such a read is counted
with the misses.

Interleaving: the servers being compared are all running at once, each in its own MCP session, and
their calls alternate (A, B, then B, A in the next round, so neither always goes first), so load from
other processes on the machine falls on both alike.  Times are request -> validated answer as the
client sees them (rows 1 and 2 are also shown without the time the client spent validating the
answer against the tool's output schema, which is the same for both variants).  The load average is
printed before and after.

    .venv/bin/python benchmarks/bench_mechanisms.py                          # 10k entities
    .venv/bin/python benchmarks/bench_mechanisms.py --entities 1000 --rounds 5 --calls 20   # quick
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
    entity_name,
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

#: Run as ``python -P -c LAUNCHER <toggles> <kg-neo4j arguments>`` (-P: the working directory is not
#: put on sys.path, so the kg_neo4j imported is the one PYTHONPATH or the installed package names).
LAUNCHER = r"""
import gc, sys
import kg_neo4j
import kg_neo4j.server.app as app
import kg_neo4j.server.stdio as stdio
from kg_neo4j.store.answer_cache import AnswerCache

toggles = {t for t in sys.argv[1].split(",") if t}
MARK = "bench-mechanisms:"

def mark(msg):
    print(MARK, msg, file=sys.stderr, flush=True)

mark("kg_neo4j " + kg_neo4j.__file__ + " toggles " + ",".join(sorted(toggles)))
freeze = app._freeze_startup_heap

def startup_heap():
    if "nofreeze" in toggles:
        mark("freeze skipped")
        return
    freeze()
    mark("freeze ran: %d objects frozen" % gc.get_freeze_count())

app._freeze_startup_heap = startup_heap
if "threaded" in toggles:
    stdio._is_pipe = lambda fd: False
for name in ("_loop_pipes", "_thread_pipes"):
    def path(*args, _orig=getattr(stdio, name), _name=name):
        mark("stdio " + _name)
        return _orig(*args)
    setattr(stdio, name, path)
get_or_build = AnswerCache.get_or_build

async def classified(self, kind, at, build):
    hits = self.hits
    answer = await get_or_build(self, kind, at, build)
    mark("cache " + ("hit" if self.hits > hits else "miss"))
    return answer

AnswerCache.get_or_build = classified
from kg_neo4j.cli import main
sys.exit(main(sys.argv[2:]))
"""


class Server:
    """One ``kg-neo4j serve`` (one variant) in its own MCP stdio session; its stderr in a file."""

    def __init__(self, name: str, toggles: str, ns: str, env: dict[str, str], workdir: Path) -> None:
        self.name, self.toggles, self.ns, self.env, self.workdir = name, toggles, ns, env, workdir
        self.errlog_path = workdir / f"{name}.stderr"
        self.session: Any = None
        self.validation = 0.0  # seconds the client spent validating answers, all calls so far

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        args = ["-P", "-c", LAUNCHER, self.toggles, "serve", "--tools", "reference", "--namespace", self.ns]
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
            raise RuntimeError(f"{self.name} {tool}: {getattr(block, 'text', '')[:300]}")
        return dt

    def marks(self) -> list[str]:
        lines = self.errlog_path.read_text(errors="replace").splitlines()
        return [ln.removeprefix(MARK).strip() for ln in lines if ln.startswith(MARK)]

    def cache_marks(self) -> list[str]:
        return [m.removeprefix("cache ") for m in self.marks() if m.startswith("cache ")]


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


def _order(pair: list[Server], r: int) -> list[Server]:
    return pair if r % 2 == 0 else pair[::-1]


async def reads(base: Server, nofreeze: Server, touch: Touch, rounds: int) -> dict[str, list[float]]:
    """Items 1 and 2: per round, on each server in alternating order: touch, read; on ``base`` one
    more read right after (nothing committed since, unless someone else did).  Returns times by the
    server's own hit/miss marker."""
    timed: dict[str, list[tuple[float, int]]] = {base.name: [], nofreeze.name: []}
    for srv in (base, nofreeze):  # warm-up: a first build, a kept answer
        for _ in range(2):
            touch()
            await srv.call("read_graph", {})
            await srv.call("read_graph", {})
    skip = {s.name: len(s.cache_marks()) for s in (base, nofreeze)}

    async def read(srv: Server) -> None:
        spent = srv.validation
        dt = await srv.call("read_graph", {})
        timed[srv.name].append((dt, dt - (srv.validation - spent)))

    for r in range(rounds):
        for srv in _order([base, nofreeze], r):
            touch()
            await read(srv)
            if srv is base:
                await read(srv)
    out: dict[str, list[float]] = {}
    for srv in (base, nofreeze):
        cache = srv.cache_marks()[skip[srv.name] :]
        if len(cache) != len(timed[srv.name]):
            raise RuntimeError(f"{srv.name}: {len(cache)} cache markers for {len(timed[srv.name])} reads")
        for (dt, unvalidated), outcome in zip(timed[srv.name], cache, strict=True):
            out.setdefault(f"{srv.name} {outcome}", []).append(dt)
            out.setdefault(f"{srv.name} {outcome} unvalidated", []).append(unvalidated)
    return out


async def small_calls(
    base: Server, threaded: Server, n: int, calls: int
) -> dict[str, dict[str, list[float]]]:
    """Item 3: open_nodes (5 names) and create_entities (1 entity), alternating between the servers."""
    rng = random.Random(5)
    out: dict[str, dict[str, list[float]]] = {
        "open_nodes (5)": {base.name: [], threaded.name: []},
        "create_entities (1)": {base.name: [], threaded.name: []},
    }
    made = 0

    def make(row: str, srv: Server) -> tuple[str, dict[str, Any]]:
        nonlocal made
        if row == "open_nodes (5)":
            return "open_nodes", {"names": [entity_name(rng.randrange(n)) for _ in range(5)]}
        one = entity_arg(n + 1_000_000 + made, rng)
        one["name"] = f"Single-{srv.name}-{made:06d}"
        made += 1
        return "create_entities", {"entities": [one]}

    for row in out:
        for k in range(calls + 10):
            for srv in _order([base, threaded], k):
                dt = await srv.call(*make(row, srv))
                if k >= 10:  # 10 warm-ups each
                    out[row][srv.name].append(dt)
    return out


def ms(xs: list[float], p: float) -> float:
    return percentile(xs, p) * 1000 if xs else float("nan")


def compare(label: str, with_: list[float], without: list[float]) -> list[Any]:
    """A row: p50/p90 with the mechanism and without it, the p50 gain in ms and %, the rule's verdict."""
    w50, o50 = ms(with_, 50), ms(without, 50)
    gain = o50 - w50
    pct = 100 * gain / o50 if o50 else float("nan")
    meets = "yes" if gain >= 20 and pct >= 20 else "no"
    return [
        label,
        f"{len(with_)}/{len(without)}",
        w50,
        ms(with_, 90),
        o50,
        ms(without, 90),
        o50 / w50 if w50 else float("nan"),
        gain,
        pct,
        meets,
    ]


async def run(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    conn = connection()
    await asyncio.to_thread(ensure_schema, conn)  # it runs its own event loop
    drv = sync_driver(conn)
    ns, other = new_namespace("mechanisms", a.entities), new_namespace("mechanisms-touch", a.entities)
    env = server_env(conn)
    load = [os.getloadavg()]
    raw: dict[str, Any] = {"entities": a.entities, "namespace": ns}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-mechanisms-") as tmp:
            workdir = Path(tmp)
            servers = {
                name: Server(name, toggles, ns, env, workdir)
                for name, toggles in (("base", ""), ("nofreeze", "nofreeze"), ("threaded", "threaded"))
            }
            async with contextlib.AsyncExitStack() as stack:
                for srv in servers.values():
                    await srv.open(stack)
                log(f"seeding {a.entities:,} entities and relations through MCP into {ns}")
                log(f"  seeded in {await seed(servers['base'], a.entities):.1f} s")
                touch = Touch(drv, conn.database, other)
                log(f"read_graph: {a.rounds} rounds")
                read = await reads(servers["base"], servers["nofreeze"], touch, a.rounds)
                log(f"open_nodes, create_entities (1): {a.calls} calls each per server")
                small = await small_calls(servers["base"], servers["threaded"], a.entities, a.calls)
                marks = {
                    name: [m for m in s.marks() if not m.startswith("cache ")] for name, s in servers.items()
                }
            load.append(os.getloadavg())
    finally:
        for n in (ns, other):
            delete_namespace(drv, conn.database, n)
        drv.close()

    expected = str(ROOT / "kg_neo4j")
    checks = []
    for name, m in marks.items():
        checks.append(f"{name}: " + "; ".join(m))
        if not any(x.startswith("kg_neo4j " + expected) for x in m):
            raise RuntimeError(f"{name}: the server did not import kg_neo4j from {expected}: {m}")
    if (
        not any(x.startswith("freeze ran") for x in marks["base"])
        or "freeze skipped" not in marks["nofreeze"]
    ):
        raise RuntimeError(f"freeze toggle not as intended: {marks}")
    if "stdio _loop_pipes" not in marks["base"] or "stdio _thread_pipes" not in marks["threaded"]:
        raise RuntimeError(f"stdio toggle not as intended: {marks}")

    headers = ["p50/p90 ms", "n with/without", "with p50", "with p90", "without p50", "without p90"]
    headers += ["without/with", "gain ms", "gain %", ">=20% and >=20 ms"]
    rows = [
        compare(
            "1. answer cache: read_graph, cache hit vs rebuild",
            read.get("base hit", []),
            read.get("base miss", []),
        ),
        compare(
            "1'. the same without the client's validation",
            read.get("base hit unvalidated", []),
            read.get("base miss unvalidated", []),
        ),
        compare(
            "2. gc.freeze: read_graph rebuild, frozen vs not",
            read.get("base miss", []),
            read.get("nofreeze miss", []),
        ),
        compare(
            "2'. the same without the client's validation",
            read.get("base miss unvalidated", []),
            read.get("nofreeze miss unvalidated", []),
        ),
    ]
    for row, by in small.items():
        rows.append(compare(f"3. threadless stdio: {row}", by["base"], by["threaded"]))
    lines = [
        f"N = {a.entities:,} entities (3 observations each) and {a.entities:,} relations; "
        f"kg_neo4j from {expected}",
        f"load average (1, 5, 15 min) before {load[0][0]:.2f} {load[0][1]:.2f} {load[0][2]:.2f}, "
        f"after {load[-1][0]:.2f} {load[-1][1]:.2f} {load[-1][2]:.2f}",
        table(headers, rows, left_first=True),
        "reads by the server's own cache marker: "
        + ", ".join(f"{k} {len(v)}" for k, v in sorted(read.items()) if "unvalidated" not in k),
        *checks,
    ]
    raw.update(load=load, reads=read, small=small, marks=marks)
    return "\n".join(lines), raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="entities in the namespace")
    ap.add_argument("--rounds", type=int, default=40, help="read_graph rounds (items 1 and 2)")
    ap.add_argument("--calls", type=int, default=200, help="timed calls per server and row (item 3)")
    ap.add_argument("--json", type=Path, help="also write every timing to this file")
    a = ap.parse_args()
    text, raw = asyncio.run(run(a))
    print(text, flush=True)
    if a.json:
        a.json.write_text(json.dumps(raw, indent=1, default=str))


if __name__ == "__main__":
    main()
