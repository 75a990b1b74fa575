"""A do-nothing MCP server for bench_peers' floor: ``create_entities`` as kg-neo4j's ``reference``
profile advertises it (same input and output schemas), answering its input as the reference would
(the JSON text and its structured copy) with no validation and no database.  A call to it costs
what an MCP round trip itself costs: the client's request and answer handling (including its
output-schema check), the pipes, and the SDK's dispatch and serialisation on the server side.

    .venv/bin/python benchmarks/mcp_echo_server.py      # speaks MCP on stdin/stdout
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server

from kg_neo4j.models import reference_text
from kg_neo4j.server.reference import create_entities
from kg_neo4j.server.stdio import stdio_transport

TOOL = create_entities.tool("reference")


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    entities = (params.arguments or {}).get("entities", [])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reference_text(entities))],
        structured_content={"entities": entities},
    )


async def main() -> None:
    server: Server[Any] = Server("mcp-echo", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_transport() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


if __name__ == "__main__":
    asyncio.run(main())
