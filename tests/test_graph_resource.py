"""The graph as the MCP resource ``memory://knowledge-graph``: listed, read (the same text as
``read_graph``), subscribed to, and ``notifications/resources/updated`` after each write made
through this server process, over stdio and HTTP (docs/tools.md#the-graph-as-a-resource)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from support.kg import ent, rel, text_of
from support.servers import Neo4jInfo, http_server, http_session, stdio_session

URI = "memory://knowledge-graph"
#: resources/subscribe and unsubscribe are how clients of protocols before 2026-07-28 ask for updates; the SDK's
#: client warns that they are gone at 2026-07-28 (where test_protocol_2026_clients_listen covers listening).
PRE_2026_CLIENT = pytest.mark.filterwarnings(
    r"ignore:resources/(un)?subscribe is removed as of 2026-07-28:mcp.shared.exceptions.MCPDeprecationWarning"
)


class Inbox:
    """Collects the resource-updated notifications a client session receives."""

    def __init__(self) -> None:
        self.updates: list[str] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            self.updates.append(str(message.params.uri))
            self.arrived.set()

    async def wait(self, count: int, timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while len(self.updates) < count:
                self.arrived = anyio.Event()
                if len(self.updates) >= count:
                    break
                await self.arrived.wait()

    async def quiet(self, seconds: float = 0.5) -> None:
        """No further notification arrives within ``seconds`` (a read never notifies)."""
        before = len(self.updates)
        await anyio.sleep(seconds)
        assert len(self.updates) == before, self.updates


@contextlib.asynccontextmanager
async def sessions(
    transport: str, info: Neo4jInfo, namespace: str, *args: str, inbox: Inbox | None = None
) -> AsyncIterator[Any]:
    if transport == "stdio":
        async with stdio_session(info, "--namespace", namespace, *args, message_handler=inbox) as s:
            yield s
    else:
        with http_server(info, "--namespace", namespace, *args) as url:
            async with http_session(url, message_handler=inbox) as s:
                yield s


async def resource_text(session: Any) -> str:
    result = await session.read_resource(URI)
    assert len(result.contents) == 1
    content = result.contents[0]
    assert str(content.uri) == URI and content.mime_type == "application/json"
    return str(content.text)


@pytest.mark.parametrize("profile", ["reference", "default", "knowledge", "all"])
async def test_listed_in_every_profile(neo4j_info: Neo4jInfo, namespace: str, profile: str) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace, "--tools", profile) as s:
        listed = (await s.list_resources()).resources
        assert [(str(r.uri), r.mime_type, r.name) for r in listed] == [
            (URI, "application/json", "knowledge-graph")
        ]
        caps = s.get_server_capabilities() if hasattr(s, "get_server_capabilities") else None
        if caps is not None:
            assert caps.resources is not None and caps.resources.subscribe is True


async def test_content_is_read_graph_text(neo4j_info: Neo4jInfo, namespace: str, transport: str) -> None:
    async with sessions(transport, neo4j_info, namespace, "--tools", "reference") as s:
        assert await resource_text(s) == text_of(await s.call_tool("read_graph", {}))
        await s.call_tool(
            "create_entities", {"entities": [ent("Ada", "person", ["wrote ✓ programs"]), ent("Bo")]}
        )
        await s.call_tool("create_relations", {"relations": [rel("Ada", "Bo")]})
        text = await resource_text(s)
        assert text == text_of(await s.call_tool("read_graph", {}))
        assert '"Ada"' in text and "✓" in text


async def test_memorymesh_profile_shows_its_own_read_graph(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace, "--tools", "memorymesh") as s:
        await s.call_tool(
            "add_nodes", {"nodes": [{"name": "Tower", "nodeType": "location", "metadata": ["Height: 3"]}]}
        )
        text = await resource_text(s)
        tool_answer = json.loads(text_of(await s.call_tool("read_graph", {})))
        assert json.loads(text)["data"] == tool_answer["data"]  # the answers differ only in their timestamp
        assert set(json.loads(text)) == set(tool_answer)
        assert '"nodes"' in text and '"Tower"' in text


@PRE_2026_CLIENT
async def test_subscribers_are_told_after_each_write(
    neo4j_info: Neo4jInfo, namespace: str, transport: str
) -> None:
    inbox = Inbox()
    async with sessions(transport, neo4j_info, namespace, inbox=inbox) as s:
        await s.subscribe_resource(URI)
        await s.call_tool("create_entities", {"entities": [ent("A"), ent("B")]})
        await inbox.wait(1)
        await s.call_tool("create_relations", {"relations": [rel("A", "B")]})
        await s.call_tool("add_observations", {"observations": [{"entityName": "A", "contents": ["x"]}]})
        await inbox.wait(3)
        assert inbox.updates == [URI, URI, URI]
        await s.call_tool("read_graph", {})
        await s.call_tool("search_nodes", {"query": "A"})
        failed = await s.call_tool(
            "add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}
        )
        assert failed.is_error
        await inbox.quiet()  # reads and failed writes change nothing
        await s.unsubscribe_resource(URI)
        await s.call_tool("delete_entities", {"entityNames": ["B"]})
        await inbox.quiet()
        assert len(inbox.updates) == 3


@PRE_2026_CLIENT
async def test_another_http_session_is_told(neo4j_info: Neo4jInfo, namespace: str) -> None:
    """Changes through any session of the process reach every subscribed session of it."""
    watcher = Inbox()
    with http_server(neo4j_info, "--namespace", namespace) as url:
        async with http_session(url, message_handler=watcher) as watching, http_session(url) as writing:
            await watching.subscribe_resource(URI)
            await writing.call_tool("create_entities", {"entities": [ent("Far")]})
            await watcher.wait(1)
            assert watcher.updates == [URI]
            assert '"Far"' in await resource_text(watching)


@PRE_2026_CLIENT
async def test_unknown_uri_is_an_error(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace) as s:
        for call in (s.read_resource, s.subscribe_resource):
            with pytest.raises(MCPError) as exc:
                await call("memory://other")
            assert exc.value.error.code == -32002 and URI in exc.value.error.message


async def test_over_the_answer_cap_points_to_paging(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace, "--max-answer-bytes", "300") as s:
        await s.call_tool(
            "create_entities", {"entities": [ent(f"E{i}", "thing", ["o" * 40]) for i in range(10)]}
        )
        with pytest.raises(MCPError) as exc:
            await s.read_resource(URI)
        message = exc.value.error.message
        assert "300 bytes" in message and "`limit` and `cursor`" in message and "export" in message


async def test_protocol_2026_clients_listen(neo4j_info: Neo4jInfo, namespace: str, transport: str) -> None:
    """A client of protocol 2026-07-28 (no resources/subscribe there) gets the same event on
    ``subscriptions/listen``."""
    from mcp import Client, StdioServerParameters

    from support.servers import KG, server_env

    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            target: Any = StdioServerParameters(
                command=KG, args=["serve", "--namespace", namespace], env=server_env(neo4j_info)
            )
        else:
            target = stack.enter_context(http_server(neo4j_info, "--namespace", namespace)) + "/mcp"
        async with Client(target, mode="auto") as client:
            assert client.session.protocol_version >= "2026-07-28"
            async with client.listen(resource_subscriptions=[URI]) as sub:
                assert sub.honored.resource_subscriptions == [URI]
                created = await client.call_tool("create_entities", {"entities": [ent("Now")]})
                assert not created.is_error
                with anyio.fail_after(10):
                    event = await sub.__anext__()
                assert event.uri == URI
