"""Builds the MCP server for a profile (``kg-neo4j serve`` runs it: kg_neo4j.commands.serve).

The runtime the tools run on (``registry.Runtime``: the store, the profile, the node schemas) is
opened once per process by :func:`open_runtime` (over :func:`kg_neo4j.runtime.open_resources`) and
handed to every MCP session.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import pkgutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from kg_neo4j import __version__
from kg_neo4j.clock import Clock
from kg_neo4j.errors import ConfigError
from kg_neo4j.runtime import Resources, open_resources
from kg_neo4j.schemas import NodeSchema, load_schemas
from kg_neo4j.server import prompts, reference
from kg_neo4j.server.access import Caller, caller_of, may_call, refusal
from kg_neo4j.server.declare import declared
from kg_neo4j.server.mesh_generated import generated_tools
from kg_neo4j.server.registry import Runtime, ToolSpec, call, current_session, tools_for
from kg_neo4j.server.resource import GraphResource
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import current_actor, default_actor

log = logging.getLogger(__name__)

SERVER_NAME = "kg-neo4j"


#: The order the tool families list in (modules of ``kg_neo4j.server``; a module's tools list in the
#: order it declares them).  Only the order: a module not named here lists after these.
LISTING_ORDER = (
    "reference",
    "search",
    "temporal",
    "history",
    "duplicates",
    "merges",
    "memorymesh",
    "knowledge",
    "maintenance",
    "skills",
)

#: The modules that serve the tools rather than declare them (``http`` imports this one).
_SERVING = frozenset({"app", "http", "stdio"})


def builtin_tools() -> list[ToolSpec]:
    """Every tool declared (``@tool``) in a module of ``kg_neo4j.server``, in listing order: each module
    is imported here, so a declared tool is never left unserved."""
    package = importlib.import_module("kg_neo4j.server")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _SERVING:
            importlib.import_module(f"{package.__name__}.{module.name}")
    rank = {name: i for i, name in enumerate(LISTING_ORDER)}
    by_module = declared()
    order = sorted(by_module, key=lambda m: (rank.get(m.rsplit(".", 1)[-1], len(rank)), m))
    return [spec for module in order for spec in by_module[module]]


#: Every built-in tool, in listing order (schema-generated tools come on top, per server); each
#: declaration says which profiles list it.
ALL_TOOLS: list[ToolSpec] = builtin_tools()

#: Names a schema file may not generate.
BUILTIN_TOOL_NAMES = frozenset(s.name for s in ALL_TOOLS)

INSTRUCTIONS = (
    "Persistent knowledge-graph memory stored in Neo4j: entities with observations, "
    "and typed relations between them. Names are case-sensitive identifiers."
)


def load_node_schemas(settings: Settings) -> list[NodeSchema]:
    """The schema files of ``--schemas`` (default: the shipped examples); a bad file stops the start."""
    return load_schemas(settings.schemas_dir, reserved=BUILTIN_TOOL_NAMES)


def profile_tools(profile: str, schemas: Sequence[NodeSchema] = ()) -> list[ToolSpec]:
    specs = tools_for(profile, [*ALL_TOOLS, *generated_tools(schemas)])
    if not specs:
        raise ConfigError(f"unknown tool profile {profile!r}")
    return specs


class Runtimes:
    """The runtimes of one server process, one per namespace it serves, made on first use over one
    driver, embedder and set of node schemas (stdio serves one; HTTP serves ``/mcp/<namespace>``)."""

    def __init__(self, resources: Resources, settings: Settings, schemas: list[NodeSchema]) -> None:
        self.resources = resources
        self.settings = settings
        self.schemas = schemas
        self._by_namespace: dict[str, Runtime] = {}

    def get(self, namespace: str | None = None) -> Runtime:
        ns = self.settings.namespace if namespace is None else namespace
        runtime = self._by_namespace.get(ns)
        if runtime is None:
            runtime = self._by_namespace[ns] = Runtime(
                store=self.resources.graph_store(ns),
                profile=self.settings.tools,
                max_answer_bytes=self.settings.max_answer_bytes,
                settings=self.settings,
                schemas=self.schemas,
            )
        return runtime

    async def drain(self) -> None:
        for runtime in list(self._by_namespace.values()):
            await runtime.drain()  # access records still being written


@contextlib.asynccontextmanager
async def open_runtimes(settings: Settings, clock: Clock | None = None) -> AsyncIterator[Runtimes]:
    """The server's runtimes over :func:`kg_neo4j.runtime.open_resources` (full bootstrap, the
    configured embedder loading in the background, one GraphStore per namespace shared by every
    session on it)."""
    schemas = load_node_schemas(settings)  # before connecting: a bad schema file fails fast
    async with open_resources(settings, bootstrap="full", embedder=True, clock=clock) as resources:
        log.info(
            "kg-neo4j %s: Neo4j %s database %r namespace %r profile %r embedding model %s, %d node schemas",
            __version__,
            resources.conn.uri,
            resources.database,
            settings.namespace,
            settings.tools,
            resources.model.name if resources.model else "none",
            len(schemas),
        )
        runtimes = Runtimes(resources, settings, schemas)
        try:
            yield runtimes
        finally:
            await runtimes.drain()


@contextlib.asynccontextmanager
async def open_runtime(settings: Settings, clock: Clock | None = None) -> AsyncIterator[Runtime]:
    """The runtime of the configured namespace (stdio, tests): :func:`open_runtimes`' first."""
    async with open_runtimes(settings, clock) as runtimes:
        yield runtimes.get()


