"""Could a learned combination of cheap per-candidate features beat the hand-set turn-context re-rank?

Dev split only (``v2/dev.json``), offline, over the candidates ``experiments.py fetch`` cached and the
MiniLM embeddings ``experiments.py eval --cache`` stored.  For each question, every observation among
the fused top 50 gets features the product could compute at query time without a new model:

* ``fused``: its fused score divided by the question's best (the product's ranking before the re-rank);
* ``own`` / ``prev`` / ``next``: the question's cosine with the turn, the turn before and the turn after;
* ``avgprev`` / ``avgnext`` / ``avgboth``: the question's cosine with the turn's vector averaged with its
  neighbours' (``avgprev`` is what the shipped re-rank uses, docs/recall.md#recall-search_memory);
* ``rank``: 1 / log2(position + 1) in the fused list; ``prevsame``: cosine with the same speaker's previous turn;
* ``isq``: the turn ends with a question mark; ``len``: its length (capped at 300 characters) / 300.

A linear score over a feature set is fitted by softmax cross-entropy over each question's candidates
(the evidence turns as targets, L2 penalty), and judged **leave one conversation out**: fitted on five
conversations, scored on the sixth, six times.  ``isq`` and ``len`` describe how this dev set was made
(none of its evidence turns is a question; evidence turns are longer than the rest) rather than how
people talk, so a gain from them says more about the generator than about recall: see
benchmarks/recall_eval/README.md "What a learned re-rank found".

    .venv/bin/python benchmarks/recall_eval/learned_weights.py --cands /path/cands.json --cache /path/emb.npz
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_recall import _rank  # noqa: E402
from experiments import DEV, Conv  # noqa: E402

FEATURES = ["fused", "own", "prev", "next", "avgprev", "avgnext", "avgboth", "rank", "prevsame", "isq", "len"]
SETS = {
    "fused + avgprev (the shipped form, weights learned)": ["fused", "avgprev"],
    "fused, own, prev, avgprev": ["fused", "own", "prev", "avgprev"],
    "+ next, avgnext": ["fused", "own", "prev", "next", "avgprev", "avgnext"],
    "+ avgboth, rank, prevsame": [
        "fused",
        "own",
        "prev",
        "next",
        "avgprev",
        "avgnext",
        "avgboth",
        "rank",
        "prevsame",
    ],
    "fused, own, prev, avgprev + len (generator artefact)": ["fused", "own", "prev", "avgprev", "len"],
    "fused, own, prev, avgprev + isq (generator artefact)": ["fused", "own", "prev", "avgprev", "isq"],
    "all": FEATURES,
}
CATS = ["single-hop", "multi-hop", "temporal", "open-domain", "all"]
DEPTH = 50


def _cos(q: Any, *vs: Any) -> float:
    s = np.sum(vs, axis=0)
    return float(q @ s / np.linalg.norm(s))


def questions(cands: Path, cache: Path) -> list[dict[str, Any]]:
    data = json.loads(DEV.read_text())
    convs = {c["id"]: Conv(c) for c in data["conversations"]}
    emb = dict(np.load(cache))
    out = []
    for row in json.loads(cands.read_text())["rows"]:
        conv = convs[row["conv"]]
        q, ev = conv.questions[row["id"]]
        turns = emb[f"minilm:{conv.id}:plain"]
        qv = emb[f"minilm:{conv.id}:q"][list(conv.questions).index(row["id"])]
        hits = row["hits50"][:DEPTH]
        top = max(h[2] for h in hits)
        X, y, keys = [], [], []
        for pos, h in enumerate(hits):
            i = conv.index.get((h[0], h[1]))
            if i is None:  # an entity hit: the re-rank leaves it alone
                continue
            v = turns[i]
            p = turns[i - 1] if i > 0 else None
            n = turns[i + 1] if i + 1 < len(turns) else None
            own = float(qv @ v)
            same = conv.prev_same[i]
            text = conv.turns[i][1]
            X.append(
                [
                    h[2] / top,
                    own,
                    float(qv @ p) if p is not None else own,
                    float(qv @ n) if n is not None else own,
                    _cos(qv, v, p) if p is not None else own,
                    _cos(qv, v, n) if n is not None else own,
                    _cos(qv, *[x for x in (v, p, n) if x is not None]),
                    1 / np.log2(pos + 2),
                    float(qv @ turns[same]) if same is not None else own,
                    float(text.rstrip().endswith("?")),
                    min(len(text), 300) / 300,
                ]
            )
            y.append(1.0 if (h[0], h[1]) in ev else 0.0)
            keys.append((h[0], h[1]))
        out.append(
            {
                "conv": conv.id,
                "cat": q["category"],
                "X": np.array(X),
                "y": np.array(y),
                "keys": keys,
                "ev": ev,
            }
        )
    return out


def fit(qs: list[dict[str, Any]], cols: list[int], l2: float) -> Any:
    qs = [d for d in qs if d["y"].sum() > 0]

    def loss(w: Any) -> tuple[float, Any]:
        total, grad = 0.0, np.zeros_like(w)
        for d in qs:
            X = d["X"][:, cols]
            s = X @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            t = d["y"] / d["y"].sum()
            total -= float(t @ np.log(p + 1e-12))
            grad -= X.T @ (t - p)
        return total / len(qs) + l2 * float(w @ w), grad / len(qs) + 2 * l2 * w

    return minimize(loss, np.zeros(len(cols)), jac=True, method="L-BFGS-B").x


def score(scored: list[tuple[dict[str, Any], Any]]) -> dict[str, tuple[float, float]]:
    res: dict[str, list[tuple[int, float]]] = {}
    for d, s in scored:
        order = [d["keys"][j] for j in np.argsort(-s, kind="stable")]
        r = _rank(order[:10], d["ev"])
        for c in (d["cat"], "all"):
            res.setdefault(c, []).append((1 if r else 0, 1 / r if r else 0.0))
    return {c: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v]))) for c, v in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cands", required=True, type=Path)
    ap.add_argument("--cache", required=True, type=Path)
    ap.add_argument("--l2", type=float, default=1e-3)
    a = ap.parse_args()
    qs = questions(a.cands, a.cache)
    col = {f: i for i, f in enumerate(FEATURES)}
    convs = sorted({d["conv"] for d in qs})
    print(
        f"dev split, {len(qs)} questions, re-rank depth {DEPTH}; cells: hit@10 / MRR; "
        f"leave one conversation out, L2 {a.l2:g}\n"
    )
    print("| features | " + " | ".join(CATS) + " | weights (fitted on all six) |")
    print("| --- |" + " --- |" * (len(CATS) + 1))
    shipped = score([(d, d["X"][:, col["fused"]] + 0.5 * _minmax(d["X"][:, col["avgprev"]])) for d in qs])
    print(
        "| shipped: fused + 0.5 x min-max(avgprev), not fitted | "
        + " | ".join(f"{shipped[c][0]:.3f} / {shipped[c][1]:.3f}" for c in CATS)
        + " | |"
    )
    for name, feats in SETS.items():
        cols = [col[f] for f in feats]
        scored = []
        for held in convs:
            w = fit([d for d in qs if d["conv"] != held], cols, a.l2)
            scored += [(d, d["X"][:, cols] @ w) for d in qs if d["conv"] == held]
        res = score(scored)
        w_all = fit(qs, cols, a.l2)
        print(
            f"| {name} | "
            + " | ".join(f"{res[c][0]:.3f} / {res[c][1]:.3f}" for c in CATS)
            + " | "
            + ", ".join(f"{f} {x:.2f}" for f, x in zip(feats, w_all, strict=True))
            + " |"
        )
    ev = [e for d in qs for e in d["ev"]]
    print(f"\nevidence turns that end with '?': {sum(e[1].rstrip().endswith('?') for e in ev)} of {len(ev)}")


def _minmax(x: Any) -> Any:
    return (x - x.min()) / (x.max() - x.min() + 1e-9)


if __name__ == "__main__":
    main()
