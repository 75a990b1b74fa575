"""The current Neo4j line (2026.x) beside 5.26: the local server starts it with its own main class
and a Java it supports, the bootstrap detects what it supports and creates the filtered vector
indexes, and the filtered search statements (cypher/search.cypher) return the exact top k of one
namespace as of a moment, checked against cosine similarity computed here.

Runs a private 2026.x server (a temporary home on free ports, real JVM, real JDK)."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from neo4j import AsyncDriver, AsyncGraphDatabase

from kg_neo4j.clock import ManualClock
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings import resolve_model
from kg_neo4j.localdb import CURRENT_VERSION, config, entry_point, parse_java_major
from kg_neo4j.localdb.java import java_requirement
from kg_neo4j.localdb.server import LocalNeo4j
from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.capabilities import (
    FILTERED,
    FILTERED_VECTOR_INDEXES,
    detect_capabilities,
    vector_statements,
)
from kg_neo4j.store.connection import bootstrap
from support.neo4j_lines import private_server

#: A private server of the pinned current line whatever line the suite runs on: .ci/run runs these once.
pytestmark = pytest.mark.line_independent

K = 10


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalNeo4j]:
    db = private_server(tmp_path_factory.mktemp("neo4j-current"), CURRENT_VERSION)
    db.start(timeout=300)
    try:
        yield db
    finally:
        db.stop()


@pytest_asyncio.fixture(scope="module")
async def driver(current: LocalNeo4j) -> AsyncIterator[AsyncDriver]:
    uri, user, password = current.credentials()
    drv = AsyncGraphDatabase.driver(uri, auth=(user, password), notifications_min_severity="OFF")
    await bootstrap(drv, "neo4j", model=resolve_model("all-MiniLM-L6-v2"))
    yield drv
    await drv.close()


def test_current_line_runs_its_own_main_class_on_a_java_it_supports(current: LocalNeo4j) -> None:
    status = current.status()
    assert status["running"] is True and status["version"] == CURRENT_VERSION
    main_class = entry_point(current.lib_dir, CURRENT_VERSION)
    assert main_class == "org.neo4j.server.Neo4jCommunity"  # what the jar registers (see the issue)
    assert status["entry_point"] == main_class
    cmdline = Path(f"/proc/{status['pid']}/cmdline").read_bytes().decode().split("\0")
    assert main_class in cmdline and "org.neo4j.server.CommunityEntryPoint" not in cmdline
    java = str(status["java"])
    assert cmdline[0] == java
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=True)
    major = parse_java_major(out.stderr)
    assert major is not None and major >= java_requirement(CURRENT_VERSION) == 21
    assert status["data_version"] == CURRENT_VERSION


async def test_lucene_gets_the_vector_api_on_the_current_lines_java(
    current: LocalNeo4j, driver: AsyncDriver
) -> None:
    """Java 21+: the JVM is started with the incubator vector module, so Lucene computes the vector
    indexes' distances with SIMD instead of warning that it cannot (its warning is written when the
    first vector index is opened; the driver fixture's bootstrap has opened two)."""
    status = current.status()
    cmdline = Path(f"/proc/{status['pid']}/cmdline").read_bytes().decode().split("\0")
    assert "--add-modules=jdk.incubator.vector" in cmdline
    log = current.log_file.read_text(encoding="utf-8", errors="replace")
    assert "vector incubator module is not readable" not in log
    assert "Java version is too old" not in log


@pytest.mark.unit
@pytest.mark.parametrize(("major", "flag"), [(17, False), (21, True), (25, True)])
def test_the_vector_api_flag_only_for_a_java_lucene_can_use_it_on(major: int, flag: bool) -> None:
    cmd = config.command(Path("java"), major, Path("lib"), "Main", Path("home"), Path("conf"), "1g")
    assert ("--add-modules=jdk.incubator.vector" in cmd) is flag


async def test_bolt_answers_with_the_pinned_version(driver: AsyncDriver) -> None:
    records, _, _ = await driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"
    )
    kernel = next(r for r in records if r["name"] == "Neo4j Kernel")
    assert kernel["versions"] == [CURRENT_VERSION] and kernel["edition"] == "community"


