"""Driver creation (one shared bookmark manager per process) and the idempotent schema bootstrap."""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase
from neo4j.api import AsyncBookmarkManager

from kg_neo4j import __version__
from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.embeddings.model_files import ModelInfo
from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.settings import Settings
from kg_neo4j.store import duplicate_hints, text_index, type_labels
from kg_neo4j.store.capabilities import (
    FILTERED_VECTOR_INDEXES,
    SearchIndexes,
    ServerCapabilities,
    detect_capabilities,
    register,
)
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.fulltext import ensure_fulltext_index

log = logging.getLogger(__name__)

#: Newest version of the graph layout this package writes (labels, properties, indexes): 1 on servers
#: without vector search with filters (5.26), 2 with the filtered vector indexes (2026.x and later).
SCHEMA_VERSION = 2

_SCHEMA_STATEMENTS = [
    "schema_node_key",
    "schema_entity_ns_name",
    "schema_entity_ns_name_lower",
    "schema_entity_ns_dup_last",
    "schema_entity_ns_dup_start",
    "schema_entity_ns_dup_end",
    "schema_entity_ns_dup_sound",
    "schema_text_lower",
    "schema_observation_ns_turn",
    "schema_meta_key",
    "schema_knowledge_ns",
    "schema_expired_knowledge_ns",
    "schema_merged_ns_name",
    "schema_merge_record_ns_into",
    "schema_merge_record_ns_id",
    "schema_experience_ns",
]


@dataclass(frozen=True)
class Connection:
    uri: str
    username: str
    password: str
    database: str


def resolve_connection(settings: Settings) -> Connection:
    """``NEO4J_*`` when set; otherwise the local server of ``kg-neo4j neo4j start``."""
    if settings.neo4j_uri:
        return Connection(
            settings.neo4j_uri,
            settings.neo4j_username or "neo4j",
            settings.neo4j_password or "",
            settings.neo4j_database,
        )
    from kg_neo4j.localdb import LocalNeo4j  # local import: only needed without NEO4J_URI

    uri, user, password = LocalNeo4j(settings).credentials()
    return Connection(uri, user, password, settings.neo4j_database)


class _SharedBookmarks(AsyncBookmarkManager):
    """The sessions' default bookmark manager: the driver's own ``execute_query`` one.

    With it, every read of this process (a session's or ``execute_query``'s, in any MCP session)
    carries the bookmarks of the writes before it, so a cluster routes it to a member that has
    them (docs/cluster.md).  The driver creates its ``execute_query`` manager itself, hence the
    indirection: this one forwards to it once the driver exists.
    """

    def __init__(self) -> None:
        self.target: AsyncBookmarkManager = AsyncGraphDatabase.bookmark_manager()

    async def update_bookmarks(
        self, previous_bookmarks: Collection[str], new_bookmarks: Collection[str]
    ) -> None:
        await self.target.update_bookmarks(previous_bookmarks, new_bookmarks)

    async def get_bookmarks(self) -> Collection[str]:
        return await self.target.get_bookmarks()


def bookmark_manager(driver: AsyncDriver) -> AsyncBookmarkManager:
    """The one bookmark manager every session and ``execute_query`` of a :func:`connect` driver share."""
    return driver.execute_query_bookmark_manager


async def connect(settings: Settings) -> tuple[AsyncDriver, Connection]:
    """Open a driver and check that Neo4j answers (clear error when it does not).

    All sessions of the driver and its ``execute_query`` share one bookmark manager
    (:func:`bookmark_manager`): causal consistency across the MCP sessions of this process.
    """
    conn = resolve_connection(settings)
    shared = _SharedBookmarks()
    driver = AsyncGraphDatabase.driver(
        conn.uri,
        auth=(conn.username, conn.password),
        notifications_min_severity="OFF",
        user_agent=f"kg-neo4j/{__version__}",
        bookmark_manager=shared,
    )
    shared.target = driver.execute_query_bookmark_manager
    try:
        await driver.verify_connectivity()
    except neo4j.exceptions.AuthError as exc:
        await driver.close()
        raise ConfigError(
            f"Neo4j at {conn.uri} refused the credentials for user {conn.username!r}: {exc}"
        ) from exc
    except (neo4j.exceptions.ServiceUnavailable, OSError) as exc:
        await driver.close()
        hint = "" if settings.neo4j_uri else " (start one with `kg-neo4j neo4j start`, or set NEO4J_URI)"
        raise Neo4jUnavailableError(f"cannot reach Neo4j at {conn.uri}{hint}: {exc}") from exc
    return driver, conn


