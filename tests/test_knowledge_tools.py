"""The knowledge tools through a real MCP client session (stdio and streamable HTTP), the
way an agent calls them: structured output, clear errors with nothing written, annotations,
and access recorded after search_memory / open_nodes have answered."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from support.servers import Neo4jInfo, mcp_session

KNOWLEDGE_TOOLS = {
    "store_knowledge",
    "connect_knowledge",
    "update_knowledge",
    "forget_knowledge",
    "list_knowledge",
    "record_experience",
    "recall_experience",
    "memory_stats",
    "search_memory",
    "traverse_graph",
}


async def call(session: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return dict(result.structured_content)


async def error(session: Any, tool: str, args: dict[str, Any]) -> str:
    result = await session.call_tool(tool, args)
    assert result.is_error
    return str(result.content[0].text)


async def accesses(session: Any, name: str, want: int) -> dict[str, Any]:
    """The knowledge item once its access count reached ``want`` (access is written just after the
    read answered, in its own transaction; poll instead of sleeping a fixed time)."""
    item: dict[str, Any] = {}
    for _ in range(200):
        listed = await call(session, "list_knowledge", {"sortBy": "access"})
        item = next(i for i in listed["knowledge"] if i["name"] == name)
        if item["accessCount"] >= want:
            return item
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name}: access count stayed {item.get('accessCount')}, wanted {want}")


async def test_the_knowledge_profile_lists_its_tools_with_annotations(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert KNOWLEDGE_TOOLS <= set(tools)
    assert tools["forget_knowledge"].annotations.destructive_hint is True
    for name in ("list_knowledge", "recall_experience", "memory_stats", "search_memory", "traverse_graph"):
        assert tools[name].annotations.read_only_hint is True, name
    store_schema = tools["store_knowledge"].input_schema
    assert set(store_schema["required"]) == {"name", "content", "type", "trust"}
    assert set(store_schema["properties"]) >= {
        "name",
        "content",
        "type",
        "trust",
        "category",
        "quote",
        "source",
        "sessionId",
    }


async def test_store_connect_search_forget_over_mcp(
    transport: str, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with mcp_session(transport, neo4j_info, namespace, "--tools", "knowledge") as s:
        # anti-fabrication: no quote, no principle; nothing is written
        msg = await error(
            s,
            "store_knowledge",
            {"name": "P", "content": "Never deploy on Fridays", "type": "rule", "trust": "principle"},
        )
        assert "exact words" in msg
        assert (await call(s, "memory_stats", {}))["knowledge"] == 0
        stored = await call(
            s,
            "store_knowledge",
            {
                "name": "No Friday deploys",
                "content": "Never deploy to production on Fridays",
                "type": "rule",
                "trust": "principle",
                "quote": "We do not ship on Fridays. Ever.",
                "category": "creative",
                "source": "teacher",
            },
        )
        assert (stored["trust"], stored["stability"], stored["memoryLevel"]) == ("principle", 30.0, 1)
        await call(
            s,
            "store_knowledge",
            {
                "name": "Weekend pages",
                "content": "Friday deploys page people at the weekend",
                "type": "insight",
                "trust": "inference",
            },
        )
        # an inference cannot be the source of must_precede / reason_for
        msg = await error(
            s,
            "connect_knowledge",
            {"from": "Weekend pages", "to": "No Friday deploys", "relationType": "reason_for"},
        )
        assert "inference" in msg and "reason_for" in msg
        made = await call(
            s,
            "connect_knowledge",
            {
                "from": "No Friday deploys",
                "to": "Weekend pages",
                "relationType": "reason_for",
                "reasoning": "pages hurt",
                "weight": 0.8,
            },
        )
        assert [(r["from"], r["relationType"], r["to"], r["weight"]) for r in made["relations"]] == [
            ("No Friday deploys", "reason_for", "Weekend pages", 0.8)
        ]
        # traversal and the reference reads see knowledge as entities
        walked = await call(s, "traverse_graph", {"start": ["No Friday deploys"], "maxDepth": 1})
        assert [e["name"] for e in walked["entities"]] == ["No Friday deploys", "Weekend pages"]
        # a search answers first; the access is recorded by a separate write after it
        found = await call(s, "search_memory", {"query": "Fridays production"})
        assert "No Friday deploys" in [h["name"] for h in found["hits"]]
        item = await accesses(s, "No Friday deploys", 1)
        assert item["sessions"] == 1 and item["lastAccess"] is not None
        # trust never upgrades by itself
        msg = await error(s, "update_knowledge", {"name": "Weekend pages", "trust": "pattern"})
        assert "never upgrades" in msg
        listed = await call(s, "list_knowledge", {})
        before = next(i["accessCount"] for i in listed["knowledge"] if i["name"] == "Weekend pages")
        upd = await call(
            s,
            "update_knowledge",
            {
                "name": "Weekend pages",
                "content": "Deploys late in the week cause weekend pages",
                "feedback": "applied",
            },
        )
        assert (upd["trust"], upd["accessCount"]) == ("inference", before + 1)
        gone = await call(s, "forget_knowledge", {"names": ["Weekend pages"], "reason": "superseded"})
        assert gone["forgotten"] == [{"name": "Weekend pages", "closedRelations": 1}]
        listed = await call(s, "list_knowledge", {"includeExpired": True})
        assert {(i["name"], i["expired"]) for i in listed["knowledge"]} == {
            ("No Friday deploys", False),
            ("Weekend pages", True),
        }
        stats = await call(s, "memory_stats", {})
        assert (stats["knowledge"], stats["expired"], stats["edges"]) == (1, 1, 0)
        bad = await error(s, "list_knowledge", {"trust": "gospel"})
        assert "trust" in bad


async def test_sessions_count_distinct_mcp_sessions(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        await call(
            s,
            "store_knowledge",
            {"name": "K", "content": "cache invalidation is hard", "type": "insight", "trust": "pattern"},
        )
        await call(s, "search_memory", {"query": "cache invalidation"})
        await accesses(s, "K", 1)
    async with mcp_session("http", neo4j_info, namespace, "--tools", "all") as s:
        graph = await call(s, "open_nodes", {"names": ["K"]})
        assert [e["name"] for e in graph["entities"]] == ["K"]
        item = await accesses(s, "K", 2)
    assert (
        item["sessions"] == 2
    )  # the storing session, then the HTTP one (the first stdio search was the same)


async def test_experiences_over_mcp(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        rec = await call(
            s,
            "record_experience",
            {
                "context": "Upgrading the payment service to the new SDK",
                "steps": ["bumped the version", "ran contract tests"],
                "decisions": ["kept the old webhook format"],
                "outcome": "Upgrade shipped",
                "success": True,
            },
        )
        assert rec["name"].startswith("experience ")
        found = await call(s, "recall_experience", {"context": "payment SDK upgrade"})
        assert [e["name"] for e in found["experiences"]] == [rec["name"]]
        assert found["experiences"][0]["steps"] == ["bumped the version", "ran contract tests"]
        assert "context" in await error(s, "record_experience", {"outcome": "x"})


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_reads_outside_the_knowledge_profiles_record_nothing(
    profile: str, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        await call(s, "store_knowledge", {"name": "K", "content": "c", "type": "rule", "trust": "pattern"})
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", profile) as s:
        await call(s, "open_nodes", {"names": ["K"]})
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        listed = await call(s, "list_knowledge", {})
    assert listed["knowledge"][0]["accessCount"] == 0


async def test_reads_of_the_past_record_no_access(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        await call(
            s,
            "store_knowledge",
            {"name": "K", "content": "queues decouple services", "type": "insight", "trust": "pattern"},
        )
        past = "2999-01-01T00:00:00+00:00"
        found = await call(s, "search_memory", {"query": "queues decouple", "asOf": past})
        assert [h["name"] for h in found["hits"]][:1] == ["K"]
        await call(s, "open_nodes", {"names": ["K"], "asOf": past})
        # a read of now afterwards is the first access: nothing was queued by the asOf reads
        await call(s, "open_nodes", {"names": ["K"]})
        item = await accesses(s, "K", 1)
        await asyncio.sleep(0.3)
        listed = await call(s, "list_knowledge", {})
    assert item["accessCount"] == 1 and listed["knowledge"][0]["accessCount"] == 1
