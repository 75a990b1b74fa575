"""Trust at recall: the knowledge facts search_memory and traverse_graph show beside each knowledge
entity of their answer (spec 004: "Level is independent of trust", an inference stays labelled the
agent's idea however often it is used).  README "Knowledge layer", "Trust at recall".

Retention is computed with the decay rules of :mod:`kg_neo4j.knowledge.decay` at the read's moment:
now, or ``asOf`` when the read has one.  The state it starts from is the node's stored one (last
access, stability), as the search's memory prior does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import neo4j

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.decay import elapsed_days, is_fading, retention
from kg_neo4j.models import KnowledgeFacts, SearchResult, Traversal, TraverseIn
from kg_neo4j.store.graph import GraphStore

T = TypeVar("T")


def facts_of(row: Any, at: datetime) -> KnowledgeFacts | None:
    """One ``knowledge_facts`` row as shown to the agent; None when its stored state is incomplete
    (a read never fails on one bad node: it is then shown without facts)."""
    try:
        since = row["since"]
        since = since.to_native() if hasattr(since, "to_native") else since
        r = retention(elapsed_days(since, at), float(row["stability"]), category=row["category"])
        return KnowledgeFacts(trust=row["trust"], level=int(row["level"]), quote=row["quote"],
                              retention=round(r, 6), fading=is_fading(r))
    except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None


async def knowledge_facts(store: GraphStore, names: Sequence[str], at: datetime) -> dict[str, KnowledgeFacts]:
    """Entity name -> facts, for the knowledge among ``names`` (other names are absent)."""
    if not names:
        return {}
    rows = await store.run("knowledge_facts", read=True, names=list(dict.fromkeys(names)), at=at)
    out = {}
    for row in rows:
        facts = facts_of(row, at)
        if facts is not None:
            out[row["name"]] = facts
    return out


async def search_with_facts(store: GraphStore, query: str, *, limit: int, entity_types: Sequence[str] | None,
                            as_of: datetime | None) -> SearchResult:
    """search_memory's answer with the knowledge facts of its entities (one more small read, at the same
    moment as the search's own reads when ``as_of`` is given)."""
    result = await store.search_memory(query, limit=limit, entity_types=entity_types, as_of=as_of)
    facts = await knowledge_facts(store, [e.name for e in result.entities], as_of or store.clock.now())
    for entity in result.entities:
        entity.knowledge = facts.get(entity.name)
    return result


async def _in_one_read(store: GraphStore, work: Callable[[GraphStore], Awaitable[T]]) -> T:
    """Run ``work`` with a view of ``store`` whose statements share one read transaction."""
    async with store.driver.session(database=store.database, default_access_mode=neo4j.READ_ACCESS) as session:
        async def tx_work(tx: neo4j.AsyncManagedTransaction) -> T:
            return await work(store.within(tx))

        return await session.execute_read(tx_work)


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
