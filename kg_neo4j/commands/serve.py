"""``kg-neo4j serve``: the MCP server over stdio or streamable HTTP (docs/connecting.md)."""

from __future__ import annotations

import argparse
import asyncio
import copy
import errno
import logging
import socket

from mcp.server.lowlevel import NotificationOptions

from kg_neo4j.errors import SettingError
from kg_neo4j.server.app import build_server, open_runtime
from kg_neo4j.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    if settings.transport == "http":
        from kg_neo4j.server.http import check_bind

        check_bind(settings)
        check_port_free(settings.host, settings.port)
        asyncio.run(serve_http(settings))
    else:
        asyncio.run(serve_stdio(settings))
    return 0


async def serve_stdio(settings: Settings) -> None:
    from kg_neo4j.server.stdio import stdio_transport

    async with open_runtime(settings) as runtime:
        server = build_server(runtime)
        async with stdio_transport() as (read, write):
            await server.run(read, write, server.create_initialization_options(NotificationOptions()))


async def serve_http(settings: Settings) -> None:
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from kg_neo4j.server.http import build_http_app

    app = build_http_app(settings)
    # Every log line goes to stderr, uvicorn's access log included (its default is stdout).
    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    log_config.setdefault("filters", {})["query_string"] = {"()": HideQueryString}
    log_config["handlers"]["access"]["filters"] = ["query_string"]
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        lifespan="on",
        log_config=log_config,
    )
    await uvicorn.Server(config).serve()


class HideQueryString(logging.Filter):
    """Writes an access log line without its query string (``?`` stays, to show there was one): a
    client that puts a credential in the URL (``?access_token=eyJ...``, ``?code=``, ``?key=``) is
    refused, and its token must not reach the log either (docs/team.md#attribution).  No MCP request
    needs a query string, so nothing useful is lost."""

    def filter(self, record: logging.LogRecord) -> bool:
        # uvicorn's access line: (client, method, path with query, HTTP version, status)
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (args[0], args[1], args[2].split("?", 1)[0] + "?", *args[3:])
        return True


def check_port_free(host: str, port: int) -> None:
    """Fail before the server starts when ``host:port`` cannot be bound (uvicorn would print a
    several-line report and exit 3).  Binds each address ``host`` resolves to, as asyncio's
    ``create_server`` does, skipping address families the machine lacks."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise SettingError(
            "--host / KG_NEO4J_HOST", repr(host), f"a host name that resolves ({exc})", from_flag=False
        ) from exc
    for family, kind, proto, _, addr in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(addr)
            except OSError as exc:
                if exc.errno == errno.EADDRNOTAVAIL:
                    continue
                raise OSError(
                    exc.errno, f"cannot listen on {host}:{port} (--port / KG_NEO4J_PORT): {exc.strerror}"
                ) from exc
