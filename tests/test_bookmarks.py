"""One bookmark manager per server process (kg_neo4j/store/connection.py ``connect``): every session
and every ``execute_query`` of the driver use it, so a read started after a write, from any MCP
session (any GraphStore) of the process, carries that write's bookmark.  On a cluster that is
what sends the read to a member that has the write (docs/cluster.md); here it is checked on the
test server over ``bolt://`` and ``neo4j://`` (a single server answers routing requests too).
Follower lag itself needs a cluster; these tests check what the driver sends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import neo4j
import pytest
import pytest_asyncio
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock
from kg_neo4j.models import EntityIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import bookmark_manager, connect
from support.servers import Neo4jInfo

#: A bookmark no server issued: a transaction that carries it is refused, which shows it was sent.
FOREIGN_BOOKMARK = "FB:kg-neo4j-test-not-a-bookmark"


def with_scheme(uri: str, scheme: str) -> str:
    """``uri`` with ``bolt``/``neo4j`` as its scheme, keeping a ``+s``/``+ssc`` security suffix."""
    parts = urlsplit(uri)
    suffix = parts.scheme.partition("+")[2]
    return urlunsplit(parts._replace(scheme=f"{scheme}+{suffix}" if suffix else scheme, query=""))


@pytest.fixture(params=["bolt", "neo4j"])
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def shared(neo4j_info: Neo4jInfo, scheme: str) -> AsyncIterator[tuple[AsyncDriver, str]]:
    settings = Settings(
        neo4j_uri=with_scheme(neo4j_info.uri, scheme),
        neo4j_username=neo4j_info.username,
        neo4j_password=neo4j_info.password,
        neo4j_database=neo4j_info.database,
    )
    driver, conn = await connect(settings)
    assert conn.uri.startswith(scheme)
    yield driver, conn.database
    await driver.close()


async def test_a_session_write_is_in_the_manager_and_execute_query_reads_after_it(
    shared: tuple[AsyncDriver, str], namespace: str
) -> None:
    driver, db = shared
    manager = bookmark_manager(driver)
    assert manager is driver.execute_query_bookmark_manager

    async def write(tx: neo4j.AsyncManagedTransaction) -> None:
        await tx.run("CREATE (:BookmarkProbe {ns: $ns, n: 1})", ns=namespace)

    async with driver.session(database=db) as session:
        await session.execute_write(write)
        written = await session.last_bookmarks()
    assert written.raw_values and set(written.raw_values) <= set(await manager.get_bookmarks())

    records, _, _ = await driver.execute_query(
        "MATCH (p:BookmarkProbe {ns: $ns}) RETURN count(p) AS n",
        ns=namespace,
        database_=db,
        routing_=neo4j.RoutingControl.READ,
    )
    assert records[0]["n"] == 1

    # and the other way round: a write by execute_query, a read in a new session
    before = set(await manager.get_bookmarks())
    await driver.execute_query("CREATE (:BookmarkProbe {ns: $ns, n: 2})", ns=namespace, database_=db)
    after = set(await manager.get_bookmarks())
    assert after and after != before
    async with driver.session(database=db, default_access_mode=neo4j.READ_ACCESS) as session:
        result = await session.run("MATCH (p:BookmarkProbe {ns: $ns}) RETURN count(p) AS n", ns=namespace)
        assert (await result.single(strict=True))["n"] == 2
    await driver.execute_query("MATCH (p:BookmarkProbe {ns: $ns}) DELETE p", ns=namespace, database_=db)


async def test_every_read_carries_the_managers_bookmarks(shared: tuple[AsyncDriver, str]) -> None:
    """A bookmark put in the shared manager goes out with the next read of a session and of
    execute_query: the server refuses one it never issued."""
    driver, db = shared
    manager = bookmark_manager(driver)
    await driver.execute_query("CREATE (p:BookmarkProbe) DELETE p", database_=db)  # a write: a real bookmark
    real = set(await manager.get_bookmarks())
    assert real
    await manager.update_bookmarks([], [FOREIGN_BOOKMARK])
    assert FOREIGN_BOOKMARK in await manager.get_bookmarks()
    try:
        with pytest.raises(neo4j.exceptions.ClientError) as in_session:
            async with driver.session(database=db, default_access_mode=neo4j.READ_ACCESS) as session:
                await (await session.run("RETURN 1 AS one")).consume()
        with pytest.raises(neo4j.exceptions.ClientError) as in_query:
            await driver.execute_query("RETURN 1 AS one", database_=db, routing_=neo4j.RoutingControl.READ)
    finally:  # the manager only drops a bookmark for a newer one: put the real ones back in its place
        await manager.update_bookmarks([FOREIGN_BOOKMARK], sorted(real))
    for err in (in_session.value, in_query.value):
        assert "Bookmark" in (err.code or ""), err
    records, _, _ = await driver.execute_query(
        "RETURN 1 AS one", database_=db, routing_=neo4j.RoutingControl.READ
    )
    assert records[0]["one"] == 1


async def test_two_stores_of_one_process_read_each_others_writes(
    shared: tuple[AsyncDriver, str], namespace: str
) -> None:
    """Two GraphStores on one driver, as two MCP sessions of one server: the second one's read
    starts with the bookmark of the first one's write."""
    driver, db = shared
    manager = bookmark_manager(driver)
    clock = ManualClock()
    writer = GraphStore(driver, database=db, namespace=namespace, clock=clock)
    reader = GraphStore(driver, database=db, namespace=namespace, clock=clock)
    before = set(await manager.get_bookmarks())
    await writer.create_entities([EntityIn(name="Ada", entityType="person", observations=["writes first"])])
    after = set(await manager.get_bookmarks())
    assert after and after != before
    graph = await reader.open_nodes(["Ada"])
    assert [e.name for e in graph.entities] == ["Ada"]
    assert graph.entities[0].observations == ["writes first"]


async def test_another_process_does_not_share_the_bookmarks(
    shared: tuple[AsyncDriver, str], neo4j_info: Neo4jInfo, scheme: str, namespace: str
) -> None:
    """A second driver (what a hook or a CLI command opens in its own process) starts with no
    bookmarks: on a cluster its first read may miss this process's latest writes (docs/cluster.md)."""
    driver, db = shared
    await driver.execute_query("CREATE (:BookmarkProbe {ns: $ns})", ns=namespace, database_=db)
    assert await bookmark_manager(driver).get_bookmarks()
    settings = Settings(
        neo4j_uri=with_scheme(neo4j_info.uri, scheme),
        neo4j_username=neo4j_info.username,
        neo4j_password=neo4j_info.password,
        neo4j_database=neo4j_info.database,
    )
    other, _ = await connect(settings)
    try:
        assert set(await bookmark_manager(other).get_bookmarks()) == set()
    finally:
        await other.close()
    await driver.execute_query("MATCH (p:BookmarkProbe {ns: $ns}) DELETE p", ns=namespace, database_=db)