def build_server(runtime: Runtime, *, stateless: bool = False) -> Server[Any]:
    """The MCP server of one runtime: its profile's tools and the reference's prompt (SDK 2.x handlers).

    Each request's caller (``server/access.py``) decides which tools are listed and may run: a
    ``read`` grant lists no write tool, and calling one is a tool error naming the scope it needs.
    ``stateless`` (HTTP replicas): no MCP session outlives a request, so resource subscriptions are
    refused with a message saying why."""
    specs = {s.name: s for s in profile_tools(runtime.profile, runtime.schemas)}
    tools = {name: s.tool(runtime.profile) for name, s in specs.items()}
    local = Caller(default_actor(runtime.settings.actor), "admin", runtime.store.namespace)
    # One id per stdio process (one client per process); HTTP sessions are told apart by their header.
    process_session = f"mcp-{uuid.uuid4().hex}"

    def session_of(ctx: ServerRequestContext[Any]) -> str:
        return _session_of(ctx, process_session)

    # The graph resource shows what this profile's read_graph answers (the reference's where it has none).
    read_spec = specs.get("read_graph") or reference.read_graph
    resource = GraphResource(runtime, read_spec, session_of)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = caller_of(ctx, local)
        return types.ListToolsResult(tools=[t for name, t in tools.items() if may_call(caller, specs[name])])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = specs.get(params.name)
        if spec is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True
            )
        caller = caller_of(ctx, local)
        if not may_call(caller, spec):
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=refusal(caller, spec))], is_error=True
            )
        token = current_session.set(session_of(ctx))
        actor = current_actor.set(caller.principal)
        try:
            result = await call(spec, runtime, params.arguments or {})
        finally:
            current_actor.reset(actor)
            current_session.reset(token)
        if not spec.read_only and not result.is_error:
            await resource.changed()  # before the answer, as the reference server does
        return result

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=prompts.PROMPT_NAME, description=prompts.PROMPT_DESCRIPTION, arguments=[])
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != prompts.PROMPT_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
        return types.GetPromptResult(
            description=prompts.PROMPT_DESCRIPTION,
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=prompts.SYSTEM_PROMPT)
                )
            ],
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=resource.list,
        on_read_resource=resource.read,
        on_subscribe_resource=_no_session("resources/subscribe") if stateless else resource.subscribe,
        on_unsubscribe_resource=resource.unsubscribe,
        on_subscriptions_listen=_no_session("subscriptions/listen") if stateless else resource.listen,
    )


def _no_session(method: str) -> Callable[..., Awaitable[Any]]:
    """The handler of ``method`` on a stateless server: an error saying why it cannot be served."""

    async def refuse(ctx: ServerRequestContext[Any], params: Any) -> Any:
        raise MCPError(
            code=types.INVALID_REQUEST,
            message=f"{method} needs a server-side MCP session, and this server runs stateless "
            "(--stateless / KG_NEO4J_HTTP_STATELESS): poll resources/read instead, or use a server "
            "without --stateless",
        )

    return refuse


def _session_of(ctx: ServerRequestContext[Any], process_session: str) -> str:
    """A stable id for the MCP session of a request: the streamable HTTP session id when the
    request carries one, else the process's own (stdio serves one client per process)."""
    headers = getattr(ctx.request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return f"mcp-{sid}" if sid else process_session
