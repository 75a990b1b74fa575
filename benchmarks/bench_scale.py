"""One database, a hundred teams: many namespaces of very different sizes (issue 39).

Not a test: it prints its tables and saves them as a results file
(``benchmarks/results/scale-<line>-<N>.json``, the line read from the server: ``2026``, ``5.26``).
Staged and resumable: every stage records what it did in ``--state`` (beside the vector cache in
``--cache``, outside the clone) and a rerun skips what is done; ``--stages`` picks stages.  A run that
completes every stage deletes its namespaces (``--keep`` keeps them); its state stays, so a rerun
rewrites the results from it (remove the state file to start again).  A run that fails keeps them,
so the next goes on.  ``--tiny`` (the smoke size: four namespaces, 150 observations, every stage) works
in a temporary cache and fresh namespaces, and deletes them even when it fails.

The full database is the one ``NEO4J_*`` (or ``KG_NEO4J_HOME``'s local server) names.  "Alone" is a
second, fresh server that holds only the small namespaces measured and recalled: ``--alone-home`` (the
bench starts it, same Neo4j version, 1 GB heap and page cache, on ``--alone-port``, and leaves it
running for the next stage: ``KG_NEO4J_HOME=... kg-neo4j neo4j stop`` when done).  Without it the alone
copies are namespaces ``<ns>-alone`` in the same database, which is not alone: the smoke run's shape only.

Data (``layout``): ``--observations`` N in ``--namespaces`` K: one big namespace of N/2, ten of N/40
("mid", 25,000 at N = 1M), the rest between N/500 and N/200 (2,000 to 5,000 at 1M), one of them at 6,000
whatever N (above ``EXACT_CAP``, 5,000) and one at the smallest size (below it).  Entities of 10
observations from bench_search's generator: a pool of ``--pool`` entities is embedded once with the shipped
model (vectors cached in ``--cache``) and every namespace draws its entities from it, so the small
namespaces hold the same topics, often the same sentences, as the big one: a small namespace's question
has thousands of equally close vectors in other namespaces (the hard case for a filtered search).  An
entity drawn twice into one namespace gets a suffix (``#2``) and its base name's vector.  Seeding writes
through ``GraphStore.create_entities`` (1,000 observations a call) with the cached vectors, never through
MCP; it is not measured.

Stages:

* ``seed``: every namespace in the full database;
* ``alone``: the small namespaces measured and recalled, in the alone server;
* ``measure``: each call in the two small namespaces (above and below ``EXACT_CAP``) alone and beside the
  rest **interleaved**: the same call on the alone server and at once on the full one, the order
  alternating per rep, so both sides see the same machine load (the ratio is what holds on a busy
  machine); then in a mid and the big namespace (``--large-reps``; ``--slow-reps`` bounds their
  find_duplicates);
* ``recall``: the recall namespaces' questions, each asked alone and beside in turn;
* ``ingest``: ``--ingest`` new observations through MCP (create_entities of 10 entities, model on) into a fresh
  namespace of the full database, against the model's own encode rate on the same texts in the same batches
  (one encode call a call's texts) in this process;
* ``storage``: the store and transaction logs on disk (``KG_NEO4J_HOME``'s local server), its configured
  heap and page cache, and the JVM's heap in use;
* ``delete`` (last: it takes the big namespace away): the big namespace erased with ``kg-neo4j
  namespace delete`` (first stopped after ``--stop-after`` transactions, then finished by the command)
  while another MCP client searches and writes a small namespace: that client's p99 during the deletion
  against its p99 just before.

Calls measured (``--reps`` each): search_memory (a paraphrase of one of the namespace's
observations, limit 10), open_nodes (3 names), read_graph (limit 100), traverse_graph (one start, depth 2),
find_duplicates (one name), and two writes: create_entities (100 entities of one observation) and
add_observations (one).  The reads run on a server with the model; the writes on one with embeddings off
(``--embedding-model none``), as bench_peers measures writes: on a busy 2-core machine the encoder's time
would hide what the database does.  The client is the harness's (tools listed, so answers are checked
against their output schemas, as clients do).  Recall: a question is a hit when the observation it paraphrases
(entity and text) is among search_memory's 10 hits, pooled over the recall namespaces.

    nice -n 10 .venv/bin/python -m benchmarks.bench_scale --observations 1000000 \\
        --alone-home ~/.cache/kg-neo4j-bench/alone                                   # the issue's size
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
from dataclasses import dataclass
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
    kg_serve,
    log,
    make_dataset,
    make_relations,
    mcp_session,
    own_neo4j,
    percentile,
    server_env,
    structured,
    write_relations,
)
from kg_neo4j.embeddings import load_embedder
from kg_neo4j.models import EntityIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, connect
from kg_neo4j.store.connection import Connection, bootstrap, ensure_vector_indexes
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.hybrid_search import EXACT_CAP
from kg_neo4j.store.namespaces import Stopped, erase_namespace, namespace_counts
from kg_neo4j.store.records import entity_text

MODEL = "all-MiniLM-L6-v2"
STAGES = ("seed", "alone", "measure", "recall", "ingest", "storage", "delete")
READS = ("search_memory", "open_nodes", "read_graph", "traverse_graph", "find_duplicates")
WRITES = ("create_entities", "add_observations")
ABOVE_CAP = EXACT_CAP + 1000


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
    key: str = "seeded",
    suffix: str = "",
) -> None:
    """Write every namespace of ``sizes`` (as ``ns + suffix``, with ``ns``'s entities) not yet in
    ``state[key]``."""
    done = state.setdefault(key, {})
    for ns, n_obs in sizes.items():
        if done.get(ns):
            continue
        x = Executor(driver, database)
        if not (await namespace_counts(x, ns + suffix)).empty:  # stopped half-way: again from nothing
            await erase_namespace(x, ns + suffix)
        t0 = time.perf_counter()
        store = GraphStore(driver, database=database, namespace=ns + suffix, embedder=emb)
        ents = entities_of(ns, n_obs, pool)
        for i in range(0, len(ents), 100):
            await store.create_entities(ents[i : i + 100])
        await write_relations(store, make_relations(ents))
        done[ns] = True
        secs = time.perf_counter() - t0
        log(
            f"seeded {ns + suffix}: {n_obs:,} observations in {secs:.0f} s ({n_obs / secs:,.0f}/s), load {load()}"
        )
        save(state)


# --- MCP sessions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """Where a namespace is measured: 'beside' (the full database) or 'alone' (a fresh database holding
    only the measured namespaces: the second server of ``--alone-home``, else copies named
    ``<ns>-alone`` in the same database, which is only good for the smoke run)."""

    name: str
    conn: Connection
    suffix: str = ""


@contextlib.asynccontextmanager
async def session(side: Side, ns: str, *, model: bool) -> AsyncIterator[ClientSession]:
    server = kg_serve(side.conn, ns + side.suffix, "--embedding-model", MODEL if model else "none")
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


def summary(values: dict[str, list[float]]) -> dict[str, Any]:
    return {t: {"p50": percentile(v, 50), "p95": percentile(v, 95), "n": len(v)} for t, v in values.items()}


async def measure_ns(
    ns: str,
    n_obs: int,
    pool: Sequence[EntityIn],
    reps: int,
    tag: str,
    sides: Sequence[Side],
    slow_reps: int | None = None,
    warmup: int = 2,
) -> dict[str, Any]:
    """p50/p95 of every call in one namespace on each side, interleaved: each call is made on one side
    then at once on the other (the order alternating per rep), so both see the same load.  ``tag`` names
    the written entities apart from an earlier run's (a rerun creates, never updates); each rep deletes
    what it wrote afterwards, unmeasured, so the namespace stays at its seeded size.  ``slow_reps``
    bounds find_duplicates to that many measured calls, without warm-up (the big namespace's take
    minutes each).  The first ``warmup`` rounds are not measured."""
    rng = random.Random(ns)
    ents = entities_of(ns, n_obs, pool)
    out: dict[str, dict[str, list[float]]] = {x.name: {t: [] for t in (*READS, *WRITES)} for x in sides}
    async with contextlib.AsyncExitStack() as stack:
        rs, ws = {}, {}
        for x in sides:
            rs[x.name] = await stack.enter_async_context(session(x, ns, model=True))
            ws[x.name] = await stack.enter_async_context(session(x, ns, model=False))
        for rep in range(reps + warmup):
            e = rng.choice(ents)
            q, _ = question_of(e, rng)
            names = [x.name for x in rng.sample(ents, min(3, len(ents)))]
            batch = [
                {
                    "name": f"w-{tag}-{rep}-{i}",
                    "entityType": "note",
                    "observations": [f"note {i} of rep {rep}"],
                }
                for i in range(100)
            ]
            add = [{"entityName": e.name, "contents": [f"seen again at rep {rep} ({tag})"]}]
            plan: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
                ("search_memory", {"query": q, "limit": 10}, rs),
                ("open_nodes", {"names": names}, rs),
                ("read_graph", {"limit": 100}, rs),
                ("traverse_graph", {"start": [e.name], "maxDepth": 2}, rs),
                ("find_duplicates", {"names": [e.name]}, rs),
                ("create_entities", {"entities": batch}, ws),
                ("add_observations", {"observations": add}, ws),
            ]
            order = list(sides) if rep % 2 == 0 else list(reversed(sides))
            for tool, arguments_, sessions in plan:
                if (
                    tool == "find_duplicates"
                    and slow_reps is not None
                    and not warmup <= rep < warmup + slow_reps
                ):
                    continue
                for x in order:
                    ms = (await call(sessions[x.name], tool, arguments_))[0]
                    if rep >= warmup:
                        out[x.name][tool].append(ms)
            for x in sides:  # not measured: the namespace keeps its seeded size for the next rep and run
                await call(ws[x.name], "delete_entities", {"entityNames": [b["name"] for b in batch]})
                await call(
                    ws[x.name],
                    "delete_observations",
                    {"deletions": [{"entityName": e.name, "observations": add[0]["contents"]}]},
                )
    return {x.name: summary(out[x.name]) for x in sides}


async def recall(
    sizes: dict[str, int], pool: Sequence[EntityIn], questions: int, n_ns: int, sides: Sequence[Side]
) -> dict[str, Any]:
    """hit@10 pooled over the recall namespaces (questions spread evenly), each question asked on every
    side in turn."""
    names = small_names(sizes)[:n_ns]  # the two measured ones first
    hits = {x.name: 0 for x in sides}
    per_ns: dict[str, dict[str, float]] = {x.name: {} for x in sides}
    total = 0
    for ns in names:
        rng = random.Random(f"recall-{ns}")
        ents = entities_of(ns, sizes[ns], pool)
        n_hit = {x.name: 0 for x in sides}
        n = max(1, questions // len(names))
        async with contextlib.AsyncExitStack() as stack:
            ss = {x.name: await stack.enter_async_context(session(x, ns, model=True)) for x in sides}
            for _ in range(n):
                q, answer = question_of(rng.choice(ents), rng)
                for x in sides:
                    _, res = await call(ss[x.name], "search_memory", {"query": q, "limit": 10})
                    n_hit[x.name] += answer in {(h["name"], h.get("observation")) for h in res["hits"]}
        for x in sides:
            per_ns[x.name][ns] = n_hit[x.name] / n
            hits[x.name] += n_hit[x.name]
        total += n
        log(f"recall {ns}: " + ", ".join(f"{k} {v / n:.3f}" for k, v in n_hit.items()))
    return {
        x.name: {"hit@10": hits[x.name] / total, "questions": total, "per_namespace": per_ns[x.name]}
        for x in sides
    }


def targets(sizes: dict[str, int]) -> dict[str, str]:
    """The measured namespaces: two small ones (above and below ``EXACT_CAP``), a mid and the big one."""
    smalls = small_names(sizes)
    return {
        "small-above-cap": smalls[0],
        "small-below-cap": smalls[1],
        "mid": next(ns for ns in sizes if "-mid-" in ns),
        "big": next(iter(sizes)),
    }


# --- deletion while another client works ----------------------------------------------------------
async def client_loop(
    ready: asyncio.Event,
    ns: str,
    pool: Sequence[EntityIn],
    n_obs: int,
    stop: asyncio.Event,
    lat: list[float],
    limit: int | None,
    side: Side,
) -> None:
    rng = random.Random(f"loop-{ns}-{limit}")
    ents = entities_of(ns, n_obs, pool)
    async with session(side, ns, model=True) as s:
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
    driver: Any,
    database: str,
    sizes: dict[str, int],
    pool: Sequence[EntityIn],
    args: argparse.Namespace,
    side: Side,
) -> dict[str, Any]:
    big, small = next(iter(sizes)), small_names(sizes)[0]
    before: list[float] = []
    await client_loop(
        asyncio.Event(), small, pool, sizes[small], asyncio.Event(), before, args.loop_calls, side
    )
    x = Executor(driver, database)
    counts = (await namespace_counts(x, big)).as_dict()
    during: list[float] = []
    stop = asyncio.Event()
    ready = asyncio.Event()
    loop = asyncio.create_task(client_loop(ready, small, pool, sizes[small], stop, during, None, side))
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
        env=server_env(side.conn),
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
async def ingest_stage(inner: Any, n_obs: int, prefix: str, side: Side) -> dict[str, Any]:
    ents = make_dataset(max(1, n_obs // OBS_PER_ENTITY), seed=9939)
    # The model's own rate on the same texts in the same batches as the calls below: each call's
    # observations and names in one encode call, as create_entities encodes them (the model alone is
    # faster in larger batches: 25,000 observations ran at 509/s in batches of 256 texts, 379/s in
    # batches of 10 entities; docs/performance.md).
    calls = [ents[i : i + 10] for i in range(0, len(ents), 10)]
    inner.encode([o for e in calls[0] for o in e.observations])
    t0 = time.perf_counter()
    for batch in calls:
        inner.encode(
            [o for e in batch for o in e.observations] + [entity_text(e.name, e.entityType) for e in batch]
        )
    encode_rate = len(ents) * OBS_PER_ENTITY / (time.perf_counter() - t0)  # observations/s, names included
    runs = []
    for in_flight in (1, 2):  # one call at a time, as an agent writes; two, as a bulk loader would
        ns = f"{prefix}-ingest-{in_flight}-{int(time.time())}"
        async with session(side, ns, model=True) as s:
            await call(
                s,
                "create_entities",
                {"entities": [{"name": "warm", "entityType": "note", "observations": ["warm up"]}]},
            )
            gate = asyncio.Semaphore(in_flight)

            async def one(batch: list[EntityIn], s: Any = s, gate: asyncio.Semaphore = gate) -> None:
                async with gate:
                    await call(s, "create_entities", {"entities": [e.model_dump() for e in batch]})

            t0 = time.perf_counter()
            await asyncio.gather(*(one(batch) for batch in calls))
            mcp_rate = len(ents) * OBS_PER_ENTITY / (time.perf_counter() - t0)
        runs.append(
            {
                "namespace": ns,
                "in_flight": in_flight,
                "mcp_obs_per_s": mcp_rate,
                "ratio": mcp_rate / encode_rate,
                "load": load(),
            }
        )
    return {"observations": len(ents) * OBS_PER_ENTITY, "encode_obs_per_s": encode_rate, "runs": runs}


async def storage_stage(driver: Any, database: str, settings: Settings) -> dict[str, Any]:
    """The store and transaction logs on disk (the local server of ``KG_NEO4J_HOME``, as ``kg-neo4j
    neo4j start`` made it), its configured heap and page cache, and the JVM's heap in use."""
    from kg_neo4j.localdb import LocalNeo4j

    data = LocalNeo4j(settings).data_dir

    def du(path: Path) -> int | None:
        out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=False)
        return int(out.stdout.split()[0]) if out.returncode == 0 else None

    # Not the local server's (another Neo4j, e.g. the tests'): its size on disk is not ours to read.
    out: dict[str, Any] = {
        "data_dir": str(data),
        "bytes_on_disk": du(data),
        "store_bytes": du(data / "databases" / database),
        "transaction_log_bytes": du(data / "transactions" / database),
        "heap_configured": settings.local_heap,
        "pagecache_configured": settings.local_pagecache,
    }
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


