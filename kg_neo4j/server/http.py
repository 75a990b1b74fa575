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
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg_neo4j.errors import ConfigError
from kg_neo4j.server.app import build_server, open_runtime
from kg_neo4j.server.wire import check_message
from kg_neo4j.settings import Settings

log = logging.getLogger(__name__)

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

    def __init__(
        self, app: ASGIApp, token: str | None, allowed_origins: list[str], *, check_host: bool = False
    ) -> None:
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
            await JSONResponse(
                {
                    "error": f"host {headers.get('host')!r} is not allowed: this server answers "
                    "loopback names only"
                },
                status_code=403,
            )(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.allowed_origins):
            await JSONResponse({"error": f"origin {origin!r} is not allowed"}, status_code=403)(
                scope, receive, send
            )
            return
        if self.token:
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self.token.encode()
            ):
                resp = JSONResponse(
                    {"error": "missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="kg-neo4j"'},
                )
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_http_app(settings: Settings) -> Any:
    check_bind(settings)
    holder: dict[str, StreamableHTTPSessionManager] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with open_runtime(settings) as runtime:
            manager = StreamableHTTPSessionManager(
                app=build_server(runtime), json_response=False, stateless=False
            )
            holder["manager"] = manager
            async with manager.run():
                yield

    class MCPEndpoint:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await holder["manager"].handle_request(scope, receive, send)

    from starlette.routing import Route

    app = Starlette(routes=[Route("/mcp", endpoint=MCPEndpoint())], lifespan=lifespan)
    guarded = GuardMiddleware(
        MessageCheckMiddleware(app),
        settings.auth_token,
        settings.allowed_origins,
        check_host=is_loopback(settings.host),
    )
    return HealthMiddleware(guarded)


#: Bodies larger than this are passed to the SDK unchecked (it refuses them with 413 itself).
_MAX_CHECKED_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE


class MessageCheckMiddleware:
    """Checks each POSTed JSON-RPC message with :func:`kg_neo4j.server.wire.check_message` (the checks
    stdio makes too); a refused one is answered 400 with the JSON-RPC error, the rest go on unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
            if size > _MAX_CHECKED_BODY:
                break
        body = b"".join(chunks)
        if not more:
            _, rejected = check_message(body)
            if rejected is not None:
                log.warning("refused a message: %s", rejected.message[:500])
                response = Response(rejected.response_bytes(), status_code=400, media_type="application/json")
                await response(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": more}
            return await receive()

        await self.app(scope, replay, send)


class HealthMiddleware:
    """``GET /healthz`` answers 200 ``{"status": "ok"}`` before any check: no token needed, no data shown
    (container health checks; README "Docker").  Everything else goes to the guarded app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/healthz" and scope["method"] in ("GET", "HEAD"):
            await JSONResponse({"status": "ok"})(scope, receive, send)
            return
        await self.app(scope, receive, send)
