"""What a hook runs with: the driver, namespace, budgets, settings and session state."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.hooks.config import HookConfig
from kg_neo4j.hooks.state import HookState

#: Work a hook does after it has printed (an access write): Claude Code already has the answer.
After = Callable[[], Awaitable[Any]]


@dataclass
class Answer:
    """What a hook prints on stdout, and what it does afterwards."""

    text: str = ""
    after: list[After] = field(default_factory=list)


@dataclass
class HookContext:
    """A hook's run.  The Neo4j driver is made on first use (``connect``), so a hook that needs no
    graph (search-enforcer, before every tool call) does not even import the driver."""

    connect: Callable[[], Any]
    database: str
    namespace: str
    budget: int
    config: HookConfig
    payload: dict[str, Any]
    clock: Clock = field(default_factory=SystemClock)
    deadline: float = field(default_factory=lambda: time.monotonic() + 1.0)
    sweep_budget: float = 0.4
    auth_token: str | None = None

    def __post_init__(self) -> None:
        self.state = HookState(self.config.hook_state_dir, self.namespace)
        self._driver: Any = None

    @property
    def driver(self) -> Any:
        if self._driver is None:
            self._driver = self.connect()
        return self._driver

    @functools.cached_property
    def ms(self) -> Any:
        from kg_neo4j.store import GraphStore
        from kg_neo4j.store.maintenance import MaintenanceStore

        return MaintenanceStore(
            GraphStore(self.driver, database=self.database, namespace=self.namespace, clock=self.clock)
        )

    def left(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def session_id(self) -> str:
        value = self.payload.get("session_id")
        return value if isinstance(value, str) else ""

    async def read(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.ms.read(statement, **params)]

    async def write(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.ms.write(statement, **params)]

    async def record(self, names: list[str], grade: int) -> None:
        """One access of the named knowledge with ``grade`` (docs/knowledge-model.md#access-grades),
        for this agent session."""
        if not names:
            return
        from kg_neo4j.store import GraphStore
        from kg_neo4j.store.knowledge import KnowledgeStore

        graph = GraphStore(self.driver, database=self.database, namespace=self.namespace, clock=self.clock)
        await KnowledgeStore(graph).record_access(names, grade=grade, session=self.session_id or None)
