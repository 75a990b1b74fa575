"""find_duplicates on the labelled pairs and at 100k entities (issue 31; docs/performance.md#find_duplicates).

    python -m benchmarks.bench_duplicates pairs            # dev and frozen halves, model on and off
    python -m benchmarks.bench_duplicates scale --n 100000 # the 100k-entity timing, model on and off

``pairs``: every pair of benchmarks/entity_pairs/*.jsonl goes into a namespace of its own (its two
entities, their neighbours as entities, the relations to them), written through GraphStore with the
default model (entity and observation vectors).  Then find_duplicates' store function runs on each
namespace with the model on and off; a pair is predicted "one" when its two entities end in one group.
Reported per half and model: precision and recall at the shipped threshold (``AUTO_MERGE_THRESHOLD``,
an exact run at it), and the curve over thresholds (from the pair's score: the score of the group
holding both at minScore 0.05; with two candidates per namespace a group's score is the pair's).
A sample of frozen pairs also goes through a real MCP stdio session, which must answer the same groups.

``scale``: a namespace of ``--n`` entities (70% people, 20% organisations, 10% projects; 1% of them a
variant of another: case, initials, nickname, honorific) with 3 observations each, seeded with batched
UNWIND writes in create_entities' data model (benchmarks/harness.py), each entity's name-and-type
vector from the default model (observation vectors skipped: find_duplicates never reads them, and the
numpy runtime embeds ~70 observations/s on this machine).  Then the timing of one whole-namespace
duplicate_groups, model on and off, at the auto-merge threshold (and with ``--low`` at minScore 0.5,
where the entity vector index is asked for every entity's nearest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from neo4j import AsyncGraphDatabase

from benchmarks.entity_pairs import build
from benchmarks.harness import (
    ROOT,
    Results,
    common,
    connection,
    delete_namespace,
    kg_serve,
    log,
    mcp_session,
    structured,
    sync_driver,
)
from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.resolution import AUTO_MERGE_THRESHOLD
from kg_neo4j.store import GraphStore
from kg_neo4j.store.duplicates import DuplicateGroup, duplicate_groups
from kg_neo4j.store.records import entity_text

PAIRS = ROOT / "benchmarks" / "entity_pairs"
MODEL = "all-MiniLM-L6-v2"
CURVE = [round(0.5 + 0.05 * i, 2) for i in range(10)]
LOW = 0.05


def load_pairs(half: str, limit: int | None = None) -> list[dict[str, Any]]:
    lines = (PAIRS / f"{half}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:limit]]


async def write_pair(store: GraphStore, pair: dict[str, Any]) -> None:
    a, b = pair["a"], pair["b"]
    ents: dict[str, EntityIn] = {}
    for side in (a, b):
        ents[side["name"]] = EntityIn(
            name=side["name"], entityType=side["type"], observations=side["observations"]
        )
    rels = []
    for side in (a, b):
        for n in side["neighbours"]:
            if n["name"] not in ents:
                ents[n["name"]] = EntityIn(name=n["name"], entityType=n["type"], observations=[])
            if n["name"] != side["name"]:
                rels.append(
                    RelationIn.model_validate(
                        {"from": side["name"], "to": n["name"], "relationType": n["relation"]}
                    )
                )
    await store.create_entities(list(ents.values()))
    if rels:
        await store.create_relations(rels)


def together(groups: list[DuplicateGroup], a: str, b: str) -> DuplicateGroup | None:
    return next((g for g in groups if a in g.names and b in g.names), None)


def metrics(rows: list[tuple[int, bool]]) -> dict[str, float]:
    tp = sum(1 for label, p in rows if p and label)
    fp = sum(1 for label, p in rows if p and not label)
    fn = sum(1 for label, p in rows if not p and label)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
    }


async def run_pairs(args: argparse.Namespace) -> dict[str, Any]:
    from kg_neo4j.embeddings import load_embedder

    conn = connection()
    # the schema: bootstrap() below (ensure_schema runs its own event loop)
    embedder = load_embedder(MODEL, background=False)
    assert embedder is not None
    embedder.model()
    from kg_neo4j.embeddings import resolve_model
    from kg_neo4j.store.connection import bootstrap

    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    await bootstrap(drv, conn.database, model=resolve_model(MODEL))
    prefix = f"bench-dupes-{uuid.uuid4().hex[:8]}-"
    out: dict[str, Any] = {"threshold": AUTO_MERGE_THRESHOLD, "halves": {}}
    sem = asyncio.Semaphore(args.concurrency)
    try:
        for half in args.halves:
            pairs = load_pairs(half, args.limit)
            log(f"{half}: writing {len(pairs)} pairs (model {MODEL})")
            t0 = time.perf_counter()

            async def write(p: dict[str, Any]) -> None:
                async with sem:
                    store = GraphStore(
                        drv, database=conn.database, namespace=prefix + p["id"], embedder=embedder
                    )
                    await write_pair(store, p)

            await asyncio.gather(*(write(p) for p in pairs))
            log(f"{half}: written in {time.perf_counter() - t0:.0f} s")
            per_model: dict[str, Any] = {}
            for model_on in (True, False):
                model = MODEL if model_on else None
                t0 = time.perf_counter()

                async def judge(p: dict[str, Any], model: str | None = model) -> dict[str, Any]:
                    async with sem:
                        store = GraphStore(drv, database=conn.database, namespace=prefix + p["id"])
                        low = await duplicate_groups(store, model=model, min_score=LOW)
                        at = await duplicate_groups(store, model=model, min_score=AUTO_MERGE_THRESHOLD)
                    g = together(low, p["a"]["name"], p["b"]["name"])
                    return {
                        "id": p["id"],
                        "kind": p["kind"],
                        "label": p["label"],
                        "score": g.score if g else 0.0,
                        "codes": sorted({r.code for r in g.reasons}) if g else [],
                        "at_threshold": together(at, p["a"]["name"], p["b"]["name"]) is not None,
                    }

                judged = await asyncio.gather(*(judge(p) for p in pairs))
                secs = time.perf_counter() - t0
                at = metrics([(j["label"], j["at_threshold"]) for j in judged])
                curve = {str(t): metrics([(j["label"], j["score"] >= t) for j in judged]) for t in CURVE}
                per_model["on" if model_on else "off"] = {
                    "at_threshold": at,
                    "curve": curve,
                    "seconds": round(secs, 1),
                    "pairs": judged,
                }
                log(f"{half} model {'on' if model_on else 'off'}: {at} ({secs:.0f} s)")
            out["halves"][half] = per_model
        if args.mcp_sample:
            sampled = args.halves[-1]
            out["mcp_sample"] = await mcp_sample(
                conn, prefix, load_pairs(sampled, args.limit)[: args.mcp_sample]
            )
    finally:
        if not args.keep:
            log("deleting the pairs' namespaces")
            sync = sync_driver(conn)
            ids = [p["id"] for half in args.halves for p in load_pairs(half, args.limit)]
            for i in ids:
                delete_namespace(sync, conn.database, prefix + i)
            sync.close()
        await drv.close()
    return out


async def mcp_sample(conn: Any, prefix: str, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The same groups through a real MCP stdio session (model on) as through the store."""
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    same = 0
    for p in pairs:
        ns = prefix + p["id"]
        async with mcp_session(kg_serve(conn, ns, "--embedding-model", MODEL)) as session:
            res = await session.call_tool("find_duplicates", {"minScore": AUTO_MERGE_THRESHOLD})
            via_mcp = structured(res, "find_duplicates")["groups"]
        store = GraphStore(drv, database=conn.database, namespace=ns)
        direct = [
            g.model_dump() for g in await duplicate_groups(store, model=MODEL, min_score=AUTO_MERGE_THRESHOLD)
        ]
        same += via_mcp == direct
    await drv.close()
    log(f"MCP sample: {same}/{len(pairs)} answers equal to the store's")
    return {"pairs": len(pairs), "equal": same}


