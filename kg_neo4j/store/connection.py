"""Driver creation and the idempotent schema bootstrap."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase

from kg_neo4j import __version__
from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings.model_files import ModelInfo
from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.settings import Settings

log = logging.getLogger(__name__)

#: Version of the graph layout this package writes (labels, properties, indexes).
SCHEMA_VERSION = 1

_SCHEMA_STATEMENTS = [
    "schema_node_key",
    "schema_entity_ns_name",
    "schema_entity_ns_name_lower",
    "schema_entity_name_lower",
    "schema_entity_type_lower",
    "schema_observation_text_lower",
    "schema_meta_key",
    "schema_fulltext",
    "schema_knowledge_ns",
    "schema_expired_knowledge_ns",
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


async def connect(settings: Settings) -> tuple[AsyncDriver, Connection]:
    """Open a driver and check that Neo4j answers (clear error when it does not)."""
    conn = resolve_connection(settings)
    driver = AsyncGraphDatabase.driver(
        conn.uri,
        auth=(conn.username, conn.password),
        notifications_min_severity="OFF",
        user_agent=f"kg-neo4j/{__version__}",
    )
    try:
        await driver.verify_connectivity()
    except neo4j.exceptions.AuthError as exc:
        await driver.close()
        raise ConfigError(f"Neo4j at {conn.uri} refused the credentials for user {conn.username!r}: {exc}") from exc
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
    q = queries()
    records, _, _ = await driver.execute_query(q["meta_read_embedding"], database_=database)
    meta = records[0] if records else None
    if meta and meta["reembed_target"]:
        raise ConfigError(
            f"a re-embedding to {meta['reembed_target']!r} was interrupted; finish it with "
            f"`kg-neo4j reembed --embedding-model {meta['reembed_target']}` (it resumes where it stopped)"
        )
    if meta and meta["model"] is not None and (
        not _same_model(meta["model"], model.name) or int(meta["dimension"]) != model.dimension
    ):
        raise ConfigError(
            f"this graph's vectors were made with embedding model {meta['model']!r} ({meta['dimension']} dimensions) "
            f"but the server is configured with {model.name!r} ({model.dimension} dimensions). Run "
            f"`kg-neo4j reembed --embedding-model {model.name}` to re-embed everything with the new model, or start "
            f"with --embedding-model {meta['model']}"
        )
    records, _, _ = await driver.execute_query(q["schema_vector_dimensions"], database_=database)
    for rec in records:
        if rec["dimension"] is not None and int(rec["dimension"]) != model.dimension:
            raise ConfigError(
                f"vector index {rec['name']} has {rec['dimension']} dimensions, the model {model.name!r} has "
                f"{model.dimension}: run `kg-neo4j reembed --embedding-model {model.name}`"
            )


async def ensure_vector_indexes(driver: AsyncDriver, database: str, dimension: int) -> None:
    q = queries()
    for name in ("schema_observation_vector", "schema_entity_vector"):
        await driver.execute_query(q[name], dimension=dimension, database_=database)


async def bootstrap(
    driver: AsyncDriver, database: str, clock: Clock | None = None, model: ModelInfo | None = None
) -> None:
    """Create constraints and indexes (idempotent), wait for them, record the schema version.

    With an embedding model: check it against the graph's metadata (clear error on a
    change), create the vector indexes with its dimension and record it.
    """
    q = queries()
    for name in _SCHEMA_STATEMENTS:
        await driver.execute_query(q[name], database_=database)
    now = (clock or SystemClock()).now()
    if model is not None:
        await check_embedding_model(driver, database, model)
        await ensure_vector_indexes(driver, database, model.dimension)
        await driver.execute_query(q["meta_write_embedding"], model=model.name, dimension=model.dimension, now=now,
                                   database_=database)
    await driver.execute_query(q["schema_await_indexes"], database_=database)
    records, _, _ = await driver.execute_query(q["meta_read_schema"], database_=database)
    found = records[0]["version"] if records else None
    if found is not None and found > SCHEMA_VERSION:
        raise ConfigError(
            f"the database holds graph schema version {found}, newer than this kg-neo4j understands "
            f"({SCHEMA_VERSION}); upgrade kg-neo4j"
        )
    await driver.execute_query(
        q["meta_write_schema"],
        version=SCHEMA_VERSION,
        package_version=__version__,
        now=now,
        database_=database,
    )
