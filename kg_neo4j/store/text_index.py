"""search_nodes' one text index: moving a graph written before it (README "How the graph looks in Neo4j").

search_nodes matches a lower-cased substring of names, types and observation texts.  It ran on three
Lucene text indexes (entity names, entity types, observation texts); every write that made an entity
with observations touched all three, and each Lucene index a transaction touches costs it a commit of
its own (bench_peers' raw-driver floor: benchmarks/README.md).  Now every entity and observation carries
``:KgText`` and one lowered text, ``text_lower`` (an observation's text; an entity's name and type on two
lines), behind one text index, ``kg_text_lower``.

:func:`migrate` moves a graph written before that, once, at bootstrap: ``:KgText`` (and an entity's
``text_lower``) on every entity and observation, ``batch`` per transaction, so an interrupted run is
finished by the next; then it drops the three old indexes and records that it is done on
``(:KgMeta {key: 'text_index'})``, which later bootstraps read and skip the rest.  Progress on stderr.
"""

from __future__ import annotations

import sys

from neo4j import AsyncDriver

from kg_neo4j.store.executor import Executor

__all__ = ["BATCH", "migrate"]

#: Nodes moved per transaction.
BATCH = 10_000

_DROPS = ("text_index_drop_entity_name", "text_index_drop_entity_type", "text_index_drop_observation_text")


async def migrate(driver: AsyncDriver, database: str, batch: int = BATCH, max_batches: int | None = None) -> int:
    """Give every entity and observation ``:KgText``, then drop the old text indexes; returns how many nodes
    were moved.  ``max_batches`` stops early without recording the move as done (tests of the resume)."""
    x = Executor(driver, database)
    records = await x.write("text_index_meta")
    if records and records[0]["done"]:
        return 0
    moved = batches = 0
    for statement in ("text_index_entities_batch", "text_index_observations_batch"):
        while True:
            if max_batches is not None and batches >= max_batches:
                return moved
            n = int((await x.write(statement, batch=batch))[0]["moved"])
            batches += 1
            moved += n
            if n:
                print(f"kg-neo4j: search_nodes' text index: moved {moved} node(s) so far (batches of {batch}; resumable)",
                      file=sys.stderr, flush=True)
            if n < batch:
                break
    for name in _DROPS:
        await x.write(name)
    await x.write("text_index_meta_done")
    return moved
