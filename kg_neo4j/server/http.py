"""Streamable HTTP transport at ``/mcp``: bearer-token auth and an Origin check.

- binds 127.0.0.1 unless told otherwise; a non-loopback bind needs a token;
- with a token set, a request without ``Authorization: Bearer <token>`` gets 401;
- a request whose ``Origin`` is neither loopback nor listed in ``allowed_origins`` gets 403
  (DNS-rebinding protection for browsers);
- on a loopback bind, a request whose ``Host`` is not a loopback name gets 403 too (a
  rebound name such as ``evil.example`` resolving to 127.0.0.1 is refused even without an
  ``Origin``).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback(host: str) -> bool:
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> None:
    if not is_loopback(settings.host) and not settings.auth_token:
        raise ConfigError(
            f"refusing to serve HTTP on non-loopback address {settings.host!r} without a token: "
            "set --auth-token (or KG_NEO4J_AUTH_TOKEN)"
        )


def origin_allowed(origin: str, allowed: list[str]) -> bool:
    if origin in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and is_loopback(parts.hostname or "")


def host_allowed(host: str) -> bool:
    """A ``Host`` header naming a loopback address or ``localhost`` (any port)."""
    name = urlsplit(f"//{host}").hostname if host else None
    return bool(name) and is_loopback(name or "")


class GuardMiddleware:
    """Token and Origin checks in front of the MCP endpoint."""

    def __init__(self, app: ASGIApp, token: str | None, allowed_origins: list[str], *,
                 check_host: bool = False) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = allowed_origins
        self.check_host = check_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.check_host and not host_allowed(headers.get("host", "")):
            await JSONResponse({"error": f"host {headers.get('host')!r} is not allowed: this server answers "
                                         "loopback names only"}, status_code=403)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.allowed_origins):
            await JSONResponse({"error": f"origin {origin!r} is not allowed"}, status_code=403)(scope, receive, send)
            return
        if self.token:
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token.encode()):
                resp = JSONResponse({"error": "missing or wrong bearer token"}, status_code=401,
                                    headers={"WWW-Authenticate": 'Bearer realm="kg-neo4j"'})
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_http_app(settings: Settings) -> Any:
    from kg_neo4j.server.app import build_server, open_runtime

    check_bind(settings)
    holder: dict[str, StreamableHTTPSessionManager] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with open_runtime(settings) as runtime:
            manager = StreamableHTTPSessionManager(app=build_server(runtime), json_response=False, stateless=False)
            holder["manager"] = manager
            async with manager.run():
                yield

    class MCPEndpoint:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await holder["manager"].handle_request(scope, receive, send)

    from starlette.routing import Route

    app = Starlette(routes=[Route("/mcp", endpoint=MCPEndpoint())], lifespan=lifespan)
    return GuardMiddleware(app, settings.auth_token, settings.allowed_origins, check_host=is_loopback(settings.host))
