"""Long sweeps run from the CLI (with a progress bar on stderr)."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings
from kg_neo4j.store import connect
from kg_neo4j.store.connection import bootstrap
from kg_neo4j.store.embeddings import reembed


async def run_reembed(settings: Settings, *, batch_size: int = 256, progress: bool = True) -> dict[str, Any]:
    info = resolve_model(settings.embedding_model)
    if info is None:
        raise ConfigError("reembed needs an embedding model (--embedding-model NAME or a local path), not 'none'")
    embedder = SentenceEmbedder(info)
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
