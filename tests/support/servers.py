"""The test Neo4j's connection (``Neo4jInfo``, found by conftest's ``neo4j_info``) and real MCP client
sessions against ``kg-neo4j serve``: over stdio, over streamable HTTP, or either (``mcp_session``)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import GraphDatabase

ROOT = Path(__file__).resolve().parents[2]
KG = str(Path(sys.executable).with_name("kg-neo4j"))


@dataclass(frozen=True)
class Neo4jInfo:
    uri: str
    username: str
    password: str
    database: str
    source: str

    def env(self) -> dict[str, str]:
        return {
            "NEO4J_URI": self.uri,
            "NEO4J_USERNAME": self.username,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": self.database,
        }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wipe_neo4j(info: Neo4jInfo) -> None:
    """Empty a private Neo4j: every node, constraint and index (never the shared test database)."""
    assert info.source == "private", "only a private Neo4j is ever wiped"
    with GraphDatabase.driver(info.uri, auth=(info.username, info.password)) as drv:
        drv.execute_query("MATCH (n) DETACH DELETE n", database_=info.database)
        for rec in drv.execute_query("SHOW CONSTRAINTS YIELD name", database_=info.database).records:
            drv.execute_query("DROP CONSTRAINT $name IF EXISTS", name=rec["name"], database_=info.database)
        for rec in drv.execute_query(
            "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name", database_=info.database
        ).records:
            drv.execute_query("DROP INDEX $name IF EXISTS", name=rec["name"], database_=info.database)


def server_env(info: Neo4jInfo, **extra: str) -> dict[str, str]:
    """Environment for a `kg-neo4j` subprocess on the test Neo4j.  Semantic search is off
    unless a test asks for a model (KG_NEO4J_EMBEDDING_MODEL=...): most tests do not need it,
    and vectors written by a model would only make their answers depend on it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(info.env())
    env["KG_NEO4J_EMBEDDING_MODEL"] = "none"
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def stdio_session(
    info: Neo4jInfo, *args: str, env: dict[str, str] | None = None, message_handler: Any = None
) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=KG, args=["serve", *args], env=env or server_env(info))
    # errlog named at call time: stdio_client's default is the sys.stderr of when mcp was first
    # imported, and if that was inside a test using capfd it is capfd's file, closed at that test's
    # end ("I/O operation on closed file" in every later stdio session of the worker).
    async with (
        stdio_client(params, errlog=sys.stderr) as (read, write),
        ClientSession(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


@contextlib.contextmanager
def http_server(
    info: Neo4jInfo, *args: str, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[str]:
    """Run ``kg-neo4j serve --transport http`` and yield its base URL once it answers; its stderr (every
    log line) goes to ``log`` when given."""
    port = free_port()
    # stderr to a file, not a pipe: the server logs a line per request, and a pipe nobody reads fills
    # (64 KB) and blocks the server
    log_file = log.open("w+b") if log is not None else tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [KG, "serve", "--transport", "http", "--port", str(port), *args],
        env=env or server_env(info),
        stdout=subprocess.DEVNULL,
        stderr=log_file,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log_file.seek(0)
                raise RuntimeError(f"HTTP server exited: {log_file.read().decode(errors='replace')}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("HTTP server did not start within 60 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log_file.close()


@contextlib.asynccontextmanager
async def http_session(
    url: str, headers: dict[str, str] | None = None, message_handler: Any = None, path: str = "/mcp"
) -> AsyncIterator[Any]:
    import httpx2  # the MCP SDK 2.x client's HTTP library
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as client,
        streamable_http_client(f"{url}{path}", http_client=client) as (read, write),
        ClientSession(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def mcp_session(transport: str, info: Neo4jInfo, namespace: str, *args: str) -> AsyncIterator[Any]:
    """A real MCP client session over ``transport`` ('stdio' or 'http') on ``namespace``."""
    if transport == "stdio":
        async with stdio_session(info, "--namespace", namespace, *args) as s:
            yield s
    else:
        with http_server(info, "--namespace", namespace, *args) as url:
            async with http_session(url) as s:
                yield s
