"""search_memory at scale: ingest with real embeddings, query latency, over-fetch rounds.

Issue 3's speed targets, measured with the real MiniLM model (``all-MiniLM-L6-v2``, offline)
against a real Neo4j.  Not a test: it prints tables.

1. **Ingest**: one fresh namespace ``bench-search-<N>-<random>`` with N observations
   (N / 10 entities x 10 observations: varied sentences generated from word lists with a fixed
   seed), written through ``GraphStore.create_entities`` with the embedder, ``--batch`` observations
   per call.  Compared with the raw encode of exactly the texts the store embeds (every
   observation and every entity's ``name (type)`` text) in one
   call of the model's own encode (:func:`bare_encode`).
   Target: ingest obs/s >= 80% of raw-encode obs/s.
2. **Query latency**: ``--queries`` generated questions (after 20 warm-up ones); per question,
   interleaved (the order alternates): ``store.search_memory(q, limit=10)`` end to end (entity
   mentions lookup + query embedding + the search statement + fusion), and the BARE query:
   embed the question, one ``db.index.vector.queryNodes('kg_observation_embedding', k, $v)`` at search_memory's first k (500)
   through the async driver (routing READ).  Targets: search_memory p95 <= 50 ms and
   <= 2x the bare query's p95.  The search_memory time is split by part (the embedder and
   ``store.x.read`` are wrapped with timers; nothing in the product is changed).
3. **Over-fetch**: the search's diagnostics (``rounds`` / ``k``) per question, in three
   settings: (a) plain; (b) the same questions after a second, foreign namespace of
   ``--foreign`` near-duplicate observations (the first entities' observations, reworded
   slightly) was added; (c) the questions asked IN that smaller foreign namespace, where the
   big namespace is now the foreign one (N / --foreign times larger).
4. Deletes its namespaces in batches (auto-commit ``CALL { } IN TRANSACTIONS``) unless ``--keep``.

    python -m benchmarks.bench_search [--observations 100000] [--queries 200]
        [--foreign 20000] [--batch 1000] [--keep]
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from neo4j import RoutingControl

from benchmarks.harness import (
    OBS_PER_ENTITY,
    PERTURB,
    Results,
    arguments,
    delete_namespace,
    log,
    make_dataset,
    make_questions,
    make_relations,
    percentile,
    summary_ms,
    sync_driver,
    write_relations,
)
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings import load_embedder, resolve_model
from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder
from kg_neo4j.errors import ConfigError
from kg_neo4j.fusion import FusionWeights
from kg_neo4j.models import EntityIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, connect
from kg_neo4j.store.connection import bootstrap, ensure_vector_indexes
from kg_neo4j.store.hybrid_search import first_vector_k
from kg_neo4j.store.records import entity_text

MODEL = "all-MiniLM-L6-v2"
WARMUP = 20
LIMIT = 10
BARE_K = first_vector_k(
    10, FusionWeights()
)  # what search_memory's first round asks the vector index for at limit 10

BARE_QUERY = """
CALL db.index.vector.queryNodes('kg_observation_embedding', $k, $v) YIELD node, score
RETURN node.namespace AS ns, score
""".strip()


def near_duplicates(entities: Sequence[EntityIn], n_obs: int, seed: int = 7) -> list[EntityIn]:
    """The first entities again (same names and types) with every observation slightly reworded."""
    rng = random.Random(seed)
    out = []
    for e in entities[: max(1, n_obs // OBS_PER_ENTITY)]:
        out.append(
            EntityIn(
                name=e.name,
                entityType=e.entityType,
                observations=[rng.choice(PERTURB).format(s=o) for o in e.observations],
            )
        )
    return out


# --- instrumentation (wrappers around the product's objects, nothing in the product changes) ---
class TimedEmbedder:
    """Delegates to the real embedder and adds up the time spent in ``encode``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.seconds = 0.0
        self.calls = 0
        self.intervals: list[tuple[float, float]] = []

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        t0 = time.perf_counter()
        try:
            vectors: list[list[float]] = self.inner.encode(texts)
            return vectors
        finally:
            t1 = time.perf_counter()
            self.seconds += t1 - t0
            self.calls += 1
            self.intervals.append((t0, t1))


