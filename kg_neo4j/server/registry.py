"""Tool specs, profiles and the one place where errors become MCP tool errors."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
import neo4j
import pydantic

from kg_neo4j.auth import Scope
from kg_neo4j.errors import KgError, TooLargeError
from kg_neo4j.schemas import NodeSchema
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore

log = logging.getLogger(__name__)

#: What a tool returns: the exact text block and the structured output.
ToolOutput = tuple[str, dict[str, Any]]


@dataclass
class Runtime:
    """What the tools run on, shared by every session of a server (``server.app.open_runtime`` opens
    it once per process): the store, the profile, the answer cap, the configuration and the node
    schemas whose tools the server generates."""

    store: GraphStore
    profile: str
    max_answer_bytes: int
    #: the configuration the server started with (skills root, default session, hook budget)
    settings: Settings = field(default_factory=lambda: Settings())
    #: the node schemas loaded at start (docs/memorymesh.md#generated-tools): their tools are listed too
    schemas: list[NodeSchema] = field(default_factory=list)

    #: writes made after an answer (access recording), kept so they are not garbage-collected
    pending: set[asyncio.Task[Any]] = field(default_factory=set)

    def after_answer(self, work: Awaitable[Any], what: str) -> None:
        """Run ``work`` (a separate write) without delaying the answer; a failure is logged, never raised."""

        async def guarded() -> None:
            try:
                await work
            except Exception:  # noqa: BLE001 - the answer has gone; the write is best effort
                log.warning("%s failed", what, exc_info=True)

        task = asyncio.get_running_loop().create_task(guarded())
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def drain(self) -> None:
        """Wait for the writes started by :meth:`after_answer` (tests, shutdown)."""
        while self.pending:
            await asyncio.gather(*list(self.pending), return_exceptions=True)


#: The MCP session of the call being handled (set by the server for each tool call).
current_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("kg_session", default=None)


def session_id(rt: Runtime) -> str | None:
    """The session recorded on knowledge a call touches: ``--session-id`` if configured, else the MCP session."""
    return rt.settings.session_id or current_session.get()


Handler = Callable[[Runtime, dict[str, Any]], Awaitable[ToolOutput]]
#: A dialect's error answer: (tool, arguments, message, exception) -> the error's text.
ErrorText = Callable[[str, dict[str, Any], str, BaseException], str]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    output_schema: dict[str, Any] | None = None
    #: Input schema to use outside the strict ``reference`` profile (adds e.g. paging).
    extended_schema: dict[str, Any] | None = None
    title: str | None = None
    profiles: tuple[str, ...] = ()
    #: the error's text in this tool's dialect (default: the plain message)
    error_text: ErrorText | None = None
    #: the model that checks the arguments (``declare.tool``)
    input_model: type[pydantic.BaseModel] | None = None
    #: a call valid against the seed graph of ``server/examples.py`` (docs, tests/test_input_sweep.py)
    example: dict[str, Any] | None = None
    #: further valid calls, for what ``example`` leaves out (e.g. the other of two alternative fields)
    more_examples: tuple[dict[str, Any], ...] = ()
    #: the tool rewrites a whole namespace or reads files on the server: it needs the ``admin`` scope
    admin: bool = False

    @property
    def scope(self) -> Scope:
        """The grant scope a caller needs (docs/team.md): tools declared ``admin`` ``admin`` (even a
        read-only one: crystallize_skill reads the server's files), read tools ``read``, the rest ``write``."""
        return "admin" if self.admin else "read" if self.read_only else "write"

    def __post_init__(self) -> None:
        if self.output_schema is not None:
            object.__setattr__(self, "output_schema", inline_refs(self.output_schema))

    def tool(self, profile: str) -> types.Tool:
        schema = self.input_schema
        if profile != "reference" and self.extended_schema is not None:
            schema = self.extended_schema
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=schema,
            output_schema=self.output_schema,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=self.destructive if not self.read_only else None,
                idempotent_hint=self.idempotent,
                open_world_hint=False,
            ),
        )


def schema_of(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """A tool's input or output JSON schema from its pydantic model (field aliases, e.g. ``from``)."""
    return model.model_json_schema(by_alias=True)


#: Keywords that only annotate: merged beside an inlined definition they cannot change its meaning.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``#/$defs/...`` references replaced by the definitions (same meaning).

    Every answer is checked by the MCP client against the tool's output schema; resolving a ``$ref``
    per array item made that check slower on large answers (docs/performance.md), and some clients do
    not resolve ``$ref`` at all.  A recursive definition cannot be inlined: then the schema is kept as is.
    """
    defs = schema.get("$defs") or {}

    class _Recursive(Exception):
        pass

    def walk(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [walk(v, seen) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            name = ref[8:]
            if name in seen:
                raise _Recursive(name)
            target = walk(defs[name], seen | {name})
            extra = {k: walk(v, seen) for k, v in node.items() if k != "$ref"}
            if not extra:
                return target
            if set(extra) <= _ANNOTATIONS:
                return {**target, **extra}
            return {"allOf": [target], **extra}
        return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}

    try:
        out: dict[str, Any] = walk(schema, frozenset())
    except _Recursive:
        return schema
    return out


def dump(obj: Any) -> str:
    """JSON text exactly as the reference server writes it (``JSON.stringify(x, null, 2)``)."""
    return json.dumps(obj, indent=2, ensure_ascii=False)


async def call(spec: ToolSpec, runtime: Runtime, args: dict[str, Any]) -> types.CallToolResult:
    """Run one tool; every failure becomes an MCP tool error (isError) that says what to fix."""
    try:
        text, structured = await spec.handler(runtime, args)
        # Reads are capped (the store pages them); a write's echo is never refused after it landed.
        if spec.read_only and len(text.encode()) > runtime.max_answer_bytes:
            raise TooLargeError(
                f"{spec.name}: the answer would exceed this server's cap of {runtime.max_answer_bytes} bytes; "
                "narrow the request or page it"
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
        )
    except KgError as exc:
        failure: BaseException = exc
        message = str(exc)
    except neo4j.exceptions.ClientError as exc:
        log.warning("tool %s: Neo4j rejected the request: %s", spec.name, exc)
        failure, message = exc, f"Neo4j rejected the request ({exc.code}): {exc.message}; nothing was written"
    except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired) as exc:
        failure, message = exc, f"Neo4j is unavailable: {exc}; nothing was written, retry when it is back"
    except Exception as exc:  # noqa: BLE001 - the server must answer, never crash
        log.exception("tool %s failed", spec.name)
        failure, message = exc, f"internal error in {spec.name}: {type(exc).__name__}: {exc}"
    text = spec.error_text(spec.name, args, message, failure) if spec.error_text else message
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def tools_for(profile: str, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    return [s for s in specs if profile in s.profiles]
