"""What the Neo4j server supports, and which vector statements search_memory runs on it.

Neo4j 5.26 (the LTS) has database-wide vector indexes read by ``db.index.vector.queryNodes``: the
store over-fetches and filters by namespace afterwards.  Neo4j 2026.x's Cypher 25 ``SEARCH`` clause
filters a vector index by properties declared on it (``WITH [o.namespace, ...]``), so one query
returns the top k of a namespace.  The bootstrap (kg_neo4j/store/connection.py) detects which
server it talks to, creates the filtered indexes where they exist and registers a
:class:`SearchIndexes` per driver and database; the search path asks :func:`vector_statements`
which statements to run (docs/neo4j-versions.md#neo4j-versions).  Until the filtered indexes are ONLINE (an
upgraded store fills them in the background), the 5.26 statements are used.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import neo4j
from neo4j import AsyncDriver

from kg_neo4j.store.executor import Executor

log = logging.getLogger(__name__)

__all__ = [
    "FILTERED_VECTOR_INDEXES",
    "SearchIndexes",
    "ServerCapabilities",
    "VectorStatements",
    "detect_capabilities",
    "register",
    "search_indexes",
    "vector_statements",
]

#: The filtered vector indexes (cypher/schema.cypher) and the properties each declares as filters.
FILTERED_VECTOR_INDEXES: dict[str, tuple[str, ...]] = {
    "kg_observation_embedding_filtered": ("namespace", "created_at"),
    "kg_entity_embedding_filtered": ("namespace", "entityType", "created_at"),
}
#: How often (seconds) the search path re-reads the state of filtered indexes that are still populating.
RECHECK_S = 2.0

# Parsed (not run) to learn whether the server knows the clause: EXPLAIN of a SEARCH on an index that
# does not exist fails with IndexNotFound where the clause exists, with a syntax error where it does not.
_PROBE_VECTOR = (
    "CYPHER 25 EXPLAIN MATCH (n:KgMeta) SEARCH n IN (VECTOR INDEX kg_capability_probe FOR [1.0] "
    "WHERE n.key = 'probe' LIMIT 1) SCORE AS s RETURN s"
)
_PROBE_FULLTEXT = (
    "CYPHER 25 EXPLAIN MATCH (n:KgMeta) SEARCH n IN (FULLTEXT INDEX kg_capability_probe FOR 'probe' LIMIT 1) "
    "SCORE AS s RETURN s"
)


@dataclass(frozen=True)
class ServerCapabilities:
    """The server behind a driver: version, edition and the Cypher features the store can use."""

    version: str
    edition: str
    cypher_versions: tuple[str, ...]
    #: Cypher 25 ``SEARCH`` over a vector index with ``WHERE`` filters on declared properties
    vector_search_filters: bool
    #: Cypher 25 ``SEARCH`` over a fulltext index (no filters: the fulltext channel keeps its post-filter)
    fulltext_search: bool

    @property
    def cypher25(self) -> bool:
        return "25" in self.cypher_versions

    @property
    def schema_version(self) -> int:
        """The graph schema version the bootstrap records on this server: 2 with filtered vector indexes."""
        return 2 if self.vector_search_filters else 1


@dataclass(frozen=True)
class VectorStatements:
    """The statement names (cypher/search.cypher) of search_memory's two vector channels."""

    filtered: bool
    observation: str
    entity: str
    entity_types: str

    def entity_for(self, types: list[str] | None) -> str:
        return self.entity_types if types else self.entity


UNFILTERED = VectorStatements(
    False, "search_memory_vector", "search_memory_entities", "search_memory_entities"
)
FILTERED = VectorStatements(
    True,
    "search_memory_vector_filtered",
    "search_memory_entities_filtered",
    "search_memory_entities_filtered_types",
)


