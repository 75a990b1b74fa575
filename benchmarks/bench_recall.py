"""Turn-level recall of search_memory through a real MCP session, under the fixed protocol of issue 15.

Protocol (it is the one of the held-out benchmark; do not change it to improve a figure):

* each conversation goes into its own namespace, served by its own ``kg-neo4j serve --namespace <ns>``
  over stdio (default settings, default embedding model), driven by the MCP Python client;
* one entity per speaker (``create_entities``, type ``person``, no observations), then every dialogue
  turn is one observation of its speaker's entity, in order, text only (no dates, no ids):
  ``add_observations`` with one entry per turn, one call per session;
* each question is sent verbatim to ``search_memory`` with ``limit`` 10;
* a question is a hit when one of its evidence turns (speaker and text) is among the 10 hits;
  MRR is the mean of 1 / rank of the first evidence hit (0 when none is in the 10).

The channels alone (BM25-only, vector-only) are measured on the same namespaces, right after the MCP
questions of a conversation, by the product's ``GraphStore.search_memory`` in this process with
fusion weights that keep one channel (``FusionWeights``: every other weight 0, mentions and graph
proximity included).  This is a store-level switch of the benchmark, not a server setting: the
fetching and filtering are the store's, only the fusion differs.

Conversations run one at a time and each namespace is deleted before the next one is written
(``--keep`` keeps them), so the database-wide BM25 statistics see one conversation at a time.

    python -m benchmarks.bench_recall --dataset benchmarks/recall_eval/v2/frozen.json \\
        [--channels hybrid,bm25,vector] [--conversations c1,c2] [--ranks ranks.json] [--keep]

Progress goes to stderr (a bar per phase), the tables to stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks.harness import (
    Results,
    arguments,
    connection,
    delete_namespace,
    kg_serve,
    log,
    mcp_session,
    structured,
    sync_driver,
)
from kg_neo4j.embeddings import load_embedder
from kg_neo4j.fusion import FusionWeights
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import connect

HERE = Path(__file__).resolve().parent
LIMIT = 10

#: Store-level single-channel fusions (benchmark only): one channel weighted, nothing else added.
ALONE: dict[str, FusionWeights] = {
    "bm25": FusionWeights(vector=0, fulltext=1, entity=0, mention=0, proximity=0, prior=0, turn_context=0),
    "vector": FusionWeights(vector=1, fulltext=0, entity=0, mention=0, proximity=0, prior=0, turn_context=0),
}
LABELS = {
    "hybrid": "hybrid (MCP search_memory, default)",
    "bm25": "BM25 only (store, fulltext channel)",
    "vector": "vector only (store, observation vectors)",
}


def _rank(hits: list[tuple[str, str | None]], evidence: set[tuple[str, str]]) -> int | None:
    return next(
        (i for i, (name, obs) in enumerate(hits, 1) if obs is not None and (name, obs) in evidence), None
    )


async def write_conversation(session: Any, conv: dict[str, Any]) -> None:
    """The protocol's writes: one entity per speaker, then each session's turns as observations, in order."""
    structured(
        await session.call_tool(
            "create_entities",
            {"entities": [{"name": s, "entityType": "person", "observations": []} for s in conv["speakers"]]},
        ),
        "create_entities",
    )
    for sess in conv["sessions"]:
        structured(
            await session.call_tool(
                "add_observations",
                {
                    "observations": [
                        {"entityName": t["speaker"], "contents": [t["text"]]} for t in sess["turns"]
                    ]
                },
            ),
            "add_observations",
        )


async def run_conversation(
    conv: dict[str, Any], ns: str, conn: Any, channels: list[str], store: GraphStore | None, bar: tqdm
) -> list[dict[str, Any]]:
    """Write one conversation through MCP, ask its questions; one row per question."""
    turns = {t["id"]: (t["speaker"], t["text"], s["id"]) for s in conv["sessions"] for t in s["turns"]}
    rows: list[dict[str, Any]] = []
    async with mcp_session(kg_serve(conn, ns)) as session:
        bar.set_postfix_str(f"{conv['id']} writing")
        t0 = time.perf_counter()
        await write_conversation(session, conv)
        ingest_s = time.perf_counter() - t0
        bar.set_postfix_str(f"{conv['id']} asking")
        for q in conv["questions"]:
            evidence = {turns[e][:2] for e in q["evidence"]}
            ev_sessions = {turns[e][2] for e in q["evidence"]}
            row: dict[str, Any] = {"id": q["id"], "category": q["category"], "ingest_s": ingest_s}
            if "hybrid" in channels:
                data = structured(
                    await session.call_tool("search_memory", {"query": q["question"], "limit": LIMIT}),
                    "search_memory",
                )
                hits = [(h["name"], h.get("observation")) for h in data["hits"]]
                row["hybrid"] = _rank(hits, evidence)
                row["hybrid_hits"] = hits  # the top-10 list itself, to compare two runs side by side
                # session level: any hit whose text is a turn of an evidence session (diagnostic)
                by_text = {(sp, tx): sid for sp, tx, sid in turns.values()}
                row["hybrid_session"] = any(by_text.get(h) in ev_sessions for h in hits)
            for ch in channels:
                if ch == "hybrid" or store is None:
                    continue
                store.fusion = ALONE[ch]
                res = await store.search_memory(q["question"], limit=LIMIT)
                row[ch] = _rank([(h.name, h.observation) for h in res.hits], evidence)
            rows.append(row)
            bar.update(1)
    return rows


def report(results: Results, rows: list[dict[str, Any]], channels: list[str]) -> str:
    out = []
    cats = sorted({r["category"] for r in rows})
    for ch in channels:
        table_rows: list[list[Any]] = []
        for cat in [*cats, None]:
            sel = [r for r in rows if cat is None or r["category"] == cat]
            hit = sum(1 for r in sel if r[ch]) / len(sel)
            mrr = sum(1 / r[ch] for r in sel if r[ch]) / len(sel)
            table_rows.append([cat or "all", len(sel), round(hit, 3), round(mrr, 3)])
        out.append(
            results.table(ch, ["category", "questions", "hit@10", "MRR"], table_rows, title=f"\n{LABELS[ch]}")
        )
        if ch == "hybrid":
            sess = sum(1 for r in rows if r["hybrid_session"]) / len(rows)
            results.figures["hybrid_session_level"] = round(sess, 3)
            out.append(f"session level (any of the 10 hits from an evidence session): {sess:.3f}")
    return "\n".join(out)


def tiny(conv: dict[str, Any]) -> dict[str, Any]:
    """The smoke size: a conversation's first two sessions and at most five questions answered in them."""
    sessions = conv["sessions"][:2]
    kept = {t["id"] for s in sessions for t in s["turns"]}
    questions = [q for q in conv["questions"] if set(q["evidence"]) <= kept][:5]
    return {**conv, "sessions": sessions, "questions": questions}


