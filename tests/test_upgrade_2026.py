"""A store written under Neo4j 5.26 and then started under the current line (2026.x) on the same
data directory: Neo4j opens it in place (no dump/load), the bootstrap adds the filtered vector
indexes (schema version 1 -> 2 on the metadata node), search keeps the 5.26 statements until
they are ONLINE and switches after; the old server version is refused on the upgraded data.

Runs a private 5.26 server, stops it, then a private 2026.x server on the same home and ports."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from neo4j import AsyncDriver, AsyncGraphDatabase

from kg_neo4j.clock import ManualClock
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings import resolve_model
from kg_neo4j.errors import ConfigError
from kg_neo4j.localdb import CURRENT_VERSION, LTS_VERSION
from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.capabilities import FILTERED, UNFILTERED, search_indexes, vector_statements
from kg_neo4j.store.connection import bootstrap
from support.neo4j_lines import free_port, private_server

#: Private servers of both pinned lines whatever line the suite runs on: .ci/run runs these once.
pytestmark = pytest.mark.line_independent

NS = "upgrade"
#: Enough vectors that the filtered indexes take a while to fill after the upgrade.
BULK = 20_000
QUESTION = "who keeps bees"


async def _driver(uri: str, user: str, password: str) -> AsyncDriver:
    drv = AsyncGraphDatabase.driver(uri, auth=(user, password), notifications_min_severity="OFF")
    await drv.verify_connectivity()
    return drv


async def _schema(drv: AsyncDriver) -> dict[str, Any]:
    records, _, _ = await drv.execute_query(
        "OPTIONAL MATCH (m:KgMeta {key: 'schema'}) RETURN m.version AS version, m.previous_version AS previous"
    )
    return dict(records[0])


@pytest_asyncio.fixture(scope="module")
async def upgraded(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> AsyncIterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("neo4j-upgrade")
    bolt, http = free_port(), free_port()
    model = resolve_model("all-MiniLM-L6-v2")
    assert model is not None
    clock = ManualClock()
    facts: dict[str, Any] = {"home": home, "bolt": bolt, "http": http}

    lts = private_server(home, LTS_VERSION, bolt, http)
    lts.start(timeout=300)
    try:
        drv = await _driver(*lts.credentials())
        try:
            lts_indexes = await bootstrap(drv, "neo4j", model=model)
            facts["lts_state"] = lts_indexes.state
            facts["lts_caps"] = lts_indexes.capabilities
            store = GraphStore(drv, namespace=NS, clock=clock, embedder=embedder)
            await store.create_entities(
                [
                    EntityIn(
                        name="Ada",
                        entityType="person",
                        observations=["Ada keeps bees on her roof", "Ada sells honey at the market"],
                    ),
                    EntityIn(name="Bo", entityType="person", observations=["Bo repairs old bicycles"]),
                    EntityIn(name="Cy", entityType="person", observations=["Cy teaches chess to children"]),
                ]
            )
            await drv.execute_query(
                "UNWIND range(1, $n) AS i CREATE (:Observation {namespace: 'upgrade-bulk', text: 'bulk ' + i, "
                "seq: i, created_at: $now, embedding: [j IN range(1, $dim) | rand() - 0.5]})",
                n=BULK,
                now=clock.now(),
                dim=model.dimension,
            )
            await drv.execute_query("CALL db.awaitIndexes(300)")
            facts["lts_schema"] = await _schema(drv)
            facts["lts_answer"] = [h.name for h in (await store.search_memory(QUESTION, limit=3)).hits]
        finally:
            await drv.close()
    finally:
        lts.stop()

    current = private_server(home, CURRENT_VERSION, bolt, http)
    current.start(timeout=300)
    try:
        facts["current"] = current
        drv = await _driver(*current.credentials())
        try:
            facts["driver"] = drv
            facts["clock"] = clock
            yield facts
        finally:
            await drv.close()
    finally:
        current.stop()


def test_the_5_26_store_had_no_filtered_indexes(upgraded: dict[str, Any]) -> None:
    caps = upgraded["lts_caps"]
    assert caps.version == LTS_VERSION and not caps.cypher25 and not caps.vector_search_filters
    assert upgraded["lts_state"] == "unsupported"
    assert upgraded["lts_schema"]["version"] == 1
    assert upgraded["lts_answer"][0] == "Ada"


async def test_upgrade_bootstraps_to_filtered_indexes_and_searches_the_old_way_until_online(
    upgraded: dict[str, Any], embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    drv: AsyncDriver = upgraded["driver"]
    assert upgraded["current"].data_version() == CURRENT_VERSION
    assert (await _schema(drv))["version"] == 1  # the data came across as 5.26 left it
    model = resolve_model("all-MiniLM-L6-v2")
    assert model is not None

    caplog.set_level(logging.INFO, logger="kg_neo4j")
    indexes = await bootstrap(drv, "neo4j", model=model)
    assert search_indexes(drv, "neo4j") is indexes
    assert indexes.capabilities.version == CURRENT_VERSION and indexes.capabilities.vector_search_filters
    schema = await _schema(drv)
    assert schema == {"version": 2, "previous": 1}
    assert any(
        "creating the filtered vector index kg_observation_embedding_filtered" in r.getMessage()
        for r in caplog.records
    )

    store = GraphStore(drv, namespace=NS, clock=upgraded["clock"], embedder=embedder)
    seen: list[tuple[str, float, bool]] = []
    deadline = time.monotonic() + 300
    while True:
        statements = await vector_statements(drv, "neo4j")
        seen.append((indexes.state, indexes.population, statements.filtered))
        # the store's choice (docs/neo4j-versions.md#neo4j-versions): the 5.26 statements until every filtered index is ONLINE
        assert statements == (FILTERED if indexes.state == "online" else UNFILTERED)
        answer = await store.search_memory(QUESTION, limit=3)
        assert answer.hits[0].name == "Ada"
        if statements.filtered:
            break
        assert time.monotonic() < deadline, f"filtered indexes not ONLINE in 300 s: {seen[-3:]}"
        await asyncio.sleep(0.5)
    assert seen[0][0] == "populating" and not seen[0][2], seen  # the upgrade was caught while filling
    assert any("populated" in r.getMessage() for r in caplog.records)

    vector = [float(x) for x in embedder.encode([QUESTION])[0]]
    records, _, _ = await drv.execute_query(
        queries()[FILTERED.observation],
        k=3,
        vector=vector,
        ns=NS,
        at=upgraded["clock"].now(),
        types=None,
        fulltext=None,
    )
    hits = records[0]["hits"]
    assert [h["name"] for h in hits][0] == "Ada" and records[0]["raw_count"] == 3 == len(hits)

    again = await bootstrap(drv, "neo4j", model=model)  # idempotent: nothing rebuilt, nothing bumped
    assert again.state == "online" and await _schema(drv) == {"version": 2, "previous": 1}


def test_the_old_version_is_refused_on_upgraded_data(upgraded: dict[str, Any]) -> None:
    home: Path = upgraded["home"]
    lts = private_server(home, LTS_VERSION, upgraded["bolt"], upgraded["http"])
    with pytest.raises(ConfigError) as err:
        lts.check_data_version()
    message = str(err.value)
    assert f"last run by Neo4j {CURRENT_VERSION}" in message
    assert f"KG_NEO4J_LOCAL_NEO4J_VERSION={CURRENT_VERSION}" in message
