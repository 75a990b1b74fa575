"""MemoryMesh tools (docs/memorymesh.md#behavioural-tests) through a real MCP client session on a real Neo4j:
schema-generated tools, the static tools, all-or-nothing calls, and the cross-dialect test
(written through one dialect, read through the other, both ways)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kg_neo4j.schemas import default_schemas_dir
from support.kg import rel_keys, session, text_of


async def mm(s: Any, tool: str, args: dict[str, Any]) -> Any:
    """Call a MemoryMesh tool; assert success and the answer of
    docs/memorymesh.md#answers-and-errors; return ``data``."""
    result = await s.call_tool(tool, args)
    text = text_of(result)
    assert not result.is_error, f"{tool}({args!r}) failed: {text}"
    answer = json.loads(text)
    assert set(answer) == {"data", "actionTaken", "timestamp"}, answer
    assert result.structured_content == answer
    return answer["data"]


async def mm_err(s: Any, tool: str, args: dict[str, Any]) -> str:
    result = await s.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error, f"{tool}({args!r}) should have failed: {text}"
    return text


async def ref(s: Any, tool: str, args: dict[str, Any] | None = None) -> Any:
    result = await s.call_tool(tool, args or {})
    text = text_of(result)
    assert not result.is_error, f"{tool} failed: {text}"
    return json.loads(text)


