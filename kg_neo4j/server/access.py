"""Who is calling a tool, and what their grant lets them do (docs/team.md).

Over HTTP the door (``server/http.py``) resolves the bearer token to a principal and its scope on the
request's namespace and leaves a :class:`Caller` in the ASGI scope; every MCP request of that HTTP
request reads it from there (``ctx.request.scope``), so a token revoked mid-session stops at its next
request.  Over stdio the local user owns the process: the caller is ``--actor`` (or the OS user) with
every scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext

from kg_neo4j.auth import Scope, allows
from kg_neo4j.server.registry import ToolSpec

#: Where the door leaves the caller in the ASGI scope.
CALLER_KEY = "kg_neo4j.caller"


@dataclass(frozen=True)
class Caller:
    principal: str
    #: the highest scope the principal's grants give on the namespace of the request
    scope: Scope
    namespace: str


def caller_of(ctx: ServerRequestContext[Any], local: Caller) -> Caller:
    """The caller the door recorded for the request of ``ctx``, else ``local`` (stdio)."""
    scope = getattr(ctx.request, "scope", None)
    found = scope.get(CALLER_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Caller) else local


def may_call(caller: Caller, spec: ToolSpec) -> bool:
    return allows(caller.scope, spec.scope)


def refusal(caller: Caller, spec: ToolSpec) -> str:
    """The tool error of a call the caller's grant does not allow (nothing ran)."""
    return (
        f"{spec.name} needs the {spec.scope!r} scope on namespace {caller.namespace!r}; principal "
        f"{caller.principal!r} has {caller.scope!r} there; nothing was written"
    )
