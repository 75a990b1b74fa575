"""search_nodes' one text index: moving a graph written before it (docs/graph-model.md).

search_nodes matches a lower-cased substring of names, types and observation texts.  It ran on three Lucene
text indexes (entity names, entity types, observation texts); every write that made an entity with
observations touched all three, and each Lucene index a transaction touches costs it a commit of its own
(docs/performance.md#bench_write_floorpy-what-in-the-data-model-sets-create_entities-floor).  Now every entity
and observation carries ``:KgText`` and one lowered text, ``text_lower`` (an observation's text; an entity's
name and type on two lines), behind one text index, ``kg_text_lower``.

:func:`migrate` moves a graph written before that, once, at bootstrap: ``:KgText`` (and an entity's
``text_lower``) on every entity and observation, ``batch`` per transaction in one scan of each label,
so an interrupted run is finished by the next; then it drops the three old indexes and records that it is done on
``(:KgMeta {key: 'text_index'})``, which later bootstraps read and skip the rest.  Progress on stderr.

:func:`migrate` also finishes what 0.1.x's deferred text index left: nodes labelled ``:KgPending`` by a write
whose move into the index had not run when its process stopped (``LEGACY_LABELS``).  Every start checks:
the count is one read of the label's count, and the move is batched and resumable like the one above.
"""

from __future__ import annotations

import sys

from neo4j import AsyncDriver

from kg_neo4j.store.executor import Executor

__all__ = ["BATCH", "LEGACY_LABELS", "migrate"]

#: Nodes moved per transaction.
BATCH = 10_000

#: Labels of earlier versions that :func:`migrate` moves away from (tests/test_type_labels.py allows them in
#: cypher/text_index.cypher only).
LEGACY_LABELS = frozenset({"KgPending"})

_DROPS = ("text_index_drop_entity_name", "text_index_drop_entity_type", "text_index_drop_observation_text")


async def migrate(driver: AsyncDriver, database: str, batch: int = BATCH) -> int:
    """Give every entity and observation ``:KgText``, then drop the old text indexes; returns how many nodes
    were moved (0 once done: later calls only read the record)."""
    x = Executor(driver, database)
    legacy = await _move_legacy_pending(x, batch)
    records = await x.write("text_index_meta")
    if records and records[0]["done"]:
        return legacy
    pending = (await x.write("text_index_pending"))[0]
    total = int(pending["entities"]) + int(pending["observations"])
    if total:
        print(
            f"kg-neo4j: search_nodes' text index: moving {pending['entities']} entities and "
            f"{pending['observations']} observations (batches of {batch}; resumable)",
            file=sys.stderr,
            flush=True,
        )
        # one scan of each label in an auto-commit statement (CALL ... IN TRANSACTIONS): linear in the
        # database, where a scan per batch would be quadratic
        await x.auto("text_index_move_entities", batch=batch)
        await x.auto("text_index_move_observations", batch=batch)
        print(f"kg-neo4j: search_nodes' text index: {total} nodes moved", file=sys.stderr, flush=True)
    for name in _DROPS:
        await x.write(name)
    await x.write("text_index_meta_done")
    return total + legacy


async def _move_legacy_pending(x: Executor, batch: int) -> int:
    """Nodes 0.1.x's deferred text index left pending join the index (see the module's docstring)."""
    records = await x.read("text_index_legacy_count")
    pending = int(records[0]["pending"]) if records else 0
    if pending:
        print(
            f"kg-neo4j: search_nodes' text index: {pending} nodes left pending by kg-neo4j 0.1.x join it "
            f"(batches of {batch}; resumable)",
            file=sys.stderr,
            flush=True,
        )
        await x.auto("text_index_legacy_move", batch=batch)
    return pending
