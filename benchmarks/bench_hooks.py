"""The hooks' latency as Claude Code sees it: each call a fresh ``kg-neo4j hook NAME`` process
(Python's start included), on a 10k-node knowledge graph.

Seeds (raw ``UNWIND``, no product code) N knowledge nodes in the documented layout
(docs/knowledge-model.md), created 0-60 days ago at the real time (the hooks run on the system
clock), one semantic edge per 4 nodes (weights uniform 0-1, so about 30% weak; a tenth created in the
last 24 hours), and 20 expired nodes whose observations still hold vectors; then

1. ``session-start``: --runs calls (the first does the maintenance: closes weak edges, cleans the
   expired vectors, sweeps; the others find less to do), p50/p95 and what the first one reported;
2. ``recall`` by keywords: 50 prompts (half share words with the knowledge, half reworded), a cold
   pass (the first calls on this namespace) and a warm pass (the same prompts again);
3. ``recall`` by meaning (unless --no-semantic): the nodes' contents are embedded (all-MiniLM-L6-v2,
   written raw), ``kg-neo4j serve --transport http --tools all`` is started with the model, and the
   same 50 prompts run with KG_NEO4J_HOOK_SEARCH_URL: a cold pass right after the server has loaded
   its model and a warm pass.

Targets (docs/hooks.md): session-start p95 < 2 s, recall p95 < 1 s warm.  The namespace is deleted
afterwards.

    python -m benchmarks.bench_hooks [--size 10000] [--runs 20] [--no-semantic] [--keep]
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    KG,
    WORDS,
    Results,
    arguments,
    chunks,
    connection,
    delete_namespace,
    ensure_schema,
    log,
    new_namespace,
    server_env,
    summary_ms,
    sync_driver,
)

SEED = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:Knowledge:KgText {
  namespace: $ns, name: row.name, name_lower: toLower(row.name), entityType: row.type, type_lower: row.type,
  text_lower: toLower(row.name) + '\n' + row.type,
  content: row.content, trust: row.trust, category: 'creative', source: 'bench', stability: row.stability,
  memory_level: 1, access_count: row.accesses, last_access: null, sessions: ['s0'], created_at: row.created_at,
  updated_at: row.created_at, obs_next: 1})
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.content, text_lower: toLower(row.content),
                                              seq: 0, created_at: row.created_at, role: 'content'})
""".strip()

SEED_EDGES = """
UNWIND $rows AS row
MATCH (a:KgNode {namespace: $ns, name: row.from})
MATCH (b:KgNode {namespace: $ns, name: row.to})
CREATE (a)-[r:$(row.type)]->(b)
SET r.weight = row.weight, r.valid_from = row.created_at, r.created_at = row.created_at, r.source = 'bench'
""".strip()

EXPIRE_WITH_VECTORS = """
MATCH (k:Knowledge) WHERE k.namespace = $ns AND k.name IN $names
MATCH (k)-[:HAS_OBSERVATION]->(o)
SET o.embedding = $vector, o.embedding_model = 'bench'
REMOVE k:KgNode:Entity:Knowledge
SET k:ExpiredKnowledge, k.expired_at = $now, k.expired_reason = 'forgotten'
""".strip()

SET_VECTORS = """
UNWIND $rows AS row
MATCH (k:Knowledge {namespace: $ns, name: row.name})-[:HAS_OBSERVATION]->(o:Observation)
SET o.embedding = row.vector, o.embedding_model = $model
""".strip()

TOPICS = [
    ("deploy", "run the database migrations before deploying the {w} service"),
    ("review", "every pull request touching {w} needs one approving review"),
    ("tests", "the {w} tests must not mock the database"),
    ("logging", "log {w} errors with the request id, never with print"),
    ("release", "tag {w} releases from the release branch, never from main"),
    ("cache", "the {w} cache key must include the locale"),
    ("timeouts", "{w} client timeouts are in seconds, not milliseconds"),
    ("style", "use snake_case for {w} column names"),
]
PROMPTS_KEYWORD = [
    "how do we deploy the {w} service?",
    "what are the rules for {w} pull request reviews?",
    "can the {w} tests mock the database?",
    "how should {w} errors be logged?",
    "where do {w} releases get tagged?",
]
PROMPTS_REWORDED = [
    "how should I ship schema changes for {w} to production?",
    "who has to approve my {w} change?",
    "is faking the data store fine in {w} unit checks?",
    "what goes into a {w} failure report?",
    "which git branch do {w} versions come from?",
]


