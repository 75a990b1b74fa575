"""search_nodes' text index, brought up to date after the writes instead of inside them.

Every Lucene index a transaction touches costs its commit a refresh of its own: ~6 ms of a 100-entity
create_entities and ~4 ms of a single one (benchmarks/README.md, "bench_write_floor.py", the ``deferred``
layout).  So create_entities and add_observations label what they write ``:KgPending`` instead of ``:KgText``
(the label the text index ``kg_text_lower`` covers), and :class:`TextCatchUp` adds ``:KgText`` afterwards,
the writes of a moment in one transaction (``cypher/text_catch_up.cypher``).

Nothing waits for it: search_nodes reads the pending nodes of its namespace by their label and the index
(``cypher/read.cypher``), so a write is found by the next search whether it has been moved or not.  A moved
node keeps ``:KgPending`` for ``hold`` seconds more: a statement may read the index as it was when the
statement began and the labels as they are when it gets to them, so a node that left ``:KgPending`` just
after a search began but joined the index just before would be missed by both reads (measured: 5-9 misses
in 400 searches racing a catch-up that released at once, none with 50 ms between; tests/test_text_catch_up.py).
Nodes found in both states (an earlier process's, or one that stopped in between) are held the same way
before they are released.  A catch-up that fails (Neo4j gone) leaves nodes pending, still found; the next
one moves them.  README "How the graph looks in Neo4j" has the labels.

One instance per process (the runtime's, ``kg_neo4j/runtime.py``): :meth:`written` after a write
schedules one catch-up ``delay`` seconds later on the running event loop (writes in between join it), and a
catch-up that holds nodes schedules the next for their release; :meth:`close` cancels what is scheduled and
moves what this process left pending.  A store made without the runtime's instance gets one that schedules
nothing (``auto=False``): its nodes wait for :meth:`run` or the next process, still found meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from neo4j import AsyncDriver

from kg_neo4j.store.executor import Executor

__all__ = ["BATCH", "CLOSE_TIMEOUT", "DELAY", "HOLD", "TextCatchUp"]

log = logging.getLogger(__name__)

#: Nodes moved per transaction.
BATCH = 10_000
#: Seconds between a write and the catch-up it schedules: the writes of that second share one refresh.  The
#: catch-up is Lucene work on the same cores: a 100-entity create_entities in a loop took 19.8 / 18.5 ms with
#: 0.2 s, 18.9 / 17.6 ms with 1 s, 16.7 / 16.8 ms with none during the loop (two rounds); search_nodes reads
#: the pending nodes by a label scan, ~7 ms more at 40k pending (benchmarks/README.md, "Session 11").
DELAY = 1.0
#: Seconds a moved node keeps :KgPending (see the module's docstring).
HOLD = 1.0
#: Seconds :meth:`TextCatchUp.close` gives its last catch-up: a process stopping while Neo4j is gone must not
#: wait out the driver's 30 s of retries (what it left stays pending, found by search, moved by the next one).
CLOSE_TIMEOUT = 5.0


class TextCatchUp:
    """Moves ``:KgPending`` nodes of the database into the text index (see the module's docstring)."""

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        *,
        auto: bool = False,
        delay: float = DELAY,
        hold: float = HOLD,
        batch: int = BATCH,
    ) -> None:
        self.x = Executor(driver, database)
        self.auto = auto
        self.delay = delay
        self.hold = hold
        self.batch = batch
        self._scheduled: asyncio.Task[None] | None = None  # waiting for its moment
        self._tasks: set[asyncio.Task[None]] = set()  # waiting or running (close waits for them)
        # writes of this process that labelled nodes pending, and how many of them a finished run had seen
        self._writes = 0
        self._moved = 0
        # element id of a moved node -> when this process moved it, or first saw it moved by another
        self._held: dict[str, float] = {}

    def written(self) -> None:
        """A write labelled nodes ``:KgPending``: schedule a catch-up (when ``auto``), unless one waits already."""
        self._writes += 1
        self.poke()

    def poke(self, delay: float | None = None) -> None:
        """Schedule a catch-up (when ``auto``) unless one waits already: after a write, at a server's start for
        what a stopped process left, and for the release of held nodes."""
        if not self.auto or (self._scheduled is not None and not self._scheduled.done()):
            return
        task = asyncio.get_running_loop().create_task(self._later(self.delay if delay is None else delay))
        self._scheduled = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._scheduled = None  # a write from now on schedules the next one (this one may not see it)
        try:
            await self.run()
        except Exception:  # noqa: BLE001 - the nodes stay pending (still found by search); the next write retries
            log.warning(
                "the text index's catch-up failed; pending nodes stay searchable and are moved later",
                exc_info=True,
            )

    async def run(self) -> int:
        """Release the nodes held long enough, then move every pending node of the database into the index,
        ``batch`` per transaction, and hold them; returns how many were moved."""
        seen = self._writes  # a write committed after the run started may be missed by it
        await self._release()
        moved: list[str] = []
        while True:
            records = await self.x.write("text_catch_up", batch=self.batch)
            ids = list(records[0]["moved"]) if records else []
            moved.extend(ids)
            if len(ids) < self.batch:
                break
        self._moved = max(self._moved, seen)
        # moved earlier by this process or another one: held from now on like this run's own
        records = await self.x.read("text_catch_up_moved")
        now = time.monotonic()
        for element_id in records[0]["moved"] if records else []:
            self._held.setdefault(element_id, now)
        # this run's own are held from now even if their id was held before: Neo4j reuses the id of a deleted
        # node, and a new node must not inherit the hold an earlier one had already served
        for element_id in moved:
            self._held[element_id] = now
        if self._held:
            self.poke(self.hold)  # their release
        return len(moved)

    async def _release(self) -> None:
        cutoff = time.monotonic() - self.hold
        ready = [i for i, since in self._held.items() if since <= cutoff]
        for start in range(0, len(ready), self.batch):
            await self.x.write("text_catch_up_done", ids=ready[start : start + self.batch])
        for element_id in ready:
            del self._held[element_id]

    async def pending(self) -> int:
        """How many nodes of the database wait for the text index (moved nodes still held not counted)."""
        records = await self.x.read("text_pending_count")
        return int(records[0]["pending"]) if records else 0

    async def close(self) -> None:
        """Cancel what is scheduled and move what this process left pending (a failure is logged).  Nodes
        still held keep :KgPending with :KgText (found by search either way); a later process releases them."""
        self.auto = False  # nothing is scheduled from here on
        self._scheduled = None
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._writes > self._moved:
            try:
                await asyncio.wait_for(self.run(), CLOSE_TIMEOUT)
            except Exception:  # noqa: BLE001 - closing must not fail; the next process moves them
                log.warning(
                    "the text index's catch-up at exit failed; pending nodes stay searchable", exc_info=True
                )
