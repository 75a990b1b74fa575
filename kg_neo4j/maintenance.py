"""Long sweeps run from the CLI (with a progress bar on stderr): reembed, maintain."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from kg_neo4j.clock import Clock
from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings
from kg_neo4j.store import connect
from kg_neo4j.store.connection import bootstrap
from kg_neo4j.store.embeddings import reembed
from kg_neo4j.store.fulltext import rebuild_fulltext
from kg_neo4j.store.maintenance import ACTIONS, DEFAULT_BATCH_SIZE, MERGE_COSINE, MaintenanceStore


async def run_reembed(settings: Settings, *, batch_size: int = 256, progress: bool = True) -> dict[str, Any]:
    info = resolve_model(settings.embedding_model)
    if info is None:
        raise ConfigError("reembed needs an embedding model (--embedding-model NAME or a local path), not 'none'")
    embedder = SentenceEmbedder(info, runtime=settings.embedding_runtime)
    embedder.start_loading()
    driver, conn = await connect(settings)
    bar = tqdm(total=0, unit="node", desc="reembed", file=sys.stderr, disable=not progress)
    try:
        await bootstrap(driver, conn.database)  # schema only; the model check is what reembed fixes

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        return await reembed(driver, conn.database, embedder, batch_size=batch_size, on_total=total,
                             on_progress=bar.update)
    finally:
        bar.close()
        await driver.close()


async def run_rebuild_fulltext(settings: Settings, *, progress: bool = True) -> dict[str, Any]:
    """``kg-neo4j rebuild-fulltext``: the fulltext index again, with ``settings.fulltext_analyzer``."""
    driver, conn = await connect(settings)
    bar = tqdm(total=100, unit="%", desc="rebuild-fulltext", file=sys.stderr, disable=not progress)
    try:
        await bootstrap(driver, conn.database)  # schema only; the analyzer check is what this fixes

        def shown(percent: float) -> None:
            bar.n = round(percent, 1)
            bar.refresh()

        return await rebuild_fulltext(driver, conn.database, settings.fulltext_analyzer, on_progress=shown)
    finally:
        bar.close()
        await driver.close()


async def run_maintain(settings: Settings, *, actions: Sequence[str] = ACTIONS, apply: bool = False,
                       batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = True,
                       min_similarity: float | None = None, clock: Clock | None = None) -> dict[str, Any]:
    """``kg-neo4j maintain``: maintain_graph's actions on ``settings.namespace``, a dry run unless
    ``apply``; one progress bar per step on stderr.  Returns the report (``summary`` in words)."""
    driver, conn = await connect(settings)
    bars: list[tqdm[Any]] = []

    def bar(desc: str) -> tuple[Callable[[int], None], Callable[[int], None]]:
        b = tqdm(total=0, unit="node", desc=desc, file=sys.stderr, disable=not progress, leave=True)
        bars.append(b)

        def total(n: int) -> None:
            b.total = n
            b.refresh()

        return total, b.update

    try:
        await bootstrap(driver, conn.database)
        ms = MaintenanceStore(driver, database=conn.database, namespace=settings.namespace, clock=clock)
        return await ms.maintain(actions, apply=apply, batch_size=batch_size, progress=bar,
                                 min_similarity=MERGE_COSINE if min_similarity is None else min_similarity)
    finally:
        for b in bars:
            b.close()
        await driver.close()