def _same_model(a: str | None, b: str | None) -> bool:
    def norm(x: str | None) -> str:
        return (x or "").strip().lower().removeprefix("sentence-transformers/")

    return norm(a) == norm(b)


async def check_embedding_model(driver: AsyncDriver, database: str, model: ModelInfo) -> None:
    """Stop with a clear error when the graph's vectors come from another model or dimension."""
    x = Executor(driver, database)
    records = await x.write("meta_read_embedding")
    meta = records[0] if records else None
    if meta and meta["reembed_target"]:
        raise ConfigError(
            f"a re-embedding to {meta['reembed_target']!r} was interrupted; finish it with "
            f"`kg-neo4j reembed --embedding-model {meta['reembed_target']}` (it resumes where it stopped)"
        )
    if (
        meta
        and meta["model"] is not None
        and (not _same_model(meta["model"], model.name) or int(meta["dimension"]) != model.dimension)
    ):
        raise ConfigError(
            f"this graph's vectors were made with embedding model {meta['model']!r} ({meta['dimension']} dimensions) "
            f"but the server is configured with {model.name!r} ({model.dimension} dimensions). Run "
            f"`kg-neo4j reembed --embedding-model {model.name}` to re-embed everything with the new model, or start "
            f"with --embedding-model {meta['model']}"
        )
    records = await x.write("schema_vector_dimensions")
    for rec in records:
        if rec["dimension"] is not None and int(rec["dimension"]) != model.dimension:
            raise ConfigError(
                f"vector index {rec['name']} has {rec['dimension']} dimensions, the model {model.name!r} has "
                f"{model.dimension}: run `kg-neo4j reembed --embedding-model {model.name}`"
            )


async def ensure_vector_indexes(
    driver: AsyncDriver, database: str, dimension: int, capabilities: ServerCapabilities | None = None
) -> None:
    """Create the vector indexes for ``dimension`` (idempotent); on servers with vector search with
    filters also the filtered ones, replacing any of another dimension (they are only read once ONLINE)."""
    x = Executor(driver, database)
    for name in ("schema_observation_vector", "schema_entity_vector"):
        await x.create_schema(name, dimension=dimension)
    caps = capabilities or await detect_capabilities(driver, database)
    if not caps.vector_search_filters:
        return
    records = await x.write("schema_vector_dimensions")
    dims = {r["name"]: r["dimension"] for r in records}
    for index, create, drop in (
        (
            "kg_observation_embedding_filtered",
            "schema_observation_vector_filtered",
            "schema_drop_observation_vector_filtered",
        ),
        (
            "kg_entity_embedding_filtered",
            "schema_entity_vector_filtered",
            "schema_drop_entity_vector_filtered",
        ),
    ):
        if dims.get(index) is not None and int(dims[index]) != dimension:
            await x.write(drop)
        if index not in dims or dims[index] is None or int(dims[index]) != dimension:
            log.info(
                "creating the filtered vector index %s (filters: %s); it fills in the background",
                index,
                ", ".join(FILTERED_VECTOR_INDEXES[index]),
            )
        await x.create_schema(create, dimension=dimension)


async def _await_indexes(driver: AsyncDriver, database: str, skip: list[str], seconds: int = 300) -> None:
    """Wait until every index but ``skip`` is ONLINE (``skip``: filtered vector indexes still filling)."""
    x = Executor(driver, database)
    records = await x.write("schema_pending_indexes", skip=skip)
    for rec in records:
        await x.write("schema_await_index", name=rec["name"], seconds=seconds)


