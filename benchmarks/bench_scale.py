"""One database, a hundred teams: many namespaces of very different sizes (issue 39).

Not a test: it prints its tables and saves them as a results file (``benchmarks/results/scale-<N>.json``).
Staged and resumable: every stage records what it did in ``--state`` (beside the vector cache in
``--cache``, outside the clone) and a rerun skips what is done; ``--stages`` picks stages.  A run that
completes every stage deletes its namespaces (``--keep`` keeps them); its state stays, so a rerun
rewrites the results from it (remove the state file to start again).  A run that fails keeps them,
so the next goes on.  ``--tiny`` (the smoke size: four namespaces, 150
observations, every stage) works in a temporary cache and fresh namespaces, and deletes them even
when it fails.

Data (``layout``): ``--observations`` N in ``--namespaces`` K: one big namespace of N/2, ten of N/40
("mid", 25,000 at N = 1M), the rest between N/500 and N/200 (2,000 to 5,000 at 1M), one of them at 3,000
whatever N (above ``EXACT_CAP``, 2,000) and one at the smallest size (below it at small N).  Entities of 10
observations from bench_search's generator: a pool of ``--pool`` entities is embedded once with the shipped
model (vectors cached in ``--cache``) and every namespace draws its entities from it, so the small
namespaces hold the same topics, often the same sentences, as the big one: a small namespace's question
has thousands of equally close vectors in other namespaces (the hard case for a filtered search).  An
entity drawn twice into one namespace gets a suffix (``#2``) and its base name's vector.  Seeding writes
through ``GraphStore.create_entities`` (1,000 observations a call) with the cached vectors, never through
MCP; it is not measured.

Stages:

* ``alone``: the measured small namespaces (and the recall ones) seeded alone; each call measured there
  through MCP; recall of their questions;
* ``seed``: everything else;
* ``beside``: the same calls in the same namespaces, and in a mid and the big namespace; recall again;
* ``delete``: the big namespace erased with ``kg-neo4j namespace delete`` (first stopped after
  ``--stop-after`` transactions, then finished by the command) while another MCP client searches and writes
  a small namespace: that client's p99 during the deletion against its p99 just before;
* ``ingest``: ``--ingest`` new observations through MCP (create_entities, model on) into a fresh namespace
  of the full database, against the model's own encode rate on the same texts in this process;
* ``storage``: the store's size on disk (the local server's data directory) and the JVM's heap in use.

Calls measured (``--reps`` each, interleaved): search_memory (a paraphrase of one of the namespace's
observations, limit 10), open_nodes (3 names), read_graph (limit 100), traverse_graph (one start, depth 2),
find_duplicates (one name), and two writes: create_entities (100 entities of one observation) and
add_observations (one).  The reads run on a server with the model; the writes on one with embeddings off
(``--embedding-model none``), as bench_peers measures writes: on a busy 2-core machine the encoder's time
would hide what the database does.  The client is the harness's (tools listed, so answers are checked
against their output schemas, as clients do).  Recall: a question is a hit when the observation it paraphrases
(entity and text) is among search_memory's 10 hits, pooled over the recall namespaces.

    nice -n 10 .venv/bin/python -m benchmarks.bench_scale --observations 1000000        # the issue's size
    nice -n 10 .venv/bin/python -m benchmarks.bench_scale --observations 50000 --pool 600 --reps 15 \\
        --questions 200 --ingest 300                                                   # what a busy machine finishes
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mcp import ClientSession

from benchmarks.harness import (
    KG,
    OBS_PER_ENTITY,
    PERTURB,
    Results,
    arguments,
    connection,
    kg_serve,
    log,
    make_dataset,
    make_relations,
    mcp_session,
    percentile,
    server_env,
    structured,
    write_relations,
)
from kg_neo4j.embeddings import load_embedder
from kg_neo4j.models import EntityIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, connect
from kg_neo4j.store.connection import bootstrap, ensure_vector_indexes
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.hybrid_search import EXACT_CAP
from kg_neo4j.store.namespaces import Stopped, erase_namespace, namespace_counts
from kg_neo4j.store.records import entity_text

MODEL = "all-MiniLM-L6-v2"
STAGES = ("alone", "seed", "beside", "delete", "ingest", "storage")
READS = ("search_memory", "open_nodes", "read_graph", "traverse_graph", "find_duplicates")
WRITES = ("create_entities", "add_observations")
ABOVE_CAP = 3000


def layout(n: int, k: int, prefix: str, *, mids: int = 10, above_cap: int = ABOVE_CAP) -> dict[str, int]:
    """Namespace -> observations (multiples of OBS_PER_ENTITY); ``--tiny`` asks for fewer mids and a
    smaller 'above the cap' one."""
    rng = random.Random(39)

    def whole(x: float) -> int:
        return max(OBS_PER_ENTITY, round(x / OBS_PER_ENTITY) * OBS_PER_ENTITY)

    sizes = {f"{prefix}-big": whole(n / 2)}
    sizes |= {f"{prefix}-mid-{i:02d}": whole(n / 40) for i in range(mids)}
    smalls = [whole(rng.uniform(n / 500, n / 200)) for _ in range(max(2, k - 1 - mids))]
    smalls[0], smalls[1] = whole(above_cap), whole(n / 500)  # one above EXACT_CAP, one at the smallest
    sizes |= {f"{prefix}-small-{i:03d}": s for i, s in enumerate(smalls)}
    return sizes


def small_names(sizes: dict[str, int]) -> list[str]:
    return [ns for ns in sizes if "-small-" in ns]


def entities_of(ns: str, n_obs: int, pool: Sequence[EntityIn]) -> list[EntityIn]:
    """The namespace's entities: pool entities in an order of its own, suffixed when drawn again."""
    rng = random.Random(ns)
    order = list(range(len(pool)))
    out = []
    for i in range(n_obs // OBS_PER_ENTITY):
        if i % len(pool) == 0:
            rng.shuffle(order)
        e = pool[order[i % len(pool)]]
        name = e.name if i < len(pool) else f"{e.name} #{i // len(pool) + 1}"
        out.append(EntityIn(name=name, entityType=e.entityType, observations=list(e.observations)))
    return out


class PoolEmbedder:
    """The real embedder with the pool's vectors computed once (:func:`vector_cache`); a suffixed entity
    name ('X #2 (person)') gets its base name's vector."""

    def __init__(self, inner: Any, cache: dict[str, list[float]]) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dimension = inner.name, inner.dimension

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        base = [_base(t) for t in texts]
        missing = [t for t in dict.fromkeys(base) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.encode(missing), strict=True))
        return [self.cache[t] for t in base]


