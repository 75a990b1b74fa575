"""Every benchmark runs at its smoke size (``--tiny``) against the test Neo4j, so that none rots.

Each runs as users run it (``python -m benchmarks.bench_x --tiny``, its servers the installed
``kg-neo4j``), in namespaces of its own that it deletes, and writes its results file: the test checks
the file's shape and tags, never a figure (speed lives in the benchmarks, not in tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.servers import Neo4jInfo

ROOT = Path(__file__).resolve().parent.parent

#: (module, arguments before --tiny): every benchmarks/bench_*.py, each of its subcommands once.
BENCHMARKS = [
    ("bench_peers", []),
    ("bench_search", []),
    ("bench_recall", ["--dataset", "benchmarks/recall_eval/v2/dev.json"]),
    ("bench_duplicates", ["pairs"]),
    ("bench_duplicates", ["scale"]),
    ("bench_duplicates", ["typos"]),
    ("bench_duplicates", ["hint"]),
    ("bench_hooks", []),
    ("bench_scale", []),
    ("bench_realtalk", []),
]


@pytest.mark.unit
def test_every_benchmark_is_smoke_run() -> None:
    modules = {p.stem for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert modules == {m for m, _ in BENCHMARKS}


# The benchmarks never branch on the Neo4j line and this checks only their results files' shape; the store
# code they call runs on both lines in the rest of the suite.
@pytest.mark.line_independent
@pytest.mark.parametrize(
    ("module", "args"), BENCHMARKS, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_benchmark_runs_at_its_tiny_size(
    neo4j_info: Neo4jInfo, tmp_path: Path, module: str, args: list[str]
) -> None:
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(
        NEO4J_URI=neo4j_info.uri,
        NEO4J_USERNAME=neo4j_info.username,
        NEO4J_PASSWORD=neo4j_info.password,
        NEO4J_DATABASE=neo4j_info.database,
        KG_NEO4J_HOME=str(tmp_path / "home"),
    )
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args, "--tiny", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["benchmark"].split("-")[0] == module.removeprefix("bench_")
    assert result["command"].startswith(f"python -m benchmarks.{module} ")
    tags = result["tags"]
    assert tags["kg_neo4j"] and tags["commit"] and tags["neo4j"]
    assert len(tags["loadavg"]) == 3 and len(tags["loadavg_at_start"]) == 3
    assert result["tables"], done.stdout
    for table in result["tables"]:
        assert table["rows"], table["key"]
        assert all(len(row) == len(table["headers"]) for row in table["rows"]), table["key"]