def edges(data: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    return sorted((e["from"], e["to"], e["edgeType"], e["weight"]) for e in data["edges"])


def nodes(data: dict[str, Any]) -> list[str]:
    return [n["name"] for n in data["nodes"]]


GANDALF = {"name": "Gandalf", "role": "Wizard", "status": "Active"}


async def test_generated_tools(transport: str, neo4j_info: Any, namespace: str) -> None:
    async with session(transport, neo4j_info, namespace, "--tools", "memorymesh") as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert {"add_npc", "update_npc", "delete_npc"} <= set(listed)
        add_schema = listed["add_npc"].input_schema
        assert add_schema["required"] == ["npc"]
        assert add_schema["properties"]["npc"]["required"] == ["name", "role", "status"]
        assert add_schema["properties"]["npc"]["properties"]["role"]["enum"][:2] == ["Warrior", "Wizard"]
        assert listed["update_npc"].input_schema["properties"]["npc"]["required"] == ["name"]

        # -- 14.2 create node via schema tool
        data = await mm(s, "add_npc", {"npc": GANDALF})
        assert data == {
            "nodes": [{"name": "Gandalf", "nodeType": "npc", "metadata": ["Role: Wizard", "Status: Active"]}],
            "edges": [],
        }
        graph = await mm(s, "read_graph", {})
        assert graph["nodes"] == data["nodes"] and graph["edges"] == []

        # -- 14.2 create node with a relationship property (target missing: a placeholder, listed as no node)
        data = await mm(
            s,
            "add_npc",
            {
                "npc": {
                    "name": "Frodo",
                    "role": "Peasant",
                    "status": "Active",
                    "currentLocation": "Rivendell",
                    "traits": ["brave", "small"],
                }
            },
        )
        assert data["nodes"][0]["metadata"] == [
            "Role: Peasant",
            "Status: Active",
            "Current Location: Rivendell",
            "Traits: brave, small",
        ]
        assert edges(data) == [("Frodo", "Rivendell", "located_in", 1.0)]
        graph = await mm(s, "read_graph", {})
        assert nodes(graph) == ["Frodo", "Gandalf"]
        assert edges(graph) == [("Frodo", "Rivendell", "located_in", 1.0)]
        # the location is added later: the placeholder becomes the node, the edge stays
        await mm(s, "add_location", {"location": {"name": "Rivendell", "atmosphere": "Peaceful"}})
        await mm(s, "add_location", {"location": {"name": "Mordor", "atmosphere": "Grim"}})
        opened = await mm(s, "open_nodes", {"names": ["Frodo"]})
        assert nodes(opened) == ["Frodo", "Rivendell"]

        # -- 14.2 update via schema tool: old edge closed, new one created, metadata replaced in place
        data = await mm(s, "update_npc", {"npc": {"name": "Frodo", "currentLocation": "Mordor"}})
        assert data["nodes"][0]["metadata"] == [
            "Role: Peasant",
            "Status: Active",
            "Current Location: Mordor",
            "Traits: brave, small",
        ]
        assert edges(data) == [("Frodo", "Mordor", "located_in", 1.0)]
        assert [(e["to"], e["edgeType"]) for e in data["closedEdges"]] == [("Rivendell", "located_in")]
        graph = await mm(s, "read_graph", {})
        assert edges(graph) == [("Frodo", "Mordor", "located_in", 1.0)]
        assert [n for n in graph["nodes"] if n["name"] == "Frodo"][0]["metadata"][
            2
        ] == "Current Location: Mordor"

        # -- 14.2 enum validation: an error, nothing written
        msg = await mm_err(
            s,
            "add_npc",
            {"npc": {"name": "Smaug", "role": "Dragon", "status": "Active", "currentLocation": "Erebor"}},
        )
        assert "npc.role" in msg and "'Dragon' is not one of the allowed values" in msg
        msg = await mm_err(s, "update_npc", {"npc": {"name": "Frodo", "status": "Asleep"}})
        assert "npc.status" in msg
        msg = await mm_err(s, "add_npc", {"npc": {"name": "Sam", "role": "Peasant"}})
        assert "npc.status is required" in msg
        msg = await mm_err(s, "add_npc", {"name": "Sam", "role": "Peasant", "status": "Active"})
        assert "missing required argument 'npc'" in msg
        msg = await mm_err(s, "add_npc", {"npc": GANDALF})
        assert "Node 'Gandalf' already exists" in msg
        msg = await mm_err(s, "update_npc", {"npc": {"name": "Rivendell", "status": "Active"}})
        assert "'Rivendell' is a location, not a npc" in msg
        graph = await mm(s, "read_graph", {})
        assert nodes(graph) == ["Frodo", "Gandalf", "Mordor", "Rivendell"]
        assert edges(graph) == [("Frodo", "Mordor", "located_in", 1.0)]
        assert [n for n in graph["nodes"] if n["name"] == "Frodo"][0]["metadata"][1] == "Status: Active"

        # -- 14.2 delete via schema tool: node and its edges go
        msg = await mm_err(s, "delete_npc", {"npc": {"name": "Mordor"}})
        assert "not a npc" in msg
        data = await mm(s, "delete_npc", {"npc": {"name": "Frodo"}})
        assert data == {"name": "Frodo", "nodeType": "npc"}
        graph = await mm(s, "read_graph", {})
        assert nodes(graph) == ["Gandalf", "Mordor", "Rivendell"]
        assert graph["edges"] == []
        assert "not found" in await mm_err(s, "delete_npc", {"npc": {"name": "Frodo"}})


async def test_static_tools(neo4j_info: Any, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        data = await mm(
            s,
            "add_nodes",
            {
                "nodes": [
                    {"name": "A", "nodeType": "person", "metadata": ["Likes tea"]},
                    {"name": "B", "nodeType": "person", "metadata": []},
                    {"name": "C", "nodeType": "person", "metadata": []},
                ]
            },
        )
        assert nodes(data) == ["A", "B", "C"]
        assert "already exists" in await mm_err(
            s, "add_nodes", {"nodes": [{"name": "A", "nodeType": "x", "metadata": []}]}
        )

        # -- 14.5 default weight 1.0, range checked, duplicates and missing ends rejected
        data = await mm(
            s,
            "add_edges",
            {
                "edges": [
                    {"from": "A", "to": "B", "edgeType": "knows"},
                    {"from": "B", "to": "C", "edgeType": "knows", "weight": 0.8},
                ]
            },
        )
        assert edges(data) == [("A", "B", "knows", 1.0), ("B", "C", "knows", 0.8)]
        msg = await mm_err(
            s, "add_edges", {"edges": [{"from": "A", "to": "C", "edgeType": "knows", "weight": 1.5}]}
        )
        assert "weight" in msg
        msg = await mm_err(s, "add_edges", {"edges": [{"from": "A", "to": "B", "edgeType": "knows"}]})
        assert "already exists" in msg
        msg = await mm_err(s, "add_edges", {"edges": [{"from": "A", "to": "Z", "edgeType": "knows"}]})
        assert "Node 'Z' not found" in msg

        # -- 14.5 averaging: (0.8 + 0.6) / 2 = 0.7
        data = await mm(
            s, "update_edges", {"edges": [{"from": "B", "to": "C", "edgeType": "knows", "weight": 0.6}]}
        )
        assert data["edges"][0]["weight"] == 0.7
        assert "not" in await mm_err(
            s, "update_edges", {"edges": [{"from": "C", "to": "B", "edgeType": "knows", "weight": 0.6}]}
        )

        # -- 14.3 search and open include neighbours
        data = await mm(s, "search_nodes", {"query": "TEA"})
        assert nodes(data) == ["A", "B"] and edges(data) == [("A", "B", "knows", 1.0)]
        data = await mm(s, "open_nodes", {"names": ["A"]})
        assert nodes(data) == ["A", "B"] and edges(data) == [("A", "B", "knows", 1.0)]

        # metadata
        data = await mm(s, "add_metadata", {"nodeName": "A", "metadata": ["Likes tea", "Mood: calm"]})
        assert data == {"nodeName": "A", "metadata": ["Mood: calm"]}
        await mm(s, "delete_metadata", {"nodeName": "A", "metadata": ["Likes tea"]})
        assert (await mm(s, "open_nodes", {"names": ["A"]}))["nodes"][0]["metadata"] == ["Mood: calm"]
        assert "Node 'Q' not found" in await mm_err(s, "add_metadata", {"nodeName": "Q", "metadata": ["x"]})
        data = await mm(
            s, "update_nodes", {"nodes": [{"name": "A", "metadata": ["new"], "nodeType": "robot"}]}
        )
        assert data["nodes"] == [{"name": "A", "nodeType": "robot", "metadata": ["new"]}]

        # deletes
        await mm(s, "delete_edges", {"edges": [{"from": "A", "to": "B", "edgeType": "knows"}]})
        assert edges(await mm(s, "read_graph", {})) == [("B", "C", "knows", 0.7)]
        await mm(s, "delete_nodes", {"nodeNames": ["C"]})
        graph = await mm(s, "read_graph", {})
        assert nodes(graph) == ["A", "B"] and graph["edges"] == []


async def test_calls_are_all_or_nothing(neo4j_info: Any, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        await mm(s, "add_nodes", {"nodes": [{"name": "N3", "nodeType": "t", "metadata": []}]})
        five = [{"name": f"N{i}", "nodeType": "t", "metadata": [f"m{i}"]} for i in range(1, 6)]
        assert "Node 'N3' already exists" in await mm_err(s, "add_nodes", {"nodes": five})
        bad_type = [dict(n, name=f"M{i}") for i, n in enumerate(five)]
        bad_type[2]["nodeType"] = ""
        assert "nodes[2]" in await mm_err(s, "add_nodes", {"nodes": bad_type})
        assert nodes(await mm(s, "read_graph", {})) == ["N3"]
        await mm(s, "add_nodes", {"nodes": [{"name": "N4", "nodeType": "t", "metadata": []}]})
        msg = await mm_err(
            s,
            "add_edges",
            {
                "edges": [
                    {"from": "N3", "to": "N4", "edgeType": "r"},
                    {"from": "N4", "to": "N3", "edgeType": "r"},
                    {"from": "N3", "to": "Nope", "edgeType": "r"},
                ]
            },
        )
        assert "Nope" in msg
        assert (await mm(s, "read_graph", {}))["edges"] == []


async def test_custom_schema_directory(tmp_path: Path, neo4j_info: Any, namespace: str) -> None:
    for t in ("npc", "location"):
        (tmp_path / f"{t}.schema.json").write_text((default_schemas_dir() / f"{t}.schema.json").read_text())
    (tmp_path / "spell.schema.json").write_text(
        json.dumps(
            {
                "name": "add_spell",
                "description": "Add a spell",
                "properties": {
                    "name": {"type": "string", "description": "Spell name", "required": True},
                    "school": {"type": "array", "description": "Schools", "enum": ["Fire", "Ice", "Air"]},
                    "caster": {
                        "type": "string",
                        "description": "Who knows it",
                        "relationship": {"edgeType": "known_by", "description": "caster"},
                    },
                },
            }
        )
    )
    async with session(
        "stdio", neo4j_info, namespace, "--tools", "memorymesh", "--schemas", str(tmp_path)
    ) as s:
        names = sorted(t.name for t in (await s.list_tools()).tools)
        generated = sorted(
            f"{op}_{t}" for op in ("add", "update", "delete") for t in ("npc", "location", "spell")
        )
        assert len(names) == 11 + 9
        assert (
            sorted(
                set(names)
                - {
                    "add_nodes",
                    "update_nodes",
                    "delete_nodes",
                    "add_edges",
                    "update_edges",
                    "delete_edges",
                    "add_metadata",
                    "delete_metadata",
                    "read_graph",
                    "search_nodes",
                    "open_nodes",
                }
            )
            == generated
        )
        data = await mm(
            s, "add_spell", {"spell": {"name": "Fireball", "school": ["Fire", "Air"], "caster": "Gandalf"}}
        )
        assert data["nodes"][0]["metadata"] == ["School: Fire, Air", "Caster: Gandalf"]
        assert edges(data) == [("Fireball", "Gandalf", "known_by", 1.0)]
        assert "'Earth' is not one of" in await mm_err(
            s, "add_spell", {"spell": {"name": "Quake", "school": ["Earth"]}}
        )
        # additionalProperties defaults to false
        assert "not a property of spell" in await mm_err(
            s, "add_spell", {"spell": {"name": "X", "mana": "3"}}
        )


async def test_cross_dialect_mesh_to_reference(neo4j_info: Any, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        await mm(
            s,
            "add_npc",
            {
                "npc": {
                    "name": "Gandalf",
                    "role": "Wizard",
                    "status": "Active",
                    "currentLocation": "Rivendell",
                }
            },
        )
        await mm(
            s,
            "add_nodes",
            {"nodes": [{"name": "Frodo", "nodeType": "hobbit", "metadata": ["Carries: Ring"]}]},
        )
        await mm(
            s,
            "add_edges",
            {"edges": [{"from": "Gandalf", "to": "Frodo", "edgeType": "mentors", "weight": 0.4}]},
        )
        await mm(s, "add_metadata", {"nodeName": "Frodo", "metadata": ["Home: Shire"]})
        graph = await ref(s, "read_graph")
        assert graph["entities"] == [
            {"name": "Frodo", "entityType": "hobbit", "observations": ["Carries: Ring", "Home: Shire"]},
            {
                "name": "Gandalf",
                "entityType": "npc",
                "observations": ["Role: Wizard", "Status: Active", "Current Location: Rivendell"],
            },
        ]
        assert rel_keys(graph) == [("Gandalf", "Frodo", "mentors"), ("Gandalf", "Rivendell", "located_in")]
        assert [e["name"] for e in (await ref(s, "search_nodes", {"query": "wizard"}))["entities"]] == [
            "Gandalf"
        ]
        walk = await ref(s, "traverse_graph", {"start": ["Frodo"], "maxDepth": 1})
        mentors = [r for r in walk["relations"] if r["relationType"] == "mentors"]
        assert mentors[0]["weight"] == 0.4
        # the reference tools change what MemoryMesh wrote
        await ref(
            s,
            "update_relations",
            {"relations": [{"from": "Gandalf", "to": "Frodo", "relationType": "mentors", "weight": 0.8}]},
        )
        current = await mm(s, "read_nodes_graph", {})
        [mentor] = [e for e in current["edges"] if e["edgeType"] == "mentors"]
        assert abs(mentor["weight"] - 0.6) < 1e-9  # (0.4 + 0.8) / 2

        # relationship replacement with history, read through the reference's asOf
        stamp = json.loads(text_of(await s.call_tool("read_nodes_graph", {})))["timestamp"]
        await mm(s, "update_npc", {"npc": {"name": "Gandalf", "currentLocation": "Mordor"}})
        now_graph = await ref(s, "open_nodes", {"names": ["Gandalf"]})
        assert ("Gandalf", "Mordor", "located_in") in rel_keys(now_graph)
        assert ("Gandalf", "Rivendell", "located_in") not in rel_keys(now_graph)
        then = await ref(s, "open_nodes", {"names": ["Gandalf"], "asOf": stamp})
        assert ("Gandalf", "Rivendell", "located_in") in rel_keys(then)
        assert ("Gandalf", "Mordor", "located_in") not in rel_keys(then)

        await mm(s, "delete_npc", {"npc": {"name": "Gandalf"}})
        graph = await ref(s, "read_graph")
        assert [e["name"] for e in graph["entities"]] == ["Frodo"] and graph["relations"] == []


async def test_cross_dialect_reference_to_mesh(neo4j_info: Any, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        await ref(
            s,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["Works at Acme", "Likes tea"]},
                    {"name": "Bob", "entityType": "person", "observations": []},
                    {"name": "Carol", "entityType": "person", "observations": []},
                ]
            },
        )
        await ref(
            s,
            "create_relations",
            {
                "relations": [
                    {"from": "Alice", "to": "Bob", "relationType": "knows", "weight": 0.5},
                    {"from": "Bob", "to": "Carol", "relationType": "knows"},
                ]
            },
        )
        graph = await mm(s, "read_nodes_graph", {})
        assert graph["nodes"] == [
            {"name": "Alice", "nodeType": "person", "metadata": ["Works at Acme", "Likes tea"]},
            {"name": "Bob", "nodeType": "person", "metadata": []},
            {"name": "Carol", "nodeType": "person", "metadata": []},
        ]
        assert edges(graph) == [("Alice", "Bob", "knows", 0.5), ("Bob", "Carol", "knows", 1.0)]
        found = await mm(s, "search_nodes_graph", {"query": "acme"})
        assert nodes(found) == ["Alice", "Bob"] and edges(found) == [("Alice", "Bob", "knows", 0.5)]
        opened = await mm(s, "open_nodes_graph", {"names": ["Carol"]})
        assert nodes(opened) == ["Carol", "Bob"]
        # MemoryMesh tools work on reference data: weights averaged, metadata edited, duplicates refused
        data = await mm(
            s, "update_edges", {"edges": [{"from": "Alice", "to": "Bob", "edgeType": "knows", "weight": 0.9}]}
        )
        assert data["edges"][0]["weight"] == 0.7
        assert "already exists" in await mm_err(
            s, "add_edges", {"edges": [{"from": "Bob", "to": "Carol", "edgeType": "knows"}]}
        )
        await mm(s, "delete_metadata", {"nodeName": "Alice", "metadata": ["Likes tea"]})
        assert (await ref(s, "open_nodes", {"names": ["Alice"]}))["entities"][0]["observations"] == [
            "Works at Acme"
        ]
        # a reference entity of a schema's type is managed by the generated tools
        await ref(
            s,
            "create_entities",
            {
                "entities": [
                    {
                        "name": "Elrond",
                        "entityType": "npc",
                        "observations": ["Role: Noble", "Friend of elves"],
                    }
                ]
            },
        )
        data = await mm(
            s, "update_npc", {"npc": {"name": "Elrond", "role": "Wizard", "currentLocation": "Rivendell"}}
        )
        assert data["nodes"][0]["metadata"] == [
            "Role: Wizard",
            "Friend of elves",
            "Current Location: Rivendell",
        ]
        # the reference sees the placeholder target's relation
        assert ("Elrond", "Rivendell", "located_in") in rel_keys(await ref(s, "read_graph"))


async def test_profiles_expose_the_right_reads(neo4j_info: Any, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        # the colliding names are the reference's (with the default profile's extensions) ...
        assert "asOf" in listed["read_graph"].input_schema["properties"]
        assert listed["search_nodes"].input_schema["required"] == ["query"]
        # ... and MemoryMesh's are renamed
        assert listed["read_nodes_graph"].annotations.read_only_hint is True
        assert listed["delete_nodes"].annotations.destructive_hint is True
        await ref(s, "create_entities", {"entities": [{"name": "X", "entityType": "t", "observations": []}]})
        assert await ref(s, "read_graph") == {
            "entities": [{"name": "X", "entityType": "t", "observations": []}],
            "relations": [],
        }
        assert (await mm(s, "read_nodes_graph", {}))["nodes"] == [
            {"name": "X", "nodeType": "t", "metadata": []}
        ]
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        data = await mm(s, "read_graph", {})
        assert data == {"nodes": [{"name": "X", "nodeType": "t", "metadata": []}], "edges": []}
        assert "Unknown tool" in await mm_err(s, "create_entities", {"entities": []})