@dataclass
class SearchIndexes:
    """The vector search path of one (driver, database): unfiltered, populating or filtered."""

    capabilities: ServerCapabilities
    #: name -> (state, populationPercent) of the filtered indexes when last read
    states: dict[str, tuple[str, float]] = field(default_factory=dict)
    _checked: float = 0.0
    _lock: asyncio.Lock | None = None

    @property
    def state(self) -> str:
        """``unsupported`` (5.26), ``populating`` (5.26 path until ready), ``online`` or ``failed``."""
        if not self.capabilities.vector_search_filters or not self.states:
            return "unsupported" if not self.capabilities.vector_search_filters else "missing"
        found = [s for s, _ in self.states.values()]
        if len(found) == len(FILTERED_VECTOR_INDEXES) and all(s == "ONLINE" for s in found):
            return "online"
        return "failed" if "FAILED" in found else "populating"

    @property
    def population(self) -> float:
        """The least populated filtered index, in percent (100 when online)."""
        return min((p for _, p in self.states.values()), default=0.0)

    async def refresh(self, driver: AsyncDriver, database: str) -> None:
        records = await Executor(driver, database).read("schema_filtered_vector_state")
        before = self.state
        self.states = {r["name"]: (str(r["state"]), float(r["populationPercent"] or 0.0)) for r in records}
        self._checked = time.monotonic()
        if self.state != before or self.state == "populating":
            log.info(
                "filtered vector indexes: %s (%.0f%% populated)%s",
                self.state,
                self.population,
                "" if self.state == "online" else "; search_memory uses the unfiltered (5.26) path meanwhile",
            )

    async def statements(self, driver: AsyncDriver, database: str) -> VectorStatements:
        """The filtered statements once every filtered index is ONLINE, the 5.26 ones before."""
        if not self.capabilities.vector_search_filters:
            return UNFILTERED
        if self.state != "online" and time.monotonic() - self._checked >= RECHECK_S:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:  # concurrent searches read the state once
                if self.state != "online" and time.monotonic() - self._checked >= RECHECK_S:
                    await self.refresh(driver, database)
        return FILTERED if self.state == "online" else UNFILTERED


_REGISTRY: weakref.WeakKeyDictionary[AsyncDriver, dict[str, SearchIndexes]] = weakref.WeakKeyDictionary()


def register(driver: AsyncDriver, database: str, indexes: SearchIndexes) -> None:
    _REGISTRY.setdefault(driver, {})[database] = indexes


def search_indexes(driver: AsyncDriver, database: str) -> SearchIndexes | None:
    """What the bootstrap found for this driver and database (None before a bootstrap)."""
    return _REGISTRY.get(driver, {}).get(database)


async def vector_statements(driver: AsyncDriver, database: str) -> VectorStatements:
    """Which vector statements search_memory runs on this driver and database (5.26's before a bootstrap)."""
    indexes = search_indexes(driver, database)
    return UNFILTERED if indexes is None else await indexes.statements(driver, database)


async def _parses(driver: AsyncDriver, database: str, probe: str) -> bool:
    try:
        await driver.execute_query(probe, database_=database, routing_=neo4j.RoutingControl.READ)
    except neo4j.exceptions.ClientError as exc:
        code = exc.code or ""
        if code.endswith("IndexNotFound"):
            return True
        if code.endswith(("SyntaxError", "ArgumentError")):
            return False
        log.warning("could not tell whether Neo4j supports %r (%s); assuming it does not", probe[:60], exc)
        return False
    return True


async def detect_capabilities(driver: AsyncDriver, database: str) -> ServerCapabilities:
    """Ask the server what it is (``dbms.components``) and which Cypher 25 features it parses."""
    records, _, _ = await driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    by_name: dict[str, Any] = {r["name"]: r for r in records}
    kernel = by_name.get("Neo4j Kernel") or (records[0] if records else None)
    version = str(kernel["versions"][0]) if kernel is not None else "unknown"
    edition = str(kernel["edition"]) if kernel is not None else "unknown"
    cypher = by_name.get("Cypher")
    cypher_versions = tuple(str(v) for v in cypher["versions"]) if cypher is not None else ("5",)
    has25 = "25" in cypher_versions
    return ServerCapabilities(
        version=version,
        edition=edition,
        cypher_versions=cypher_versions,
        vector_search_filters=has25 and await _parses(driver, database, _PROBE_VECTOR),
        fulltext_search=has25 and await _parses(driver, database, _PROBE_FULLTEXT),
    )
