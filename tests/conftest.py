"""Fixtures: a real Neo4j (never a mock), a fresh namespace per test, and real MCP
client sessions (stdio and streamable HTTP) against ``kg-neo4j serve``.

Neo4j is found in this order: ``NEO4J_URI`` if set; a Docker engine that answers
(testcontainers ``Neo4jContainer``); else the local server of ``kg-neo4j neo4j
start``, started here if needed.  If none can be had the tests fail loudly.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from neo4j import AsyncDriver, AsyncGraphDatabase, GraphDatabase

from kg_neo4j.clock import ManualClock
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import bootstrap
from support.servers import Neo4jInfo, free_port


@pytest.fixture(scope="session", autouse=True)
def no_torch_in_pytest() -> Iterator[None]:
    """A test that needs torch (sentence-transformers) runs it in a child process: imported in pytest's own
    process, torch's libraries print hundreds of ``nanobind: leaked`` lines after pytest's summary at exit.
    Such an import is an error at the end of the session (of each worker under xdist)."""
    yield
    heavy = sorted(m for m in ("torch", "sentence_transformers", "triton") if m in sys.modules)
    assert not heavy, f"{', '.join(heavy)} imported in the pytest process: import it in a child process"


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
