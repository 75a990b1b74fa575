"""The team service (issue #30): what the grants file costs a call, and stateless replicas under load.

(a) Auth overhead.  Two ``kg-neo4j serve --transport http`` processes, identical but for how they know the
    caller: one with a grants file (``--grants``: a principal with ``write`` on its namespace, found by
    the SHA-256 of its token, the file's change time checked on every request), one with the single
    ``--auth-token``.  Each namespace is seeded the same through its server; then ``search_memory`` and
    ``create_entities`` are called with the same arguments on both, interleaved call by call (the side
    that goes first alternates), through one real MCP session each, after a warm-up.  Target: the grants
    file's p50 within 1.1x of the single token's.
(b) Replicas.  Three ``--stateless`` processes with one grants file on one Neo4j; eight clients, each a
    real MCP session whose HTTP requests go round-robin over the replicas (tests/support/replica_load.py), 500
    operations each (entity creates, relation creates, observation adds, the names contested by all
    clients), then the same over one of the replicas alone, each run on a fresh namespace.  Afterwards
    Neo4j is checked against what the answers acknowledged: 0 lost, 0 duplicated, each contested name
    created once.  Throughput is operations per second of wall time, session starts excluded (on 2
    cores more processes are not expected to be faster: the point is correctness).

Both parts use the embedding model the product ships by default (``--embedding-model none`` turns it
off).  Percentiles are nearest-rank.

    .venv/bin/python benchmarks/bench_team.py [--calls 400] [--clients 8 --ops 500] [--part auth|replicas]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import random
import secrets
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import (  # noqa: E402
    WORDS,
    connection,
    delete_namespace,
    ensure_schema,
    log,
    new_namespace,
    percentile,
    server_env,
    sync_driver,
    table,
)

from kg_neo4j.settings import Settings  # noqa: E402
from support.replica_load import balanced_session, check, run_clients  # noqa: E402
from support.servers import Neo4jInfo, http_server  # noqa: E402


def serving(env: dict[str, str], *args: str) -> AbstractContextManager[str]:
    """``kg-neo4j serve --transport http *args`` with the benchmark's environment (its connection and
    model); its URL once it answers.  Warnings only: the server's stderr is a pipe nobody reads while it
    runs, and thousands of access-log lines would fill it."""
    info = Neo4jInfo(
        env["NEO4J_URI"], env["NEO4J_USERNAME"], env["NEO4J_PASSWORD"], env["NEO4J_DATABASE"], "bench"
    )
    return http_server(info, *args, "--log-level", "WARNING", env=env)


def write_grants(path: Path, grants: list[str]) -> str:
    """A grants file with one principal, ``bench``, holding ``grants``; its token."""
    token = secrets.token_urlsafe(32)
    digest = hashlib.sha256(token.encode()).hexdigest()
    listed = ", ".join(f'"{g}"' for g in grants)
    path.write_text(f'[principals.bench]\ntoken_sha256 = "{digest}"\ngrants = [{listed}]\n', encoding="utf-8")
    return token


def sentence(rng: random.Random, n: int = 6) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def ns_path(namespace: str) -> str:
    return "/mcp/" + quote(namespace, safe="")


# --------------------------------------------------------------------------------- (a) auth overhead


async def auth_overhead(
    env: dict[str, str], grants: Path, token: str, ns_g: str, ns_t: str, args: Any
) -> str:
    single = secrets.token_urlsafe(32)
    with (
        serving(env, "--namespace", ns_g, "--grants", str(grants)) as url_g,
        serving(env, "--namespace", ns_t, "--auth-token", single) as url_t,
    ):
        async with (
            balanced_session([url_g], ns_path(ns_g), {"Authorization": f"Bearer {token}"}) as (grants_s, _),
            balanced_session([url_t], "/mcp", {"Authorization": f"Bearer {single}"}) as (token_s, _),
        ):
            sides = {"grants file": grants_s, "single token": token_s}
            rng = random.Random(7)
            log(f"seeding {args.seed} entities in each namespace")
            for start in range(0, args.seed, 50):
                entities = [
                    {
                        "name": f"Seed-{i:05d}",
                        "entityType": "note",
                        "observations": [sentence(rng), sentence(rng)],
                    }
                    for i in range(start, min(start + 50, args.seed))
                ]
                for session in sides.values():
                    result = await session.call_tool("create_entities", {"entities": entities})
                    assert not result.is_error, result.content
            times: dict[tuple[str, str], list[float]] = {
                (tool, side): [] for tool in ("search_memory", "create_entities") for side in sides
            }
            total = args.warmup + args.calls
            log(f"{args.warmup} warm-up and {args.calls} measured rounds, each tool on each side")
            for i in range(total):
                calls = {
                    "search_memory": {"query": sentence(rng, 3), "limit": 10},
                    "create_entities": {
                        "entities": [
                            {"name": f"New-{i:05d}", "entityType": "note", "observations": [sentence(rng)]}
                        ]
                    },
                }
                order = list(sides) if i % 2 == 0 else list(reversed(sides))
                for tool, call in calls.items():
                    for side in order:
                        t0 = time.perf_counter()
                        result = await sides[side].call_tool(tool, call)
                        elapsed = time.perf_counter() - t0
                        assert not result.is_error, result.content
                        if i >= args.warmup:
                            times[(tool, side)].append(elapsed)
    rows = []
    for tool in ("search_memory", "create_entities"):
        g, t = times[(tool, "grants file")], times[(tool, "single token")]
        for side, values in (("grants file", g), ("single token", t)):
            ms = [v * 1000 for v in values]
            rows.append([tool, side, len(ms), percentile(ms, 50), percentile(ms, 90), "", ""])
        rows[-2][5] = percentile(g, 50) / percentile(t, 50)
        rows[-2][6] = percentile(g, 90) / percentile(t, 90)
    return table(
        ["tool", "auth", "calls", "p50 ms", "p90 ms", "p50 grants/token", "p90 grants/token"],
        rows,
        left_first=True,
    )


async def door_alone(grants: Path, token: str, namespace: str, n: int) -> str:
    """The door's own work per request, in process: the token to a principal (the grants file: its
    SHA-256 looked up, the file's change checked; the single token: a digest compared), then the
    principal's scope on the namespace."""
    from kg_neo4j.auth import Authenticator

    single = secrets.token_urlsafe(32)
    doors = {
        "grants file": (
            Authenticator.from_settings(Settings(grants_file=grants, namespace=namespace)),
            token,
        ),
        "single token": (
            Authenticator.from_settings(Settings(auth_token=single, namespace=namespace)),
            single,
        ),
    }
    rows = []
    for side, (door, presented) in doors.items():
        for _ in range(200):  # warm
            (await door.authenticate(presented)).scope_on(namespace)
        t0 = time.perf_counter()
        for _ in range(n):
            assert (await door.authenticate(presented)).scope_on(namespace) == "write"
        rows.append([side, n, (time.perf_counter() - t0) / n * 1e6])
    return table(["auth", "checks", "us per request"], rows, left_first=True)


