"""Builds the MCP server for a profile and runs it over stdio or streamable HTTP.

Shared resources (the Neo4j driver and the store) are opened once per process by
:func:`open_runtime` and handed to every MCP session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server

from kg_neo4j import __version__
from kg_neo4j.clock import Clock
from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
from kg_neo4j.errors import ConfigError
from kg_neo4j.schemas import NodeSchema, load_schemas
from kg_neo4j.server import prompts
from kg_neo4j.server.knowledge import KNOWLEDGE_TOOLS
from kg_neo4j.server.maintenance import MAINTENANCE_TOOLS
from kg_neo4j.server.memorymesh import MESH_TOOLS, generated_tools
from kg_neo4j.server.reference import REFERENCE_TOOLS
from kg_neo4j.server.registry import Runtime, ToolSpec, call, current_session, tools_for
from kg_neo4j.server.search import SEARCH_TOOLS
from kg_neo4j.server.skills import SKILL_TOOLS
from kg_neo4j.server.temporal import TEMPORAL_TOOLS
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore, connect
from kg_neo4j.store.connection import bootstrap

log = logging.getLogger(__name__)

SERVER_NAME = "kg-neo4j"



def _also_in_all(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The ``all`` profile holds every tool of ``default`` (the reference's reads keep their names)."""
    return [s if "all" in s.profiles or "default" not in s.profiles
            else dataclasses.replace(s, profiles=(*s.profiles, "all")) for s in specs]


#: Every built-in tool (schema-generated tools come on top, per server).
ALL_TOOLS: list[ToolSpec] = [*_also_in_all([*REFERENCE_TOOLS, *SEARCH_TOOLS, *TEMPORAL_TOOLS]), *MESH_TOOLS,
                             *KNOWLEDGE_TOOLS, *MAINTENANCE_TOOLS, *SKILL_TOOLS]

#: Names a schema file may not generate.
BUILTIN_TOOL_NAMES = frozenset(s.name for s in ALL_TOOLS)

INSTRUCTIONS = (
    "Persistent knowledge-graph memory stored in Neo4j: entities with observations, "
    "and typed relations between them. Names are case-sensitive identifiers."
)


@dataclasses.dataclass
class ServerRuntime(Runtime):
    """The runtime plus the node schemas loaded at startup (their tools are generated per server)."""

    schemas: list[NodeSchema] = dataclasses.field(default_factory=list)


def load_node_schemas(settings: Settings) -> list[NodeSchema]:
    """The schema files of ``--schemas`` (default: the shipped examples); a bad file stops the start."""
    return load_schemas(settings.schemas_dir, reserved=BUILTIN_TOOL_NAMES)


def profile_tools(profile: str, schemas: Sequence[NodeSchema] = ()) -> list[ToolSpec]:
    specs = tools_for(profile, [*ALL_TOOLS, *generated_tools(schemas)])
    if not specs:
        raise ConfigError(f"unknown tool profile {profile!r}")
    return specs


@contextlib.asynccontextmanager
async def open_runtime(settings: Settings, clock: Clock | None = None) -> AsyncIterator[Runtime]:
    """Connect to Neo4j, bootstrap the schema, and yield the shared runtime."""
    schemas = load_node_schemas(settings)  # before connecting: a bad schema file fails fast
    model = resolve_model(settings.embedding_model)  # reads the model's files only: no torch here
    driver, conn = await connect(settings)
    try:
        await bootstrap(driver, conn.database, clock, model)
        # The model loads in the background; the first call that needs it waits for it.
        embedder = SentenceEmbedder(model) if model else None
        if embedder:
            embedder.start_loading()
        store = GraphStore(
            driver,
            database=conn.database,
            namespace=settings.namespace,
            clock=clock,
            max_answer_bytes=settings.max_answer_bytes,
            embedder=embedder,
        )
        log.info("kg-neo4j %s: Neo4j %s database %r namespace %r profile %r embedding model %s, %d node schemas",
                 __version__, conn.uri, conn.database, settings.namespace, settings.tools,
                 model.name if model else "none", len(schemas))
        runtime = ServerRuntime(store=store, profile=settings.tools, max_answer_bytes=settings.max_answer_bytes,
                                settings=settings, schemas=schemas)
        try:
            yield runtime
        finally:
            await runtime.drain()  # access records still being written
    finally:
        await driver.close()


def build_server(runtime: Runtime) -> Server[Any, Any]:
    schemas = runtime.schemas if isinstance(runtime, ServerRuntime) else []
    specs = {s.name: s for s in profile_tools(runtime.profile, schemas)}
    server: Server[Any, Any] = Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)

    @server.list_tools()
    async def _list_tools() -> list[types.Tool]:
        return [s.tool(runtime.profile) for s in specs.values()]

    @server.call_tool(validate_input=False)
    async def _call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        spec = specs.get(name)
        if spec is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {name}")], isError=True
            )
        token = current_session.set(_session_of(server))
        try:
            return await call(spec, runtime, arguments or {})
        finally:
            current_session.reset(token)

    @server.list_prompts()
    async def _list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name=prompts.PROMPT_NAME, description=prompts.PROMPT_DESCRIPTION, arguments=[])]

    @server.get_prompt()
    async def _get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if name != prompts.PROMPT_NAME:
            raise ValueError(f"Unknown prompt: {name}")
        return types.GetPromptResult(
            description=prompts.PROMPT_DESCRIPTION,
            messages=[types.PromptMessage(role="user",
                                          content=types.TextContent(type="text", text=prompts.SYSTEM_PROMPT))],
        )

    return server


def _session_of(server: Server[Any, Any]) -> str | None:
    """A stable id for the MCP session of the current request: the streamable HTTP session id,
    else one made up for this session object (stdio: one per connection)."""
    try:
        ctx = server.request_context
    except LookupError:
        return None
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    if sid:
        return f"mcp-{sid}"
    sid = getattr(ctx.session, "_kg_session_id", None)
    if sid is None:
        sid = f"mcp-{uuid.uuid4().hex}"
        with contextlib.suppress(AttributeError):
            ctx.session._kg_session_id = sid  # type: ignore[attr-defined]
    return str(sid)


async def serve_stdio(settings: Settings) -> None:
    from mcp.server.stdio import stdio_server

    async with open_runtime(settings) as runtime:
        server = build_server(runtime)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options(NotificationOptions()))


async def serve_http(settings: Settings) -> None:
    import uvicorn

    from kg_neo4j.server.http import build_http_app

    app = build_http_app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level.lower(),
                            lifespan="on")
    await uvicorn.Server(config).serve()
