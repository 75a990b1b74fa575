"""Streamable HTTP transport at ``/mcp`` and ``/mcp/<namespace>``: who may call, and the browser checks.

- binds 127.0.0.1 unless told otherwise; a non-loopback bind needs authentication (a grants file,
  the single token or OAuth);
- with authentication on, a request without a valid bearer token gets 401, one on a namespace its
  principal has no grant on 403 (:class:`Door`; docs/team.md);
- a request whose ``Origin`` is neither loopback nor listed in ``allowed_origins`` gets 403
  (DNS-rebinding protection for browsers);
- on a loopback bind, a request whose ``Host`` is not a loopback name gets 403 too (a
  rebound name such as ``evil.example`` resolving to 127.0.0.1 is refused even without an
  ``Origin``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
from anyio.abc import TaskGroup
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg_neo4j.auth import Authenticator, AuthError, protected_resource_metadata, resource_metadata_url
from kg_neo4j.errors import ConfigError
from kg_neo4j.server.access import CALLER_KEY, Caller
from kg_neo4j.server.app import Runtimes, build_server, open_runtimes
from kg_neo4j.server.wire import check_message
from kg_neo4j.settings import MAX_NAMESPACE_CHARS, Settings
from kg_neo4j.store.actor import default_actor

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
    if not is_loopback(settings.host) and not (
        settings.auth_token or settings.grants_file or settings.oauth_issuer
    ):
        raise ConfigError(
            f"refusing to serve HTTP on non-loopback address {settings.host!r} without authentication: "
            "set --grants (KG_NEO4J_GRANTS_FILE), --auth-token (KG_NEO4J_AUTH_TOKEN) or KG_NEO4J_OAUTH_ISSUER"
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
    """Host and Origin checks in front of everything but ``/healthz``."""

    def __init__(self, app: ASGIApp, allowed_origins: list[str], *, check_host: bool = False) -> None:
        self.app = app
        self.allowed_origins = allowed_origins
        self.check_host = check_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
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
        await self.app(scope, receive, send)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def build_http_app(settings: Settings) -> Any:
    check_bind(settings)
    authenticator = Authenticator.from_settings(settings)
    holder: dict[str, Namespaces] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with open_runtimes(settings) as runtimes, anyio.create_task_group() as tasks:
            holder["namespaces"] = Namespaces(runtimes, tasks, stateless=settings.http_stateless)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()  # every namespace's session manager stops

    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        caller: Caller = scope[CALLER_KEY]
        try:
            manager = await holder["namespaces"].manager(caller.namespace)
        except TooManyNamespaces as exc:
            await JSONResponse({"error": str(exc)}, status_code=503)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)

    routes: list[BaseRoute] = []
    if authenticator.oauth:
        metadata = protected_resource_metadata(settings)

        async def serve_metadata(_request: Request) -> Response:
            return JSONResponse(metadata)

        routes.append(Route(urlsplit(resource_metadata_url(settings)).path, serve_metadata, methods=["GET"]))
    rest = Starlette(routes=routes, lifespan=lifespan)  # the lifespan, the metadata document, 404s
    mcp = Door(MessageCheckMiddleware(mcp_endpoint), settings, authenticator)

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        # Not a Starlette route: its router matches the decoded path, where an encoded '/' in a
        # namespace would split it, and it redirects /mcp to /mcp/.
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == "/mcp" or path.startswith("/mcp/")):
            await mcp(scope, receive, send)
        else:
            await rest(scope, receive, send)

    guarded = GuardMiddleware(dispatch, settings.allowed_origins, check_host=is_loopback(settings.host))
    return HealthMiddleware(guarded)


#: At most this many namespaces are served by one process (each holds a store and a session manager
#: until the server stops): a principal with a prefix grant cannot grow the process without bound.
MAX_SERVED_NAMESPACES = 10_000


class TooManyNamespaces(Exception):
    pass


class Namespaces:
    """One MCP session manager per namespace served, started on the namespace's first request and
    stopped with the server.  Separate managers keep a session on its namespace: a session id made
    on ``/mcp/a`` is unknown on ``/mcp/b``."""

    def __init__(self, runtimes: Runtimes, tasks: TaskGroup, *, stateless: bool) -> None:
        self.runtimes = runtimes
        self.tasks = tasks
        self.stateless = stateless
        self._managers: dict[str, StreamableHTTPSessionManager] = {}
        self._lock = anyio.Lock()

    async def manager(self, namespace: str) -> StreamableHTTPSessionManager:
        found = self._managers.get(namespace)
        if found is not None:
            return found
        async with self._lock:
            found = self._managers.get(namespace)
            if found is None and len(self._managers) >= MAX_SERVED_NAMESPACES:
                raise TooManyNamespaces(
                    f"this server already serves {MAX_SERVED_NAMESPACES} namespaces, its limit; "
                    f"namespace {namespace!r} is served by another replica or after a restart"
                )
            if found is None:
                found = StreamableHTTPSessionManager(
                    app=build_server(self.runtimes.get(namespace), stateless=self.stateless),
                    json_response=False,
                    stateless=self.stateless,
                )
                await self.tasks.start(self._run, found)
                self._managers[namespace] = found
        return found

    @staticmethod
    async def _run(manager: StreamableHTTPSessionManager, *, task_status: Any) -> None:
        async with manager.run():
            task_status.started()
            await anyio.sleep_forever()


class Door:
    """Who is calling, on which namespace, with what scope: the checks every ``/mcp`` request passes.

    The namespace is the path's one segment after ``/mcp`` (percent-decoded: ``/mcp/team-a%2Fnotes``
    is ``team-a/notes``); ``/mcp`` itself is the configured namespace.  With authentication on, the
    bearer token resolves to a principal (:class:`kg_neo4j.auth.Authenticator`); no valid token is a
    401 with ``WWW-Authenticate: Bearer`` (and the protected-resource metadata URL when OAuth is on),
    a principal with no grant on the namespace a 403 naming the namespace and the scope needed.
    Without authentication (a loopback bind with no token, no grants file, no OAuth) the local user
    owns the server: every namespace, every scope.  Bodies are JSON and never carry a stack trace."""

    def __init__(self, app: ASGIApp, settings: Settings, authenticator: Authenticator) -> None:
        self.app = app
        self.settings = settings
        self.authenticator = authenticator
        self.local = default_actor(settings.actor)
        self.challenge = 'Bearer realm="kg-neo4j"'
        if authenticator.oauth:
            self.challenge += f', resource_metadata="{resource_metadata_url(settings)}"'

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        namespace, problem = namespace_of(scope, self.settings.namespace)
        if namespace is None:
            await JSONResponse({"error": problem}, status_code=404)(scope, receive, send)
            return
        if not self.authenticator.enabled:
            scope[CALLER_KEY] = Caller(self.local, "admin", namespace)
            await self.app(scope, receive, send)
            return
        scheme, _, token = _headers(scope).get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self.unauthorized(
                "missing bearer token: send Authorization: Bearer <token>", scope, receive, send
            )
            return
        try:
            principal = await self.authenticator.authenticate(token.strip())
        except AuthError as exc:
            await self.unauthorized(str(exc), scope, receive, send)
            return
        granted = principal.scope_on(namespace)
        if granted is None:
            await JSONResponse(
                {
                    "error": f"principal {principal.name!r} has no grant on namespace {namespace!r}",
                    "namespace": namespace,
                    "needed": "read",
                },
                status_code=403,
            )(scope, receive, send)
            return
        scope[CALLER_KEY] = Caller(principal.name, granted, namespace)
        await self.app(scope, receive, send)

    async def unauthorized(self, reason: str, scope: Scope, receive: Receive, send: Send) -> None:
        await JSONResponse(
            {"error": reason},
            status_code=401,
            headers={"WWW-Authenticate": f'{self.challenge}, error="invalid_token"'},
        )(scope, receive, send)


def namespace_of(scope: Scope, default: str) -> tuple[str | None, str]:
    """The namespace a request under the ``/mcp`` mount names, or None and why not.  The raw path is
    read (not the decoded one) so that an encoded ``/`` stays inside the namespace."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else scope["path"]
    path = path.split("?", 1)[0]
    rest = path.removeprefix("/mcp")
    if rest in ("", "/"):
        return default, ""
    segment = rest.removeprefix("/")
    if "/" in segment:
        return None, (
            f"no such endpoint {path!r}: a namespace is one path segment, /mcp/<namespace>, with '/' "
            "written %2F"
        )
    try:
        namespace = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        return None, f"the namespace in {path!r} is not percent-encoded UTF-8"
    if not namespace or len(namespace) > MAX_NAMESPACE_CHARS:
        return None, f"a namespace is 1 to {MAX_NAMESPACE_CHARS} characters; got {len(namespace)}"
    return namespace, ""


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
    (container health checks; docs/install.md#docker).  Everything else goes to the guarded app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/healthz" and scope["method"] in ("GET", "HEAD"):
            await JSONResponse({"status": "ok"})(scope, receive, send)
            return
        await self.app(scope, receive, send)