def bare_encode(model: Any, texts: Sequence[str]) -> Any:
    """The model's own encode of ``texts``, without the store: the numpy runtime's (unit vectors), or
    sentence-transformers' asked for unit vectors in batches of 64."""
    if isinstance(model, NumpyEncoder):
        return model.encode(texts)
    return model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)


def time_store_runs(store: GraphStore) -> list[tuple[str, float, float]]:
    """Wrap ``store.x.read`` (an instance attribute of the store's executor) so each named read's
    (name, start, end) is kept."""
    spent: list[tuple[str, float, float]] = []
    inner = store.x.read

    async def run(name: str, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await inner(name, **kw)
        finally:
            spent.append((name, t0, time.perf_counter()))

    store.x.read = run  # type: ignore[method-assign,assignment]
    return spent


def covered(intervals: Sequence[tuple[float, float]]) -> float:
    """Wall time covered by possibly overlapping intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def other_benchmarks() -> list[str]:
    try:
        out = subprocess.run(["pgrep", "-af", "benchmarks[./]bench_"], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [
        line
        for line in out.splitlines()
        if line.split(" ", 1)[0] != str(os.getpid()) and "pgrep" not in line and "bench_search" not in line
    ]


# --- the phases ------------------------------------------------------------------------------
async def ingest(
    store: GraphStore,
    emb: TimedEmbedder,
    entities: Sequence[EntityIn],
    batch_obs: int,
    label: str,
    model: Any = None,
) -> dict[str, float]:
    """Write ``entities`` with ``create_entities``, ``batch_obs`` observations per call.  With ``model``,
    each batch's texts (exactly what the store embeds) are also encoded raw, right before or after the
    store call (alternating), so that both see the same background load."""
    per_call = max(1, batch_obs // OBS_PER_ENTITY)
    emb.seconds, emb.calls = 0.0, 0
    total = raw = 0.0
    n_obs = 0
    batches = [entities[i : i + per_call] for i in range(0, len(entities), per_call)]

    def raw_encode(batch: Sequence[EntityIn]) -> float:
        texts = [t for e in batch for t in (*e.observations, entity_text(e.name, e.entityType))]
        t0 = time.perf_counter()
        bare_encode(model, texts)
        return time.perf_counter() - t0

    for b, batch in enumerate(batches, 1):
        if model is not None and b % 2 == 1:
            raw += raw_encode(batch)
        t0 = time.perf_counter()
        created = await store.create_entities(batch)
        total += time.perf_counter() - t0
        if model is not None and b % 2 == 0:
            raw += raw_encode(batch)
        if len(created) != len(batch):
            raise RuntimeError(f"{label}: batch {b} created {len(created)} of {len(batch)} entities")
        n_obs += sum(len(e.observations) for e in batch)
        if b % max(1, len(batches) // 10) == 0 or b == len(batches):
            log(
                f"  {label}: {n_obs:,} observations written ({n_obs / total:,.0f} obs/s so far"
                + (f"; raw encode {n_obs / raw:,.0f} obs/s)" if raw else ")")
            )
    return {
        "seconds": total,
        "encode_seconds": emb.seconds,
        "observations": n_obs,
        "calls": len(batches),
        "raw_batch_seconds": raw,
    }


async def measure_queries(
    store: GraphStore, emb: TimedEmbedder, questions: Sequence[str], *, bare: bool
) -> dict[str, Any]:
    """Per question: search_memory end to end (parts timed) and, if ``bare``, the bare vector query."""
    driver, db = store.driver, store.database
    res: dict[str, Any] = {
        k: []
        for k in (
            "sm",
            "sm_embed",
            "sm_mentions",
            "sm_search",
            "sm_around",
            "sm_rest",
            "bare",
            "bare_embed",
            "bare_query",
            "rounds",
            "k",
            "hits",
            "starved",
        )
    }
    spent = time_store_runs(store)

    async def one_search(q: str) -> None:
        spent.clear()
        emb.seconds = 0.0
        emb.intervals.clear()
        t0 = time.perf_counter()
        searched = await store.search_memory_traced(q, limit=LIMIT)
        result, diag = searched.result, searched.diagnostics
        dt = time.perf_counter() - t0
        res["sm"].append(dt)
        # The candidate channels run concurrently, the fulltext one while the question is embedded: each
        # part is the wall time it adds to the parts before it (embedding, then mentions, then candidates).
        embed_iv = [iv for iv in emb.intervals if iv[0] >= t0]
        cand_iv = [
            (a, b) for n, a, b in spent if n.startswith("search_memory") and n != "search_memory_around"
        ]
        mention_iv = [(a, b) for n, a, b in spent if n == "search_mentions"]
        around_iv = [(a, b) for n, a, b in spent if n == "search_memory_around"]
        res["sm_embed"].append(covered(embed_iv))
        res["sm_mentions"].append(covered(mention_iv))
        res["sm_search"].append(covered(embed_iv + cand_iv) - covered(embed_iv))
        res["sm_around"].append(covered(around_iv))
        res["starved"].extend("+".join(r) for r in diag.starved)
        res["sm_rest"].append(dt - covered(embed_iv + cand_iv + mention_iv + around_iv))
        res["rounds"].append(diag.rounds)
        res["k"].append(diag.k)
        res["hits"].append(len(result.hits))

    async def one_bare(q: str) -> None:
        t0 = time.perf_counter()
        v = (await asyncio.to_thread(emb.inner.encode, [q]))[0]
        t1 = time.perf_counter()
        records, _, _ = await driver.execute_query(
            BARE_QUERY, parameters_={"k": BARE_K, "v": v}, database_=db, routing_=RoutingControl.READ
        )
        t2 = time.perf_counter()
        assert len(records) == BARE_K
        res["bare"].append(t2 - t0)
        res["bare_embed"].append(t1 - t0)
        res["bare_query"].append(t2 - t1)

    for i, q in enumerate(questions):
        if not bare:
            await one_search(q)
        elif i % 2 == 0:
            await one_search(q)
            await one_bare(q)
        else:
            await one_bare(q)
            await one_search(q)
    del store.x.read  # the class's method again
    return res


async def warm_up(store: GraphStore, emb: TimedEmbedder, questions: Sequence[str]) -> None:
    await measure_queries(store, emb, questions, bare=True)


def dist(values: Sequence[int]) -> str:
    c = Counter(values)
    return ", ".join(f"{k:,}: {c[k]}" for k in sorted(c))


def ms(v: float) -> float:
    return v * 1000


async def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--observations", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--foreign",
        type=int,
        default=20_000,
        help="near-duplicate observations in a second namespace (0: skip settings b and c)",
    )
    ap.add_argument("--batch", type=int, default=1000, help="observations per create_entities call")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--skip-encode-all",
        action="store_true",
        help="skip raw encode A (all texts in one call); the verdict then uses B alone",
    )
    args = ap.parse_args()
    if args.tiny:
        args.observations, args.queries, args.foreign, args.batch = 100, 4, 50, 50
    warmup = min(WARMUP, args.queries)
    results = Results(f"search-{args.observations}", args)

    def table(key: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
        return results.table(key, headers, rows, title=title)

    def say(text: str) -> None:
        print(results.note(text))

    busy: list[str] = []

    def check_busy(phase: str) -> None:
        for line in other_benchmarks():
            log(f"WARNING ({phase}): another benchmark is running, numbers will be distorted: {line}")
            busy.append(f"{phase}: {line}")

    check_busy("start")

    settings = Settings()
    driver, conn = await connect(settings)
    info = resolve_model(MODEL)
    assert info is not None
    bootstrap_note = ""
    try:
        await bootstrap(driver, conn.database, model=info)
    except ConfigError as exc:
        # A shared database may carry another run's interrupted re-embedding marker; that is not ours to
        # fix.  Bootstrap without the model check, then make sure the vector indexes fit the model.
        bootstrap_note = f"bootstrap with the model refused ({exc}); bootstrapped without the model check"
        log(f"WARNING: {bootstrap_note}")
        await bootstrap(driver, conn.database)
        await ensure_vector_indexes(driver, conn.database, info.dimension)
        records, _, _ = await driver.execute_query(
            queries()["schema_vector_dimensions"], database_=conn.database
        )
        dims = {r["name"]: r["dimension"] for r in records}
        if len(dims) != 2 or any(int(d) != info.dimension for d in dims.values()):
            raise
    inner = load_embedder(MODEL, background=False)
    assert inner is not None
    model = inner.model()
    emb = TimedEmbedder(inner)
    emb.encode(["warm up the model"] * 64)

    n_entities = max(1, args.observations // OBS_PER_ENTITY)
    tag = uuid.uuid4().hex[:8]
    ns = f"bench-search-{args.observations}-{tag}"
    ns_foreign = f"bench-search-foreign-{args.foreign}-{tag}"
    made: list[str] = []
    store = GraphStore(driver, database=conn.database, namespace=ns, embedder=emb)
    foreign = GraphStore(driver, database=conn.database, namespace=ns_foreign, embedder=emb)
    records, _, _ = await driver.execute_query(
        "CALL dbms.components() YIELD versions RETURN versions[0] AS v", database_=conn.database
    )
    neo4j_version = records[0]["v"]
    records, _, _ = await driver.execute_query(
        "MATCH (o:Observation) WHERE o.embedding IS NOT NULL RETURN count(o) AS c", database_=conn.database
    )
    preexisting = int(records[0]["c"])

    try:
        log(f"generating {n_entities:,} entities x {OBS_PER_ENTITY} observations")
        entities = make_dataset(n_entities)
        texts = [t for e in entities for t in (*e.observations, entity_text(e.name, e.entityType))]
        n_obs = sum(len(e.observations) for e in entities)
        questions = make_questions(entities, args.queries, seed=1)
        warm = make_questions(entities, warmup, seed=2)

        # 1. raw encode of exactly the texts the store embeds, then the store's ingest.  Warm the model up
        # first on a sample of the same texts (the first call at each new padded length is slower).
        bare_encode(model, random.Random(5).sample(texts, min(1000, len(texts))))
        raw_s = float("nan")
        if not args.skip_encode_all:
            log(f"raw encode of {len(texts):,} texts (batch_size=64)")
            t0 = time.perf_counter()
            vecs = bare_encode(model, texts)
            raw_s = time.perf_counter() - t0
            assert len(vecs) == len(texts)
            del vecs
            log(f"  {raw_s:.1f} s, {len(texts) / raw_s:,.0f} texts/s")
        log(f"ingest through GraphStore.create_entities into {ns}")
        made.append(ns)
        ing = await ingest(store, emb, entities, args.batch, "ingest", model=model)
        check_busy("after ingest")
        rels = make_relations(entities)
        log(f"  {len(rels):,} relations through GraphStore.create_relations (not timed as ingest)")
        rel_s = await write_relations(store, rels)
        await driver.execute_query("CALL db.awaitIndexes(300)", database_=conn.database)

        # 2./3a. plain setting
        log(f"warm-up ({warmup} questions), then {len(questions)} questions")
        await warm_up(store, emb, warm)
        plain = await measure_queries(store, emb, questions, bare=True)
        check_busy("after plain queries")

        with_foreign = in_foreign = None
        fing = None
        if args.foreign > 0:
            fents = near_duplicates(entities, args.foreign)
            log(
                f"foreign namespace {ns_foreign}: {sum(len(e.observations) for e in fents):,} near-duplicates"
            )
            made.append(ns_foreign)
            fing = await ingest(foreign, emb, fents, args.batch, "foreign")
            await write_relations(foreign, make_relations(fents))
            await warm_up(store, emb, warm)
            with_foreign = await measure_queries(store, emb, questions, bare=True)
            await warm_up(foreign, emb, warm)
            in_foreign = await measure_queries(foreign, emb, questions, bare=True)
            check_busy("after foreign-setting queries")

        # --- report ---
        print(
            f"\n# bench_search: {n_obs:,} observations ({n_entities:,} entities x {OBS_PER_ENTITY}, "
            f"{len(rels):,} relations), "
            f"model {MODEL}, Neo4j {neo4j_version}, {os.cpu_count()} cores"
        )
        print(f"# other embedded observations already in the database: {preexisting:,}")
        if busy:
            print("# WARNING: measured while another benchmark ran:\n#   " + "\n#   ".join(busy))
        else:
            print("# no other benchmark process seen at start, after ingest or after any query phase")
        if bootstrap_note:
            print(f"# NOTE: {bootstrap_note}")
        print(f"# namespace {ns}" + (" (kept)" if args.keep else ""))

        ing_s = ing["seconds"]
        db_s = ing_s - ing["encode_seconds"]
        raw_obs_s = n_obs / raw_s
        rawb_s = ing["raw_batch_seconds"]
        rawb_obs_s = n_obs / rawb_s
        ing_obs_s = n_obs / ing_s
        print("\n## 1. Ingest (real MiniLM vectors)\n")
        print(
            f"texts embedded: {len(texts):,} = {n_obs:,} observations + {n_entities:,} entity texts; "
            f"GraphStore: {ing['calls']} create_entities calls of {args.batch:,} observations"
        )
        print(
            table(
                "ingest",
                ["path", "seconds", "obs/s", "note"],
                [
                    ["A raw model.encode, all texts in one call (before ingest)", raw_s, raw_obs_s, ""],
                    ["B raw model.encode, per batch, interleaved with ingest", rawb_s, rawb_obs_s, ""],
                    [
                        "C GraphStore.create_entities (total)",
                        ing_s,
                        ing_obs_s,
                        f"{ing_obs_s / raw_obs_s:.0%} of A, {ing_obs_s / rawb_obs_s:.0%} of B",
                    ],
                    [
                        "  of which embedder.encode (incl. tolist)",
                        ing["encode_seconds"],
                        n_obs / ing["encode_seconds"],
                        f"{ing['encode_seconds'] / ing_s:.0%} of C",
                    ],
                    [
                        "  of which Neo4j write + rest",
                        db_s,
                        n_obs / db_s if db_s > 0 else float("nan"),
                        f"{db_s / ing_s:.0%} of C",
                    ],
                ],
            )
        )
        # A runs alone before the ingest, B batch by batch next to it: under changing background load only B
        # saw the same conditions, so the verdict takes the less favourable of the two.
        share = (
            ing_obs_s / rawb_obs_s
            if args.skip_encode_all
            else min(ing_obs_s / raw_obs_s, ing_obs_s / rawb_obs_s)
        )
        verdict = "MET" if share >= 0.8 else "MISSED"
        say(
            f"target ingest >= 80% of raw encode throughput: {ing_obs_s / raw_obs_s:.0%} of A, "
            f"{ing_obs_s / rawb_obs_s:.0%} of B (same load) -> {verdict}; encode is "
            f"{ing['encode_seconds'] / ing_s:.0%} of the ingest time, Neo4j write + rest "
            f"{db_s / ing['calls']:.2f} s per call of {args.batch:,} observations"
        )
        print(
            f"(then {len(rels):,} relations via create_relations in {rel_s:.1f} s; not part of the ingest figures)"
        )
        if fing:
            print(
                f"(foreign namespace: {fing['observations']:,} observations in {fing['seconds']:.1f} s, "
                f"{fing['observations'] / fing['seconds']:,.0f} obs/s)"
            )

        def latency_rows(r: dict[str, Any]) -> list[list[Any]]:
            rows = []
            for label, key in [
                ("search_memory end to end", "sm"),
                ("  part: query embedding", "sm_embed"),
                ("  part: search_mentions statement", "sm_mentions"),
                ("  part: candidate reads beyond the embedding (all rounds, incl. exact)", "sm_search"),
                ("  part: search_memory_around statement(s)", "sm_around"),
                ("  part: fusion + Python + thread hops", "sm_rest"),
                (f"bare: embed + queryNodes(k={BARE_K})", "bare"),
                ("  part: embedding alone", "bare_embed"),
                ("  part: queryNodes alone", "bare_query"),
            ]:
                if r[key]:
                    p50, p95, mean = summary_ms(r[key])
                    rows.append([label, p50, p95, mean, ms(max(r[key]))])
            return rows

        def latency_verdict(r: dict[str, Any]) -> str:
            sm95 = percentile(r["sm"], 95) * 1000
            bare95 = percentile(r["bare"], 95) * 1000
            ok = sm95 <= 50 and sm95 <= 2 * bare95
            return (
                f"search_memory p95 {sm95:.1f} ms (target <= 50 ms), bare p95 {bare95:.1f} ms, ratio "
                f"{sm95 / bare95:.2f}x (target <= 2x) -> {'MET' if ok else 'MISSED'}"
            )

        def rounds_line(r: dict[str, Any]) -> str:
            n = len(r["rounds"])
            multi = sum(1 for x in r["rounds"] if x > 1)
            short = sum(1 for x in r["hits"] if x < LIMIT)
            return (
                f"rounds > 1: {multi}/{n} ({multi / n:.0%}); rounds distribution {{{dist(r['rounds'])}}}; "
                f"final k {{{dist(r['k'])}}}; answers with < {LIMIT} hits: {short}; "
                f"starved rounds by channel {{{', '.join(f'{k}: {v}' for k, v in sorted(Counter(r['starved']).items())) or 'none'}}}"
            )

        print(
            f"\n## 2. Query latency, plain setting ({len(questions)} questions after {warmup} warm-up, "
            f"ms, nearest-rank percentiles)\n"
        )
        print(table("latency", ["what", "p50", "p95", "mean", "max"], latency_rows(plain)))
        say(latency_verdict(plain))
        print(f"embedding alone p95: {percentile(plain['bare_embed'], 95) * 1000:.1f} ms")

        print(
            f"\n## 3. Over-fetch rounds (limit 10, first k = {BARE_K} observations / 150 entities / {BARE_K} fulltext; "
            "a starved "
            "vector channel is ranked exactly in a namespace of <= 2,000; else only the starved channel, "
            "x4 per round up to 10,000; 'vector:exact' = an exact round)\n"
        )
        say(f"(a) plain, {n_obs:,} observations: {rounds_line(plain)}")
        if with_foreign is not None and in_foreign is not None and fing is not None:
            big_ratio = n_obs / fing["observations"]
            say(
                f"(b) same questions, after a foreign namespace of {fing['observations']:,} near-duplicates: "
                f"{rounds_line(with_foreign)}"
            )
            say(
                f"(c) questions asked in the {fing['observations']:,}-observation namespace, the "
                f"{n_obs:,} one ({big_ratio:.0f}x larger) being foreign: {rounds_line(in_foreign)}"
            )
            print("\n### (b) latency with the foreign namespace present (ms)\n")
            print(table("latency-foreign", ["what", "p50", "p95", "mean", "max"], latency_rows(with_foreign)))
            say(latency_verdict(with_foreign))
            print("\n### (c) latency in the small namespace, big one foreign (ms)\n")
            print(
                table("latency-in-foreign", ["what", "p50", "p95", "mean", "max"], latency_rows(in_foreign))
            )
            say(latency_verdict(in_foreign))
            for label, r in (("(b)", with_foreign), ("(c)", in_foreign)):
                by_rounds: dict[int, list[float]] = {}
                for rounds, t in zip(r["rounds"], r["sm"], strict=True):
                    by_rounds.setdefault(rounds, []).append(t)
                say(
                    f"{label} search_memory p50/p95 by rounds: "
                    + "; ".join(
                        f"{k} round(s): n={len(v)} p50 {percentile(v, 50) * 1000:.1f} / p95 "
                        f"{percentile(v, 95) * 1000:.1f} ms"
                        for k, v in sorted(by_rounds.items())
                    )
                )
        sys.stdout.flush()
    finally:
        if args.keep:
            log(f"kept namespaces: {', '.join(made)}")
        else:
            with sync_driver(conn) as sdrv:
                for name in made:
                    log(f"deleting {name}")
                    secs = await asyncio.to_thread(delete_namespace, sdrv, conn.database, name)
                    log(f"  deleted in {secs:.1f} s")
        await driver.close()
    results.save(conn)


if __name__ == "__main__":
    asyncio.run(main())
