"""Re-embedding every vector of the database with another model: committed batches,
idempotent and resumable (a node is done once its ``embedding_model`` is the target)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.cypher import queries
from kg_neo4j.embeddings import Embedder
from kg_neo4j.store.connection import ensure_vector_indexes

Progress = Callable[[int], None]


async def reembed(
    driver: AsyncDriver,
    database: str,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    clock: Clock | None = None,
    on_total: Callable[[int], None] | None = None,
    on_progress: Progress | None = None,
) -> dict[str, Any]:
    q = queries()
    clock = clock or SystemClock()
    model, dim = embedder.name, embedder.dimension

    async def run(name: str, **params: Any) -> list[Any]:
        records, _, _ = await driver.execute_query(q[name], parameters_=params, database_=database)
        return records

    # Vectors of another dimension cannot share an index: drop, fill, recreate.
    dims = {r["name"]: r["dimension"] for r in await run("schema_vector_dimensions")}
    if any(d is not None and int(d) != dim for d in dims.values()):
        await run("schema_drop_observation_vector")
        await run("schema_drop_entity_vector")
    await run("meta_start_reembed", model=model, dimension=dim, now=clock.now())
    counts = (await run("reembed_count", model=model))[0]
    total = int(counts["observations"]) + int(counts["entities"])
    if on_total:
        on_total(total)
    done = 0
    for kind in ("observations", "entities"):
        while True:
            batch = await run(f"reembed_next_{kind}", model=model, batch=batch_size)
            if not batch:
                break
            if kind == "observations":
                texts = [r["text"] for r in batch]
            else:
                texts = [f"{r['name']} ({r['entityType']})" if r["entityType"] else r["name"] for r in batch]
            vectors = await asyncio.to_thread(embedder.encode, texts)
            rows = [{"id": r["id"], "vector": v} for r, v in zip(batch, vectors, strict=True)]
            await run("reembed_write", rows=rows, model=model)  # one committed transaction per batch
            done += len(rows)
            if on_progress:
                on_progress(len(rows))
    await ensure_vector_indexes(driver, database, dim)
    await run("meta_write_embedding", model=model, dimension=dim, now=clock.now())
    await run("schema_await_indexes")
    return {"model": model, "dimension": dim, "reembedded": done, "total_at_start": total}
