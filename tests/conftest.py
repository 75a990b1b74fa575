"""Fixtures: a real Neo4j (never a mock), a fresh namespace per test, and real MCP
client sessions (stdio and streamable HTTP) against ``kg-neo4j serve``.

Neo4j is found in this order: ``NEO4J_URI`` if set; a Docker engine that answers
(testcontainers ``Neo4jContainer``); else the local server of ``kg-neo4j neo4j
start``, started here if needed.  If none can be had the tests fail loudly.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from neo4j import AsyncDriver, AsyncGraphDatabase, GraphDatabase

from kg_neo4j.clock import ManualClock
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import bootstrap

ROOT = Path(__file__).resolve().parent.parent
KG = str(Path(sys.executable).with_name("kg-neo4j"))


@pytest.fixture(scope="session", autouse=True)
def no_torch_in_pytest() -> Iterator[None]:
    """A test that needs torch (sentence-transformers) runs it in a child process: imported in pytest's own
    process, torch's libraries print hundreds of ``nanobind: leaked`` lines after pytest's summary at exit.
    Such an import is an error at the end of the session (of each worker under xdist)."""
    yield
    heavy = sorted(m for m in ("torch", "sentence_transformers", "triton") if m in sys.modules)
    assert not heavy, f"{', '.join(heavy)} imported in the pytest process: import it in a child process"


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


def _docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def neo4j_info() -> Iterator[Neo4jInfo]:
    settings = Settings()
    if settings.neo4j_uri:
        yield Neo4jInfo(
            settings.neo4j_uri,
            settings.neo4j_username or "neo4j",
            settings.neo4j_password or "",
            settings.neo4j_database,
            "NEO4J_URI",
        )
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community") as container:
            yield Neo4jInfo(container.get_connection_url(), "neo4j", container.password, "neo4j", "docker")
        return
    from kg_neo4j.localdb import LocalNeo4j

    local = LocalNeo4j(settings)
    local.start()  # raises (fails the run) if it cannot
    uri, user, password = local.credentials()
    yield Neo4jInfo(uri, user, password, "neo4j", "local")


@pytest.fixture(scope="session")
def sync_driver(neo4j_info: Neo4jInfo) -> Iterator[Any]:
    driver = GraphDatabase.driver(
        neo4j_info.uri, auth=(neo4j_info.username, neo4j_info.password), notifications_min_severity="OFF"
    )
    driver.verify_connectivity()
    yield driver
    driver.close()


@pytest_asyncio.fixture(scope="session")
async def driver(neo4j_info: Neo4jInfo) -> AsyncIterator[AsyncDriver]:
    drv = AsyncGraphDatabase.driver(
        neo4j_info.uri, auth=(neo4j_info.username, neo4j_info.password), notifications_min_severity="OFF"
    )
    await drv.verify_connectivity()
    await bootstrap(drv, neo4j_info.database)
    yield drv
    await drv.close()


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    """A namespace no other test uses: tests never see each other's data."""
    return f"test-{request.node.name[:60]}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest_asyncio.fixture
async def store(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock) -> GraphStore:
    return GraphStore(driver, database=neo4j_info.database, namespace=namespace, clock=clock)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def private_neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jInfo]:
    """A second, private Neo4j (a temporary home on free ports) for the tests that change what is a property
    of the whole database (the embedding model, the fulltext analyzer).  Started once per run (a start costs
    tens of seconds); each module that uses it starts from an empty database (:func:`wipe_neo4j`)."""
    from kg_neo4j.localdb import LocalNeo4j

    home = tmp_path_factory.mktemp("neo4j-private")
    db = LocalNeo4j(
        Settings(
            home=home,
            local_bolt_port=free_port(),
            local_http_port=free_port(),
            local_heap="512m",
            local_pagecache="256m",
        )
    )
    db.start()
    try:
        uri, user, password = db.credentials()
        yield Neo4jInfo(uri, user, password, "neo4j", "private")
    finally:
        db.stop()


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
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


@contextlib.contextmanager
def http_server(info: Neo4jInfo, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``kg-neo4j serve --transport http`` and yield its base URL once it answers."""
    port = free_port()
    # stderr to a file, not a pipe: the server logs a line per request, and a pipe nobody reads fills
    # (64 KB) and blocks the server
    log_file = tempfile.TemporaryFile()
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


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real all-MiniLM-L6-v2 (from the installed package; nothing is downloaded)."""
    from kg_neo4j.embeddings import load_embedder

    emb = load_embedder("all-MiniLM-L6-v2", background=False)
    assert emb is not None
    emb.model()
    return emb


@pytest_asyncio.fixture
async def semantic_store(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock, embedder: Any
) -> GraphStore:
    """A GraphStore that embeds, on a database whose vector indexes exist for the model."""
    from kg_neo4j.embeddings import resolve_model

    await bootstrap(driver, neo4j_info.database, model=resolve_model("all-MiniLM-L6-v2"))
    return GraphStore(
        driver, database=neo4j_info.database, namespace=namespace, clock=clock, embedder=embedder
    )
