"""Issue 31 leftovers: every read that takes an entity name accepts an alias (a name merged into another
entity) and answers the entity it names, through real MCP sessions (docs/entities.md#reads-by-an-alias):
open_nodes in every profile (and MemoryMesh's open_nodes_graph), traverse_graph's start, list_knowledge's
and find_duplicates' names; reads ``asOf`` a moment before the merge still answer the merged entity as it
was.  Each answer by the alias is compared with the same tool's answer by the kept name (or, before the
merge, with the answer the alias name had then)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from support.kg import ent, session
from support.servers import Neo4jInfo

ALL = ("--tools", "all")
KEPT, ALIAS = "Alice Smith", "A. Smith"


async def call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, f"{tool}({args}) failed: {text}"
    return json.loads(text)


def before(at: str) -> str:
    """A moment just before ``at`` (a merge's moment): every write of an earlier call is at or before it."""
    return (datetime.fromisoformat(at) - timedelta(microseconds=1)).isoformat()


async def seed_and_merge(s: Any) -> tuple[dict[str, Any], str]:
    """Two people merged (A. Smith into Alice Smith; alice smith left as a duplicate of Alice Smith) and two
    knowledge nodes merged (Weak into Strong).  Returns the alias reads of before the merge and its moment."""
    await call(
        s,
        "create_entities",
        {
            "entities": [
                ent(KEPT, "person", ["engineer", "lives in Leeds"]),
                ent(ALIAS, "person", ["plays chess"]),
                ent("alice smith", "person", ["has a cat"]),
                ent("Bob", "person", ["a colleague"]),
                ent("Acme", "company", ["makes anvils"]),
                ent("Leeds", "city", []),
            ]
        },
    )
    await call(
        s,
        "create_relations",
        {
            "relations": [
                {"from": KEPT, "to": "Acme", "relationType": "works_at"},
                {"from": ALIAS, "to": "Bob", "relationType": "knows"},
                {"from": "Bob", "to": "Leeds", "relationType": "lives_in"},
            ]
        },
    )
    for name, trust in (("Strong", "pattern"), ("Weak", "inference")):
        await call(
            s, "store_knowledge", {"name": name, "content": f"{name} rule", "type": "rule", "trust": trust}
        )
    then = {
        "open_nodes": await call(s, "open_nodes", {"names": [ALIAS]}),
        "traverse_graph": await call(s, "traverse_graph", {"start": [ALIAS], "maxDepth": 2}),
    }
    merged = await call(s, "merge_entities", {"into": KEPT, "names": [ALIAS]})
    await call(s, "merge_entities", {"into": "Strong", "names": ["Weak"]})
    return then, str(merged["at"])


def stored(answer: dict[str, Any]) -> dict[str, Any]:
    """list_knowledge's answer without retention (computed at each read's own moment)."""
    return {"knowledge": [{k: v for k, v in i.items() if k != "retention"} for i in answer["knowledge"]]}


# tool, its arguments naming the alias, the same naming the kept entity, the name the answer must hold
CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("open_nodes", {"names": [ALIAS]}, {"names": [KEPT]}, KEPT),
    ("open_nodes", {"names": [ALIAS, "Bob"]}, {"names": [KEPT, "Bob"]}, KEPT),
    ("traverse_graph", {"start": [ALIAS], "maxDepth": 2}, {"start": [KEPT], "maxDepth": 2}, "Leeds"),
    (
        "traverse_graph",
        {"start": [ALIAS, KEPT], "direction": "out"},
        {"start": [KEPT], "direction": "out"},
        "Bob",
    ),
    ("list_knowledge", {"names": ["Weak"]}, {"names": ["Strong"]}, "Strong"),
    (
        "find_duplicates",
        {"names": [ALIAS], "minScore": 0.3},
        {"names": [KEPT], "minScore": 0.3},
        "alice smith",
    ),
]


@pytest.mark.parametrize(
    ("tool", "by_alias", "by_kept", "holds"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
async def test_a_read_by_an_alias_answers_the_kept_entity(
    neo4j_info: Neo4jInfo,
    namespace: str,
    tool: str,
    by_alias: dict[str, Any],
    by_kept: dict[str, Any],
    holds: str,
) -> None:
    async with session("stdio", neo4j_info, namespace, *ALL) as s:
        await seed_and_merge(s)
        got, expected = await call(s, tool, by_alias), await call(s, tool, by_kept)
        if tool == "list_knowledge":
            got, expected = stored(got), stored(expected)
        assert got == expected
        assert holds in json.dumps(got)
        assert ALIAS not in json.dumps(got).replace('"aliases": ["A. Smith"]', "")


# MemoryMesh's open_nodes is open_nodes_graph in the all profile (server/memorymesh.py)
PROFILES = [
    ("reference", "open_nodes"),
    ("default", "open_nodes"),
    ("memorymesh", "open_nodes"),
    ("all", "open_nodes_graph"),
]


@pytest.mark.parametrize(("profile", "tool"), PROFILES)
async def test_open_nodes_by_an_alias_in_every_profile(
    neo4j_info: Neo4jInfo, namespace: str, profile: str, tool: str
) -> None:
    async with session("stdio", neo4j_info, namespace, *ALL) as s:
        await seed_and_merge(s)
    async with session("stdio", neo4j_info, namespace, "--tools", profile) as s:
        got, expected = await call(s, tool, {"names": [ALIAS]}), await call(s, tool, {"names": [KEPT]})
        if "data" in got:  # MemoryMesh's envelope: the data, beside what was asked and when
            got, expected = got["data"], expected["data"]
        assert got == expected
        assert KEPT in [n["name"] for n in got.get("entities", got.get("nodes", []))]


@pytest.mark.parametrize("tool", ["open_nodes", "traverse_graph"])
async def test_as_of_before_the_merge_answers_the_merged_entity_as_it_was(
    neo4j_info: Neo4jInfo, namespace: str, tool: str
) -> None:
    async with session("stdio", neo4j_info, namespace, *ALL) as s:
        then, at = await seed_and_merge(s)
        args: dict[str, Any] = (
            {"names": [ALIAS]} if tool == "open_nodes" else {"start": [ALIAS], "maxDepth": 2}
        )
        old = await call(s, tool, {**args, "asOf": before(at)})
        assert old == then[tool]
        assert ALIAS in json.dumps(old) and old != await call(s, tool, args)
        # at the merge's moment the alias already names the kept entity
        kept = {"names": [KEPT]} if tool == "open_nodes" else {"start": [KEPT], "maxDepth": 2}
        assert await call(s, tool, {**args, "asOf": at}) == await call(s, tool, {**kept, "asOf": at})


async def test_list_knowledge_with_expired_lists_the_merged_node_and_the_kept_one(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with session("stdio", neo4j_info, namespace, *ALL) as s:
        await seed_and_merge(s)
        items = (await call(s, "list_knowledge", {"names": ["Weak"], "includeExpired": True}))["knowledge"]
        assert sorted(i["name"] for i in items) == ["Strong", "Weak"]
        both = (await call(s, "list_knowledge", {"names": ["Weak", "Strong"], "includeExpired": True}))[
            "knowledge"
        ]
        assert stored({"knowledge": items}) == stored({"knowledge": both})
