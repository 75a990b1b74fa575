"""The whole-graph answer kept while the database has not changed (docs/performance.md#speed-mechanisms).

Building read_graph's answer at 10k entities costs about half a second of Neo4j and Python work;
agents call it again and again on a graph that has not changed since.  The answer is kept with
the *database position* it was read at: the bookmark a read transaction returns, which names the
last transaction the server had applied.  A later call first asks for the position again (one
``RETURN 1``, about a millisecond) and gets the kept answer only when nothing has been committed
since, by anyone: this process, another server, a hook, the CLI, another namespace (the position
is database-wide, so a write anywhere costs a rebuild, never a stale answer).

Two more conditions keep it exact:

* An answer is kept only when the position was the same before and after it was read: a commit
  that landed while it was being read may or may not be in it, so such an answer is not kept.
* An answer also depends on the clock (items created, opened or closed after the read's moment
  are not shown yet), so it is kept only until the first such moment in the namespace (its
  *horizon*) and only for moments not earlier than the one it was read at.  The horizon is read
  after the answer is built and not waited for: the answer goes out while it is read, and the next
  call waits for it (long finished by then) before it may reuse the answer.  A horizon that could
  not be read means the answer is not reused.

The position is only comparable on one server: with a routing driver (``neo4j://``, clusters,
Aura) the reads may go to different members, so the cache is off there and every call reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import neo4j
from neo4j import AsyncDriver

Answer = tuple[str, dict[str, Any]]


#: What a build returns: the answer and its horizon, still being read (None: no moment after the read's).
Built = tuple[Answer, Awaitable[datetime | None]]


@dataclass(frozen=True)
class _Kept:
    position: frozenset[str]
    read_at: datetime
    #: the first moment after read_at that changes the answer (None: none known), once read
    horizon: asyncio.Future[datetime | None]
    answer: Answer

    async def valid_at(self, at: datetime) -> bool:
        try:
            horizon = await asyncio.shield(self.horizon)
        except Exception:  # noqa: BLE001 - an unknown horizon: the answer is read again instead
            return False
        return horizon is None or at < horizon


def _quiet(task: asyncio.Future[datetime | None]) -> None:
    """A horizon that failed after nobody waited for it is not an unretrieved error; it is just unknown."""
    if not task.cancelled():
        task.exception()


def cache_applies(driver: AsyncDriver) -> bool:
    """Only a direct driver (``bolt://``) talks to one server, whose positions are comparable."""
    return isinstance(driver, (neo4j.AsyncBoltDriver,))


async def database_position(driver: AsyncDriver, database: str) -> frozenset[str]:
    """The bookmark of a trivial read transaction: the last transaction the server has applied."""
    async with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session:
        result = await session.run("RETURN 1")
        await result.consume()
        return frozenset((await session.last_bookmarks()).raw_values)


class AnswerCache:
    """One kept answer per kind (e.g. the reference read_graph) for one store's namespace."""

    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self.driver = driver
        self.database = database
        self.enabled = cache_applies(driver)
        self._kept: dict[str, _Kept] = {}
        self.hits = 0
        self.misses = 0

    async def get_or_build(self, kind: str, at: datetime, build: Callable[[], Awaitable[Built]]) -> Answer:
        """The answer of ``kind`` at moment ``at``: kept if still exact, else ``build()`` (which
        returns the answer and the read of its horizon) and keep it when it can be kept."""
        if not self.enabled:
            answer, horizon = await build()
            if asyncio.iscoroutine(horizon):
                horizon.close()  # not wanted: never started
            return answer
        before = await database_position(self.driver, self.database)
        kept = self._kept.get(kind)
        if kept is not None and kept.position == before and kept.read_at <= at and await kept.valid_at(at):
            self.hits += 1
            return kept.answer
        self.misses += 1
        old = self._kept.pop(kind, None)  # never hold two whole graphs at once
        if old is not None:
            old.horizon.cancel()
        answer, horizon = await build()
        task = asyncio.ensure_future(horizon)
        task.add_done_callback(_quiet)
        after = await database_position(self.driver, self.database)
        if after == before:
            self._kept[kind] = _Kept(before, at, task, answer)
        else:
            task.cancel()
        return answer

    def clear(self) -> None:
        for kept in self._kept.values():
            kept.horizon.cancel()
        self._kept.clear()
