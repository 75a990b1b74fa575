"""Type labels: an entity's ``entityType`` (and a knowledge node's trust) as Neo4j labels.

Neo4j Browser styles nodes only by label, so every entity also carries its type as a label
(docs/graph-model.md#types-are-labels).  The rules live here and only here; the write statements receive the
labels ready-made (``row.type_labels`` / ``$type_labels``) and apply them with the dynamic ``SET n:$(...)`` /
``REMOVE n:$(...)`` forms.  A type label is never used to find a node (nodes are found by their (namespace,
name) key); it is only ever written.

- the type label is the type itself, unless the type equals one of :data:`INTERNAL_LABELS`: then it
  is ``Type_<type>`` (``Entity`` -> ``Type_Entity``), so no type can make a node look like one of
  ours to our own statements;
- an empty or whitespace-only type gets no label, nor does one holding a NUL character (Neo4j
  refuses NUL in token names);
- the labels a node got are kept in its ``type_labels`` property, so a type change removes
  exactly the old one (a label a person added by hand is left alone);
- knowledge nodes also get one label per trust level (:data:`TRUST_LABELS`), which the shipped
  style colours;
- knowledge that expires (forget, decay, merge) keeps only ``:ExpiredKnowledge``: its type labels go
  with ``:Entity``.

Labels are database-wide: ``db.labels()`` lists the types of every namespace
(docs/configuration.md#namespaces).  Databases written before type labels get them from :func:`backfill` at
bootstrap.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neo4j import AsyncDriver, AsyncManagedTransaction

from kg_neo4j.knowledge.vocabulary import Trust
from kg_neo4j.store.executor import Executor

__all__ = [
    "INTERNAL_LABELS",
    "TRUST_LABELS",
    "TYPE_LABEL_PREFIX",
    "backfill",
    "knowledge_labels",
    "trust_labels",
    "type_labels",
]

log = logging.getLogger(__name__)

#: One label per trust level (knowledge nodes).
TRUST_LABELS: dict[str, str] = {
    Trust.PRINCIPLE.value: "TrustPrinciple",
    Trust.PATTERN.value: "TrustPattern",
    Trust.INFERENCE.value: "TrustInference",
}

#: Every label kg-neo4j's own statements use.  A type equal to one of them gets a prefixed label.
#: tests/test_type_labels.py checks that every label written or matched in cypher/*.cypher is here,
#: so a label added later cannot be forgotten.
INTERNAL_LABELS: frozenset[str] = frozenset(
    {
        "KgNode",
        "Entity",
        "Placeholder",
        "Observation",
        "KgMeta",
        "KgText",
        "Knowledge",
        "ExpiredKnowledge",
        "Experience",
        "KgMerged",
        "KgMergeRecord",
        *TRUST_LABELS.values(),
        # the peers' labels `import --from` reads (cypher/peers.cypher): an entity typed "Memory" labelled
        # :Memory would also look like one of mcp-neo4j-memory's nodes to mcp-neo4j-memory in a shared database
        "Memory",
        "Episodic",
    }
)

TYPE_LABEL_PREFIX = "Type_"

#: Entities labelled per backfill transaction.
BACKFILL_BATCH = 5000
_META_KEY = "type_labels"


def type_labels(entity_type: str | None) -> list[str]:
    """The type label of an entity of this type: ``[]`` or one label."""
    if entity_type is None or not entity_type.strip() or "\x00" in entity_type:
        return []
    if entity_type in INTERNAL_LABELS:
        return [TYPE_LABEL_PREFIX + entity_type]
    return [entity_type]


def trust_labels(trust: str | None) -> list[str]:
    """The trust label of a knowledge node: ``[]`` or one of :data:`TRUST_LABELS`."""
    label = TRUST_LABELS.get(trust) if trust is not None else None
    return [label] if label else []


def knowledge_labels(entity_type: str | None, trust: str | None) -> list[str]:
    """Type and trust labels of a knowledge node (both kept in its ``type_labels``)."""
    return type_labels(entity_type) + trust_labels(trust)


def _labels_of(row: dict[str, Any]) -> list[str]:
    if row["knowledge"]:
        return knowledge_labels(row["entityType"], row["trust"])
    return type_labels(row["entityType"])


async def backfill(
    driver: AsyncDriver,
    database: str,
    namespace: str | None = None,
    batch: int = BACKFILL_BATCH,
    max_batches: int | None = None,
    progress: bool = True,
) -> int:
    """Label the entities that have no ``type_labels`` yet, ``batch`` per transaction; returns how many.

    Walks each namespace in name order through the (namespace, name) index, so a batch costs its own
    size.  Resumable: each batch marks what it labelled (``type_labels``, ``[]`` for a type without a
    label), so an interrupted run is finished by the next.  With ``namespace`` None (the bootstrap)
    the whole database is done once and recorded on ``(:KgMeta {key: 'type_labels'})``; later
    bootstraps skip it.  ``max_batches`` stops early (tests of the resume).  Progress on stderr.
    """

    def rows(chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"ns": r["ns"], "name": r["name"], "labels": _labels_of(r)} for r in chunk if r["pending"]]

    sweep = Sweep(
        _META_KEY,
        ("type_labels_pending_namespaces", "type_labels_chunk", "type_labels_apply"),
        rows,
        "adding type labels to",
        "type labels",
    )
    return await sweep.run(driver, database, namespace, batch, max_batches, progress)


@dataclass(frozen=True)
class Sweep:
    """A bootstrap backfill of entities, per namespace in name order, ``batch`` per transaction, each batch
    marking what it did (resumable), the whole database recorded done once on ``(:KgMeta {key})``.  Its
    ``statements``, named whole (a name is never built: tests/test_cypher_files.py): the pending
    namespaces ($ns), a chunk ($ns, $after, $batch: rows with ``name`` and ``pending``) and the apply
    ($ns, $rows: what ``rows`` makes of a chunk)."""

    meta_key: str
    statements: tuple[str, str, str]
    rows: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    announce: str  # "adding type labels to" {n} entities
    step: str  # "type labels": {done}/{total}

    async def run(
        self,
        driver: AsyncDriver,
        database: str,
        namespace: str | None,
        batch: int,
        max_batches: int | None = None,
        progress: bool = True,
    ) -> int:
        x = Executor(driver, database)
        if namespace is None:
            records = await x.write("type_labels_meta", key=self.meta_key)
            if records and records[0]["done"]:
                return 0
        pending_statement, chunk_statement, apply_statement = self.statements
        records = await x.write(pending_statement, ns=namespace)
        pending = [(str(r["ns"]), int(r["n"])) for r in records]
        total = sum(n for _, n in pending)
        if total and progress:
            print(
                f"kg-neo4j: {self.announce} {total} entities in {len(pending)} namespace(s) "
                f"(batches of {batch}; resumable)",
                file=sys.stderr,
                flush=True,
            )
        done = batches = 0

        async def one_batch(tx: AsyncManagedTransaction, ns: str, after: str) -> tuple[int, str | None]:
            chunk = [
                r.data() for r in await x.bound(tx).read(chunk_statement, ns=ns, after=after, batch=batch)
            ]
            rows = self.rows(chunk)
            if rows:
                await x.bound(tx).write(apply_statement, rows=rows, ns=ns)
            return len(rows), (chunk[-1]["name"] if chunk else None)

        for ns, _ in pending:
            after: str | None = ""
            while after is not None:
                if max_batches is not None and batches >= max_batches:
                    return done  # stopped early on purpose: not recorded as done
                n, after = await x.transaction(functools.partial(one_batch, ns=ns, after=after))
                done += n
                batches += 1
                if progress and n:
                    print(f"kg-neo4j: {self.step}: {done}/{total}", file=sys.stderr, flush=True)
        if namespace is None:
            await x.write("type_labels_meta_done", key=self.meta_key)
        return done
