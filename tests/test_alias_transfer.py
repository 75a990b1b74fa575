"""``kg-neo4j export --format full`` carries each kept entity's aliases and ``kg-neo4j import`` restores them
(docs/graph-model.md#merged-entities-and-aliases): after the round trip an alias answers the kept entity in
every read by name, as in the namespace exported, through real MCP sessions; a second import adds nothing;
a file without aliases (an export of before merges) imports as before."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support.kg import ent, session
from support.servers import KG, Neo4jInfo, server_env

ALL = ("--tools", "all")
KEPT, ALIASES = "Alice Smith", ["A. Smith", "alice smith"]
#: reads by name (docs/entities.md#reads-by-an-alias), each asked with the first alias
READS: list[tuple[str, dict[str, Any]]] = [
    ("open_nodes", {"names": [ALIASES[0], "Bob"]}),
    ("search_nodes", {"query": "a. smith"}),
    ("traverse_graph", {"start": [ALIASES[0]], "maxDepth": 2}),
    ("read_graph", {}),
]


async def call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, f"{tool}({args}) failed: {text}"
    return json.loads(text)


def cli(info: Neo4jInfo, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [KG, *args, "--no-progress"], env=server_env(info), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def node_lines(path: Path) -> list[dict[str, Any]]:
    return [o for o in map(json.loads, path.read_text().splitlines()) if o.get("type") == "node"]


async def seed(s: Any) -> None:
    await call(
        s,
        "create_entities",
        {
            "entities": [
                ent(KEPT, "person", ["engineer"]),
                ent(ALIASES[0], "person", ["plays chess"]),
                ent(ALIASES[1], "person", ["has a cat"]),
                ent("Bob", "person", []),
            ]
        },
    )
    await call(
        s, "create_relations", {"relations": [{"from": ALIASES[0], "to": "Bob", "relationType": "knows"}]}
    )
    await call(s, "merge_entities", {"into": KEPT, "names": ALIASES})


@pytest.mark.parametrize("with_aliases", [True, False], ids=["aliases", "old-file"])
async def test_export_full_carries_aliases_and_import_restores_them(
    neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path, with_aliases: bool
) -> None:
    async with session("stdio", neo4j_info, namespace, *ALL) as s:
        await seed(s)
        there = [await call(s, t, a) for t, a in READS]
    out = tmp_path / "graph.full.jsonl"
    cli(neo4j_info, "export", str(out), "--format", "full", "--namespace", namespace)
    kept = next(n for n in node_lines(out) if n["name"] == KEPT)
    assert kept["properties"]["aliases"] == ALIASES and len(kept["properties"]["alias_at"]) == len(ALIASES)
    if not with_aliases:  # a file of a kg-neo4j that did not carry them
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        for o in lines:
            for key in ("aliases", "alias_at"):
                o.get("properties", {}).pop(key, None)
        out.write_text("".join(json.dumps(o) + "\n" for o in lines))

    copy = f"{namespace}-copy"
    report = cli(neo4j_info, "import", str(out), "--namespace", copy)
    assert report["rejected"] == 0
    async with session("stdio", neo4j_info, copy, *ALL) as s:
        here = [await call(s, t, a) for t, a in READS]
        if with_aliases:
            assert here == there  # every read by an alias answers as in the namespace exported
            assert (await call(s, "open_nodes", {"names": [ALIASES[1]]}))["entities"][0]["aliases"] == ALIASES
            # the merge itself stayed behind: nothing to undo, and an alias is still no name to merge
            assert (await s.call_tool("unmerge_entities", {"name": KEPT})).is_error
        else:
            assert here[0]["entities"] == [e for e in there[0]["entities"] if e["name"] == "Bob"]
            assert here[3] == there[3]  # the graph itself came as before
        # a second import adds nothing
        again = cli(neo4j_info, "import", str(out), "--namespace", copy)
        assert again["entities"]["added"] == 0 and again["relations"]["added"] == 0
        assert [await call(s, t, a) for t, a in READS] == here
    out2 = tmp_path / "again.full.jsonl"
    cli(neo4j_info, "export", str(out2), "--format", "full", "--namespace", copy)
    assert node_lines(out2) == node_lines(out)