# -------------------------------------------------------------------------------------- (b) replicas


async def replicas(env: dict[str, str], grants: Path, token: str, namespaces: list[str], args: Any) -> str:
    conn = connection()
    drv = sync_driver(conn)
    rows = []
    try:
        with contextlib.ExitStack() as stack:
            urls = [
                stack.enter_context(
                    serving(env, "--namespace", namespaces[0], "--grants", str(grants), "--stateless")
                )
                for _ in range(3)
            ]
            for label, used, ns in (
                ("3 replicas", urls, namespaces[0]),
                ("1 replica", urls[:1], namespaces[1]),
            ):
                log(f"{label}: {args.clients} clients x {args.ops} operations")
                acks, wall, sent = await run_clients(
                    used,
                    ns_path(ns),
                    {"Authorization": f"Bearer {token}"},
                    clients=args.clients,
                    ops=args.ops,
                    pool=args.pool,
                )
                problems = check(drv, conn.database, ns, acks)
                lost_or_dup = {k: v for k, v in problems.items() if "failed calls" not in k}
                rows.append(
                    [
                        label,
                        acks.calls,
                        len(acks.errors),
                        len(acks.entities),
                        len(acks.relations),
                        len(acks.observations),
                        "none" if not lost_or_dup else "; ".join(lost_or_dup),
                        wall,
                        acks.calls / wall,
                        " / ".join(str(sent[u.removeprefix("http://")]) for u in used),
                    ]
                )
                for k, v in problems.items():
                    log(f"{label}: PROBLEM {k}: {str(v)[:300]}")
    finally:
        drv.close()
    return table(
        [
            "servers",
            "operations",
            "failed",
            "entities",
            "relations",
            "observations",
            "lost or duplicated",
            "wall s",
            "ops/s",
            "HTTP requests per replica",
        ],
        rows,
        left_first=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["auth", "replicas", "both"], default="both")
    ap.add_argument("--calls", type=int, default=400, help="measured rounds of (a), each tool on each side")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--seed", type=int, default=500, help="entities seeded in each namespace of (a)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--ops", type=int, default=500, help="operations per client in (b)")
    ap.add_argument("--pool", type=int, default=400, help="entity names the clients of (b) contest")
    ap.add_argument("--embedding-model", default=Settings.model_fields["embedding_model"].default)
    ap.add_argument("--keep", action="store_true", help="keep the namespaces")
    args = ap.parse_args()

    conn = connection()
    ensure_schema(conn)
    env = {**server_env(conn), "KG_NEO4J_EMBEDDING_MODEL": args.embedding_model}
    ns_g, ns_t = new_namespace("team-grants", args.calls), new_namespace("team-token", args.calls)
    ns_r3, ns_r1 = new_namespace("team-3replicas", args.ops), new_namespace("team-1replica", args.ops)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        grants = Path(tmp) / "grants.toml"
        token = write_grants(grants, [f"{ns}:write" for ns in (ns_g, ns_r3, ns_r1)])
        try:
            if args.part in ("auth", "both"):
                out.append(
                    f"(a) auth overhead: grants file vs single token, {args.calls} interleaved rounds "
                    f"after {args.warmup} warm-up, {args.seed} entities seeded, model {args.embedding_model}\n"
                    + asyncio.run(auth_overhead(env, grants, token, ns_g, ns_t, args))
                )
                out.append(
                    "(a') the door's check alone, in process (no HTTP, no Neo4j)\n"
                    + asyncio.run(door_alone(grants, token, ns_g, 20000))
                )
            if args.part in ("replicas", "both"):
                out.append(
                    f"(b) replicas: {args.clients} clients x {args.ops} operations, {args.pool} contested names, "
                    f"stateless, round-robin, model {args.embedding_model}\n"
                    + asyncio.run(replicas(env, grants, token, [ns_r3, ns_r1], args))
                )
        finally:
            if not args.keep:
                drv = sync_driver(conn)
                for ns in (ns_g, ns_t, ns_r3, ns_r1):
                    delete_namespace(drv, conn.database, ns)
                drv.close()
    print("\n\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
