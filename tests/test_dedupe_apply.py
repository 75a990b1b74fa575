"""Issue 31 item 3's ``--apply``: ``kg-neo4j dedupe --apply`` on the real Neo4j merges the groups of a
reviewed file, or find_duplicates' groups at or above the threshold; one transaction per group, a second run
skips what is merged already (resumable), a group that cannot merge is reported and writes nothing, a
progress bar on stderr unless ``--no-progress``; the merges are undoable with unmerge_entities."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.kg import by_name, dedupe, ent, ok, rel, seeded
from support.servers import Neo4jInfo, stdio_session

ENTITIES = [
    ent("Alice Smith", "person", ["works at Acme in Paris"]),
    ent("alice smith", "person", ["works at Acme"]),
    ent("A. Smith", "person", ["plays chess"]),
    ent("Carol Jones", "person", ["likes jazz"]),
    ent("carol jones", "robot", []),
    ent("Acme", "company", []),
]
RELATIONS = [rel("Alice Smith", "Acme", "works_at"), rel("alice smith", "Acme", "works_at")]

#: who the merges of --apply are by (KG_NEO4J_ACTOR): entity_history names it
ACTOR = "dedupe-bot"


async def graph(info: Neo4jInfo, namespace: str) -> dict[str, Any]:
    async with stdio_session(info, "--namespace", namespace, "--embedding-model", "none") as s:
        return dict(await ok(s, "read_graph"))


def reviewed(path: Path, namespace: str, groups: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"version": 1, "namespace": namespace, "threshold": 0.5, "groups": groups}))
    return path


@pytest.mark.parametrize("progress", [True, False])
async def test_apply_a_reviewed_file_then_again(
    progress: bool, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    await seeded(neo4j_info, namespace, ENTITIES, RELATIONS)
    groups = [
        {
            "keep": "Alice Smith",
            "names": ["Alice Smith", "alice smith", "A. Smith"],
            "score": 0.9,
            "reasons": [],
        },
        # another type: refused without force, reported, nothing of it written
        {"keep": "Carol Jones", "names": ["Carol Jones", "carol jones"], "score": 0.5, "reasons": []},
    ]
    path = reviewed(tmp_path / "groups.json", namespace, groups)
    flags = ["--apply", "--reviewed", str(path)] + ([] if progress else ["--no-progress"])
    done = dedupe(neo4j_info, namespace, *flags, actor=ACTOR)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["groups"], report["merged"], report["skipped"], report["failed"]) == (2, 1, 0, 1)
    alice, carol = report["results"]
    assert alice["outcome"] == "merged" and alice["merged"] == ["alice smith", "A. Smith"]
    assert alice["counts"]["relationsCollided"] == 1
    assert carol["outcome"] == "failed" and "force" in carol["reason"]
    assert ("merge" in done.stderr) == progress
    ents = by_name(await graph(neo4j_info, namespace))
    assert ents["Alice Smith"]["observations"] == ["works at Acme in Paris", "works at Acme", "plays chess"]
    assert "alice smith" not in ents and "A. Smith" not in ents and "carol jones" in ents

    again = dedupe(neo4j_info, namespace, *flags, actor=ACTOR)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["merged"], report["skipped"], report["failed"]) == (0, 1, 1)
    assert report["results"][0]["reason"] == "merged already"
    async with stdio_session(neo4j_info, "--namespace", namespace, "--embedding-model", "none") as s:
        history = await s.call_tool("entity_history", {"name": "Alice Smith"})
        merged = [e for e in json.loads(history.content[0].text)["events"] if e["event"] == "merged"]
        assert [(e["detail"]["names"], e["detail"]["by"]) for e in merged] == [
            (["alice smith", "A. Smith"], ACTOR)
        ]
        undone = await s.call_tool("unmerge_entities", {"name": "Alice Smith"})
        assert not undone.is_error, undone.content[0].text
        assert set(by_name(await ok(s, "read_graph"))) == {e["name"] for e in ENTITIES}


async def test_apply_without_a_file_merges_what_scores_at_the_threshold(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    await seeded(neo4j_info, namespace, ENTITIES, RELATIONS)
    dry = dedupe(neo4j_info, namespace, "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stderr
    expected = json.loads(dry.stdout)["groups"]
    assert expected, "the seed holds a group at the default threshold"
    done = dedupe(neo4j_info, namespace, "--apply", "--no-progress", actor=ACTOR)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [(r["keep"], r["outcome"]) for r in report["results"]] == [(g["keep"], "merged") for g in expected]
    ents = by_name(await graph(neo4j_info, namespace))
    for g in expected:
        assert g["keep"] in ents and not set(g["names"]) - {g["keep"]} & set(ents)
