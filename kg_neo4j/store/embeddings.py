"""Re-embedding every vector of the database (or filling in one namespace's missing ones) with another model: committed batches,
idempotent and resumable (a node is done once its ``embedding_model`` is the target)."""

from __future__ import annotations

import asyncio
from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.embeddings import Embedder
from kg_neo4j.store.connection import ensure_vector_indexes
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.progress import Count

#: The statement that reads the next batch of each kind still to embed (cypher/embeddings.cypher).
_NEXT_BATCH_STATEMENTS = {"observations": "reembed_next_observations", "entities": "reembed_next_entities"}


async def embed_missing(
    driver: AsyncDriver, database: str, embedder: Embedder, namespace: str, *, batch_size: int = 256
) -> int:
    """Embed the observations and entities of one namespace that lack a vector from the current
    model (after an import of a full export, which carries no vectors).  Committed batches."""
    x = Executor(driver, database)
    done = 0
    for kind in ("observations", "entities"):
        while True:
            records = await x.write(
                _NEXT_BATCH_STATEMENTS[kind], model=embedder.name, batch=batch_size, ns=namespace
            )
            if not records:
                break
            vectors = await asyncio.to_thread(embedder.encode, _texts(kind, records))
            rows = [{"id": r["id"], "vector": v} for r, v in zip(records, vectors, strict=True)]
            await x.write("reembed_write", rows=rows, model=embedder.name)
            done += len(rows)
    return done


def _texts(kind: str, records: list[Any]) -> list[str]:
    if kind == "observations":
        return [r["text"] for r in records]
    return [f"{r['name']} ({r['entityType']})" if r["entityType"] else r["name"] for r in records]


async def reembed(
    driver: AsyncDriver,
    database: str,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    clock: Clock | None = None,
    on_total: Count | None = None,
    on_progress: Count | None = None,
) -> dict[str, Any]:
    clock = clock or SystemClock()
    model, dim = embedder.name, embedder.dimension
    run = Executor(driver, database).write  # every statement its own committed transaction

    # Vectors of another dimension cannot share an index: drop, fill, recreate.
    dims = {r["name"]: r["dimension"] for r in await run("schema_vector_dimensions")}
    if any(d is not None and int(d) != dim for d in dims.values()):
        await run("schema_drop_observation_vector")
        await run("schema_drop_entity_vector")
    await run("meta_start_reembed", model=model, dimension=dim, now=clock.now())
    counts = (await run("reembed_count", model=model, ns=None))[0]
    total = int(counts["observations"]) + int(counts["entities"])
    if on_total:
        on_total(total)
    done = 0
    for kind in ("observations", "entities"):
        while True:
            batch = await run(_NEXT_BATCH_STATEMENTS[kind], model=model, batch=batch_size, ns=None)
            if not batch:
                break
            vectors = await asyncio.to_thread(embedder.encode, _texts(kind, batch))
            rows = [{"id": r["id"], "vector": v} for r, v in zip(batch, vectors, strict=True)]
            await run("reembed_write", rows=rows, model=model)  # one committed transaction per batch
            done += len(rows)
            if on_progress:
                on_progress(len(rows))
    await ensure_vector_indexes(driver, database, dim)
    await run("meta_write_embedding", model=model, dimension=dim, now=clock.now())
    await run("schema_await_indexes")
    return {"model": model, "dimension": dim, "reembedded": done, "total_at_start": total}