async def _write_server_meta(
    driver: AsyncDriver, database: str, caps: ServerCapabilities, vector_filters: list[str], now: datetime
) -> None:
    await Executor(driver, database).write(
        "meta_write_server",
        version=caps.version,
        edition=caps.edition,
        cypher_versions=list(caps.cypher_versions),
        vector_search_filters=caps.vector_search_filters,
        fulltext_search=caps.fulltext_search,
        vector_filters=vector_filters,
        now=now,
    )


async def bootstrap(
    driver: AsyncDriver,
    database: str,
    clock: Clock | None = None,
    model: ModelInfo | None = None,
    *,
    fulltext_analyzer: str | None = None,
    duplicate_hint: bool = False,
) -> SearchIndexes:
    """Create constraints and indexes (idempotent), wait for them, record the schema version.

    Detects the server's version and features first (kg_neo4j/store/capabilities.py) and records
    them on the ``:KgMeta {key: 'server'}`` node.  With an embedding model: check it against the
    graph's metadata (clear error on a change), create the vector indexes with its dimension
    (the filtered ones too where the server has them) and record it.  Filtered indexes that are
    still filling (a store upgraded from 5.26) are not waited for: the search path uses the 5.26
    statements until they are ONLINE.  Returns that state, also registered for the driver.
    ``fulltext_analyzer`` (the setting; None: schema only) is checked like the model
    (kg_neo4j/store/fulltext.py).  ``duplicate_hint`` (the setting): give entities written before the
    hint's keys existed their keys.
    """
    x = Executor(driver, database)
    caps = await detect_capabilities(driver, database)
    log.debug(
        "Neo4j %s %s: Cypher %s; vector search with filters: %s; fulltext SEARCH: %s",
        caps.version,
        caps.edition,
        "/".join(caps.cypher_versions),
        caps.vector_search_filters,
        caps.fulltext_search,
    )
    for name in _SCHEMA_STATEMENTS:
        await x.create_schema(name)
    await ensure_fulltext_index(driver, database, fulltext_analyzer)
    now = (clock or SystemClock()).now()
    # A store written by an older Neo4j moves to the server's format on its first write transaction
    # (Neo4j's automatic upgrade); only then does the vector index provider accept filter properties.
    # So the server record is written before any index is made, and again at the end.
    await _write_server_meta(driver, database, caps, [], now)
    if model is not None:
        await check_embedding_model(driver, database, model)
        await ensure_vector_indexes(driver, database, model.dimension, caps)
        await x.write("meta_write_embedding", model=model.name, dimension=model.dimension, now=now)
    await _await_indexes(driver, database, skip=list(FILTERED_VECTOR_INDEXES))
    indexes = SearchIndexes(caps)
    if caps.vector_search_filters:
        await indexes.refresh(driver, database)
    register(driver, database, indexes)
    records = await x.write("meta_read_schema")
    found = records[0]["version"] if records else None
    if found is not None and found > SCHEMA_VERSION:
        raise ConfigError(
            f"the database holds graph schema version {found}, newer than this kg-neo4j understands "
            f"({SCHEMA_VERSION}); upgrade kg-neo4j"
        )
    version = caps.schema_version if indexes.states else 1
    if found is not None and found > version:
        version = (
            found  # the filtered indexes are part of the layout once made; a schema-only bootstrap keeps them
        )
    if found is not None and version > found:
        log.info(
            "graph schema version %s -> %s (filtered vector indexes on Neo4j %s)",
            found,
            version,
            caps.version,
        )
    await x.write("meta_write_schema", version=version, package_version=__version__, now=now)
    declared = [f"{index}: {', '.join(props)}" for index, props in FILTERED_VECTOR_INDEXES.items()]
    await _write_server_meta(driver, database, caps, declared if indexes.states else [], now)
    # a graph written before search_nodes' one text index moves to it (once, batched, resumable)
    await text_index.migrate(driver, database)
    # entities written before type labels existed get them (once, batched, resumable;
    # docs/graph-model.md#types-are-labels)
    await type_labels.backfill(driver, database)
    # entities written before create_entities' duplicate hint get its keys (once, batched, resumable),
    # only when the hint is on: nothing else reads them, and a user who did not ask for the hint should
    # not wait for a sweep of every entity at the first start after an upgrade
    if duplicate_hint:
        await duplicate_hints.backfill(driver, database)
    return indexes
