"""The one place a process opens Neo4j: the driver, the schema bootstrap, the embedder, the stores.

Every entry point asks for what it needs and nothing more (docs/development.md#layout, #layers):

==================  ===========  ==========================  ========
caller              bootstrap    embedder                    stores
==================  ===========  ==========================  ========
serve               full         when a model is configured  graph
import, skills      full         when a model is configured  transfer / graph
export              schema       none                        transfer
reembed             schema       required (checked first)    driver
rebuild-fulltext    schema       none                        driver
maintain            schema       none                        maintenance
hook                none         none (no torch)             driver only (:func:`hook_driver`)
==================  ===========  ==========================  ========

``full`` also checks the embedding model and the fulltext analyzer against the graph; ``schema``
creates constraints and indexes only (reembed and rebuild-fulltext are what fix a mismatch).
This module sits below ``server``, ``hooks`` and ``commands`` and above ``store``; it imports the
store and the embeddings lazily so that a hook that needs no graph imports neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kg_neo4j.clock import Clock
from kg_neo4j.settings import Settings

if TYPE_CHECKING:
    from neo4j import AsyncDriver

    from kg_neo4j.embeddings import ModelInfo, SentenceEmbedder
    from kg_neo4j.store import GraphStore
    from kg_neo4j.store.connection import Connection
    from kg_neo4j.store.maintenance import MaintenanceStore
    from kg_neo4j.store.transfer import TransferStore

#: ``full``: schema, model and analyzer checks; ``schema``: constraints and indexes only; None: no bootstrap.
Bootstrap = Literal["full", "schema"] | None


@dataclass
class Resources:
    """What :func:`open_resources` opened for a process: the Neo4j driver and connection, the
    embedding model and its embedder (when asked), and the stores built over them on first use.
    The MCP server's runtime (``server.registry.Runtime``) is built over these."""

    settings: Settings
    driver: AsyncDriver
    conn: Connection
    clock: Clock | None = None
    model: ModelInfo | None = None
    embedder: SentenceEmbedder | None = None
    _stores: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def database(self) -> str:
        return self.conn.database

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    def graph_store(self, namespace: str | None = None) -> GraphStore:
        """The store the MCP tools run on for ``namespace`` (default: the configured one): one per
        namespace and process, so its caches are shared by every session on that namespace."""
        ns = self.namespace if namespace is None else namespace
        key = f"graph:{ns}"
        if key not in self._stores:
            from kg_neo4j.store import GraphStore

            self._stores[key] = GraphStore(
                self.driver,
                database=self.database,
                namespace=ns,
                clock=self.clock,
                max_answer_bytes=self.settings.max_answer_bytes,
                embedder=self.embedder,
            )
        store: GraphStore = self._stores[key]
        return store

    def transfer_store(self) -> TransferStore:
        from kg_neo4j.store.transfer import TransferStore

        return TransferStore(self.graph_store())

    def maintenance_store(self) -> MaintenanceStore:
        from kg_neo4j.store.maintenance import MaintenanceStore

        return MaintenanceStore(self.graph_store())


@contextlib.asynccontextmanager
async def open_resources(
    settings: Settings, *, bootstrap: Bootstrap = "full", embedder: bool = False, clock: Clock | None = None
) -> AsyncIterator[Resources]:
    """Connect to Neo4j (a clear error when it does not answer), bootstrap as asked, yield, close.

    With ``embedder``, the configured model (if not 'none') starts loading in the background
    before Neo4j is reached; the first call that needs it waits for it."""
    from kg_neo4j.store.connection import bootstrap as run_bootstrap
    from kg_neo4j.store.connection import connect

    model = _model(settings) if embedder or bootstrap == "full" else None
    encoder = None
    if embedder and model is not None:
        from kg_neo4j.embeddings import SentenceEmbedder

        encoder = SentenceEmbedder(model, runtime=settings.embedding_runtime)
        encoder.start_loading()
    driver, conn = await connect(settings)
    try:
        if bootstrap == "full":
            await run_bootstrap(
                driver,
                conn.database,
                clock,
                model,
                fulltext_analyzer=settings.fulltext_analyzer,
                duplicate_hint=settings.hint_on(model is not None),
            )
        elif bootstrap == "schema":
            await run_bootstrap(driver, conn.database, clock)
        yield Resources(settings, driver, conn, clock, model, encoder)
    finally:
        await driver.close()


def _model(settings: Settings) -> ModelInfo | None:
    from kg_neo4j.embeddings.model_files import resolve_model  # reads the model's files only: no torch

    return resolve_model(settings.embedding_model)


def hook_driver(settings: Settings, timeout: float) -> tuple[Any, Connection]:
    """A driver for a hook (docs/hooks.md): fails fast (``timeout`` seconds to connect, no retries),
    no bootstrap, no connectivity round trip; the driver is imported only when a hook reads the graph."""
    from neo4j import AsyncGraphDatabase

    from kg_neo4j.store.connection import resolve_connection

    conn = resolve_connection(settings)
    driver = AsyncGraphDatabase.driver(
        conn.uri,
        auth=(conn.username, conn.password),
        connection_timeout=timeout,
        connection_acquisition_timeout=timeout,
        max_transaction_retry_time=0.0,
        notifications_min_severity="OFF",
    )
    return driver, conn
