"""The fulltext index's analyzer: a setting (``KG_NEO4J_FULLTEXT_ANALYZER`` / ``--fulltext-analyzer``,
default ``english``), checked at start like the embedding model, rebuilt by ``kg-neo4j rebuild-fulltext``.
docs/recall.md#languages.

One index (``kg_fulltext_ns``) serves every namespace of a database, so its analyzer is a property of the
database, as the embedding model is.  At start the setting must name an analyzer this Neo4j offers
(``db.index.fulltext.listAvailableAnalyzers()``) and, when the index exists, the analyzer it was built
with: Neo4j analyzes a query with the index's own analyzer, so a changed setting would otherwise be
silently ignored.  A fresh database gets the index with the configured analyzer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.errors import ConfigError
from kg_neo4j.store.executor import Executor

log = logging.getLogger(__name__)

DEFAULT_ANALYZER = "english"
INDEX = "kg_fulltext_ns"
#: The index of earlier versions (without the namespace): its analyzer is carried over, then it is dropped.
LEGACY_INDEX = "kg_fulltext"
#: Where the setting comes from, as errors name it.
SETTING = "KG_NEO4J_FULLTEXT_ANALYZER / --fulltext-analyzer"
#: How long a rebuild waits for Neo4j to index the existing text (seconds).
REBUILD_TIMEOUT_S = 3600.0


async def available_analyzers(driver: AsyncDriver, database: str) -> list[str]:
    return [r["analyzer"] for r in await Executor(driver, database).write("fulltext_analyzers")]


async def index_state(driver: AsyncDriver, database: str, name: str = INDEX) -> dict[str, Any] | None:
    """``{analyzer, state, populationPercent}`` of the index ``name``, None when it does not exist."""
    rows = await Executor(driver, database).write("fulltext_index_state", name=name)
    return dict(rows[0]) if rows else None


async def check_analyzer(driver: AsyncDriver, database: str, analyzer: str) -> None:
    """A clear error unless this Neo4j offers ``analyzer``."""
    offered = await available_analyzers(driver, database)
    if analyzer not in offered:
        raise ConfigError(
            f"{SETTING} {analyzer!r} is not a fulltext analyzer this Neo4j offers; choose one of: "
            f"{', '.join(offered)}"
        )


async def ensure_fulltext_index(driver: AsyncDriver, database: str, analyzer: str | None) -> None:
    """bootstrap's step.  ``analyzer`` None (commands that only need the schema): the index's own
    analyzer, the default for a new one.  Else check the setting against this Neo4j and the existing
    index.  A database of an earlier version gets the index made new beside its old one (under another
    name, so that servers starting together each create it, never drop what another made), with the
    old one's analyzer unless the setting names one; the old one is then dropped.  Bootstrap waits
    until Neo4j has indexed the stored text."""
    state = await index_state(driver, database)
    legacy = await index_state(driver, database, LEGACY_INDEX)
    if analyzer is None:
        analyzer = (state or legacy or {}).get("analyzer") or DEFAULT_ANALYZER
    else:
        await check_analyzer(driver, database, analyzer)
        if state is not None and state["analyzer"] != analyzer:
            raise ConfigError(
                f"the fulltext index {INDEX} was built with analyzer {state['analyzer']!r} but {SETTING} is "
                f"{analyzer!r}. Run `kg-neo4j rebuild-fulltext --fulltext-analyzer {analyzer}` to rebuild it "
                f"(every namespace of the database shares it), or start with --fulltext-analyzer "
                f"{state['analyzer']}"
            )
    await Executor(driver, database).create_schema("schema_fulltext", analyzer=analyzer)
    if legacy is not None:
        log.info(
            "fulltext index %s replaces %s (it holds the namespace too); Neo4j is indexing the stored text",
            INDEX,
            LEGACY_INDEX,
        )
        await Executor(driver, database).write("fulltext_drop", name=LEGACY_INDEX)
        # an old index of the same definition made Neo4j refuse the first as its equivalent
        await Executor(driver, database).create_schema("schema_fulltext", analyzer=analyzer)


async def rebuild_fulltext(
    driver: AsyncDriver,
    database: str,
    analyzer: str,
    *,
    on_progress: Callable[[float], None] | None = None,
    timeout: float = REBUILD_TIMEOUT_S,
) -> dict[str, Any]:
    """Drop the index and create it with ``analyzer``; Neo4j indexes the existing text again, and this
    waits until the index is ONLINE (``on_progress`` gets its population percentage).  Idempotent: an
    index already built with ``analyzer`` is kept.  Interrupted after the drop, the next start (or a
    new run) creates the index again."""
    await check_analyzer(driver, database, analyzer)
    current = await index_state(driver, database)
    before = current or await index_state(driver, database, LEGACY_INDEX)
    previous = before["analyzer"] if before else None
    rebuild = previous != analyzer or current is None
    if rebuild:
        await Executor(driver, database).write("fulltext_drop", name=INDEX)
        await Executor(driver, database).write("fulltext_drop", name=LEGACY_INDEX)
        await Executor(driver, database).create_schema("schema_fulltext", analyzer=analyzer)
        log.info(
            "fulltext index %s: analyzer %s -> %s; Neo4j is indexing the existing text",
            INDEX,
            previous,
            analyzer,
        )
    started = time.monotonic()
    while True:
        state = await index_state(driver, database)
        if state is None:
            raise ConfigError(f"the fulltext index {INDEX} disappeared during the rebuild; run it again")
        if on_progress:
            on_progress(float(state["populationPercent"] or 0.0))
        if state["state"] == "ONLINE":
            break
        if state["state"] == "FAILED":
            raise ConfigError(
                f"Neo4j failed to build the fulltext index {INDEX} with analyzer {analyzer!r}; "
                "its log says why"
            )
        if time.monotonic() - started > timeout:
            raise ConfigError(
                f"the fulltext index {INDEX} is still {state['state']} after {timeout:.0f} s; "
                "Neo4j goes on building it (SHOW FULLTEXT INDEXES shows its progress)"
            )
        await asyncio.sleep(0.2)
    return {"index": INDEX, "analyzer": analyzer, "previous": previous, "rebuilt": rebuild}
