"""search_memory on Neo4j 5.26 LTS, then on the current line (2026.x), on the same data (issue 12).

Not a test: it prints tables.  One private Neo4j home (its own data directory and free ports, never
the shared server): the data is written once under 5.26, measured, then the server is stopped and
the current line started on the SAME data directory (Neo4j opens the 5.26 store in place; the
bootstrap adds the filtered vector indexes and this script waits until they are ONLINE), and
measured again.  Only one Neo4j of ours runs at a time.

Data (real all-MiniLM-L6-v2 vectors, bench_search's generator): a big namespace of
``--observations`` (100k) observations, a small one of ``--small`` (1k: near-duplicates of the big
one's first entities, so its questions also find look-alikes in the big one), and the frozen recall
set (benchmarks/recall_eval, read only: one namespace per conversation, loaded as bench_recall does).

Per version, ``--queries`` questions about the small namespace's entities, each asked four ways in
one interleaved loop (order rotating, so every path sees the same background load):

* **plain**: search_memory(q, limit 10) in the big namespace;
* **small**: the same question in the small namespace, the big one being foreign (100x larger);
* **bare**: embed the question + ONE vector read at search_memory's first k (500) in the big
  namespace: ``db.index.vector.queryNodes`` on 5.26, the filtered ``SEARCH ... WHERE o.namespace``
  on 2026.x; and the same in the small namespace (**bare small**).

Index queries per channel (vector, entity, fulltext, exact) are counted per question by wrapping
``store.x.read`` (nothing in the product changes).  Recall: hit@10 / MRR@10 of the shipped fusion and of
the vector channel alone on the frozen set.  On the current line the PROFILE of the filtered vector
read (``search_memory_vector_filtered``, a small-namespace question) is written to ``--profile-out``.

Targets: on 2026.x small p95 <= 1.2x plain p95 with 1 index query per channel per question;
search_memory p95 <= 1.5x bare p95 on 2026.x (reported on 5.26 too); recall on 2026.x within
+-0.015 of 5.26.

    .venv/bin/python benchmarks/bench_versions.py [--observations 100000] [--small 1000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import shutil
import socket
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import log, percentile, table  # noqa: E402
from bench_search import (  # noqa: E402
    LIMIT,
    OBS_PER_ENTITY,
    make_dataset,
    make_questions,
    make_relations,
    near_duplicates,
    time_store_runs,
    write_relations,
)
from neo4j import AsyncDriver, RoutingControl  # noqa: E402
from profile_search_nodes import walk  # noqa: E402

from kg_neo4j.cypher import queries  # noqa: E402
from kg_neo4j.embeddings import load_embedder, resolve_model  # noqa: E402
from kg_neo4j.fusion import FusionWeights  # noqa: E402
from kg_neo4j.localdb import CURRENT_VERSION, LTS_VERSION, LocalNeo4j  # noqa: E402
from kg_neo4j.models import EntityIn, ObservationAdd  # noqa: E402
from kg_neo4j.settings import Settings  # noqa: E402
from kg_neo4j.store import GraphStore, connect  # noqa: E402
from kg_neo4j.store.capabilities import search_indexes  # noqa: E402
from kg_neo4j.store.connection import bootstrap  # noqa: E402
from kg_neo4j.store.hybrid_search import first_vector_k  # noqa: E402
from kg_neo4j.store.records import entity_text  # noqa: E402

#: recall compared on the two lines: the shipped fusion, and the vector channel alone
CONFIGS: dict[str, FusionWeights] = {
    "vector only": FusionWeights(fulltext=0, entity=0, mention=0, context=0, proximity=0),
    "fused (shipped)": FusionWeights(),
}


async def load_conversation(store: GraphStore, conv: dict[str, Any]) -> None:
    """Write one recall_eval conversation (one entity per speaker, one observation per turn) through the store."""
    await store.create_entities(
        [EntityIn(name=s, entityType="person", observations=[]) for s in conv["speakers"]]
    )
    for session in conv["sessions"]:
        await store.add_observations(
            [ObservationAdd(entityName=t["speaker"], contents=[t["text"]]) for t in session["turns"]]
        )


MODEL = "all-MiniLM-L6-v2"
WARMUP = 20
BARE_K = first_vector_k(LIMIT, FusionWeights())  # search_memory's first vector k at limit 10 (500)

BARE_5 = """
CALL db.index.vector.queryNodes('kg_observation_embedding', $k, $v) YIELD node, score
RETURN node.namespace AS ns, score
""".strip()
BARE_25 = """
CYPHER 25 MATCH (o:Observation)
SEARCH o IN (VECTOR INDEX kg_observation_embedding_filtered FOR $v WHERE o.namespace = $ns LIMIT $k) SCORE AS score
RETURN o.namespace AS ns, score
""".strip()

CHANNELS = {
    "vector": ("search_memory_vector",),
    "entity": ("search_memory_entities",),
    "fulltext": ("search_memory_fulltext",),
    "exact": ("search_memory_exact",),
}


def channel_of(statement: str) -> str | None:
    return next((c for c, prefixes in CHANNELS.items() if statement.startswith(prefixes)), None)


class CachedEmbedder:
    """The real embedder, with the seeding texts' vectors computed once (and kept on disk for reruns)."""

    def __init__(self, inner: Any, cache: dict[str, list[float]]) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dimension = inner.name, inner.dimension

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.encode(missing), strict=True))
        return [self.cache[t] for t in texts]


