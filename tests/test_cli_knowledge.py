"""``kg-neo4j maintain`` and ``kg-neo4j import-skills`` as a user runs them (subprocesses on the
test Neo4j; the CLI uses the system clock, so the graph is prepared relative to now)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from neo4j import AsyncDriver
from test_maintenance import dump, edges, knowledge, node, seed

from support.servers import KG, Neo4jInfo, server_env


def kg(info: Neo4jInfo, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG, *args], env=server_env(info), capture_output=True, text=True, timeout=timeout)


async def test_maintain_dry_run_then_apply(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    db = neo4j_info.database
    now = datetime.now(UTC)
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("decayed", trust="inference", created_at=now - timedelta(days=400)),
            knowledge("a", created_at=now - timedelta(days=1)),
            knowledge("b", created_at=now - timedelta(days=1)),
            knowledge("lonely", created_at=now - timedelta(days=1)),
        ],
    )
    await edges(
        driver,
        db,
        namespace,
        [{"from": "a", "to": "b", "type": "implies", "weight": 0.1, "at": now - timedelta(days=1)}],
    )
    before = await dump(driver, db, namespace)
    dry = kg(neo4j_info, "maintain", "--namespace", namespace, "--no-progress")
    assert dry.returncode == 0, dry.stderr
    report: dict[str, Any] = json.loads(dry.stdout)
    assert await dump(driver, db, namespace) == before
    assert report["dryRun"] is True and report["namespace"] == namespace
    assert list(report["actions"]) == ["prune", "merge", "validate", "orphans"]
    assert report["actions"]["prune"]["expire"] == {"count": 1, "names": ["decayed"]}
    assert report["actions"]["prune"]["weakEdges"]["count"] == 1
    assert report["actions"]["orphans"] == {"count": 2, "names": ["decayed", "lonely"]}
    assert "Dry run: nothing was changed" in dry.stderr  # the summary, for a human

    applied = kg(
        neo4j_info,
        "maintain",
        "--namespace",
        namespace,
        "--apply",
        "--actions",
        "prune,orphans",
        "--batch-size",
        "1",
        "--no-progress",
    )
    assert applied.returncode == 0, applied.stderr
    report = json.loads(applied.stdout)
    assert report["dryRun"] is False and list(report["actions"]) == ["prune", "orphans"]
    assert report["actions"]["prune"]["weakEdges"]["closed"] == 1
    assert "ExpiredKnowledge" in (await node(driver, db, namespace, "decayed"))["labels"]
    assert report["actions"]["orphans"] == {
        "count": 3,
        "names": ["a", "b", "lonely"],
    }  # the weak edge is closed

    after = await dump(driver, db, namespace, meta=False)
    again = kg(
        neo4j_info, "maintain", "--namespace", namespace, "--apply", "--actions", "prune", "--no-progress"
    )
    assert again.returncode == 0, again.stderr
    prune = json.loads(again.stdout)["actions"]["prune"]
    assert prune["expire"]["count"] == 0 and prune["weakEdges"]["count"] == 0
    assert await dump(driver, db, namespace, meta=False) == after


def test_maintain_progress_bar_goes_to_stderr(neo4j_info: Neo4jInfo, namespace: str) -> None:
    proc = kg(neo4j_info, "maintain", "--namespace", namespace, "--actions", "prune")
    assert proc.returncode == 0, proc.stderr
    assert "prune: decay" in proc.stderr
    assert json.loads(proc.stdout)["actions"]["prune"]["scanned"] == 0


def test_maintain_refuses_unknown_actions(neo4j_info: Neo4jInfo) -> None:
    proc = kg(neo4j_info, "maintain", "--actions", "prune,defrag")
    assert proc.returncode == 2 and "prune, merge, validate, orphans; got 'prune,defrag'" in proc.stderr
    proc = kg(neo4j_info, "maintain", "--batch-size", "0")
    assert proc.returncode == 2


async def test_import_skills(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    (tmp_path / "deploy.md").write_text(
        "# Deploy\n\n## Steps\n\n1. Run the migrations.\n2. Deploy.\n", encoding="utf-8"
    )
    proc = kg(
        neo4j_info,
        "import-skills",
        str(tmp_path),
        "--namespace",
        namespace,
        "--trust",
        "pattern",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["namespace"] == namespace and report["stored"] >= 1 and report["rejected"] == 0
    records, _, _ = await driver.execute_query(
        "MATCH (k:Knowledge {namespace: $ns}) RETURN k.trust AS trust, k.source AS source",
        ns=namespace,
        database_=neo4j_info.database,
    )
    assert records and all(r["trust"] == "pattern" and "deploy.md" in r["source"] for r in records)
    bad = kg(
        neo4j_info,
        "import-skills",
        str(tmp_path),
        "--namespace",
        namespace,
        "--trust",
        "gospel",
        "--no-progress",
    )
    assert bad.returncode == 2 and "trust" in bad.stderr