def report_pairs(results: Results, out: dict[str, Any]) -> None:
    for half, per_model in out["halves"].items():
        rows = []
        for model, r in per_model.items():
            a = r["at_threshold"]
            rows.append(
                [
                    model,
                    out["threshold"],
                    a["precision"],
                    a["recall"],
                    a["tp"],
                    a["fp"],
                    a["fn"],
                    r["seconds"],
                ]
            )
        headers = ["model", "threshold", "precision", "recall", "TP", "FP", "FN", "seconds"]
        print(results.table(f"{half}", headers, rows, title=f"\n{half} half at the shipped threshold"))
        curve_rows = []
        for t in CURVE:
            on, off = per_model["on"]["curve"][str(t)], per_model["off"]["curve"][str(t)]
            curve_rows.append([t, on["precision"], on["recall"], off["precision"], off["recall"]])
        headers = ["threshold", "precision (on)", "recall (on)", "precision (off)", "recall (off)"]
        print(results.table(f"{half}-curve", headers, curve_rows, title=f"\n{half} half: the curve"))
        kinds: dict[str, list[int]] = {}
        for j in per_model["on"]["pairs"]:
            k = kinds.setdefault(j["kind"], [j["label"], 0, 0])
            k[1] += 1
            k[2] += j["at_threshold"]
        kind_rows = [[k, v[0], v[1], v[2]] for k, v in sorted(kinds.items())]
        title = f"\n{half} half by kind (model on, at the threshold)"
        print(results.table(f"{half}-kinds", ["kind", "label", "pairs", "grouped"], kind_rows, title=title))
    if "mcp_sample" in out:
        results.figures["mcp_sample"] = out["mcp_sample"]


