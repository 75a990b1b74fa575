"""GraphStore: the memory of one namespace on Neo4j, the facade the server and the CLI call.

Its parts, one job each: entity and observation writes (store/entities.py) and the writes that resolve
an alias (store/aliases.py), relation writes and temporal updates (store/relations.py), traversal
(store/traversal.py), the reference reads with paging and the answer cap (store/reading.py), merges
(store/merges.py), hybrid search (store/hybrid_search.py).  Every
statement runs through the one executor (store/executor.py): one tool call, one transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Unpack

from kg_neo4j.clock import ManualClock
from kg_neo4j.models import SearchResult
from kg_neo4j.store import hybrid_search
from kg_neo4j.store.aliases import ResolvingWrites
from kg_neo4j.store.hybrid_search import Searched, SearchOptions
from kg_neo4j.store.merges import Merges
from kg_neo4j.store.reading import Reading
from kg_neo4j.store.relations import RelationWrites
from kg_neo4j.store.traversal import Traversing


class GraphStore(ResolvingWrites, RelationWrites, Traversing, Reading, Merges):
    """The graph of one namespace in one Neo4j database."""

    def at_moment(self, now: datetime) -> GraphStore:
        """A store of this namespace whose clock stands at ``now``: one "now" for every statement of a
        batch and its retries (import, peers)."""
        return GraphStore(
            self.driver,
            database=self.database,
            namespace=self.namespace,
            clock=ManualClock(now),
            embedder=self.embedder,
        )

    async def search_memory(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Hybrid recall (store/hybrid_search.py): the answer only."""
        return (await hybrid_search.search_memory(self, query, **options)).result

    async def search_memory_traced(self, query: str, **options: Unpack[SearchOptions]) -> Searched:
        """Hybrid recall with how it went (rounds, k, starved channels) beside the answer."""
        return await hybrid_search.search_memory(self, query, **options)
