"""The graph as the MCP resource ``memory://knowledge-graph`` (docs/tools.md#the-graph-as-a-resource).

As in the reference server: ``application/json`` text equal to ``read_graph``'s answer, the
``subscribe`` capability, and ``notifications/resources/updated`` to subscribers after every
write tool call (clients of protocol 2026-07-28 get the same event on ``subscriptions/listen``).  Here the content is the server's namespace (in the ``memorymesh`` profile,
that profile's ``read_graph`` answer), it is bounded by the answer cap, and subscribers are
every MCP session of this server process that subscribed: changes made by other processes
(another server, the CLI) are not seen and not notified.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from kg_neo4j.errors import KgError, TooLargeError
from kg_neo4j.server.registry import Runtime, ToolSpec

log = logging.getLogger(__name__)

RESOURCE_URI = "memory://knowledge-graph"
#: MCP's error code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
#: At most this many sessions are remembered as subscribers (a closed HTTP session is forgotten
#: at the first notification that cannot reach it).
MAX_SUBSCRIBERS = 1000


class GraphResource:
    """The resource of one server: its content comes from the profile's ``read_graph`` handler."""

    def __init__(
        self, runtime: Runtime, read_graph: ToolSpec, session_key: Callable[[ServerRequestContext[Any]], str]
    ) -> None:
        self.runtime = runtime
        self.read_graph = read_graph
        #: the MCP session a request belongs to (subscriptions are per session)
        self.session_key = session_key
        self.subscribers: dict[str, ServerSession] = {}
        #: clients of protocol 2026-07-28 and later listen (``subscriptions/listen``) instead of subscribing
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus, max_subscriptions=MAX_SUBSCRIBERS)

    def describe(self) -> types.Resource:
        return types.Resource(
            uri=RESOURCE_URI,
            name="knowledge-graph",
            title="Knowledge Graph",
            description="The full knowledge graph with all entities and relations (this server's namespace)",
            mime_type="application/json",
        )

    async def list(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[self.describe()])

    async def read(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        _known(str(params.uri))
        try:
            text, _ = await self.read_graph.handler(self.runtime, {})
        except TooLargeError as exc:  # says how to page instead
            raise MCPError(code=types.INVALID_REQUEST, message=f"{RESOURCE_URI}: {exc}") from exc
        except KgError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"{RESOURCE_URI}: {exc}") from exc
        size = len(text.encode())
        if size > self.runtime.max_answer_bytes:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message=(
                    f"{RESOURCE_URI}: the graph is {size} bytes, over this server's answer cap of "
                    f"{self.runtime.max_answer_bytes} bytes; page it with read_graph's `limit` and `cursor`, "
                    "or use kg-neo4j export"
                ),
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=RESOURCE_URI, mime_type="application/json", text=text)]
        )

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        _known(str(params.uri))
        key = self.session_key(ctx)
        if key not in self.subscribers and len(self.subscribers) >= MAX_SUBSCRIBERS:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message=f"{RESOURCE_URI}: {MAX_SUBSCRIBERS} sessions already subscribe; try later",
            )
        self.subscribers[key] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        _known(str(params.uri))
        self.subscribers.pop(self.session_key(ctx), None)
        return types.EmptyResult()

    async def changed(self) -> None:
        """Tell every subscribed or listening session that the graph changed (a lost session is forgotten)."""
        await self.bus.publish(ResourceUpdated(uri=RESOURCE_URI))
        for key, session in list(self.subscribers.items()):
            try:
                await session.send_resource_updated(RESOURCE_URI)
            except Exception:  # noqa: BLE001 - a closed session must not fail the write that changed the graph
                log.debug("subscriber %s is gone; forgetting it", key, exc_info=True)
                self.subscribers.pop(key, None)


def _known(uri: str) -> None:
    if uri != RESOURCE_URI:
        raise MCPError(
            code=RESOURCE_NOT_FOUND, message=f"unknown resource {uri!r}; this server offers {RESOURCE_URI}"
        )
