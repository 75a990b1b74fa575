"""Processes that start at once on a new database (replicas behind a load balancer, test workers) each
bootstrap it: every ``CREATE ... IF NOT EXISTS`` may find its index missing in two transactions at once, and
the second commit is refused as an equivalent of the first.  Each start must still succeed
(``Executor.create_schema``).  Run on the private Neo4j, emptied first: the race needs a database without
the indexes."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import AsyncGraphDatabase, GraphDatabase

from kg_neo4j.store.connection import bootstrap
from support.servers import Neo4jInfo, wipe_neo4j


@pytest.mark.parametrize("round_", range(3))
async def test_bootstraps_at_once_on_a_new_database_all_succeed(
    private_neo4j_server: Neo4jInfo, round_: int
) -> None:
    info = private_neo4j_server
    wipe_neo4j(info)
    drivers = [AsyncGraphDatabase.driver(info.uri, auth=(info.username, info.password)) for _ in range(4)]
    try:
        results = await asyncio.gather(
            *(bootstrap(d, info.database) for d in drivers), return_exceptions=True
        )
    finally:
        for d in drivers:
            await d.close()
    assert [r for r in results if isinstance(r, BaseException)] == [], results
    with GraphDatabase.driver(info.uri, auth=(info.username, info.password)) as drv:
        names = {
            r["name"] for r in drv.execute_query("SHOW INDEXES YIELD name", database_=info.database).records
        }
    assert {"kg_node_key", "kg_entity_ns_name", "kg_text_lower", "kg_fulltext_ns"} <= names
