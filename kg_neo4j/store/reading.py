"""The reference reads: read_graph (whole, paged by cursor, or as the reference's exact answer text),
search_nodes, open_nodes; each one read (``cypher/read.cypher``), every answer under the answer cap
(store/answer_cap.py)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import KnowledgeGraph, reference_text
from kg_neo4j.store.aliases import alias_entities, resolved
from kg_neo4j.store.answer_cache import Built
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.executor import Records, concurrently
from kg_neo4j.store.records import decode_cursor, dedupe, encode_cursor, graph_of

_gc_pauses = [0, False]  # overlapping pauses, and whether the collector ran before the first one


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a big answer is built.

    A whole-graph answer is tens of thousands of lists and dicts that all stay alive until it is sent:
    each collection pass walks them (and the whole heap) and frees nothing; at 10k entities those passes
    cost about as much as building the answer (bench_peers, docs/performance.md).  Reference counting
    still frees everything as usual; the collector resumes when the last overlapping pause ends."""
    if _gc_pauses[0] == 0:
        _gc_pauses[1] = gc.isenabled()
        gc.disable()
    _gc_pauses[0] += 1
    try:
        yield
    finally:
        _gc_pauses[0] -= 1
        if _gc_pauses[0] == 0 and _gc_pauses[1]:
            gc.enable()


class Reading(StoreCore):
    async def read_graph(
        self, *, limit: int | None = None, cursor: str | None = None, as_of: datetime | None = None
    ) -> KnowledgeGraph:
        if limit is None and cursor is None:
            cap = self.cap.max_rows
            records = await self.x.read("read_graph", max_entities=cap + 1, max_relations=cap + 1, at=as_of)
            graph = graph_of(records[0])
            self.cap.check("read_graph", rows=(len(graph.entities), len(graph.relations)), graph=graph)
            return graph
        if limit is None:
            limit = 1000
        if limit < 1 or limit > 10_000:
            raise ValidationError("limit must be between 1 and 10000", field="limit")
        after = decode_cursor(cursor) if cursor else ""
        records = await self.x.read("read_graph_page", after=after, limit=limit, at=as_of)
        graph = graph_of(records[0])
        if len(graph.entities) == limit:
            graph.nextCursor = encode_cursor(graph.entities[-1].name)
        self.cap.check("read_graph", graph=graph)
        return graph

    async def read_graph_answer(self, *, as_of: datetime | None = None) -> tuple[str, dict[str, Any]]:
        """The unpaged read_graph answer of the reference tools: its exact JSON text and structured copy.

        Built once from flat rows (two concurrent reads returning lists of strings, at one moment; no
        models, no relation properties the answer does not show); the byte cap is checked on the text
        itself.  The same graph as ``read_graph()``, which keeps the full relations for other callers.
        A read of now is kept while the database has not changed (store/answer_cache.py)."""
        if as_of is not None or self.in_transaction:
            return await self._graph_answer(as_of or self.clock.now())
        at = self.clock.now()
        return await self._answers.get_or_build("read_graph", at, lambda: self._kept_graph_answer(at))

    async def _graph_answer(self, at: datetime) -> tuple[str, dict[str, Any]]:
        cap = self.cap.max_rows
        reads = [
            self.x.read("read_graph_entities", max_entities=cap + 1, at=at),
            self.x.read("read_graph_relations", max_relations=cap + 1, at=at),
        ]
        with _gc_paused():
            # the reads run concurrently: Neo4j works on them at once and each is decoded as it arrives
            results = await concurrently(reads, sequential=self.in_transaction)
            entities, relations = results[0][0]["entities"], results[1][0]["relations"]
            self.cap.check("read_graph", rows=(len(entities), len(relations)))
            structured = {
                "entities": [{"name": n, "entityType": t, "observations": o} for n, t, o in entities],
                "relations": [{"from": a, "to": b, "relationType": t} for a, b, t in relations],
            }
            text = reference_text(structured)
            self.cap.check("read_graph", text=text)
            return text, structured

    async def _kept_graph_answer(self, at: datetime) -> Built:
        """The answer of ``at`` and, for the answer cache, the read of its horizon: started once the
        answer is built (so it does not compete with the answer's reads), awaited by the cache only
        when the answer is asked for again."""
        return await self._graph_answer(at), self._horizon(at)

    async def _horizon(self, at: datetime) -> datetime | None:
        """The first moment after ``at`` that changes read_graph's answer without a write (None: none)."""
        records = await self.x.read("read_graph_horizon", at=at)
        until = records[0]["horizon"] if records else None
        return None if until is None else until.to_native()

    async def search_nodes(self, query: str, *, as_of: datetime | None = None) -> KnowledgeGraph:
        cap = self.cap.max_rows
        records = await self.x.read("search_nodes", q=query.lower(), max_entities=cap + 1, at=as_of)
        graph = graph_of(records[0])
        self.cap.check("search_nodes", rows=(len(graph.entities),), graph=graph)
        return graph

    async def open_nodes(self, names: Sequence[str], *, as_of: datetime | None = None) -> KnowledgeGraph:
        """Entities by exact name; a name that is an alias answers the entity it names (store/aliases.py)."""
        wanted = dedupe(names)

        async def work(tx: AsyncManagedTransaction) -> Records:
            x = self.x.bound(tx)
            records = await x.read("open_nodes", names=wanted, at=as_of)
            found = {e["name"] for e in records[0]["entities"]}
            # only a name that found nothing can be an alias: a read of entities' own names is one statement
            missing = [n for n in wanted if n not in found]
            aliases = await alias_entities(x, missing, as_of) if missing else {}
            if aliases:
                records = await x.read("open_nodes", names=resolved(wanted, aliases), at=as_of)
            return records

        records = await self.x.transaction(work, read=True)
        graph = graph_of(records[0])
        graph.aliases = {a["name"]: list(a["aliases"]) for a in records[0]["aliases"] if a["aliases"]}
        self.cap.check("open_nodes", graph=graph)
        return graph
