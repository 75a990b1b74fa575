"""Issue 31 item 3: ``kg-neo4j dedupe --dry-run`` on the real Neo4j: the groups as JSON on stdout, the
same groups in the reviewable ``--out`` file, the progress bar on stderr (and none with
``--no-progress``), bad flags refused with one line naming them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg_neo4j.resolution import AUTO_MERGE_THRESHOLD
from support.kg import dedupe, ent, rel, seeded
from support.servers import Neo4jInfo

ENTITIES = [
    ent("Alice Smith", "person", ["works at Acme in Paris"]),
    ent("alice smith", "person", ["works at Acme"]),
    ent("Carol Jones", "person", []),
    ent("carol jones", "person", []),
    ent("Acme", "company", []),
]
RELATIONS = [rel("Alice Smith", "Acme", "works_at"), rel("alice smith", "Acme", "works_at")]


def group_names(report: dict[str, Any]) -> list[set[str]]:
    return [set(g["names"]) for g in report["groups"]]


@pytest.mark.parametrize("progress", [True, False])
async def test_dry_run_lists_and_writes_the_groups(
    progress: bool, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    await seeded(neo4j_info, namespace, ENTITIES, RELATIONS)
    out = tmp_path / "groups.json"
    flags = ["--dry-run", "--threshold", "0.4", "--out", str(out)] + ([] if progress else ["--no-progress"])
    done = dedupe(neo4j_info, namespace, *flags)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == report
    assert report["version"] == 1 and report["namespace"] == namespace and report["threshold"] == 0.4
    # the Smiths share an employer (above the auto-merge bar); the Joneses only a name (0.5)
    assert group_names(report) == [{"Alice Smith", "alice smith"}, {"Carol Jones", "carol jones"}]
    alice, carol = report["groups"]
    assert alice["keep"] == "Alice Smith" and alice["score"] >= AUTO_MERGE_THRESHOLD > carol["score"]
    assert {r["code"] for r in alice["reasons"]} >= {"same_normalised_name", "shared_neighbours"}
    # the bar names its steps on stderr; without it stderr holds only the summary line
    assert ("entities" in done.stderr and "candidates" in done.stderr) == progress
    assert done.stderr.strip().splitlines()[-1] == (
        f"2 group(s) at or above 0.4 in namespace {namespace!r}; written to {out}"
    )


async def test_the_default_threshold_is_the_auto_merge_one(neo4j_info: Neo4jInfo, namespace: str) -> None:
    await seeded(neo4j_info, namespace, ENTITIES, RELATIONS)
    done = dedupe(neo4j_info, namespace, "--dry-run", "--no-progress")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["threshold"] == AUTO_MERGE_THRESHOLD
    assert group_names(report) == [{"Alice Smith", "alice smith"}]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--dry-run", "--threshold", "1.5"], "--threshold"),
        (["--dry-run", "--reviewed", "x.json"], "--reviewed"),
        (["--apply", "--out", "x.json"], "--out"),
        (["--dry-run", "--apply"], "--apply"),
        ([], "--dry-run"),
    ],
)
def test_bad_flags_are_named(flags: list[str], named: str, neo4j_info: Neo4jInfo, namespace: str) -> None:
    done = dedupe(neo4j_info, namespace, *flags)
    assert done.returncode == 2
    assert named in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
