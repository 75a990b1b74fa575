"""Trust at recall for traverse_graph: the knowledge facts (:func:`kg_neo4j.knowledge.recall.facts_of`)
of the entities a walk reached, read in the walk's transaction.  search_memory reads them in its own
``search_memory_around`` statement.  docs/knowledge.md#trust-at-recall.

Retention is computed with the decay rules of :mod:`kg_neo4j.knowledge.decay` at the read's moment:
now, or ``asOf`` when the read has one, from the decay state and trust the node had at that moment
(the ``ds_*`` history of cypher/history.cypher), as the search's memory prior does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

import neo4j

from kg_neo4j.knowledge.recall import facts_of
from kg_neo4j.models import KnowledgeFacts, Traversal, TraverseIn
from kg_neo4j.store.graph import GraphStore

T = TypeVar("T")


async def knowledge_facts(store: GraphStore, names: Sequence[str], at: datetime) -> dict[str, KnowledgeFacts]:
    """Entity name -> facts, for the knowledge among ``names`` (other names are absent)."""
    if not names:
        return {}
    rows = await store.x.read("knowledge_facts", names=list(dict.fromkeys(names)), at=at)
    out = {}
    for row in rows:
        facts = facts_of(row, at)
        if facts is not None:
            out[row["name"]] = facts
    return out


async def _in_one_read(store: GraphStore, work: Callable[[GraphStore], Awaitable[T]]) -> T:
    """Run ``work`` with a view of ``store`` whose statements share one read transaction."""

    async def tx_work(tx: neo4j.AsyncManagedTransaction) -> T:
        return await work(store.within(tx))

    return await store.x.transaction(tx_work, read=True)


async def traverse_with_facts(store: GraphStore, req: TraverseIn) -> Traversal:
    """traverse_graph's answer with the knowledge facts of the entities it reached: the walk and the facts
    are read in one transaction."""
    at = req.asOf or store.clock.now()

    async def work(view: GraphStore) -> Traversal:
        walk = await view.traverse(req)
        facts = await knowledge_facts(view, [e.name for e in walk.entities], at)
        for entity in walk.entities:
            entity.knowledge = facts.get(entity.name)
        return walk

    return await _in_one_read(store, work)
