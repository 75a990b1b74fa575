"""The one way the store runs a named statement (``cypher/*.cypher``, loaded by ``kg_neo4j/cypher.py``).

* ``read(name, **params)``: one managed transaction routed to a reader (READ access mode);
* ``write(name, **params)``: one managed transaction on the leader;
* ``auto(name, **params)``: an auto-commit session, the only place ``CALL { ... } IN TRANSACTIONS`` runs;
* ``transaction(work, read=...)``: several statements in one managed transaction; ``work`` gets the
  transaction and runs its statements through ``bound(tx)``.

Inside a transaction (an executor from ``bound(tx)``) ``read`` and ``write`` run in that transaction.
Every managed transaction is run again when it lost a race with a concurrent delete (``RACE_CODES``):
such a transaction wrote nothing.  All reads and writes share the driver's one bookmark manager
(store/connection.py), so a read sees the writes before it (docs/cluster.md).

The shared parameters (``ns``, ``now``, ``model``, ``at`` defaulting to ``now``, plus any extra
constants) are added to every statement's parameters unless the caller gives them, and so is
``actor``: who the write is attributed to (store/actor.py), read when the statement runs.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncManagedTransaction, RoutingControl

from kg_neo4j.clock import Clock
from kg_neo4j.cypher import queries
from kg_neo4j.store.actor import actor

#: Neo4j errors that mean "lost a race with a concurrent delete": the transaction is run again.
RACE_CODES = frozenset(
    {"Neo.ClientError.Statement.EntityNotFound", "Neo.ClientError.Schema.ConstraintValidationFailed"}
)
RACE_RETRIES = 3
T = TypeVar("T")

#: The refusal of a schema rule that another transaction has just created (see Executor.create_schema).
EQUIVALENT_SCHEMA_EXISTS = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
Records = list[neo4j.Record]


async def retrying_races(once: Callable[[], Awaitable[T]]) -> T:
    """Run one whole transaction, again when it lost a race.

    A node found by MERGE/MATCH can be deleted by a concurrent call (e.g. a placeholder dropped with
    its last relation) before the statement locks it.  The transaction then wrote nothing, so running
    it again is safe."""
    for attempt in range(RACE_RETRIES + 1):
        try:
            return await once()
        except neo4j.exceptions.ClientError as exc:
            if exc.code not in RACE_CODES or attempt == RACE_RETRIES:
                raise
    raise AssertionError("unreachable")


async def concurrently(runs: Sequence[Awaitable[Any]], *, sequential: bool = False) -> list[Any]:
    """Await ``runs`` together (each a separate read); if one fails the others are cancelled.
    ``sequential`` (inside one transaction, which runs one statement at a time) awaits them in order."""
    if sequential:
        out = []
        try:
            for r in runs:
                out.append(await r)
        finally:
            for r in runs[len(out) + 1 :]:
                if asyncio.iscoroutine(r):
                    r.close()  # never started: no "was never awaited" warning
        return out
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # let the cancelled reads finish their cleanup
        raise


@dataclass(frozen=True)
class Shared:
    """Parameters every statement of one store gets unless its caller gives them.

    ``namespace`` None: no ``ns`` default (database-wide work such as re-embedding names it itself);
    ``clock`` None: no ``now``; ``reads_at``: also ``model`` (the embedding model's name) and ``at``
    (the moment a read is of: ``now`` unless given); ``constants``: extra defaults (the decay constants
    of knowledge statements)."""

    namespace: str | None = None
    clock: Clock | None = None
    reads_at: bool = False
    model: str | None = None
    constants: Mapping[str, Any] = field(default_factory=dict)

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        # every statement gets it, so no write path can forget it (a read ignores it)
        params.setdefault("actor", actor())
        for key, value in self.constants.items():
            params.setdefault(key, value)
        if self.namespace is not None:
            params.setdefault("ns", self.namespace)
        if self.clock is not None:
            params.setdefault("now", self.clock.now())
        if self.reads_at:
            params.setdefault("model", self.model)
            if params.get("at") is None:
                params["at"] = params["now"]
        return params


class Executor:
    """Runs named statements against one database of one driver, or inside one transaction."""

    def __init__(self, driver: AsyncDriver, database: str, shared: Shared | None = None) -> None:
        self.driver = driver
        self.database = database
        self.shared = shared or Shared()
        self.q = queries()
        self.tx: AsyncManagedTransaction | None = None

    def bound(self, tx: AsyncManagedTransaction) -> Executor:
        """This executor, its statements run inside ``tx``."""
        view = copy.copy(self)
        view.tx = tx
        return view

    def with_shared(self, **changes: Any) -> Executor:
        """This executor with other shared parameters (e.g. the decay constants added)."""
        view = copy.copy(self)
        view.shared = dataclasses.replace(self.shared, **changes)
        return view

    @property
    def in_transaction(self) -> bool:
        return self.tx is not None

    async def read(self, name: str, /, **params: Any) -> Records:
        """Run a read statement (routed to a reader; inside the bound transaction when there is one)."""
        return await self._run(name, params, RoutingControl.READ)

    async def write(self, name: str, /, **params: Any) -> Records:
        """Run a write statement (one transaction of its own, or inside the bound transaction)."""
        return await self._run(name, params, RoutingControl.WRITE)

    async def create_schema(self, name: str, /, **params: Any) -> None:
        """Run a ``CREATE ... IF NOT EXISTS`` statement.  Two processes bootstrapping one new database at
        once (replicas, test workers) can both find the index missing: the second commit is then refused
        as an equivalent of the first, which is what ``IF NOT EXISTS`` asked for."""
        try:
            await self.write(name, **params)
        except neo4j.exceptions.ClientError as exc:
            if exc.code != EQUIVALENT_SCHEMA_EXISTS:
                raise

    async def _run(self, name: str, params: dict[str, Any], routing: RoutingControl) -> Records:
        text = self.q[name]
        params = self.shared.apply(params)
        if self.tx is not None:
            result = await self.tx.run(text, params)
            return [record async for record in result]

        async def once() -> Records:
            records, _, _ = await self.driver.execute_query(
                text, parameters_=params, database_=self.database, routing_=routing
            )
            return records

        return await retrying_races(once)

    async def auto(self, name: str, /, **params: Any) -> Records:
        """Run a statement in an auto-commit session (``CALL { ... } IN TRANSACTIONS``).  Not retried:
        such a statement commits its batches as it goes (the sweeps that use it are idempotent)."""
        async with self.driver.session(database=self.database) as session:
            result = await session.run(self.q[name], self.shared.apply(params))
            return [record async for record in result]

    async def transaction(
        self, work: Callable[[AsyncManagedTransaction], Awaitable[T]], *, read: bool = False
    ) -> T:
        """Run ``work`` in one managed transaction (routed to a reader when ``read``), again when it lost
        a race; inside a bound transaction ``work`` simply runs in it."""
        if self.tx is not None:
            return await work(self.tx)

        async def once() -> T:
            mode = neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS
            async with self.driver.session(database=self.database, default_access_mode=mode) as session:
                if read:
                    return await session.execute_read(work)
                return await session.execute_write(work)

        return await retrying_races(once)