def _key(dataset: Path) -> str:
    """v1's dataset.json is "v1"; v2's splits are "v2-dev" and "v2-frozen"."""
    return "v1" if dataset.stem == "dataset" else f"{dataset.parent.name}-{dataset.stem}"


async def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("--dataset", default=str(HERE / "recall_eval" / "dataset.json"))
    ap.add_argument(
        "--channels",
        default="hybrid,bm25,vector",
        help="comma-separated: hybrid (MCP), bm25, vector (store-level single channel)",
    )
    ap.add_argument("--conversations", default="", help="comma-separated conversation ids (default: all)")
    ap.add_argument(
        "--model",
        default="all-MiniLM-L6-v2",
        help="embedder of the store-level channels (must be the server's default model)",
    )
    ap.add_argument(
        "--ranks", type=Path, help="also write the per-question ranks (and hybrid top-10 lists) here"
    )
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    channels = [c for c in args.channels.split(",") if c]
    bad = [c for c in channels if c not in LABELS]
    if bad:
        ap.error(f"--channels: unknown {bad}; allowed: {sorted(LABELS)}")
    data = json.loads(Path(args.dataset).read_text())
    convs = data["conversations"]
    if args.conversations:
        wanted = set(args.conversations.split(","))
        convs = [c for c in convs if c["id"] in wanted]
    if args.tiny:
        convs = [tiny(convs[0])]
    results = Results(
        "recall-" + _key(Path(args.dataset)) + ("" if channels == list(LABELS) else "-" + "-".join(channels)),
        args,
    )
    conn = connection()
    sdrv = sync_driver(conn)
    store_needed = any(c != "hybrid" for c in channels)
    adrv = None
    embedder = None
    if store_needed:
        adrv, _ = await connect(Settings())
        embedder = load_embedder(args.model)
    run_id = uuid.uuid4().hex[:6]
    n_q = sum(len(c["questions"]) for c in convs)
    n_t = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    log(f"{data['name']}: {len(convs)} conversations, {n_t} turns, {n_q} questions; channels {channels}")
    rows: list[dict[str, Any]] = []
    ingest: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        with tqdm(total=n_q, file=sys.stderr, unit="q", dynamic_ncols=True) as bar:
            for conv in convs:
                ns = f"bench-recall-{run_id}-{conv['id']}"
                store = (
                    GraphStore(adrv, database=conn.database, namespace=ns, embedder=embedder)
                    if adrv
                    else None
                )
                try:
                    got = await run_conversation(conv, ns, conn, channels, store, bar)
                finally:
                    if not args.keep:
                        delete_namespace(sdrv, conn.database, ns)
                ingest[conv["id"]] = got[0]["ingest_s"] if got else 0.0
                rows.extend(got)
    finally:
        if adrv is not None:
            await adrv.close()
        sdrv.close()
    elapsed = time.perf_counter() - t0
    per_cat: dict[str, int] = defaultdict(int)
    for r in rows:
        per_cat[r["category"]] += 1
    print(
        f"recall on {data['name']}: {len(convs)} conversations, {n_t} turns, {len(rows)} questions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(per_cat.items()))}); run {elapsed:.0f}s, "
        f"of which MCP ingest {sum(ingest.values()):.0f}s"
    )
    print(report(results, rows, channels))
    results.figures.update(
        dataset=data["name"],
        questions=len(rows),
        elapsed_s=round(elapsed),
        ingest_s=round(sum(ingest.values())),
    )
    results.save(conn)
    if args.ranks:
        args.ranks.write_text(
            json.dumps({"dataset": data["name"], "elapsed_s": elapsed, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
