"""The recall evaluation sets: the v2 files are the seeded generator's output, and the checker accepts the
shipped sets and rejects broken ones (benchmarks/recall_eval/README.md).  Pure data, no database: seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT / "benchmarks" / "recall_eval"
V2 = EVAL / "v2"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )


def test_v2_files_are_the_generators_output() -> None:
    done = _run("-m", "benchmarks.recall_eval.v2.generate", "--check")
    assert done.returncode == 0, done.stderr


def test_checker_accepts_v1_and_both_v2_splits() -> None:
    v1 = _run(str(EVAL / "check_dataset.py"))
    assert v1.returncode == 0, v1.stdout
    v2 = _run(str(EVAL / "check_dataset.py"), str(V2 / "dev.json"), str(V2 / "frozen.json"))
    assert v2.returncode == 0, v2.stdout
    assert "no shared speaker or question" in v2.stdout
    frozen = json.loads((V2 / "frozen.json").read_text(encoding="utf-8"))
    assert sum(len(c["questions"]) for c in frozen["conversations"]) >= 500
    assert min(sum(len(s["turns"]) for s in c["sessions"]) for c in frozen["conversations"]) >= 500


def _broken(tmp_path: Path, data: dict[str, Any], name: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    done = _run(str(EVAL / "check_dataset.py"), str(path))
    assert done.returncode == 1
    return done.stdout


def test_checker_rejects_what_would_make_a_v2_question_unfair(tmp_path: Path) -> None:
    data = json.loads((V2 / "frozen.json").read_text(encoding="utf-8"))
    conv = data["conversations"][0]
    turns = {t["id"]: t for s in conv["sessions"] for t in s["turns"]}
    single = next(q for q in conv["questions"] if q["category"] == "single-hop")
    multi = next(q for q in conv["questions"] if q["category"] == "multi-hop")
    # the evidence text said again by the same speaker (a hit on either copy could not be told apart)
    ev = turns[single["evidence"][0]]
    other = next(t for t in turns.values() if t["speaker"] == ev["speaker"] and t["id"] != ev["id"])
    other["text"] = ev["text"]
    # multi-hop evidence from one session, a question without its answer, a category of v1
    multi["evidence"] = [multi["evidence"][0]]
    rest = [q for q in conv["questions"] if q is not single and q is not multi]
    del rest[0]["answer"]
    rest[1]["category"] = "paraphrase"
    out = _broken(tmp_path, data, "frozen.json")
    assert f"{single['id']}: evidence text said twice by its speaker" in out
    assert f"{multi['id']}: multi-hop evidence from one session" in out
    assert f"{rest[0]['id']}: no answer" in out
    assert f"{rest[1]['id']}: unknown category 'paraphrase'" in out


def test_checker_rejects_a_short_frozen_split(tmp_path: Path) -> None:
    data = json.loads((V2 / "frozen.json").read_text(encoding="utf-8"))
    data["conversations"] = data["conversations"][:2]
    conv = data["conversations"][1]
    conv["sessions"] = conv["sessions"][:10]
    kept = {t["id"] for s in conv["sessions"] for t in s["turns"]}
    conv["questions"] = [q for q in conv["questions"] if set(q["evidence"]) <= kept]
    out = _broken(tmp_path, data, "short.json")
    assert "questions (< 500)" in out
    assert f"{conv['id']}: " in out and "turns (< 500)" in out
