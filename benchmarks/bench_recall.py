"""Retrieval quality of search_memory on the frozen evaluation set (no LLM in the loop).

Each conversation goes into its own namespace through the reference write path
(speakers as entities, every turn an observation, in order); every question is sent
verbatim to search_memory with limit 10.  hit@10 = share of questions with an evidence
turn among the observations of the 10 hits; MRR = mean reciprocal rank of the first one.

Configurations: vector only, fulltext only, the two fused without graph signals, and the
shipped fusion (relative scores + entity mentions + graph proximity).  Every configuration
runs the same store code (entity names in the question are found and removed from the
text that is embedded and keyword-searched); only the fusion weights differ.

    .venv/bin/python benchmarks/bench_recall.py [--dataset benchmarks/recall_eval/dataset.json] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

from kg_neo4j.embeddings import load_embedder, resolve_model
from kg_neo4j.fusion import FusionWeights
from kg_neo4j.models import EntityIn, ObservationAdd
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, connect
from kg_neo4j.store.connection import bootstrap

HERE = Path(__file__).resolve().parent

CONFIGS: dict[str, FusionWeights] = {
    "vector only": FusionWeights(fulltext=0, entity=0, mention=0, proximity=0),
    "fulltext only": FusionWeights(vector=0, entity=0, mention=0, proximity=0),
    "vector + fulltext, no graph signals": FusionWeights(entity=0, mention=0, proximity=0),
    "fused (shipped)": FusionWeights(),
}


async def load(store: GraphStore, conv: dict[str, Any]) -> dict[str, str]:
    """Write one conversation; returns turn id -> text."""
    await store.create_entities([EntityIn(name=s, entityType="person", observations=[]) for s in conv["speakers"]])
    texts: dict[str, str] = {}
    for session in conv["sessions"]:
        batch = []
        for turn in session["turns"]:
            texts[turn["id"]] = turn["text"]
            batch.append(ObservationAdd(entityName=turn["speaker"], contents=[turn["text"]]))
        await store.add_observations(batch)
    return texts


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default=str(HERE / "recall_eval" / "dataset.json"))
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    data = json.loads(Path(args.dataset).read_text())
    settings = Settings()
    driver, conn = await connect(settings)
    info = resolve_model(args.model)
    await bootstrap(driver, conn.database, model=info)
    embedder = load_embedder(args.model)
    run_id = uuid.uuid4().hex[:6]
    results: dict[str, list[tuple[bool, float]]] = {c: [] for c in CONFIGS}
    by_cat: dict[str, dict[str, list[bool]]] = {c: {} for c in CONFIGS}
    namespaces = []
    t0 = time.perf_counter()
    for conv in data["conversations"]:
        ns = f"recall-{run_id}-{conv['id']}"
        namespaces.append(ns)
        store = GraphStore(driver, database=conn.database, namespace=ns, embedder=embedder)
        texts = await load(store, conv)
        for question in conv["questions"]:
            evidence = {texts[e] for e in question["evidence"]}
            for cname, weights in CONFIGS.items():
                store.fusion = weights
                res = await store.search_memory(question["question"], limit=10)
                rank = next((i for i, h in enumerate(res.hits, 1) if h.observation in evidence), None)
                results[cname].append((rank is not None, 1.0 / rank if rank else 0.0))
                by_cat[cname].setdefault(question.get("category", "?"), []).append(rank is not None)
    elapsed = time.perf_counter() - t0
    n = len(results["fused (shipped)"])
    print(f"\nrecall on {data['name']}: {n} questions, {sum(len(c['sessions']) for c in data['conversations'])} "
          f"sessions, model {args.model}, {elapsed:.0f}s\n")
    print("| configuration | hit@10 | MRR@10 |\n| --- | --- | --- |")
    for cname, rows in results.items():
        hit = sum(1 for h, _ in rows if h) / len(rows)
        mrr = sum(r for _, r in rows) / len(rows)
        print(f"| {cname} | {hit:.3f} | {mrr:.3f} |")
    print("\nhit@10 by category (fused):")
    for cat, hits in sorted(by_cat["fused (shipped)"].items()):
        print(f"  {cat:12s} {sum(hits) / len(hits):.3f}  (n={len(hits)})")
    if not args.keep:
        async with driver.session(database=conn.database) as session:
            for ns in namespaces:
                for label in ("Observation", "KgNode"):
                    result = await session.run(
                        f"MATCH (n:{label}) WHERE n.namespace = $ns "
                        "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", ns=ns)
                    await result.consume()
    await driver.close()


if __name__ == "__main__":
    asyncio.run(main())