def knowledge_rows(n: int, now: datetime, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        topic, text = TOPICS[i % len(TOPICS)]
        w = rng.choice(WORDS)
        trust = ("principle", "pattern", "inference")[i % 3]
        rows.append(
            {
                "name": f"K-{i:06d} {topic} {w}",
                "content": text.format(w=w),
                "trust": trust,
                "type": ("rule", "procedure", "observation", "insight", "preference")[i % 5],
                "stability": {"principle": 30.0, "pattern": 7.0, "inference": 3.0}[trust] * 3,
                "accesses": rng.randint(0, 4),
                "created_at": now - timedelta(days=rng.uniform(0, 60)),
            }
        )
    return rows


def run_hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [KG, "hook", name], input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60
    )
    return time.perf_counter() - t0, proc.stdout


def recall_pass(prompts: list[str], env: dict[str, str], tag: str) -> tuple[list[float], int]:
    times, found = [], 0
    for i, prompt in enumerate(prompts):
        dt, out = run_hook(
            "recall",
            {"session_id": f"bench-{tag}-{i}", "hook_event_name": "UserPromptSubmit", "prompt": prompt},
            env,
        )
        times.append(dt)
        found += bool(out.strip())
    return times, found


def in_process(
    prompts: list[str], conn: Any, ns: str, state: str, url: str | None, token: str | None, tag: str
) -> list[float]:
    """The hook's own time (no process start, no imports): ``run_hook`` per prompt, its own driver each time."""
    import asyncio

    from kg_neo4j.hooks import HookConfig, run_hook
    from kg_neo4j.settings import Settings

    settings = Settings(
        neo4j_uri=conn.uri,
        neo4j_username=conn.username,
        neo4j_password=conn.password,
        neo4j_database=conn.database,
        namespace=ns,
        auth_token=token,
    )
    config = HookConfig(hook_state_dir=Path(state), hook_search_url=url)
    times = []
    for i, prompt in enumerate(prompts):
        t0 = time.perf_counter()
        with contextlib.suppress(
            TimeoutError
        ):  # past its time budget the hook gives up (and answers nothing)
            asyncio.run(
                run_hook(
                    "recall", {"session_id": f"bench-{tag}-{i}", "prompt": prompt}, settings, config=config
                )
            )
        times.append(time.perf_counter() - t0)
    return times


def wait_ready(url: str, token: str, deadline: float) -> None:
    """Until the server answers search_memory in hybrid mode (its model loaded)."""
    from kg_neo4j.hooks.semantic import Client

    while time.monotonic() < deadline:
        try:
            client = Client(url, token, 5.0)
            client.open()
            answer = client._post(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "tools/call",
                    "params": {"name": "search_memory", "arguments": {"query": "ready", "limit": 1}},
                }
            )
            client.close()
            if answer and (answer["result"].get("structuredContent") or {}).get("mode") == "hybrid":
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the HTTP server did not get ready")