async def test_capabilities_of_the_current_line(driver: AsyncDriver) -> None:
    caps = await detect_capabilities(driver, "neo4j")
    assert caps.version == CURRENT_VERSION and caps.edition == "community"
    assert caps.cypher25 and caps.vector_search_filters and caps.fulltext_search
    assert caps.schema_version == 2


async def test_bootstrap_makes_the_filtered_indexes_once_and_records_them(driver: AsyncDriver) -> None:
    model = resolve_model("all-MiniLM-L6-v2")
    assert model is not None
    for _ in range(2):  # idempotent
        indexes = await bootstrap(driver, "neo4j", model=model)
        assert indexes.state == "online" and indexes.population == 100.0
    records, _, _ = await driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, state, labelsOrTypes, properties, options RETURN *"
    )
    by_name = {r["name"]: r for r in records}
    assert set(by_name) == {"kg_observation_embedding", "kg_entity_embedding", *FILTERED_VECTOR_INDEXES}
    for name, filters in FILTERED_VECTOR_INDEXES.items():
        assert by_name[name]["state"] == "ONLINE"
        assert by_name[name]["properties"] == ["embedding", *filters]
        assert by_name[name]["options"]["indexConfig"]["vector.dimensions"] == model.dimension
        assert by_name[name]["options"]["indexConfig"]["vector.quantization.type"] == "NONE"
    meta, _, _ = await driver.execute_query(
        "MATCH (s:KgMeta {key: 'schema'}), (v:KgMeta {key: 'server'}) RETURN s.version AS schema, v AS server"
    )
    assert meta[0]["schema"] == 2
    server = meta[0]["server"]
    assert server["version"] == CURRENT_VERSION and server["vector_search_filters"] is True
    assert len(server["vector_filters"]) == len(FILTERED_VECTOR_INDEXES)
    assert await vector_statements(driver, "neo4j") == FILTERED


# --------------------------------------------------------------------------- the filtered statements


@pytest_asyncio.fixture(scope="module")
async def corpus(driver: AsyncDriver, embedder: Any) -> dict[str, Any]:
    """A small namespace beside a foreign one ten times its size, written by the store with the real
    model; the small one gets a second batch an hour later (for asOf)."""
    clock = ManualClock()
    topics = [
        "sailing",
        "chess",
        "baking bread",
        "jazz piano",
        "mountain hiking",
        "tax law",
        "beekeeping",
        "orbital mechanics",
        "pottery",
        "cycling",
    ]

    def people(prefix: str, n: int, kind: str) -> list[EntityIn]:
        return [
            EntityIn(
                name=f"{prefix}{i}",
                entityType=kind if i % 2 else "org",
                observations=[
                    f"{prefix}{i} spends weekends on {topics[i % len(topics)]}",
                    f"{prefix}{i} once wrote about {topics[(i * 3) % len(topics)]}",
                ],
            )
            for i in range(n)
        ]

    small = GraphStore(driver, namespace="versions-small", clock=clock, embedder=embedder)
    big = GraphStore(driver, namespace="versions-big", clock=clock, embedder=embedder)
    await small.create_entities(people("S", 30, "person"))
    await big.create_entities(people("B", 300, "person"))
    first_batch_at = clock.now()
    clock.advance(hours=1)
    await small.create_entities(people("Late", 10, "person"))
    await driver.execute_query("CALL db.awaitIndexes(300)")
    return {"first_batch_at": first_batch_at, "now": clock.now(), "embedder": embedder}


def embed(corpus: dict[str, Any], text: str) -> list[float]:
    return [float(x) for x in corpus["embedder"].encode([text])[0]]


def _exact(rows: list[dict[str, Any]], vector: list[float], k: int) -> list[tuple[str, int]]:
    """The k nearest by cosine, computed here."""
    m = np.array([r["embedding"] for r in rows], dtype=np.float64)
    q = np.array(vector, dtype=np.float64)
    scores = m @ q / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    order = np.argsort(-scores)[:k]
    return [(rows[i]["name"], rows[i]["seq"]) for i in order]


