"""The packaged model's weights as float16 (upcast to float32 at load) against float32, on v2 frozen.

Two measures (issue 36):

* offline, exact: every turn and question of each v2 frozen conversation encoded by the numpy runtime
  with each set of weights, and each question's brute-force cosine top-10 over its conversation's
  turns (compared as (speaker, text)); beside it, float32 against float32 with the turns encoded one
  session at a time (as the server writes them), the floor that batching alone gives;
* through MCP: two or more ``bench_recall.py --channels hybrid --json`` outputs (their ``hybrid_hits``),
  compared pairwise (``--runs LABEL=FILE ...``).

    .venv/bin/python benchmarks/bench_float16.py --float32 DIR --float16 DIR \\
        [--runs f32=a.json f32b=b.json f16=c.json] [--json out.json]

DIR is a model directory (the packaged one, or a copy with the other weights, e.g. from
tests/data/embeddings/make_reference.py).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from kg_neo4j.embeddings.numpy_encoder import NumpyEncoder
from kg_neo4j.embeddings.numpy_support import check_model

HERE = Path(__file__).resolve().parent
FROZEN = HERE / "recall_eval" / "v2" / "frozen.json"


def top10(q: Any, t: Any) -> Any:
    return np.argsort(-(q @ t.T), axis=1, kind="stable")[:, :10]


def offline(float32: Path, float16: Path) -> dict[str, Any]:
    data = json.loads(FROZEN.read_text())
    f32, f16 = NumpyEncoder(check_model(float32)), NumpyEncoder(check_model(float16))
    same = {"float16": 0, "float32 per session": 0}
    same_set = dict.fromkeys(same, 0)
    cos: list[Any] = []
    total = 0
    for conv in data["conversations"]:
        keys = [(t["speaker"], t["text"]) for s in conv["sessions"] for t in s["turns"]]
        texts = [k[1] for k in keys]
        questions = [q["question"] for q in conv["questions"]]
        base_t, base_q = f32.encode(texts), f32.encode(questions)
        half_t, half_q = f16.encode(texts), f16.encode(questions)
        rebatched = np.vstack([f32.encode([t["text"] for t in s["turns"]]) for s in conv["sessions"]])
        cos.append((np.vstack([base_t, base_q]) * np.vstack([half_t, half_q])).sum(axis=1))
        base = top10(base_q, base_t)
        for label, other in (
            ("float16", top10(half_q, half_t)),
            ("float32 per session", top10(base_q, rebatched)),
        ):
            for a, b in zip(base, other, strict=True):
                same[label] += [keys[i] for i in a] == [keys[i] for i in b]
                same_set[label] += {keys[i] for i in a} == {keys[i] for i in b}
        total += len(questions)
        print(f"{conv['id']}: {len(texts)} turns, {len(questions)} questions", file=sys.stderr)
    c = np.concatenate(cos)
    return {
        "questions": total,
        "cosine_float16_float32": {"texts": len(c), "min": float(c.min()), "mean": float(c.mean())},
        "identical_top10_vs_float32": {k: v / total for k, v in same.items()},
        "same_top10_set_vs_float32": {k: v / total for k, v in same_set.items()},
    }


def mcp(runs: dict[str, Path]) -> dict[str, Any]:
    rows = {label: {r["id"]: r for r in json.loads(p.read_text())["rows"]} for label, p in runs.items()}
    out: dict[str, Any] = {"runs": {}, "identical_top10": {}}
    for label, by_id in rows.items():
        n = len(by_id)
        out["runs"][label] = {
            "hit@10": sum(1 for r in by_id.values() if r["hybrid"]) / n,
            "MRR": sum(1 / r["hybrid"] for r in by_id.values() if r["hybrid"]) / n,
        }
    for a, b in itertools.combinations(rows, 2):
        ids = rows[a].keys() & rows[b].keys()
        same = sum(1 for i in ids if rows[a][i]["hybrid_hits"] == rows[b][i]["hybrid_hits"])
        out["identical_top10"][f"{a} vs {b}"] = same / len(ids)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--float32", type=Path, required=True, help="model directory with float32 weights")
    ap.add_argument("--float16", type=Path, required=True, help="the same model with float16 weights")
    ap.add_argument("--runs", nargs="*", default=[], help="LABEL=bench_recall.json (hybrid top-10 lists)")
    ap.add_argument("--json", dest="json_out", type=Path)
    args = ap.parse_args()
    result: dict[str, Any] = {"offline": offline(args.float32, args.float16)}
    if args.runs:
        result["mcp"] = mcp({r.split("=", 1)[0]: Path(r.split("=", 1)[1]) for r in args.runs})
    text = json.dumps(result, indent=1)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