def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--prompts", type=int, default=50, help="recall prompts per pass")
    ap.add_argument("--no-semantic", dest="semantic", action="store_false")
    ap.add_argument("--port", type=int, default=0, help="the HTTP server's port (default: a free one)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.tiny:
        args.size, args.runs, args.prompts = 100, 1, 2
    port = args.port or free_port()
    results = Results(f"hooks-{args.size}", args)

    conn = connection()
    drv = sync_driver(conn)
    ensure_schema(conn)
    ns = new_namespace("hooks", args.size)
    rng = random.Random(7)
    now = datetime.now(UTC)
    rows = knowledge_rows(args.size, now, rng)
    state = tempfile.mkdtemp(prefix="kg-bench-hooks-")
    env = {
        **server_env(conn),
        "KG_NEO4J_NAMESPACE": ns,
        "KG_NEO4J_HOOK_STATE_DIR": state,
        "KG_NEO4J_EMBEDDING_MODEL": "none",
    }
    server: subprocess.Popen[bytes] | None = None
    figures: list[list[Any]] = []
    try:
        log(f"seeding {args.size} knowledge nodes into {ns}")
        for r in chunks(len(rows), 5000):
            drv.execute_query(SEED, rows=rows[r.start : r.stop], ns=ns, database_=conn.database)
        edges = []
        for i in range(0, args.size, 4):
            edges.append(
                {
                    "from": rows[i]["name"],
                    "to": rows[(i + 7919) % args.size]["name"],
                    "type": ("refines", "implies", "causes", "tends_to")[i % 4],
                    "weight": round(rng.random(), 3),
                    "created_at": now
                    - (
                        timedelta(hours=rng.uniform(0, 24))
                        if i % 40 == 0
                        else timedelta(days=rng.uniform(2, 60))
                    ),
                }
            )
        for r in chunks(len(edges), 5000):
            drv.execute_query(SEED_EDGES, rows=edges[r.start : r.stop], ns=ns, database_=conn.database)
        drv.execute_query(
            EXPIRE_WITH_VECTORS,
            ns=ns,
            names=[rows[i]["name"] for i in range(1, min(400, args.size), 20)],
            vector=[1.0] + [0.0] * 383,
            now=now,
            database_=conn.database,
        )
        log(
            f"seeded: {len(edges)} edges ({sum(e['weight'] < 0.3 for e in edges)} weak), 20 expired with vectors"
        )

        # 0. the floor: a hook that only starts (Python, the CLI, settings, the driver's import) and answers
        times = [
            run_hook("search-enforcer", {"session_id": "bench-floor", "tool_name": "Edit"}, env)[0]
            for _ in range(args.runs)
        ]
        p50, p95, _ = summary_ms(times)
        figures.append(
            ["floor: process start (search-enforcer, off)", len(times), p50, p95, max(times) * 1000, "-"]
        )

        # 1. session-start
        times = []
        first = ""
        for i in range(args.runs):
            dt, out = run_hook("session-start", {"session_id": f"bench-start-{i}", "source": "startup"}, env)
            times.append(dt)
            first = first or out
        log("session-start, first run:\n" + first)
        p50, p95, _ = summary_ms(times)
        figures.append(["session-start", len(times), p50, p95, times[0] * 1000, "-"])

        # 2. recall by keywords
        prompts = [
            p.format(w=rng.choice(WORDS)) for _ in range(5) for p in PROMPTS_KEYWORD + PROMPTS_REWORDED
        ][: args.prompts]
        for tag in ("cold", "warm"):
            times, found = recall_pass(prompts, env, f"kw-{tag}")
            p50, p95, _ = summary_ms(times)
            figures.append([f"recall, keywords ({tag})", len(times), p50, p95, max(times) * 1000, found])
        times = in_process(prompts, conn, ns, state, None, None, "kw-in")
        p50, p95, _ = summary_ms(times)
        figures.append(["recall, keywords, in process (warm)", len(times), p50, p95, max(times) * 1000, "-"])

        # 3. recall by meaning
        if args.semantic:
            from kg_neo4j.embeddings import load_embedder

            log("embedding the knowledge (all-MiniLM-L6-v2)")
            emb = load_embedder("all-MiniLM-L6-v2", background=False)
            assert emb is not None
            for r in chunks(len(rows), 512):
                part = rows[r.start : r.stop]
                vectors = emb.encode([x["content"] for x in part])
                drv.execute_query(
                    SET_VECTORS,
                    rows=[
                        {"name": x["name"], "vector": list(map(float, v))}
                        for x, v in zip(part, vectors, strict=True)
                    ],
                    ns=ns,
                    model="all-MiniLM-L6-v2",
                    database_=conn.database,
                )
            token = "bench-token"
            senv = {**env, "KG_NEO4J_EMBEDDING_MODEL": "all-MiniLM-L6-v2", "KG_NEO4J_AUTH_TOKEN": token}
            server = subprocess.Popen(
                [KG, "serve", "--transport", "http", "--port", str(port), "--tools", "all"],
                env=senv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            url = f"http://127.0.0.1:{port}/mcp"
            wait_ready(url, token, time.monotonic() + 180)
            menv = {**env, "KG_NEO4J_HOOK_SEARCH_URL": url, "KG_NEO4J_AUTH_TOKEN": token}
            for tag in ("cold", "warm"):
                times, found = recall_pass(prompts, menv, f"sem-{tag}")
                p50, p95, _ = summary_ms(times)
                figures.append(
                    [f"recall, keywords + meaning ({tag})", len(times), p50, p95, max(times) * 1000, found]
                )
            times = in_process(prompts, conn, ns, state, url, token, "sem-in")
            p50, p95, _ = summary_ms(times)
            figures.append(
                [
                    "recall, keywords + meaning, in process (warm)",
                    len(times),
                    p50,
                    p95,
                    max(times) * 1000,
                    "-",
                ]
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if not args.keep:
            delete_namespace(drv, conn.database, ns)
        drv.close()
    title = (
        f"\nhooks on {args.size:,} knowledge nodes (each call a new `kg-neo4j hook` process, start included)"
    )
    headers = ["hook", "calls", "p50 ms", "p95 ms", "first/max ms", "answered"]
    print(results.table("hooks", headers, figures, title=title))
    results.save(conn)
    return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