def vector_cache(inner: Any, texts: list[str], cache_dir: Path) -> dict[str, list[float]]:
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
            if (i // 512) % 20 == 0:
                log(
                    f"  {i + len(parts[-1]):,} embedded ({(i + len(parts[-1])) / (time.perf_counter() - t0):,.0f}/s)"
                )
        arr = np.concatenate(parts)
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(path, arr)
    return {t: arr[i].tolist() for i, t in enumerate(texts)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server(home: Path, version: str, bolt: int, http: int) -> LocalNeo4j:
    return LocalNeo4j(
        Settings(
            home=home,
            local_neo4j_version=version,
            local_bolt_port=bolt,
            local_http_port=http,
            local_heap="1g",
            local_pagecache="1g",
            local_tx_log_retention="100M size",
        )
    )


async def open_store(db: LocalNeo4j, emb: Any) -> tuple[AsyncDriver, str]:
    uri, user, password = db.credentials()
    driver, conn = await connect(Settings(neo4j_uri=uri, neo4j_username=user, neo4j_password=password))
    await bootstrap(driver, conn.database, model=resolve_model(MODEL))
    indexes = search_indexes(driver, conn.database)
    if indexes is not None and indexes.capabilities.vector_search_filters:
        t0 = time.perf_counter()
        while True:  # the upgraded store fills its filtered indexes in the background
            await indexes.refresh(driver, conn.database)
            if indexes.state == "online":
                break
            if indexes.state == "failed":
                raise RuntimeError(f"a filtered vector index FAILED: {indexes.states}")
            log(f"  filtered vector indexes {indexes.population:.0f}% populated")
            await asyncio.sleep(5)
        log(f"filtered vector indexes ONLINE after {time.perf_counter() - t0:.0f} s of waiting")
    return driver, conn.database


async def seed(
    driver: AsyncDriver,
    database: str,
    emb: CachedEmbedder,
    big: list[EntityIn],
    small: list[EntityIn],
    recall: dict[str, Any],
) -> None:
    for ns, entities in (("bench-versions-big", big), ("bench-versions-small", small)):
        store = GraphStore(driver, database=database, namespace=ns, embedder=emb)
        per_call = 100
        t0 = time.perf_counter()
        for i in range(0, len(entities), per_call):
            await store.create_entities(entities[i : i + per_call])
            if (i // per_call) % 10 == 9:
                done = (i + per_call) * OBS_PER_ENTITY
                log(f"  {ns}: {done:,} observations ({done / (time.perf_counter() - t0):,.0f}/s)")
        await write_relations(store, make_relations(entities))
    for conv in recall["conversations"]:
        await load_conversation(
            GraphStore(driver, database=database, namespace=f"recall-{conv['id']}", embedder=emb), conv
        )
    await driver.execute_query("CALL db.awaitIndexes(600)", database_=database)


async def measure(
    driver: AsyncDriver,
    database: str,
    emb: CachedEmbedder,
    questions: list[str],
    warm: list[str],
    filtered: bool,
) -> dict[str, Any]:
    stores = {
        "plain": GraphStore(driver, database=database, namespace="bench-versions-big", embedder=emb),
        "small": GraphStore(driver, database=database, namespace="bench-versions-small", embedder=emb),
    }
    spent = {k: time_store_runs(s) for k, s in stores.items()}
    res: dict[str, Any] = {k: [] for k in ("plain", "small", "bare", "bare small")}
    res["per_channel"] = {k: Counter() for k in stores}  # (channel, queries) -> questions
    res["rounds"] = {k: Counter() for k in stores}
    res["filtered"] = {k: set() for k in stores}
    bare_text = BARE_25 if filtered else BARE_5

    async def search(kind: str, q: str, record: bool) -> None:
        spent[kind].clear()
        t0 = time.perf_counter()
        diag = (await stores[kind].search_memory_traced(q, limit=LIMIT)).diagnostics
        if record:
            res[kind].append(time.perf_counter() - t0)
            counts = Counter(c for name, _, _ in spent[kind] if (c := channel_of(name)))
            for c in CHANNELS:
                res["per_channel"][kind][(c, counts[c])] += 1
            res["rounds"][kind][diag.rounds] += 1
            res["filtered"][kind].add(diag.filtered)

    async def bare(kind: str, q: str, record: bool) -> None:
        ns = stores["plain" if kind == "bare" else "small"].namespace
        t0 = time.perf_counter()
        v = (await asyncio.to_thread(emb.inner.encode, [q]))[0]
        records, _, _ = await driver.execute_query(
            bare_text,
            parameters_={"k": BARE_K, "v": v, "ns": ns},
            database_=database,
            routing_=RoutingControl.READ,
        )
        if record:
            res[kind].append(time.perf_counter() - t0)
        assert len(records) == BARE_K

    ways = [("plain", search), ("bare", bare), ("small", search), ("bare small", bare)]
    for i, q in enumerate([*warm, *questions]):
        record = i >= len(warm)
        for kind, fn in ways[i % 4 :] + ways[: i % 4]:
            await fn(kind, q, record)
    return res


async def recall(
    driver: AsyncDriver, database: str, emb: CachedEmbedder, data: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cname in ("fused (shipped)", "vector only"):
        ranks: list[int | None] = []
        for conv in data["conversations"]:
            store = GraphStore(driver, database=database, namespace=f"recall-{conv['id']}", embedder=emb)
            store.fusion = CONFIGS[cname]
            turns = {t["id"]: t["text"] for s in conv["sessions"] for t in s["turns"]}
            for question in conv["questions"]:
                evidence = {turns[e] for e in question["evidence"]}
                hits = (await store.search_memory(question["question"], limit=LIMIT)).hits
                ranks.append(next((i for i, h in enumerate(hits, 1) if h.observation in evidence), None))
        out[cname] = (
            sum(r is not None for r in ranks) / len(ranks),
            sum(1 / r for r in ranks if r) / len(ranks),
        )
    return out


async def profile_filtered(
    driver: AsyncDriver,
    database: str,
    emb: CachedEmbedder,
    question: str,
    version: str,
    setting: str,
    path: Path,
) -> None:
    store = GraphStore(driver, database=database, namespace="bench-versions-small", embedder=emb)
    now = store.clock.now()
    params = {
        "ns": store.namespace,
        "k": BARE_K,
        "vector": emb.encode([question])[0],
        "at": now,
        "now": now,
        "types": None,
        "fulltext": None,
        "model": emb.name,
    }
    text = queries()["search_memory_vector_filtered"]
    await driver.execute_query(text, parameters_=params, database_=database)
    records, summary, _ = await driver.execute_query(
        text.replace("CYPHER 25", "CYPHER 25 PROFILE", 1), parameters_=params, database_=database
    )
    assert summary.profile is not None
    lines, _, hits = walk(summary.profile)
    stack, index_ops = [summary.profile], []
    while stack:  # the index read's own line in full (walk shortens details)
        op = stack.pop()
        stack.extend(op.get("children", []))
        if "VectorIndex" in str(op["operatorType"]):
            index_ops.append(f"{op['operatorType']}: {op.get('args', {}).get('Details', '')}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"PROFILE of search_memory_vector_filtered (cypher/search.cypher) on Neo4j {version}\n"
        f"{setting}; k={BARE_K}; question {question!r}\n"
        f"{records[0]['raw_count']} index rows, {len(records[0]['hits'])} hits, {hits:,} db hits in total\n\n"
        f"{text}\n\n" + "\n".join(lines) + "\n\n" + "\n".join(index_ops) + "\n",
        encoding="utf-8",
    )
    log(f"PROFILE written to {path}")


def p(values: Sequence[float], q: float) -> float:
    return percentile(values, q) * 1000


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def report(args: argparse.Namespace, runs: dict[str, dict[str, Any]], n_small: int, n_big: int) -> None:
    versions = list(runs)
    print(
        f"\n# bench_versions: {n_big:,} observations (big namespace) + {n_small:,} (small one), "
        f"{args.queries} questions after {WARMUP} warm-up, model {MODEL}, limit {LIMIT}, bare k {BARE_K}; "
        f"Neo4j {' then '.join(versions)} on the same data directory; ms, nearest-rank percentiles\n"
    )
    rows = []
    for kind in ("plain", "small", "bare", "bare small"):
        rows.append(
            [kind] + [f"{p(runs[v]['q'][kind], 50):.1f} / {p(runs[v]['q'][kind], 95):.1f}" for v in versions]
        )
    print(table(["p50 / p95 (ms)", *versions], rows, left_first=True))
    print()
    for v in versions:
        q = runs[v]["q"]
        for kind in ("plain", "small"):
            dist = ", ".join(f"{c}={n}: {m}" for (c, n), m in sorted(q["per_channel"][kind].items()) if m)
            print(
                f"{v} {kind}: index queries per question by channel {{{dist}}}; rounds {dict(q['rounds'][kind])}; "
                f"filtered statements: {sorted(q['filtered'][kind])}"
            )
    print()
    cur, lts = versions[-1], versions[0]
    qc, ql = runs[cur]["q"], runs[lts]["q"]
    one = all(n <= 1 for (c, n), m in qc["per_channel"]["small"].items() if m and c != "exact") and not any(
        m for (c, n), m in qc["per_channel"]["small"].items() if c == "exact" and n
    )
    a = p(qc["small"], 95) / p(qc["plain"], 95)
    a_lts = p(ql["small"], 95) / p(ql["plain"], 95)
    b = p(qc["plain"], 95) / p(qc["bare"], 95)
    b_small = p(qc["small"], 95) / p(qc["bare small"], 95)
    b_lts = p(ql["plain"], 95) / p(ql["bare"], 95)
    (hc, mc), (hl, ml) = runs[cur]["recall"]["fused (shipped)"], runs[lts]["recall"]["fused (shipped)"]
    (vhc, vmc), (vhl, vml) = runs[cur]["recall"]["vector only"], runs[lts]["recall"]["vector only"]
    print(
        table(
            ["target", "measured", "verdict"],
            [
                [
                    f"(a) {cur}: small p95 / plain p95 <= 1.2x",
                    f"{a:.2f}x ({lts}: {a_lts:.2f}x)",
                    verdict(a <= 1.2),
                ],
                [
                    f"(a) {cur}: 1 index query per channel, every small-namespace question",
                    "yes" if one else "no",
                    verdict(one),
                ],
                [
                    f"(b) {cur}: search_memory p95 / bare p95 (embed + 1 filtered SEARCH) <= 1.5x",
                    f"{b:.2f}x (small ns {b_small:.2f}x)",
                    verdict(b <= 1.5),
                ],
                [
                    f"(b) {lts}: search_memory p95 / bare p95 (embed + 1 queryNodes)",
                    f"{b_lts:.2f}x",
                    "reported",
                ],
                [
                    f"(c) recall hit@10 (fused) {cur} - {lts} within +-0.015",
                    f"{hc:.3f} - {hl:.3f} = {hc - hl:+.3f}",
                    verdict(abs(hc - hl) <= 0.015),
                ],
                [
                    "(c) MRR@10 (fused); vector only hit@10 / MRR@10",
                    f"{mc:.3f} vs {ml:.3f}; {vhc:.3f}/{vmc:.3f} vs {vhl:.3f}/{vml:.3f}",
                    "reported",
                ],
            ],
            left_first=True,
        )
    )
    for v in versions:
        print(
            f"{v}: connect + bootstrap (+ filtered indexes ONLINE) {runs[v]['wait_s']:.0f} s; questions + recall "
            f"{runs[v]['measure_s']:.0f} s; load average before / after the questions {runs[v]['load']} / "
            f"{runs[v]['load_after']}"
        )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--observations", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--versions",
        default=f"{LTS_VERSION},{CURRENT_VERSION}",
        help="oldest first: the store is upgraded from one to the next, never back",
    )
    ap.add_argument(
        "--home",
        type=Path,
        default=Path.home() / ".kg-neo4j-bench" / "versions",
        help="private Neo4j home (wiped at start and, unless --keep, at the end)",
    )
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "kg-neo4j-bench")
    ap.add_argument(
        "--profile-out",
        type=Path,
        default=Path(__file__).resolve().parent
        / "results"
        / f"profile_filtered_vector_{CURRENT_VERSION}.txt",
    )
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    versions = args.versions.split(",")

    big = make_dataset(max(1, args.observations // OBS_PER_ENTITY))
    small = near_duplicates(big, args.small)
    data = json.loads((Path(__file__).resolve().parent / "recall_eval" / "dataset.json").read_text())
    questions = make_questions(small, args.queries, seed=1)
    warm = make_questions(small, WARMUP, seed=2)
    inner = load_embedder(MODEL, background=False)
    assert inner is not None
    texts = [t for e in (*big, *small) for t in (*e.observations, entity_text(e.name, e.entityType))]
    emb = CachedEmbedder(inner, vector_cache(inner, texts, args.cache))

    shutil.rmtree(args.home, ignore_errors=True)
    bolt, http = free_port(), free_port()
    runs: dict[str, dict[str, Any]] = {}
    try:
        for i, version in enumerate(versions):
            db = server(args.home, version, bolt, http)
            db.start(timeout=600)
            try:
                t0 = time.perf_counter()
                driver, database = await open_store(db, emb)
                wait_s = time.perf_counter() - t0
                try:
                    if i == 0:
                        log(f"seeding under Neo4j {version}")
                        await seed(driver, database, emb, big, small, data)
                    indexes = search_indexes(driver, database)
                    filtered = bool(indexes and indexes.state == "online")
                    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
                    log(f"Neo4j {version}: {len(questions)} questions x 4 ways (load {load})")
                    t0 = time.perf_counter()
                    q = await measure(driver, database, emb, questions, warm, filtered)
                    load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
                    log(f"Neo4j {version}: recall on the frozen set")
                    rec = await recall(driver, database, emb, data)
                    runs[version] = {
                        "q": q,
                        "recall": rec,
                        "wait_s": wait_s,
                        "load": load,
                        "load_after": load_after,
                        "measure_s": time.perf_counter() - t0,
                    }
                    if filtered:
                        await profile_filtered(
                            driver,
                            database,
                            emb,
                            questions[0],
                            version,
                            f"namespace of {sum(len(e.observations) for e in small):,} "
                            f"observations beside one of {args.observations:,}",
                            args.profile_out,
                        )
                finally:
                    await driver.close()
            finally:
                db.stop()
        report(args, runs, sum(len(e.observations) for e in small), sum(len(e.observations) for e in big))
    finally:
        if not args.keep:
            shutil.rmtree(args.home, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
