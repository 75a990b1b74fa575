"""What every part of the graph store shares: the namespace, clock, embedder, answer cap and the
statement executor (store/executor.py).  ``GraphStore`` (store/graph.py) is this plus its parts."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Self

from neo4j import AsyncDriver, AsyncManagedTransaction

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.embeddings import Embedder
from kg_neo4j.fusion import FusionWeights
from kg_neo4j.store.answer_cache import AnswerCache
from kg_neo4j.store.answer_cap import DEFAULT_MAX_ANSWER_BYTES, AnswerCap
from kg_neo4j.store.executor import Executor, Shared


class StoreCore:
    """The graph of one namespace in one Neo4j database."""

    def __init__(
        self,
        driver: AsyncDriver,
        *,
        database: str = "neo4j",
        namespace: str = "default",
        clock: Clock | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        embedder: Embedder | None = None,
        fusion: FusionWeights | None = None,
    ) -> None:
        self.driver = driver
        self.database = database
        self.namespace = namespace
        self.clock = clock or SystemClock()
        self.cap = AnswerCap(max_answer_bytes)
        self.embedder = embedder
        self.fusion = fusion or FusionWeights()
        self.x = Executor(
            driver,
            database,
            Shared(
                namespace=namespace,
                clock=self.clock,
                reads_at=True,
                model=embedder.name if embedder else None,
            ),
        )
        self._exact_big: dict[
            str, float
        ] = {}  # search: channel -> when its namespace was found past EXACT_CAP
        self._answers = AnswerCache(driver, database)  # read_graph of now while nothing changed

    def within(self, tx: AsyncManagedTransaction) -> Self:
        """A view of this store whose statements run inside ``tx``: several calls, one transaction
        (used by import, where a batch's entities and relations land together or not at all)."""
        view = copy.copy(self)
        view.x = self.x.bound(tx)
        return view

    @property
    def in_transaction(self) -> bool:
        return self.x.in_transaction

    async def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        """Vectors for ``texts`` (None when semantic search is off); runs off the event loop."""
        if self.embedder is None or not texts:
            return None
        return await asyncio.to_thread(self.embedder.encode, list(texts))
