"""search_nodes' text index, brought up to date after the writes instead of inside them.

Every Lucene index a transaction touches costs its commit a refresh of its own: ~6 ms of a 100-entity
create_entities and ~4 ms of a single one (benchmarks/README.md, "bench_write_floor.py", the ``deferred``
layout).  So create_entities and add_observations label what they write ``:KgPending`` instead of ``:KgText``
(the label the text index ``kg_text_lower`` covers), and :class:`TextCatchUp` moves pending nodes to
``:KgText`` afterwards, the writes of a moment in one transaction (``cypher/text_catch_up.cypher``); a
second one takes ``:KgPending`` off them once that has committed.

Nothing waits for it: search_nodes reads the pending nodes of its namespace by their label, all of them
before it reads the index (``cypher/read.cypher``), so a write is found by the next search whether it has
been moved or not: a node still pending is met by the first read, one that left ``:KgPending`` before it
was already in the index for the second.  A catch-up that fails (Neo4j
gone) leaves the nodes pending, still found; the next one moves them.  README "How the graph looks in
Neo4j" has the labels.

One instance per process (the runtime's, ``kg_neo4j/runtime.py``): :meth:`written` after a write
schedules one catch-up ``delay`` seconds later on the running event loop (writes in between join it);
:meth:`close` cancels a scheduled one and moves what this process left pending.  A store made without
the runtime's instance gets one that schedules nothing (``auto=False``): its pending nodes wait for
:meth:`run` or the next process that catches up, still found by search meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from neo4j import AsyncDriver

from kg_neo4j.store.executor import Executor

__all__ = ["BATCH", "DELAY", "TextCatchUp"]

log = logging.getLogger(__name__)

#: Nodes moved per transaction.
BATCH = 10_000
#: Seconds between a write and the catch-up it schedules: the writes of that moment share one refresh.
DELAY = 0.2


class TextCatchUp:
    """Moves ``:KgPending`` nodes of the database into the text index (see the module's docstring)."""

    def __init__(self, driver: AsyncDriver, database: str, *, auto: bool = False, delay: float = DELAY,
                 batch: int = BATCH) -> None:
        self.x = Executor(driver, database)
        self.auto = auto
        self.delay = delay
        self.batch = batch
        self._scheduled: asyncio.Task[None] | None = None  # waiting for its moment
        self._tasks: set[asyncio.Task[None]] = set()  # waiting or running (close waits for them)
        # writes of this process that labelled nodes pending, and how many of them a finished run had seen
        self._writes = 0
        self._moved = 0

    def written(self) -> None:
        """A write labelled nodes ``:KgPending``: schedule a catch-up (when ``auto``), unless one waits already."""
        self._writes += 1
        self.poke()

    def poke(self) -> None:
        """Schedule a catch-up (when ``auto``) unless one waits already: after a write, and at a server's start
        for what a stopped process left pending."""
        if not self.auto or (self._scheduled is not None and not self._scheduled.done()):
            return
        task = asyncio.get_running_loop().create_task(self._later())
        self._scheduled = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _later(self) -> None:
        await asyncio.sleep(self.delay)
        self._scheduled = None  # a write from now on schedules the next one (this one may not see it)
        try:
            await self.run()
        except Exception:  # noqa: BLE001 - the nodes stay pending (still found by search); the next write retries
            log.warning("the text index's catch-up failed; pending nodes stay searchable and are moved later",
                        exc_info=True)

    async def run(self) -> int:
        """Move every pending node of the database, ``batch`` per transaction; returns how many were moved."""
        seen = self._writes  # a write committed after the run started may be missed by it
        total = 0
        while True:
            records = await self.x.write("text_catch_up", batch=self.batch)
            ids = list(records[0]["moved"]) if records else []
            # only now, the move committed (and the index refreshed with it), do they leave :KgPending
            await self.x.write("text_catch_up_done", ids=ids)
            total += len(ids)
            if len(ids) < self.batch:
                self._moved = max(self._moved, seen)
                return total

    async def pending(self) -> int:
        """How many nodes of the database wait for the text index."""
        records = await self.x.read("text_pending_count")
        return int(records[0]["pending"]) if records else 0

    async def close(self) -> None:
        """Cancel a scheduled catch-up and move what this process left pending (a failure is logged)."""
        self._scheduled = None
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._writes > self._moved:
            try:
                await self.run()
            except Exception:  # noqa: BLE001 - closing must not fail; the next process moves them
                log.warning("the text index's catch-up at exit failed; pending nodes stay searchable",
                            exc_info=True)
