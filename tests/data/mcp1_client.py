"""Run by tests/test_client_compat.py under the MCP SDK 1.x (its own venv): one session against
``kg-neo4j serve`` over stdio or streamable HTTP; prints what it saw as one JSON line."""

import asyncio
import json
import sys
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


async def exercise(session: ClientSession) -> dict:
    init = await session.initialize()
    tools = await session.list_tools()
    created = await session.call_tool(
        "create_entities",
        {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]},
    )
    graph = await session.call_tool("read_graph", {})
    bad = await session.call_tool(
        "add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}
    )
    return {
        "sdk": version("mcp"),
        "protocol": init.protocolVersion,
        "server": init.serverInfo.name,
        "tools": sorted(t.name for t in tools.tools),
        "created_text": created.content[0].text,
        "created_structured": created.structuredContent,
        "graph_text": graph.content[0].text,
        "bad_is_error": bad.isError,
        "bad_text": bad.content[0].text,
    }


async def main() -> None:
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=sys.argv[3:], env=json.loads(sys.stdin.read()))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            out = await exercise(session)
    else:
        async with (
            streamablehttp_client(f"{target}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            out = await exercise(session)
    print(json.dumps(out))


asyncio.run(main())