# --- scale ------------------------------------------------------------------------------------
SEED_ROWS = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity:KgText {namespace: $ns, name: row.name, entityType: row.type,
                                name_lower: toLower(row.name), type_lower: toLower(row.type),
                                text_lower: toLower(row.name) + '\n' + toLower(row.type),
                                created_at: datetime(), obs_next: size(row.observations),
                                embedding: row.vector,
                                embedding_model: CASE WHEN row.vector IS NULL THEN null ELSE $model END})
WITH n, row
UNWIND range(0, size(row.observations) - 1) AS i
CREATE (n)-[:HAS_OBSERVATION]->(:Observation:KgText {namespace: $ns, text: row.observations[i],
                                                     text_lower: toLower(row.observations[i]), seq: i,
                                                     created_at: datetime()})
""".strip()


def scale_entities(n: int, seed: int = 31) -> list[tuple[str, str, list[str]]]:
    rng = random.Random(seed)
    syll = "ka lo mi ne ra su ti vo be da fe gu ho ji ke la mo nu pe ri sa to ve wi ze ar el in or ul".split()
    surnames = build.SURNAMES + [("".join(rng.sample(syll, 3))).title() for _ in range(3000)]
    names: dict[str, tuple[str, list[str]]] = {}
    while len(names) < n * 0.99:
        r = rng.random()
        if r < 0.7:
            name, t = f"{build.first(rng)} {rng.choice(surnames)}", "person"
        elif r < 0.9:
            name, t = (
                rng.choice(build.COMPANY_FORMS).format(
                    f"{rng.choice(build.COMPANY_STEMS)} {rng.choice(surnames)}"
                ),
                "organization",
            )
        else:
            name, t = f"Project {rng.choice(build.PROJECTS)} {rng.randrange(10_000)}", "project"
        city = rng.choice(build.CITIES)
        names[name] = (
            t,
            [
                f"based in {city}",
                f"noted in {rng.randrange(1990, 2026)}",
                f"works with {rng.choice(surnames)}",
            ],
        )
    people = [k for k, v in names.items() if v[0] == "person"]
    while len(names) < n:
        base = rng.choice(people)
        f, s = base.split(" ", 1)
        variant = rng.choice(
            [
                base.lower(),
                f"{f[0]}. {s}",
                f"Dr {base}",
                f"{rng.choice(build.NICKS.get(f.lower(), [f])).title()} {s}",
            ]
        )
        if variant not in names:
            names[variant] = names[base]
    return [(k, t, obs) for k, (t, obs) in names.items()]


async def run_scale(args: argparse.Namespace) -> dict[str, Any]:
    from kg_neo4j.embeddings import load_embedder, resolve_model
    from kg_neo4j.store.connection import bootstrap

    conn = connection()
    # the schema: bootstrap() below (ensure_schema runs its own event loop)
    rows = scale_entities(args.n)
    cache = Path(tempfile.gettempdir()) / f"bench_duplicates_vectors_{args.n}.npy"
    import numpy as np

    if cache.exists():
        vectors = np.load(cache)
    else:
        embedder = load_embedder(MODEL, background=False)
        assert embedder is not None
        log(f"embedding {len(rows)} names (the numpy runtime, ~150/s here)")
        t0 = time.perf_counter()
        vectors = np.asarray(embedder.encode([entity_text(n, t) for n, t, _ in rows]), dtype=np.float32)
        log(f"embedded in {time.perf_counter() - t0:.0f} s")
        part = cache.with_suffix(f".{os.getpid()}.npy")  # whole or absent: another run may read it
        np.save(part, vectors)
        os.replace(part, cache)
    ns = f"bench-dupes-scale-{args.n}-{uuid.uuid4().hex[:8]}"
    sync = sync_driver(conn)
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    await bootstrap(drv, conn.database, model=resolve_model(MODEL))
    out: dict[str, Any] = {"entities": len(rows)}
    try:
        t0 = time.perf_counter()
        for i in range(0, len(rows), 5000):
            batch = [
                {"name": n, "type": t, "observations": obs, "vector": vectors[i + k].tolist()}
                for k, (n, t, obs) in enumerate(rows[i : i + 5000])
            ]
            sync.execute_query(SEED_ROWS, rows=batch, ns=ns, model=MODEL, database_=conn.database)
        log(f"seeded {len(rows)} entities in {time.perf_counter() - t0:.0f} s")
        sync.execute_query("CALL db.awaitIndexes(600)", database_=conn.database)
        store = GraphStore(drv, database=conn.database, namespace=ns)
        for model in args.models:
            for min_score in (AUTO_MERGE_THRESHOLD, *([0.5] if args.low else [])):
                t0 = time.perf_counter()
                groups = await duplicate_groups(
                    store, model=MODEL if model == "on" else None, min_score=min_score
                )
                secs = time.perf_counter() - t0
                out[f"{model} {min_score}"] = {"seconds": round(secs, 1), "groups": len(groups)}
                log(f"model {model}, minScore {min_score}: {secs:.1f} s, {len(groups)} groups")
    finally:
        delete_namespace(sync, conn.database, ns)
        sync.close()
        await drv.close()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    pp = common(sub.add_parser("pairs"))
    pp.add_argument("--halves", nargs="+", default=["dev", "frozen"], choices=["dev", "frozen"])
    pp.add_argument("--limit", type=int, help="the first LIMIT pairs of each half (default: all)")
    pp.add_argument("--concurrency", type=int, default=4)
    pp.add_argument("--mcp-sample", type=int, default=6, help="pairs of the last half asked through MCP too")
    pp.add_argument("--keep", action="store_true", help="keep the pairs' namespaces")
    sp = common(sub.add_parser("scale"))
    sp.add_argument("--n", type=int, default=100_000)
    sp.add_argument("--models", nargs="+", default=["off", "on"], choices=["on", "off"])
    sp.add_argument(
        "--low", action="store_true", help="also time minScore 0.5 (the vector index's candidates)"
    )
    args = p.parse_args()
    if args.what == "pairs":
        if args.tiny:
            args.halves, args.limit, args.mcp_sample = ["dev"], 4, 1
        results = Results("duplicates-pairs" + ("" if args.limit is None else f"-{args.limit}"), args)
        report_pairs(results, asyncio.run(run_pairs(args)))
    else:
        if args.tiny:
            args.n, args.low = 200, True
        results = Results(f"duplicates-scale-{args.n}", args)
        out = asyncio.run(run_scale(args))
        rows = [[k, v["seconds"], v["groups"]] for k, v in out.items() if isinstance(v, dict)]
        title = f"find_duplicates over a whole namespace of {out['entities']:,} entities"
        print(results.table("scale", ["model, minScore", "seconds", "groups"], rows, title=title))
    results.save(connection())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
