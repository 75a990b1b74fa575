"""Offline fusion study on the frozen evaluation set (no Neo4j): MiniLM cosine over all turns
of a conversation, a simple BM25, and their fusions (RRF vs relative scores), with and
without removing the speakers' names from the question.  This is where the shipped
choices (strip mentioned names, relative-score fusion, BM25 weight 0.5) come from; the
in-database figures are benchmarks/bench_recall.py's.

    .venv/bin/python benchmarks/recall_eval/fusion_offline.py
"""

import collections
import json
import math
import os
import re

import numpy as np

os.environ["HF_HUB_OFFLINE"] = "1"
from sentence_transformers import SentenceTransformer

from kg_neo4j.embeddings import resolve_model

data = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset.json")))
m = SentenceTransformer(str(resolve_model("all-MiniLM-L6-v2").path), device="cpu")
cache = "/tmp/kg-neo4j-fusion-offline-emb.npz"
convs = data["conversations"]
turns = [
    (c["id"], t["id"], t["speaker"], t["text"]) for c in convs for s in c["sessions"] for t in s["turns"]
]
qs = [(c["id"], q) for c in convs for q in c["questions"]]


def strip_names(q, names):
    for n in names:
        q = re.sub(r"\b" + re.escape(n) + r"('s)?\b", "", q)
    return re.sub(r"\s+", " ", q).strip()


if os.path.exists(cache):
    z = np.load(cache)
    T = z["T"]
    TP = z["TP"]
    Q = z["Q"]
    QS = z["QS"]
else:
    T = m.encode([t[3] for t in turns], normalize_embeddings=True, batch_size=64)
    TP = m.encode([f"{t[2]}: {t[3]}" for t in turns], normalize_embeddings=True, batch_size=64)
    Q = m.encode([q["question"] for _, q in qs], normalize_embeddings=True)
    spk = {c["id"]: c["speakers"] for c in convs}
    QS = m.encode([strip_names(q["question"], spk[cid]) for cid, q in qs], normalize_embeddings=True)
    np.savez(cache, T=T, TP=TP, Q=Q, QS=QS)
tid = [t[1] for t in turns]
tconv = np.array([t[0] for t in turns])
tspk = [t[2] for t in turns]
STOP = set(
    "a an the and or but if of to in on at for with by from as is are was were be been being it its this that these those i you he she we they me him her us them my your his our their what which who whom whose when where why how do does did done have has had not no so than too very can will would should could may might must shall about into over after before again further then once here there all any both each few more most other some such only own same just also s t don now up down out off".split()
)


def toks(s):
    return [w for w in re.findall(r"\w+", s.lower()) if w not in STOP]


def stem(w):
    for suf in ("ing", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def bm25_scores(qtoks, docs_toks, k1=1.2, b=0.75):
    N = len(docs_toks)
    avg = sum(map(len, docs_toks)) / N
    df = collections.Counter(w for d in docs_toks for w in set(d))
    sc = np.zeros(N)
    for i, d in enumerate(docs_toks):
        tf = collections.Counter(d)
        for w in qtoks:
            if w in tf:
                idf = math.log(1 + (N - df[w] + 0.5) / (df[w] + 0.5))
                sc[i] += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
    return sc


def evaluate(name, scorer):
    hits = 0
    mrr = 0
    for qi, (cid, q) in enumerate(qs):
        idx = np.where(tconv == cid)[0]
        s = scorer(qi, cid, q, idx)
        order = idx[np.argsort(-s)][:10]
        ev = set(q["evidence"])
        r = next((k for k, i in enumerate(order, 1) if tid[i] in ev), None)
        if r:
            hits += 1
            mrr += 1 / r
    print(f"{name:40s} hit@10={hits / len(qs):.3f} mrr={mrr / len(qs):.3f}")


spk = {c["id"]: c["speakers"] for c in convs}
docs = {cid: [[stem(w) for w in toks(turns[i][3])] for i in np.where(tconv == cid)[0]] for cid in spk}


def rrf(*ranks_lists, w=None):
    pass


evaluate("vector raw", lambda qi, cid, q, idx: T[idx] @ Q[qi])
evaluate("vector names stripped", lambda qi, cid, q, idx: T[idx] @ QS[qi])
evaluate("vector speaker-prefixed turns", lambda qi, cid, q, idx: TP[idx] @ Q[qi])
evaluate("bm25", lambda qi, cid, q, idx: bm25_scores([stem(w) for w in toks(q["question"])], docs[cid]))
evaluate(
    "bm25 names stripped",
    lambda qi, cid, q, idx: bm25_scores(
        [stem(w) for w in toks(strip_names(q["question"], spk[cid]))], docs[cid]
    ),
)


def rank_of(s):
    r = np.empty(len(s))
    r[np.argsort(-s)] = np.arange(1, len(s) + 1)
    return r


def fused(qi, cid, q, idx, wv=1, wb=1, strip=True, spkboost=0.0, relative=False):
    v = T[idx] @ (QS[qi] if strip else Q[qi])
    b = bm25_scores(
        [stem(w) for w in toks(strip_names(q["question"], spk[cid]) if strip else q["question"])], docs[cid]
    )
    if relative:
        vn = (v - v.min()) / (v.max() - v.min() + 1e-9)
        bn = b / (b.max() + 1e-9)
        s = wv * vn + wb * bn
    else:
        s = wv / (60 + rank_of(v)) + wb / (60 + rank_of(b)) * (b > 0)
    if spkboost:
        named = [n for n in spk[cid] if re.search(r"\b" + re.escape(n) + r"\b", q["question"])]
        if len(named) == 1:
            s = s + spkboost * np.array([1.0 if tspk[i] == named[0] else 0.0 for i in idx]) * (s.max())
    return s


evaluate("rrf raw", lambda *a: fused(*a, strip=False))
evaluate("rrf stripped", lambda *a: fused(*a))
evaluate("rrf stripped bm25 w.5", lambda *a: fused(*a, wb=0.5))
evaluate("rrf stripped + spk .05", lambda *a: fused(*a, spkboost=0.05))
evaluate("relative stripped", lambda *a: fused(*a, relative=True))
evaluate("relative stripped bm25 .5", lambda *a: fused(*a, relative=True, wb=0.5))
evaluate("relative stripped bm25 .3", lambda *a: fused(*a, relative=True, wb=0.3))
evaluate("relative stripped bm25 .3 spk .05", lambda *a: fused(*a, relative=True, wb=0.3, spkboost=0.05))
evaluate("relative raw bm25 .3", lambda *a: fused(*a, relative=True, wb=0.3, strip=False))
print("---")
evaluate("relative stripped bm25 .5 spk .05", lambda *a: fused(*a, relative=True, wb=0.5, spkboost=0.05))
evaluate("relative stripped bm25 .5 spk .1", lambda *a: fused(*a, relative=True, wb=0.5, spkboost=0.1))
evaluate("relative stripped bm25 .4 spk .05", lambda *a: fused(*a, relative=True, wb=0.4, spkboost=0.05))
evaluate("relative stripped bm25 1.0 spk .05", lambda *a: fused(*a, relative=True, wb=1.0, spkboost=0.05))