def ingest_runs(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The ingest stage's runs (a state of before them had one, its fields on the stage)."""
    i = state.get("ingest")
    if i is None:
        return []
    return list(i["runs"]) if "runs" in i else [{**i, "load": i["load"][0]}]


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
    ap.add_argument(
        "--large-reps", dest="large_reps", type=int, default=None, help="for mid and big (--reps)"
    )
    ap.add_argument(
        "--slow-reps",
        dest="slow_reps",
        type=int,
        default=None,
        help="find_duplicates calls in mid and big, without warm-up (default: as the others)",
    )
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
    ap.add_argument(
        "--alone-home",
        dest="alone_home",
        type=Path,
        default=None,
        help="home of the fresh 'alone' server the bench starts (same Neo4j version as the full one, 1g/1g); "
        "default: copies in the same database (smoke only: not alone)",
    )
    ap.add_argument("--alone-port", dest="alone_port", type=int, default=7720, help="its bolt port (+1, +2)")
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--prefix", default="bench-scale")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "kg-neo4j-bench")
    ap.add_argument("--state", type=Path, default=None, help="default: CACHE/scale-<observations>.json")
    ap.add_argument("--keep", action="store_true", help="keep the namespaces after a complete run")
    args = ap.parse_args()
    args.mids, args.above_cap, args.warmup = 10, ABOVE_CAP, 2
    if args.tiny:  # every stage in seconds: four namespaces, 150 observations, a pool of 10 entities,
        # no warm-up round (its figures are never read), deletion in a few transactions of 100
        args.observations, args.namespaces, args.mids, args.above_cap = 200, 4, 1, 30
        args.pool, args.reps, args.questions, args.ingest, args.warmup = 10, 2, 4, 20, 0
        args.recall_namespaces, args.loop_calls, args.batch_size, args.stop_after = 2, 4, 100, 1
        args.prefix = f"bench-scale-tiny-{uuid.uuid4().hex[:8]}"
    args.large_reps = args.large_reps or args.reps
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


def alone_side(args: argparse.Namespace, full: Connection, version: str) -> Side:
    """The fresh server of ``--alone-home`` (started when it is not running), else the same database."""
    if args.alone_home is None:
        return Side("alone", full, "-alone")
    ports = (args.alone_port, args.alone_port + 1, args.alone_port + 2)
    own_neo4j("start", args.alone_home, ports, "1g", "1g", version)
    env = own_neo4j("env", args.alone_home, ports, "1g", "1g", version)
    conn = Connection(env["NEO4J_URI"], env["NEO4J_USERNAME"], env["NEO4J_PASSWORD"], "neo4j")
    return Side("alone", conn)


async def server_version(driver: Any, database: str) -> str:
    recs, _, _ = await driver.execute_query(
        "CALL dbms.components() YIELD versions RETURN versions[0] AS v", database_=database
    )
    return str(recs[0]["v"])


async def run(args: argparse.Namespace) -> None:
    settings = Settings()
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
    driver, conn = await connect(settings)
    db = conn.database
    await bootstrap(driver, db)
    await ensure_vector_indexes(driver, db, inner.dimension)
    version = await server_version(driver, db)
    line = version.split(".")[0] if int(version.split(".")[0]) >= 2025 else ".".join(version.split(".")[:2])
    results = Results(f"scale-{line}-{args.observations}", args)
    beside = Side("beside", conn)
    alone = alone_side(args, conn, version)
    a_driver, _ = await connect(
        Settings(
            neo4j_uri=alone.conn.uri,
            neo4j_username=alone.conn.username,
            neo4j_password=alone.conn.password,
            neo4j_database=alone.conn.database,
        )
    )
    await bootstrap(a_driver, alone.conn.database)
    await ensure_vector_indexes(a_driver, alone.conn.database, inner.dimension)
    measured = targets(sizes)
    recalled = {ns: sizes[ns] for ns in small_names(sizes)[: args.recall_namespaces]}
    complete = False
    try:
        if "seed" in stages:
            await seed(driver, db, emb, sizes, pool, state)
        if "alone" in stages:
            await seed(
                a_driver, alone.conn.database, emb, recalled, pool, state, "seeded_alone", alone.suffix
            )
        if "measure" in stages:
            m = state.setdefault("measure", {})
            for label, ns in measured.items():
                if label in m:
                    continue
                small = label.startswith("small")
                sides = [alone, beside] if small else [beside]
                log(f"measuring {label} ({ns}, {sizes[ns]:,} observations) on {[x.name for x in sides]}")
                start = load()
                calls = await measure_ns(
                    ns,
                    sizes[ns],
                    pool,
                    args.reps if small else args.large_reps,
                    f"m{int(time.time())}",
                    sides,
                    None if small else args.slow_reps,
                    args.warmup,
                )
                m[label] = {
                    "namespace": ns,
                    "observations": sizes[ns],
                    "calls": calls,
                    "load": [start, load()],
                }
                save(state)
        if "recall" in stages and "recall" not in state:
            start = load()
            state["recall"] = await recall(
                sizes, pool, args.questions, args.recall_namespaces, [alone, beside]
            )
            state["recall"]["load"] = [start, load()]
            save(state)
        if "ingest" in stages and "ingest" not in state:
            start = load()
            state["ingest"] = await ingest_stage(inner, args.ingest, args.prefix, beside)
            state["ingest"]["load"] = [start, load()]
            save(state)
        if "storage" in stages and "storage" not in state:
            state["storage"] = await storage_stage(driver, db, settings)
            save(state)
        if "delete" in stages and "delete" not in state:
            start = load()
            state["delete"] = await delete_stage(driver, db, sizes, pool, args, beside)
            state["delete"]["load"] = [start, load()]
            save(state)
        complete = all(s in state for s in ("measure", "recall", "delete", "ingest", "storage"))
    finally:
        if args.tiny or (complete and not args.keep):
            made = [*sizes, *(r["namespace"] for r in ingest_runs(state))]
            log(f"deleting {len(made)} namespaces")
            for ns in made:
                await erase_namespace(Executor(driver, db), ns)
            for ns in recalled:
                await erase_namespace(Executor(a_driver, alone.conn.database), ns + alone.suffix)
            save(state)
        await driver.close()
        await a_driver.close()
    report(results, state, sizes)
    results.save(conn)


def report(results: Results, state: dict[str, Any], sizes: dict[str, int]) -> None:
    """The state's figures as the results file's tables (one per stage that ran)."""
    results.figures |= {"namespaces": len(sizes), "observations": sum(sizes.values())}
    kinds = [("big", "-big"), ("mid", "-mid-"), ("small", "-small-")]
    rows = []
    for kind, mark in kinds:
        n = [v for ns, v in sizes.items() if mark in ns]
        rows.append([kind, len(n), min(n), max(n), sum(n)] if n else [kind, 0, None, None, 0])
    print(results.table("layout", ["namespaces", "count", "min obs", "max obs", "observations"], rows))
    m = state.get("measure", {})
    rows = []
    for label in ("small-above-cap", "small-below-cap"):
        if label not in m:
            continue
        a, b = m[label]["calls"]["alone"], m[label]["calls"]["beside"]
        for t in a:
            ratio = round(b[t]["p95"] / a[t]["p95"], 2) if a[t]["p95"] else None
            where = f"{label} ({m[label]['observations']:,})"
            rows.append(
                [t, where, a[t]["p50"], a[t]["p95"], b[t]["p50"], b[t]["p95"], ratio, m[label]["load"][0]]
            )
    if rows:
        headers = [
            "call",
            "namespace",
            "p50 alone",
            "p95 alone",
            "p50 beside",
            "p95 beside",
            "p95 ratio",
            "load",
        ]
        title = "A small namespace alone (a fresh database) and beside the rest, interleaved (ms)"
        print(results.table("small", headers, rows, title=title))
    if "mid" in m and "big" in m:
        mid, big = m["mid"], m["big"]
        rows = [
            [
                t,
                mid["calls"]["beside"][t]["p50"],
                mid["calls"]["beside"][t]["p95"],
                big["calls"]["beside"][t]["p50"],
                big["calls"]["beside"][t]["p95"],
            ]
            for t in big["calls"]["beside"]
        ]
        headers = [
            "call",
            f"mid ({mid['observations']:,}) p50",
            "mid p95",
            f"big ({big['observations']:,}) p50",
            "big p95",
        ]
        title = f"A mid and the big namespace beside the rest (ms; load {mid['load'][0]}, {big['load'][0]})"
        print(results.table("large", headers, rows, title=title))
    if "recall" in state:
        r = state["recall"]
        rows = [
            ["pooled", r["alone"]["questions"], r["alone"]["hit@10"], r["beside"]["hit@10"], r["load"][0]]
        ]
        rows += [
            [ns, None, hit, r["beside"]["per_namespace"][ns], None]
            for ns, hit in r["alone"]["per_namespace"].items()
        ]
        print(
            results.table("recall", ["namespace", "questions", "hit@10 alone", "hit@10 beside", "load"], rows)
        )
        results.figures["recall_beside_minus_alone"] = r["beside"]["hit@10"] - r["alone"]["hit@10"]
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
        rows = [
            [
                r.get("in_flight", 1),
                i["observations"],
                r["mcp_obs_per_s"],
                i["encode_obs_per_s"],
                r["ratio"],
                r["load"],
            ]
            for r in ingest_runs(state)
        ]
        headers = ["calls in flight", "observations", "MCP obs/s", "encode obs/s", "ratio", "load"]
        print(results.table("ingest", headers, rows))
    if "storage" in state:
        s = state["storage"]
        per_obs = s["store_bytes"] / sum(sizes.values()) if s.get("store_bytes") else None
        rows = [
            [
                s.get("store_bytes"),
                s.get("transaction_log_bytes"),
                per_obs,
                s.get("heap_configured"),
                s.get("pagecache_configured"),
                s.get("heap_used_bytes"),
            ]
        ]
        headers = [
            "store bytes",
            "transaction log bytes",
            "store bytes/observation",
            "heap",
            "page cache",
            "heap used",
        ]
        print(results.table("storage", headers, rows))


if __name__ == "__main__":
    asyncio.run(main())
