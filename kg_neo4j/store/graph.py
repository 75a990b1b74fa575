"""GraphStore: the memory of one namespace on Neo4j, the facade the server and the CLI call.

Its parts, one job each: entity and observation writes (store/entities.py), relation writes and
temporal updates (store/relations.py), traversal (store/traversal.py), the reference reads with
paging and the answer cap (store/reading.py), hybrid search (store/hybrid_search.py).  Every
statement runs through the one executor (store/executor.py): one tool call, one transaction.
"""

from __future__ import annotations

from typing import Unpack

from kg_neo4j.models import SearchResult
from kg_neo4j.store import hybrid_search
from kg_neo4j.store.entities import EntityWrites
from kg_neo4j.store.hybrid_search import Searched, SearchOptions
from kg_neo4j.store.reading import Reading
from kg_neo4j.store.relations import RelationWrites
from kg_neo4j.store.traversal import Traversing


class GraphStore(EntityWrites, RelationWrites, Traversing, Reading):
    """The graph of one namespace in one Neo4j database."""

    async def search_memory(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Hybrid recall (store/hybrid_search.py): the answer only."""
        return (await hybrid_search.search_memory(self, query, **options)).result

    async def search_memory_traced(self, query: str, **options: Unpack[SearchOptions]) -> Searched:
        """Hybrid recall with how it went (rounds, k, starved channels) beside the answer."""
        return await hybrid_search.search_memory(self, query, **options)
