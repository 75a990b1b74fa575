"""find_duplicates on the labelled pairs and at 100k entities (issue 31; docs/performance.md#find_duplicates).

    python -m benchmarks.bench_duplicates pairs            # dev and frozen halves, model on and off
    python -m benchmarks.bench_duplicates scale --n 100000 # the 100k-entity timing, model on and off
    python -m benchmarks.bench_duplicates typos            # the typo set (issue 38), pair by pair and crowded
    python -m benchmarks.bench_duplicates hint --n 10000   # create_entities (100) with and without the hint

``pairs``: every pair of benchmarks/entity_pairs/*.jsonl goes into a namespace of its own (its two
entities, their neighbours as entities, the relations to them), written through GraphStore with the
default model (entity and observation vectors).  Then find_duplicates' store function runs on each
namespace with the model on and off; a pair is predicted "one" when its two entities end in one group.
Reported per half and model: precision and recall at the shipped threshold (``AUTO_MERGE_THRESHOLD``,
an exact run at it), and the curve over thresholds (from the pair's score: the score of the group
holding both at minScore 0.05; with two candidates per namespace a group's score is the pair's).
A sample of frozen pairs also goes through a real MCP stdio session, which must answer the same groups.

``typos``: the records of benchmarks/entity_pairs/typos/*.jsonl (issue 38), written twice: each record in
a namespace of its own (pair by pair), and the whole half in one namespace (crowded).  Then
find_duplicates' default call (``DEFAULT_MIN_SCORE``) and the auto-merge threshold, model on and off.
Pair by pair: a record is predicted "one" when its two entities end in one group.  Crowded: every pair
of names in one group is a listed pair; a listed pair is true only when labelled a match (a record's
positive pair, or an initials form and the person it is), every other listed pair is a false one.
Reported too: hard negatives (and initials forms fitting two people) grouped at the auto-merge threshold.

``hint``: create_entities' duplicate hint (issue 38): a namespace of ``--n`` entities (the scale mix below,
written through create_entities, model off), then rounds of three create_entities calls of 100 new
entities each (a fifth of the people a typo of an existing person), in process, model off (the encoder's
time would hide the hint's): without the hint, with the candidates' seeks alone (the hint's index reads in
the write's statement, nothing compared or scored: the floor of any hint that reads stored keys), and
with the whole hint; in turn (without, seeks, with, then with, seeks, without, ...).  The medians, and the
median of each round's ratio to its call without.  Then the create_entities tool as an agent calls it,
through two MCP stdio servers on the namespace, one with ``--duplicate-hint``, model on (``--mcp``:
the default; ``--mcp off`` too), ``--mcp-rounds`` pairs of calls.

``scale``: a namespace of ``--n`` entities (70% people, 20% organisations, 10% projects; 1% of them a
variant of another: case, initials, nickname, honorific) with 3 observations each, seeded with batched
UNWIND writes in create_entities' data model (benchmarks/harness.py), each entity's name-and-type
vector from the default model (observation vectors skipped: find_duplicates never reads them, and the
numpy runtime embeds ~70 observations/s on this machine).  Then the timing of one whole-namespace
duplicate_groups, model on and off, at the auto-merge threshold (and with ``--low`` at minScore 0.5,
where the entity vector index is asked for every entity's nearest).  ``--namespace NS`` times a namespace
of this mix seeded before (kept; nothing seeded or deleted), ``--repeat`` each timing that many times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase

from benchmarks.entity_pairs import build
from benchmarks.entity_pairs.typos import build as typos_build
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
from kg_neo4j.embeddings import SentenceEmbedder
from kg_neo4j.models import Entity, EntityIn, RelationIn
from kg_neo4j.resolution import AUTO_MERGE_THRESHOLD, DEFAULT_MIN_SCORE
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import Connection
from kg_neo4j.store.duplicates import DuplicateGroup, duplicate_groups
from kg_neo4j.store.records import entity_text

PAIRS = ROOT / "benchmarks" / "entity_pairs"
CACHE = Path.home() / ".cache" / "kg-neo4j-bench"
TYPOS = PAIRS / "typos"
MODEL = "all-MiniLM-L6-v2"
CURVE = [round(0.5 + 0.05 * i, 2) for i in range(10)]
LOW = 0.05


def load_pairs(half: str, limit: int | None = None, where: Path = PAIRS) -> list[dict[str, Any]]:
    lines = (where / f"{half}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:limit]]


async def write_pair(store: GraphStore, pair: dict[str, Any]) -> None:
    a, b = pair["a"], pair["b"]
    ents: dict[str, EntityIn] = {}
    for side in (a, b, *pair.get("others", [])):
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


async def open_bench() -> tuple[Connection, SentenceEmbedder, AsyncDriver]:
    """The connection, the loaded default model, and a driver on a bootstrapped schema."""
    from kg_neo4j.embeddings import load_embedder, resolve_model
    from kg_neo4j.store.connection import bootstrap

    conn = connection()
    embedder = load_embedder(MODEL, background=False)
    assert embedder is not None
    embedder.model()
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    # the schema (ensure_schema runs its own event loop)
    await bootstrap(drv, conn.database, model=resolve_model(MODEL))
    return conn, embedder, drv


async def run_pairs(args: argparse.Namespace) -> dict[str, Any]:
    conn, embedder, drv = await open_bench()
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


# --- typos ------------------------------------------------------------------------------------
def typo_records(half: str, sample: int | None = None) -> list[dict[str, Any]]:
    """The half's records, less any whose names another record of the half already used (one
    namespace cannot hold two entities of one name; the crowded namespace holds the whole half);
    with ``sample``, that many spread evenly over the half (every kind of record, not the first few)."""
    seen: set[str] = set()
    out = []
    for r in load_pairs(half, where=TYPOS):
        names = [r["a"]["name"], r["b"]["name"], *(o["name"] for o in r.get("others", []))]
        if not seen & set(names):
            seen |= set(names)
            out.append(r)
    if sample is not None:
        out = out[:: max(1, len(out) // sample)][:sample]
    return out


def typo_truth(records: list[dict[str, Any]]) -> tuple[set[frozenset[str]], list[frozenset[str]]]:
    """The pairs labelled a match, and the pairs never to merge (hard negatives, initials forms that fit
    two people with either)."""
    matches: set[frozenset[str]] = set()
    never: list[frozenset[str]] = []
    for r in records:
        ab = frozenset((r["a"]["name"], r["b"]["name"]))
        if r["label"]:
            matches.add(ab)
        elif r["hard"]:
            never.append(ab)
        for o in r.get("others", []):
            matches.add(frozenset((r["a"]["name"], o["name"])))  # the initials form is this person
            never.append(frozenset((r["a"]["name"], o["name"])))  # ... but the name fits two: never merged
    return matches, never


def listed_pairs(groups: list[DuplicateGroup]) -> set[frozenset[str]]:
    return {frozenset((x, y)) for g in groups for i, x in enumerate(g.names) for y in g.names[i + 1 :]}


async def run_typos(args: argparse.Namespace) -> dict[str, Any]:
    conn, embedder, drv = await open_bench()
    prefix = f"bench-typos-{uuid.uuid4().hex[:8]}-"
    out: dict[str, Any] = {"min_score": DEFAULT_MIN_SCORE, "threshold": AUTO_MERGE_THRESHOLD, "halves": {}}
    sem = asyncio.Semaphore(args.concurrency)
    spaces: list[str] = []
    try:
        for half in args.halves:
            records = typo_records(half, args.sample)
            matches, never = typo_truth(records)
            log(f"typos {half}: writing {len(records)} records pair by pair and crowded (model {MODEL})")
            t0 = time.perf_counter()
            crowded = prefix + half
            spaces += [crowded, *(prefix + r["id"] for r in records)]

            async def write(r: dict[str, Any], ns: str) -> None:
                async with sem:
                    store = GraphStore(drv, database=conn.database, namespace=ns, embedder=embedder)
                    await write_pair(store, r)

            await asyncio.gather(*(write(r, prefix + r["id"]) for r in records))
            for r in records:  # the crowded namespace, one record after the other (one writer)
                await write_pair(
                    GraphStore(drv, database=conn.database, namespace=crowded, embedder=embedder), r
                )
            log(f"typos {half}: written in {time.perf_counter() - t0:.0f} s")
            per_model: dict[str, Any] = {}
            for model_on in (True, False):
                model = MODEL if model_on else None
                for min_score in (DEFAULT_MIN_SCORE, AUTO_MERGE_THRESHOLD):

                    async def judge(r: dict[str, Any], ms: float = min_score, m: str | None = model) -> bool:
                        async with sem:
                            store = GraphStore(drv, database=conn.database, namespace=prefix + r["id"])
                            groups = await duplicate_groups(store, model=m, min_score=ms)
                        return together(groups, r["a"]["name"], r["b"]["name"]) is not None

                    grouped = await asyncio.gather(*(judge(r) for r in records))
                    pairwise = metrics([(r["label"], g) for r, g in zip(records, grouped, strict=True)])
                    t0 = time.perf_counter()
                    store = GraphStore(drv, database=conn.database, namespace=crowded)
                    listed = listed_pairs(await duplicate_groups(store, model=model, min_score=min_score))
                    secs = time.perf_counter() - t0
                    tp, fp = len(listed & matches), len(listed - matches)
                    crowd = {
                        "tp": tp,
                        "fp": fp,
                        "fn": len(matches - listed),
                        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
                        "recall": round(tp / len(matches), 4) if matches else 1.0,
                        "seconds": round(secs, 1),
                        "never_merge_listed": sum(1 for p in never if p in listed),
                        "false_examples": sorted(" / ".join(sorted(p)) for p in listed - matches)[:40],
                        "missed_examples": sorted(" / ".join(sorted(p)) for p in matches - listed)[:40],
                    }
                    key = f"{'on' if model_on else 'off'} {min_score}"
                    per_model[key] = {"pair_by_pair": pairwise, "crowded": crowd}
                    log(
                        f"typos {half} model {key}: pair by pair {pairwise}; crowded {tp=} {fp=} "
                        f"P {crowd['precision']} R {crowd['recall']} "
                        f"never-merge listed {crowd['never_merge_listed']}"
                    )
            out["halves"][half] = {
                "records": len(records),
                "matches": len(matches),
                "never": len(never),
                **per_model,
            }
    finally:
        if not args.keep:
            log("deleting the typo namespaces")
            sync = sync_driver(conn)
            for ns in spaces:
                delete_namespace(sync, conn.database, ns)
            sync.close()
        await drv.close()
    return out


def report_typos(results: Results, out: dict[str, Any]) -> None:
    headers = [
        "model",
        "minScore",
        "P (pairs)",
        "R (pairs)",
        "P (crowded)",
        "R (crowded)",
        "TP",
        "FP",
        "never-merge grouped",
        "seconds (crowded)",
    ]
    for half, r in out["halves"].items():
        rows = []
        examples: dict[str, Any] = {}
        for key, v in r.items():
            if not isinstance(v, dict):
                continue
            pb, cr = v["pair_by_pair"], v["crowded"]
            model, ms = key.split()
            rows.append(
                [
                    model,
                    float(ms),
                    pb["precision"],
                    pb["recall"],
                    cr["precision"],
                    cr["recall"],
                    cr["tp"],
                    cr["fp"],
                    cr["never_merge_listed"],
                    cr["seconds"],
                ]
            )
            examples[key] = {"false": cr["false_examples"], "missed": cr["missed_examples"]}
        title = (
            f"\ntypos, {half} half ({r['records']} records, {r['matches']} matches, "
            f"{r['never']} never to merge)"
        )
        print(results.table(f"typos-{half}", headers, rows, title=title))
        results.figures[f"typos-{half}-examples"] = examples


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
    from kg_neo4j.embeddings import resolve_model
    from kg_neo4j.store.connection import bootstrap

    conn = connection()
    # the schema: bootstrap() below (ensure_schema runs its own event loop)
    rows = scale_entities(args.n)
    ns = args.namespace or f"bench-dupes-scale-{args.n}-{uuid.uuid4().hex[:8]}"
    sync = sync_driver(conn)
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    await bootstrap(drv, conn.database, model=resolve_model(MODEL))
    out: dict[str, Any] = {"entities": len(rows)}
    try:
        if args.namespace is None:
            vectors = scale_vectors(rows, args.n)
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
                for rep in range(args.repeat):
                    load = os.getloadavg()[0]
                    t0 = time.perf_counter()
                    groups = await duplicate_groups(
                        store, model=MODEL if model == "on" else None, min_score=min_score
                    )
                    secs = time.perf_counter() - t0
                    key = f"{model} {min_score}" + (f" ({rep + 1})" if args.repeat > 1 else "")
                    out[key] = {"seconds": round(secs, 1), "groups": len(groups), "load": round(load, 1)}
                    log(
                        f"model {model}, minScore {min_score}: {secs:.1f} s, {len(groups)} groups, load {load:.1f}"
                    )
    finally:
        if args.namespace is None:
            delete_namespace(sync, conn.database, ns)
        sync.close()
        await drv.close()
    return out


def scale_vectors(rows: list[tuple[str, str, list[str]]], n: int) -> Any:
    """The name-and-type vectors of ``rows``, from the default model once, then from the cache."""
    import numpy as np

    from kg_neo4j.embeddings import load_embedder

    cache = CACHE / f"bench_duplicates_vectors_{n}.npy"  # outside the clone, kept between runs
    if cache.exists():
        return np.load(cache)
    embedder = load_embedder(MODEL, background=False)
    assert embedder is not None
    log(f"embedding {len(rows)} names (the numpy runtime, ~150/s here)")
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.encode([entity_text(n, t) for n, t, _ in rows]), dtype=np.float32)
    log(f"embedded in {time.perf_counter() - t0:.0f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    part = cache.with_suffix(f".{os.getpid()}.npy")  # whole or absent: another run may read it
    np.save(part, vectors)
    os.replace(part, cache)
    return vectors


HINT_ARMS = ("without", "seeks", "with")


async def run_hint(args: argparse.Namespace) -> dict[str, Any]:
    from kg_neo4j.store import duplicate_hints
    from kg_neo4j.store.connection import bootstrap

    conn = connection()
    drv = AsyncGraphDatabase.driver(
        conn.uri, auth=(conn.username, conn.password), notifications_min_severity="OFF"
    )
    await bootstrap(drv, conn.database, model=None)
    ns = f"bench-dupes-hint-{args.n}-{uuid.uuid4().hex[:8]}"
    store = GraphStore(drv, database=conn.database, namespace=ns)
    calls = args.rounds * len(HINT_ARMS) + (args.mcp_rounds + 1) * 2 * len(args.mcp)  # +1: the warm-up
    rows = scale_entities(args.n + calls * 100, seed=38)
    seed, fresh = rows[: args.n], iter(rows[args.n :])
    rng = random.Random(38)
    taken = {n for n, _, _ in rows}

    def batch() -> list[EntityIn]:
        """The next 100 new entities, a fifth of the people among them a typo of an existing person."""
        ents = []
        for k in range(100):
            n, t, o = next(fresh)
            if k % 5 == 0 and t == "person":
                f, s = rng.choice(seed)[0].split(" ", 1)
                typo = f"{typos_build.corrupt_word(rng, f, rng.choice(typos_build.WORD_KINDS))} {s}"
                if typo not in taken:
                    taken.add(typo)
                    n = typo
            ents.append(EntityIn(name=n, entityType=t, observations=o))
        return ents

    out: dict[str, Any] = {"entities": args.n, "rounds": args.rounds}
    try:
        t0 = time.perf_counter()
        for i in range(0, len(seed), 1000):
            await store.create_entities(
                [EntityIn(name=n, entityType=t, observations=o) for n, t, o in seed[i : i + 1000]]
            )
        log(f"seeded {len(seed)} entities in {time.perf_counter() - t0:.0f} s")
        times: dict[str, list[float]] = {a: [] for a in HINT_ARMS}
        hints = 0
        for r in range(args.rounds):
            for arm in HINT_ARMS if r % 2 == 0 else HINT_ARMS[::-1]:  # a drift favours no arm
                ents = batch()

                async def seeks(tx: Any, e: list[EntityIn] = ents) -> list[Entity]:
                    return await store.within(tx).create_entities(e, {})

                async def write(
                    st: GraphStore, cands: dict[str, list[str]], e: list[EntityIn] = ents
                ) -> list[Entity]:
                    return await st.create_entities(e, cands)

                t0 = time.perf_counter()
                if arm == "without":
                    await store.create_entities(ents)
                elif arm == "seeks":  # the write and its candidates' seeks: nothing compared or scored
                    await store.x.transaction(seeks)
                else:
                    _, found = await duplicate_hints.with_hints(store, write, lambda c: [x.name for x in c])
                    hints += len(found)
                times[arm].append((time.perf_counter() - t0) * 1000)
        out.update({f"{a}_ms": round(statistics.median(times[a]), 1) for a in HINT_ARMS})
        # each round's calls (one per arm, back to back): the median of their ratios to the one without
        for a in HINT_ARMS[1:]:
            pairs = zip(times[a], times["without"], strict=True)
            out[f"{a}_ratio"] = round(statistics.median(x / y for x, y in pairs), 2)
        out.update({"hints": hints, "load": [round(x, 2) for x in os.getloadavg()]})
        log(
            f"create_entities (100) at {args.n}: without {out['without_ms']} ms, seeks alone "
            f"{out['seeks_ms']} ms ({out['seeks_ratio']}x), with the hint {out['with_ms']} ms "
            f"({out['with_ratio']}x); {hints} hints"
        )
        out["mcp"] = [await _hint_over_mcp(conn, ns, model, args.mcp_rounds, batch) for model in args.mcp]
    finally:
        sync = sync_driver(conn)
        delete_namespace(sync, conn.database, ns)
        sync.close()
        await drv.close()
    return out


async def _hint_over_mcp(
    conn: Connection, ns: str, model: str, rounds: int, batch: Callable[[], list[EntityIn]]
) -> dict[str, Any]:
    """The create_entities tool (100) as an agent calls it, through two stdio servers on one namespace,
    one with --duplicate-hint; the embedding model on (the default) or off."""
    flags = ["--embedding-model", MODEL if model == "on" else "none"]
    times: dict[str, list[float]] = {"without": [], "with": []}
    hints = 0
    async with (
        mcp_session(kg_serve(conn, ns, *flags)) as plain,
        mcp_session(kg_serve(conn, ns, "--duplicate-hint", *flags)) as hinted,
    ):
        for r in range(-1, rounds):  # round -1 warms both servers (the model's first call), untimed
            for arm in ("without", "with") if r % 2 == 0 else ("with", "without"):
                call = {"entities": [e.model_dump() for e in batch()]}
                t0 = time.perf_counter()
                res = await (hinted if arm == "with" else plain).call_tool("create_entities", call)
                took = (time.perf_counter() - t0) * 1000
                answer = structured(res, "create_entities")
                if r >= 0:
                    times[arm].append(took)
                    hints += len(answer.get("duplicates", []))
    pairs = zip(times["with"], times["without"], strict=True)
    row = {
        "model": model,
        "rounds": rounds,
        "without_ms": round(statistics.median(times["without"]), 1),
        "with_ms": round(statistics.median(times["with"]), 1),
        "ratio": round(statistics.median(x / y for x, y in pairs), 2),
        "hints": hints,
    }
    log(f"over MCP, model {model}: {row}")
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    pp = common(sub.add_parser("pairs"))
    pp.add_argument("--halves", nargs="+", default=["dev", "frozen"], choices=["dev", "frozen"])
    pp.add_argument("--limit", type=int, help="the first LIMIT pairs of each half (default: all)")
    pp.add_argument("--concurrency", type=int, default=4)
    pp.add_argument("--mcp-sample", type=int, default=6, help="pairs of the last half asked through MCP too")
    pp.add_argument("--keep", action="store_true", help="keep the pairs' namespaces")
    tp = common(sub.add_parser("typos"))
    tp.add_argument("--halves", nargs="+", default=["dev", "frozen"], choices=["dev", "frozen"])
    tp.add_argument("--sample", type=int, help="SAMPLE records spread over each half (default: all)")
    tp.add_argument("--concurrency", type=int, default=4)
    tp.add_argument("--keep", action="store_true", help="keep the namespaces")
    hp = common(sub.add_parser("hint"))
    hp.add_argument("--n", type=int, default=10_000)
    hp.add_argument("--rounds", type=int, default=15)
    hp.add_argument(
        "--mcp", nargs="*", default=["on"], choices=["on", "off"], help="models of the MCP rounds"
    )
    hp.add_argument("--mcp-rounds", type=int, default=10)
    sp = common(sub.add_parser("scale"))
    sp.add_argument("--n", type=int, default=100_000)
    sp.add_argument("--models", nargs="+", default=["off", "on"], choices=["on", "off"])
    sp.add_argument(
        "--low", action="store_true", help="also time minScore 0.5 (the vector index's candidates)"
    )
    sp.add_argument("--repeat", type=int, default=1, help="time each run REPEAT times (default: 1)")
    sp.add_argument(
        "--namespace", help="time this namespace as it is (seeded before by this mix; kept): no seeding"
    )
    args = p.parse_args()
    if args.what == "pairs":
        if args.tiny:
            args.halves, args.limit, args.mcp_sample = ["dev"], 4, 1
        results = Results("duplicates-pairs" + ("" if args.limit is None else f"-{args.limit}"), args)
        report_pairs(results, asyncio.run(run_pairs(args)))
    elif args.what == "typos":
        if args.tiny:
            args.halves, args.sample = ["dev"], 8
        results = Results("duplicates-typos" + ("" if args.sample is None else f"-{args.sample}"), args)
        report_typos(results, asyncio.run(run_typos(args)))
    elif args.what == "hint":
        if args.tiny:
            # 3: the first hinted batch at 200 happens to hint nothing; the MCP rounds model off (quick)
            args.n, args.rounds, args.mcp, args.mcp_rounds = 200, 3, ["off"], 1
        results = Results(f"duplicates-hint-{args.n}", args)
        out = asyncio.run(run_hint(args))
        headers = ["entities", "rounds", "without (median ms)", "seeks alone (median ms)"]
        headers += ["with the hint (median ms)", "seeks alone / without", "with / without", "hints"]
        row = [out["entities"], out["rounds"], out["without_ms"], out["seeks_ms"], out["with_ms"]]
        row += [out["seeks_ratio"], out["with_ratio"], out["hints"]]
        title = f"create_entities (100) at {out['entities']:,} entities, with and without the duplicate hint"
        print(results.table("hint", headers, [row], title=title))
        headers = ["model", "rounds", "without (median ms)", "with the hint (median ms)", "with / without"]
        headers.append("hints")
        rows = [
            [m[k] for k in ("model", "rounds", "without_ms", "with_ms", "ratio", "hints")] for m in out["mcp"]
        ]
        title = f"the create_entities tool (100) over MCP stdio at {out['entities']:,} entities"
        print(results.table("hint-mcp", headers, rows, title=title))
    else:
        if args.tiny:
            args.n, args.low = 200, True
        results = Results(f"duplicates-scale-{args.n}", args)
        out = asyncio.run(run_scale(args))
        rows = [[k, v["seconds"], v["groups"], v["load"]] for k, v in out.items() if isinstance(v, dict)]
        title = f"find_duplicates over a whole namespace of {out['entities']:,} entities"
        headers = ["model, minScore", "seconds", "groups", "load (1 min, at the start)"]
        print(results.table("scale", headers, rows, title=title))
    results.save(connection())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
