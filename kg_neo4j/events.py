"""Before/after events of the MemoryMesh operations (docs/memorymesh.md#events), as a small pub-sub API.

    from kg_neo4j import events

    def audit(data: dict) -> None: ...
    unsubscribe = events.bus.subscribe("afterAddNodes", audit)

Every MemoryMesh write (static and schema-generated tools, and ``MeshStore``) runs as one
Neo4j transaction and emits, in this order: ``beforeBeginTransaction``; each ``before*`` event
right before its write statement runs (a listener that raises aborts the call: nothing is
written); then either ``afterCommit`` followed by the call's ``after*`` events, which fire only
once the transaction has committed, or ``beforeRollback`` / ``afterRollback`` (and no
``after*`` event).  A failing ``after*`` listener is logged, never reported to the caller (the
write has landed).  Listeners are plain callables taking one ``dict``; they run synchronously.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], Any]

#: Every event name, with the data it carries (docs/memorymesh.md#events, plus update/delete/metadata pairs).
EVENTS: dict[str, str] = {
    "beforeAddNodes": "{nodes}",
    "afterAddNodes": "{nodes}",
    "beforeUpdateNodes": "{nodes}",
    "afterUpdateNodes": "{nodes}",
    "beforeDeleteNodes": "{names}",
    "afterDeleteNodes": "{names}",
    "beforeAddEdges": "{edges}",
    "afterAddEdges": "{edges}",
    "beforeUpdateEdges": "{edges}",
    "afterUpdateEdges": "{edges}",
    "beforeInvalidateEdges": "{edges}",
    "afterInvalidateEdges": "{edges}",
    "beforeDeleteEdges": "{edges}",
    "afterDeleteEdges": "{edges}",
    "beforeAddMetadata": "{nodeName, metadata}",
    "afterAddMetadata": "{nodeName, metadata}",
    "beforeDeleteMetadata": "{nodeName, metadata}",
    "afterDeleteMetadata": "{nodeName, metadata}",
    "beforeSearch": "{query}",
    "afterSearch": "{results}",
    "beforeBeginTransaction": "{}",
    "afterCommit": "{}",
    "beforeRollback": "{}",
    "afterRollback": "{}",
}


class EventBus:
    """Publish-subscribe for the events in :data:`EVENTS` (unknown names are refused: typos fail loudly)."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[Listener]] = {}

    @staticmethod
    def _check(event: str) -> None:
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; known: {', '.join(EVENTS)}")

    def subscribe(self, event: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener(data)`` on every ``event``; returns a function that unsubscribes it."""
        self._check(event)
        self._listeners.setdefault(event, []).append(listener)
        return lambda: self.unsubscribe(event, listener)

    def unsubscribe(self, event: str, listener: Listener) -> None:
        self._check(event)
        listeners = self._listeners.get(event, [])
        if listener in listeners:
            listeners.remove(listener)

    def once(self, event: str, listener: Listener) -> Callable[[], None]:
        """Like :meth:`subscribe`, for the next ``event`` only."""

        def wrapper(data: dict[str, Any]) -> Any:
            self.unsubscribe(event, wrapper)
            return listener(data)

        return self.subscribe(event, wrapper)

    # MemoryMesh's EventEmitter names (docs/memorymesh.md#events)
    on = subscribe
    off = unsubscribe

    def listener_count(self, event: str) -> int:
        return len(self._listeners.get(event, []))

    def remove_all_listeners(self, event: str | None = None) -> None:
        if event is None:
            self._listeners.clear()
        else:
            self._listeners.pop(event, None)

    def emit(self, event: str, data: dict[str, Any] | None = None) -> bool:
        """Call the listeners of ``event`` in subscription order; True if there were any.

        A listener's exception propagates (for ``before*`` events that aborts the operation)."""
        self._check(event)
        listeners = list(self._listeners.get(event, []))
        for listener in listeners:
            listener(dict(data or {}))
        return bool(listeners)

    def emit_safely(self, event: str, data: dict[str, Any] | None = None) -> None:
        """Emit, logging (not raising) a listener's failure: for events after the fact."""
        try:
            self.emit(event, data)
        except Exception:  # noqa: BLE001 - the write has landed; a listener must not turn it into an error
            log.exception("listener of %s failed", event)


#: The process-wide bus the MCP server's MemoryMesh tools emit on.
bus = EventBus()
