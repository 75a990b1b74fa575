"""A peer's times as kg-neo4j stores its own: UTC offset datetimes, never after the import."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j


def from_epoch_ms(value: Any) -> datetime | None:
    """Memento's times: JavaScript milliseconds since the epoch (stored as floats)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000.0, tz=UTC)
    return None


def to_datetime(value: Any) -> datetime | None:
    """A peer's temporal value as a UTC offset time, as kg-neo4j stores its own: a time kept with a zone id
    (Graphiti's ``...Z[UTC]``) is a different value to Cypher, and ``<=`` between the two at the same
    instant is not true, so an ``asOf`` of that very moment would miss it."""
    if isinstance(value, neo4j.time.DateTime):
        value = value.to_native()
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return None


def not_after(at: datetime | None, now: datetime) -> datetime | None:
    """A peer's time, never after the import (a clock ahead of ours would hide the item from reads of now)."""
    return None if at is None else min(at, now)