def vector_cache(inner: Any, texts: list[str], cache_dir: Path) -> dict[str, list[float]]:
    """The texts' vectors, read from ``cache_dir`` when a run embedded the same texts before."""
    texts = list(dict.fromkeys(texts))
    key = hashlib.sha1((MODEL + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache_dir / f"vectors-{key}.npy"
    if path.exists():
        arr = np.load(path)
        log(f"{len(texts):,} seeding vectors read from {path}")
    else:
        log(f"embedding {len(texts):,} seeding texts once (cached in {path})")
        t0, parts = time.perf_counter(), []
        for i in range(0, len(texts), 512):
            parts.append(np.asarray(inner.encode(texts[i : i + 512]), dtype=np.float32))
            done = i + len(parts[-1])
            log(f"  {done:,} embedded ({done / (time.perf_counter() - t0):,.0f}/s)")
        arr = np.concatenate(parts)
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(path, arr)
    return {t: arr[i].tolist() for i, t in enumerate(texts)}


def _base(text: str) -> str:
    head, sep, tail = text.partition(" #")
    if not sep:
        return text
    _, _, rest = tail.partition(" ")
    return head + (" " + rest if rest else "")


# --- seeding (not measured) ---------------------------------------------------------------------
async def seed(
    driver: Any,
    database: str,
    emb: Any,
    sizes: dict[str, int],
    pool: Sequence[EntityIn],
    state: dict[str, Any],
) -> None:
    done = state.setdefault("seeded", {})
    for ns, n_obs in sizes.items():
        if done.get(ns):
            continue
        x = Executor(driver, database)
        if not (await namespace_counts(x, ns)).empty:  # a seeding stopped half-way: again from nothing
            await erase_namespace(x, ns)
        t0 = time.perf_counter()
        store = GraphStore(driver, database=database, namespace=ns, embedder=emb)
        ents = entities_of(ns, n_obs, pool)
        for i in range(0, len(ents), 100):
            await store.create_entities(ents[i : i + 100])
        await write_relations(store, make_relations(ents))
        done[ns] = True
        log(f"seeded {ns}: {n_obs:,} observations in {time.perf_counter() - t0:.0f} s")
        save(state)


# --- MCP sessions -------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def session(ns: str, *, model: bool) -> AsyncIterator[ClientSession]:
    server = kg_serve(connection(), ns, "--embedding-model", MODEL if model else "none")
    async with mcp_session(server) as s:
        yield s


async def call(s: Any, tool: str, args: dict[str, Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    res = await s.call_tool(tool, args)
    ms = (time.perf_counter() - t0) * 1000
    return ms, structured(res, tool)


def question_of(e: EntityIn, rng: random.Random) -> tuple[str, tuple[str, str]]:
    o = rng.choice(e.observations)
    return rng.choice(PERTURB).format(s=o), (e.name, o)


async def measure_ns(ns: str, n_obs: int, pool: Sequence[EntityIn], reps: int, tag: str) -> dict[str, Any]:
    """p50/p95 of every call in one namespace (``tag`` names the write entities apart per stage)."""
    rng = random.Random(f"{ns}-{tag}")
    ents = entities_of(ns, n_obs, pool)
    out: dict[str, list[float]] = {t: [] for t in (*READS, *WRITES)}
    async with session(ns, model=True) as rs, session(ns, model=False) as ws:
        for rep in range(reps + 2):  # the first two warm up
            e = rng.choice(ents)
            q, _ = question_of(e, rng)
            names = [x.name for x in rng.sample(ents, min(3, len(ents)))]
            times = {
                "search_memory": (await call(rs, "search_memory", {"query": q, "limit": 10}))[0],
                "open_nodes": (await call(rs, "open_nodes", {"names": names}))[0],
                "read_graph": (await call(rs, "read_graph", {"limit": 100}))[0],
                "traverse_graph": (await call(rs, "traverse_graph", {"start": [e.name], "maxDepth": 2}))[0],
                "find_duplicates": (await call(rs, "find_duplicates", {"names": [e.name]}))[0],
            }
            batch = [
                {
                    "name": f"w-{tag}-{rep}-{i}",
                    "entityType": "note",
                    "observations": [f"note {i} of rep {rep} ({tag})"],
                }
                for i in range(100)
            ]
            times["create_entities"] = (await call(ws, "create_entities", {"entities": batch}))[0]
            add = [{"entityName": e.name, "contents": [f"seen again at rep {rep} ({tag})"]}]
            times["add_observations"] = (await call(ws, "add_observations", {"observations": add}))[0]
            if rep >= 2:
                for t, ms in times.items():
                    out[t].append(ms)
    return {t: {"p50": percentile(v, 50), "p95": percentile(v, 95), "n": len(v)} for t, v in out.items()}


async def recall(
    sizes: dict[str, int], pool: Sequence[EntityIn], questions: int, n_ns: int
) -> dict[str, Any]:
    """hit@10 pooled over the recall namespaces (questions spread evenly)."""
    names = small_names(sizes)[:n_ns]  # the two measured ones first
    hits = total = 0
    per_ns: dict[str, float] = {}
    for ns in names:
        rng = random.Random(f"recall-{ns}")
        ents = entities_of(ns, sizes[ns], pool)
        n_hit = n = 0
        async with session(ns, model=True) as s:
            for _ in range(max(1, questions // len(names))):
                q, answer = question_of(rng.choice(ents), rng)
                _, res = await call(s, "search_memory", {"query": q, "limit": 10})
                got = {(h["name"], h.get("observation")) for h in res["hits"]}
                n_hit += answer in got
                n += 1
        per_ns[ns] = n_hit / n
        hits, total = hits + n_hit, total + n
    return {"hit@10": hits / total, "questions": total, "per_namespace": per_ns}


async def measured_set(
    sizes: dict[str, int], pool: Sequence[EntityIn], reps: int, tag: str, with_large: bool
) -> dict[str, Any]:
    smalls = small_names(sizes)
    targets = {"small-above-cap": smalls[0], "small-below-cap": smalls[1]}
    if with_large:
        targets |= {"mid": next(ns for ns in sizes if "-mid-" in ns), "big": next(iter(sizes))}
    out = {}
    for label, ns in targets.items():
        log(f"{tag}: measuring {label} ({ns}, {sizes[ns]:,} observations)")
        out[label] = {
            "namespace": ns,
            "observations": sizes[ns],
            "calls": await measure_ns(ns, sizes[ns], pool, reps, tag),
        }
    return out


# --- deletion while another client works ----------------------------------------------------------
async def client_loop(
    ready: asyncio.Event,
    ns: str,
    pool: Sequence[EntityIn],
    n_obs: int,
    stop: asyncio.Event,
    lat: list[float],
    limit: int | None,
) -> None:
    rng = random.Random(f"loop-{ns}-{limit}")
    ents = entities_of(ns, n_obs, pool)
    async with session(ns, model=True) as s:
        ready.set()  # measured from here: the session's start is not the deletion's doing
        i = 0
        while not stop.is_set() and (limit is None or i < limit):
            e = rng.choice(ents)
            if i % 2 == 0:
                lat.append(
                    (await call(s, "search_memory", {"query": question_of(e, rng)[0], "limit": 10}))[0]
                )
            else:
                add = [{"entityName": e.name, "contents": [f"during the deletion, step {i} ({limit})"]}]
                lat.append((await call(s, "add_observations", {"observations": add}))[0])
            i += 1


async def delete_stage(
    driver: Any, database: str, sizes: dict[str, int], pool: Sequence[EntityIn], args: argparse.Namespace
) -> dict[str, Any]:
    big, small = next(iter(sizes)), small_names(sizes)[0]
    before: list[float] = []
    await client_loop(asyncio.Event(), small, pool, sizes[small], asyncio.Event(), before, args.loop_calls)
    x = Executor(driver, database)
    counts = (await namespace_counts(x, big)).as_dict()
    during: list[float] = []
    stop = asyncio.Event()
    ready = asyncio.Event()
    loop = asyncio.create_task(client_loop(ready, small, pool, sizes[small], stop, during, None))
    await ready.wait()
    t0 = time.perf_counter()
    stopped = False
    try:
        await erase_namespace(x, big, batch=args.batch_size, max_transactions=args.stop_after)
    except Stopped:
        stopped = True
    partial_s = time.perf_counter() - t0
    left = (await namespace_counts(x, big)).as_dict()
    t1 = time.perf_counter()
    done = await asyncio.to_thread(
        subprocess.run,
        [KG, "namespace", "delete", big, "--yes", "--batch-size", str(args.batch_size), "--no-progress"],
        env=server_env(connection()),
        capture_output=True,
        text=True,
    )
    resume_s = time.perf_counter() - t1
    stop.set()
    await loop
    report = json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr}
    return {
        "namespace": big,
        "erased": counts,
        "stopped_after_transactions": args.stop_after if stopped else None,
        "left_after_stop": left,
        "resumed_complete": report.get("complete"),
        "resume_transactions": report.get("transactions"),
        "seconds": partial_s + resume_s,
        "small_client": {
            "namespace": small,
            "p99_before_ms": percentile(before, 99),
            "p99_during_ms": percentile(during, 99),
            "p50_before_ms": percentile(before, 50),
            "p50_during_ms": percentile(during, 50),
            "calls_before": len(before),
            "calls_during": len(during),
        },
    }


# --- ingest and storage ---------------------------------------------------------------------------
async def ingest_stage(inner: Any, n_obs: int, prefix: str) -> dict[str, Any]:
    ents = make_dataset(max(1, n_obs // OBS_PER_ENTITY), seed=9939)
    texts = [o for e in ents for o in e.observations] + [entity_text(e.name, e.entityType) for e in ents]
    inner.encode(texts[:32])
    t0 = time.perf_counter()
    for i in range(0, len(texts), 256):
        inner.encode(texts[i : i + 256])
    encode_rate = len(ents) * OBS_PER_ENTITY / (time.perf_counter() - t0)  # observations/s, names included
    ns = f"{prefix}-ingest-{int(time.time())}"
    async with session(ns, model=True) as s:
        await call(
            s,
            "create_entities",
            {"entities": [{"name": "warm", "entityType": "note", "observations": ["warm up"]}]},
        )
        t0 = time.perf_counter()
        for i in range(0, len(ents), 10):
            await call(s, "create_entities", {"entities": [e.model_dump() for e in ents[i : i + 10]]})
        mcp_rate = len(ents) * OBS_PER_ENTITY / (time.perf_counter() - t0)
    return {
        "namespace": ns,
        "observations": len(ents) * OBS_PER_ENTITY,
        "mcp_obs_per_s": mcp_rate,
        "encode_obs_per_s": encode_rate,
        "ratio": mcp_rate / encode_rate,
    }


async def storage_stage(driver: Any, database: str) -> dict[str, Any]:
    from kg_neo4j.localdb import LocalNeo4j

    data = LocalNeo4j(Settings()).data_dir
    du = subprocess.run(["du", "-sb", str(data)], capture_output=True, text=True, check=False)
    # Not the local server's (another Neo4j, e.g. the tests'): its size on disk is not ours to read.
    size = int(du.stdout.split()[0]) if du.returncode == 0 else None
    out: dict[str, Any] = {"data_dir": str(data), "bytes_on_disk": size}
    try:
        recs, _, _ = await driver.execute_query(
            "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes RETURN attributes",
            database_=database,
        )
        heap = recs[0]["attributes"]["HeapMemoryUsage"]["value"]["properties"]
        out["heap_used_bytes"], out["heap_max_bytes"] = heap["used"], heap["max"]
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        out["heap_error"] = str(exc)[:200]
    return out


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- state ----------------------------------------------------------------------------------------
STATE: Path = Path()


def save(state: dict[str, Any]) -> None:
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps(state, indent=2, default=str))


def options() -> argparse.Namespace:
    ap = arguments(__doc__)
    ap.add_argument("--observations", type=int, default=1_000_000)
    ap.add_argument("--namespaces", type=int, default=100)
    ap.add_argument("--pool", type=int, default=6000, help="entities embedded once (10 observations each)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--ingest", type=int, default=25_000)
    ap.add_argument(
        "--recall-namespaces",
        dest="recall_namespaces",
        type=int,
        default=8,
        help="small namespaces whose questions make the pooled recall (the two measured ones among them)",
    )
    ap.add_argument("--loop-calls", dest="loop_calls", type=int, default=100)
    ap.add_argument("--batch-size", dest="batch_size", type=int, default=5000)
    ap.add_argument("--stop-after", dest="stop_after", type=int, default=5)
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--prefix", default="bench-scale")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "kg-neo4j-bench")
    ap.add_argument("--state", type=Path, default=None, help="default: CACHE/scale-<observations>.json")
    ap.add_argument("--keep", action="store_true", help="keep the namespaces after a complete run")
    args = ap.parse_args()
    args.mids, args.above_cap = 10, ABOVE_CAP
    if args.tiny:  # every stage in seconds: four namespaces, 150 observations, a pool of 10 entities
        args.observations, args.namespaces, args.mids, args.above_cap = 200, 4, 1, 30
        args.pool, args.reps, args.questions, args.ingest = 10, 2, 4, 20
        args.recall_namespaces, args.loop_calls, args.batch_size, args.stop_after = 2, 4, 20, 1
        args.prefix = f"bench-scale-tiny-{uuid.uuid4().hex[:8]}"
    return args


async def main() -> None:
    global STATE
    args = options()
    with contextlib.ExitStack() as stack:
        if args.tiny:  # never a real cache or state: a temporary one, gone afterwards
            args.cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-scale-")))
            args.state = None
        STATE = args.state or args.cache / f"scale-{args.observations}.json"
        await run(args)


async def run(args: argparse.Namespace) -> None:
    results = Results(f"scale-{args.observations}", args)
    state: dict[str, Any] = json.loads(STATE.read_text()) if STATE.exists() else {}
    state["args"] = {k: str(v) for k, v in vars(args).items()}
    stages = [s for s in args.stages.split(",") if s]
    sizes = layout(args.observations, args.namespaces, args.prefix, mids=args.mids, above_cap=args.above_cap)
    log(f"{len(sizes)} namespaces, {sum(sizes.values()):,} observations; EXACT_CAP {EXACT_CAP}")

    pool = make_dataset(args.pool, seed=42)
    inner = load_embedder(MODEL, background=False)
    assert inner is not None
    texts = [t for e in pool for t in (*e.observations, entity_text(e.name, e.entityType))]
    emb = PoolEmbedder(inner, vector_cache(inner, texts, args.cache))
    driver, conn = await connect(Settings())
    db = conn.database
    await bootstrap(driver, db)
    await ensure_vector_indexes(driver, db, inner.dimension)
    smalls = small_names(sizes)
    first = {ns: sizes[ns] for ns in smalls[: args.recall_namespaces]}
    complete = False
    try:
        if "alone" in stages and "alone" not in state:
            await seed(driver, db, emb, first, pool, state)
            state["alone"] = {
                "load": load(),
                "calls": await measured_set(sizes, pool, args.reps, "alone", False),
            }
            state["alone"]["recall"] = await recall(sizes, pool, args.questions, args.recall_namespaces)
            save(state)
        if "seed" in stages:
            await seed(driver, db, emb, sizes, pool, state)
        if "beside" in stages and "beside" not in state:
            state["beside"] = {
                "load": load(),
                "calls": await measured_set(sizes, pool, args.reps, "beside", True),
            }
            state["beside"]["recall"] = await recall(sizes, pool, args.questions, args.recall_namespaces)
            save(state)
        if "delete" in stages and "delete" not in state:
            state["delete"] = await delete_stage(driver, db, sizes, pool, args)
            state["delete"]["load"] = load()
            save(state)
        if "ingest" in stages and "ingest" not in state:
            state["ingest"] = await ingest_stage(inner, args.ingest, args.prefix)
            state["ingest"]["load"] = load()
            save(state)
        if "storage" in stages:
            state["storage"] = await storage_stage(driver, db)
            save(state)
        complete = all(s in state for s in ("alone", "beside", "delete", "ingest", "storage"))
    finally:
        if args.tiny or (complete and not args.keep):
            made = [*sizes, *([state["ingest"]["namespace"]] if "ingest" in state else [])]
            log(f"deleting {len(made)} namespaces")
            for ns in made:
                await erase_namespace(Executor(driver, db), ns)
            save(state)
        await driver.close()
    report(results, state, sizes)
    results.save(connection())


def report(results: Results, state: dict[str, Any], sizes: dict[str, int]) -> None:
    """The state's figures as the results file's tables (one per stage that ran)."""
    results.figures |= {"namespaces": len(sizes), "observations": sum(sizes.values())}
    kinds = [("big", "-big"), ("mid", "-mid-"), ("small", "-small-")]
    rows = []
    for kind, mark in kinds:
        n = [v for ns, v in sizes.items() if mark in ns]
        rows.append([kind, len(n), min(n), max(n), sum(n)] if n else [kind, 0, None, None, 0])
    print(results.table("layout", ["namespaces", "count", "min obs", "max obs", "observations"], rows))
    if "alone" in state and "beside" in state:
        rows = []
        for label, alone in state["alone"]["calls"].items():
            beside = state["beside"]["calls"][label]["calls"]
            for t, a in alone["calls"].items():
                b = beside[t]
                ratio = round(b["p95"] / a["p95"], 2) if a["p95"] else None
                rows.append(
                    [t, f"{label} ({alone['observations']:,})", a["p50"], a["p95"], b["p50"], b["p95"], ratio]
                )
        headers = [
            "call",
            "namespace",
            "p50 alone",
            "p95 alone",
            "p50 beside",
            "p95 beside",
            "p95 beside / alone",
        ]
        print(results.table("small", headers, rows, title="A small namespace alone and beside the rest (ms)"))
    if "beside" in state and "big" in state["beside"]["calls"]:
        mid, big = state["beside"]["calls"]["mid"], state["beside"]["calls"]["big"]
        rows = [
            [
                t,
                mid["calls"][t]["p50"],
                mid["calls"][t]["p95"],
                big["calls"][t]["p50"],
                big["calls"][t]["p95"],
            ]
            for t in big["calls"]
        ]
        headers = [
            "call",
            f"mid ({mid['observations']:,}) p50",
            "mid p95",
            f"big ({big['observations']:,}) p50",
            "big p95",
        ]
        print(results.table("large", headers, rows, title="A mid and the big namespace beside the rest (ms)"))
    rows = []
    for stage in ("alone", "beside"):
        if stage in state:
            r = state[stage]["recall"]
            rows.append([stage, "pooled", round(r["hit@10"], 3), r["questions"], state[stage]["load"]])
            rows += [[stage, ns, round(hit, 3), None, None] for ns, hit in r["per_namespace"].items()]
    if rows:
        print(results.table("recall", ["stage", "namespace", "hit@10", "questions", "load"], rows))
    if "delete" in state:
        d, c = state["delete"], state["delete"]["small_client"]
        rows = [
            [
                d["erased"]["entities"],
                d["erased"]["observations"],
                d["erased"]["relations"],
                d["stopped_after_transactions"],
                d["left_after_stop"]["entities"],
                d["resume_transactions"],
                d["resumed_complete"],
                d["seconds"],
                c["p99_before_ms"],
                c["p99_during_ms"],
                c["calls_before"],
                c["calls_during"],
            ]
        ]
        headers = [
            "entities",
            "observations",
            "relations",
            "stopped after tx",
            "entities left",
            "resume tx",
            "complete",
            "seconds",
            "small p99 before ms",
            "small p99 during ms",
            "calls before",
            "calls during",
        ]
        title = "The big namespace deleted while a small one works"
        print(results.table("delete", headers, rows, title=title))
    if "ingest" in state:
        i = state["ingest"]
        rows = [[i["observations"], i["mcp_obs_per_s"], i["encode_obs_per_s"], i["ratio"], i["load"]]]
        print(results.table("ingest", ["observations", "MCP obs/s", "encode obs/s", "ratio", "load"], rows))
    if "storage" in state:
        s = state["storage"]
        rows = [[s["data_dir"], s["bytes_on_disk"], s.get("heap_used_bytes"), s.get("heap_max_bytes")]]
        print(results.table("storage", ["data directory", "bytes on disk", "heap used", "heap max"], rows))
    if "alone" in state and "beside" in state:
        results.figures["recall_beside_minus_alone"] = (
            state["beside"]["recall"]["hit@10"] - state["alone"]["recall"]["hit@10"]
        )


if __name__ == "__main__":
    asyncio.run(main())
