"""MemoryMesh's tools answer errors as ``{"error", "context", "suggestions"}`` (docs/mesh-dialect.md#memorymesh-dialect-and-schema-driven-tools): context names the tool and the input that failed, suggestions the next steps; the
reference-dialect tools keep their plain-text errors.  Through real MCP sessions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from support.kg import session, text_of
from support.servers import Neo4jInfo

GANDALF = {"name": "Gandalf", "role": "Wizard", "status": "Active"}
SETUP: list[tuple[str, dict[str, Any]]] = [
    ("add_npc", {"npc": GANDALF}),
    ("add_location", {"location": {"name": "Shire", "description": "green"}}),
    ("add_edges", {"edges": [{"from": "Gandalf", "to": "Shire", "edgeType": "visits"}]}),
]

#: (id, tool, arguments, words in "error", words in one of the suggestions)
CASES: list[tuple[str, str, dict[str, Any], list[str], list[str]]] = [
    (
        "node-exists",
        "add_nodes",
        {"nodes": [{"name": "Gandalf", "nodeType": "npc", "metadata": []}]},
        ["Gandalf", "already exists"],
        ["update_nodes"],
    ),
    ("typed-node-exists", "add_npc", {"npc": GANDALF}, ["Gandalf", "already exists"], ["update_"]),
    (
        "edge-end-missing",
        "add_edges",
        {"edges": [{"from": "Gandalf", "to": "Mordor", "edgeType": "fears"}]},
        ["Mordor", "not found"],
        ["add_nodes", "add_edges"],
    ),
    (
        "update-missing-node",
        "update_nodes",
        {"nodes": [{"name": "Nobody", "metadata": ["A: b"]}]},
        ["Nobody", "not found"],
        ["add_nodes"],
    ),
    (
        "edge-exists",
        "add_edges",
        {"edges": [{"from": "Gandalf", "to": "Shire", "edgeType": "visits"}]},
        ["already exists"],
        ["update_edges"],
    ),
    (
        "bad-enum",
        "add_npc",
        {"npc": {"name": "Frodo", "role": "Hobbit", "status": "Active"}},
        ["Hobbit", "not one of the allowed values"],
        ["npc.role", "add_npc"],
    ),
    (
        "wrong-type-delete",
        "delete_npc",
        {"npc": {"name": "Shire"}},
        ["Shire", "not a npc"],
        ["delete_location"],
    ),
    ("missing-argument", "add_metadata", {"metadata": ["A: b"]}, ["nodeName"], ["nodeName"]),
]


def _shape(text: str) -> dict[str, Any]:
    answer = json.loads(text)
    assert set(answer) == {"error", "context", "suggestions"}, answer
    assert isinstance(answer["error"], str) and answer["error"]
    assert isinstance(answer["suggestions"], list) and answer["suggestions"]
    assert all(isinstance(s, str) and s for s in answer["suggestions"])
    assert text == json.dumps(answer, indent=2, ensure_ascii=False)  # pretty-printed like the other answers
    return dict(answer)


@pytest.mark.parametrize(
    ("tool", "args", "error_words", "suggestion_words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_error_shape(
    neo4j_info: Neo4jInfo,
    namespace: str,
    tool: str,
    args: dict[str, Any],
    error_words: list[str],
    suggestion_words: list[str],
) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        for setup_tool, setup_args in SETUP:
            assert not (await s.call_tool(setup_tool, setup_args)).is_error
        before = text_of(await s.call_tool("read_graph", {}))
        result = await s.call_tool(tool, args)
        assert result.is_error
        answer = _shape(text_of(result))
        assert answer["context"] == {"tool": tool, "input": args}
        for w in error_words:
            assert w in answer["error"], (w, answer)
        assert any(all(w in s for w in suggestion_words) for s in answer["suggestions"]), answer
        after = text_of(await s.call_tool("read_graph", {}))
        assert json.loads(after)["data"] == json.loads(before)["data"]  # nothing was written


async def test_large_input_is_summarised(neo4j_info: Neo4jInfo, namespace: str) -> None:
    nodes = [{"name": f"N{i}", "nodeType": "thing", "metadata": ["Note: " + "x" * 50]} for i in range(200)]
    nodes.append(nodes[0])  # the same node twice: the whole call fails
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        answer = _shape(text_of(await s.call_tool("add_nodes", {"nodes": nodes})))
        assert answer["context"]["tool"] == "add_nodes"
        assert answer["context"]["input"]["fields"] == ["nodes"]
        assert "too large to repeat" in answer["context"]["input"]["omitted"]


async def test_all_profile_keeps_each_dialect(neo4j_info: Neo4jInfo, namespace: str, transport: str) -> None:
    async with session(transport, neo4j_info, namespace, "--tools", "all") as s:
        mesh = await s.call_tool("update_nodes", {"nodes": [{"name": "Ghost", "metadata": []}]})
        assert mesh.is_error and _shape(text_of(mesh))["context"]["tool"] == "update_nodes"
        reference = await s.call_tool(
            "add_observations", {"observations": [{"entityName": "Ghost", "contents": ["x"]}]}
        )
        assert reference.is_error
        text = text_of(reference)
        assert text.startswith("Entity with name Ghost not found")  # the reference's plain text