@pytest.mark.parametrize("question", ["who likes sailing boats", "bread and baking", "space and orbits"])
@pytest.mark.parametrize("as_of", ["now", "first_batch"])
async def test_filtered_observation_search_is_the_exact_top_k_of_the_namespace(
    driver: AsyncDriver, corpus: dict[str, Any], question: str, as_of: str
) -> None:
    at = corpus["now"] if as_of == "now" else corpus["first_batch_at"]
    vector = embed(corpus, question)
    records, _, _ = await driver.execute_query(
        queries()["search_memory_vector_filtered"],
        k=K,
        vector=vector,
        ns="versions-small",
        at=at,
        types=None,
        fulltext=None,
    )
    hits = records[0]["hits"]
    assert records[0]["raw_count"] == K == len(hits)
    rows, _, _ = await driver.execute_query(
        "MATCH (e:Entity)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.namespace = $ns AND o.created_at <= $at "
        "RETURN e.name AS name, o.seq AS seq, o.embedding AS embedding",
        ns="versions-small",
        at=at,
    )
    names = {r["name"] for r in rows}
    assert all(h["name"] in names for h in hits)  # every hit from the namespace asked, as of the moment asked
    if as_of == "first_batch":
        assert not any(h["name"].startswith("Late") for h in hits)
    assert [(h["name"], h["seq"]) for h in hits] == _exact([dict(r) for r in rows], vector, K)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("types", [None, ["org"]])
async def test_filtered_entity_search_filters_namespace_and_type_in_the_index(
    driver: AsyncDriver, corpus: dict[str, Any], types: list[str] | None
) -> None:
    vector = embed(corpus, "chess and jazz")
    statement = FILTERED.entity_for(types)
    records, _, _ = await driver.execute_query(
        queries()[statement],
        k=K,
        vector=vector,
        ns="versions-small",
        at=corpus["now"],
        types=types,
        fulltext=None,
    )
    hits = records[0]["hits"]
    rows, _, _ = await driver.execute_query(
        "MATCH (e:Entity) WHERE e.namespace = $ns AND ($types IS NULL OR e.entityType IN $types) "
        "RETURN e.name AS name, null AS seq, e.embedding AS embedding",
        ns="versions-small",
        types=types,
    )
    assert len(hits) == K and all(h["name"].startswith(("S", "Late")) for h in hits)
    assert all(types is None or h["entityType"] in types for h in hits)
    assert [(h["name"], None) for h in hits] == _exact([dict(r) for r in rows], vector, K)


async def test_small_namespace_needs_one_query_not_refetch_rounds(
    driver: AsyncDriver, corpus: dict[str, Any]
) -> None:
    """With k far above the namespace's size the index returns all of it and nothing foreign."""
    vector = embed(corpus, "weekends")
    records, _, _ = await driver.execute_query(
        queries()["search_memory_vector_filtered"],
        k=1000,
        vector=vector,
        ns="versions-small",
        at=corpus["now"] + timedelta(seconds=1),
        types=None,
        fulltext=None,
    )
    own, _, _ = await driver.execute_query(
        "MATCH (o:Observation {namespace: $ns}) RETURN count(o) AS n", ns="versions-small"
    )
    assert records[0]["raw_count"] == own[0]["n"] == len(records[0]["hits"]) == 80


async def test_search_memory_answers_on_the_current_line(driver: AsyncDriver, corpus: dict[str, Any]) -> None:
    store = GraphStore(
        driver, namespace="versions-small", clock=ManualClock(corpus["now"]), embedder=corpus["embedder"]
    )
    searched = await store.search_memory_traced("who bakes bread", limit=5)
    result = searched.result
    assert result.hits and all(h.name.startswith(("S", "Late")) for h in result.hits)
    assert any("baking bread" in (h.observation or "") for h in result.hits)
    assert searched.diagnostics.filtered  # the in-index filtered statements ran (their indexes are ONLINE)
    assert searched.diagnostics.rounds == 1  # one index query per channel, no refetch round
