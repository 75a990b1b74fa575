"""Exact history tools: invalidate_observations (retire, keep) and entity_history (a timeline)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg_neo4j.models import MAX_ITEMS_PER_CALL
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec, dump, parse_list, parse_model, schema_of
from kg_neo4j.store import history
from kg_neo4j.store.history import History, HistoryIn, ObservationInvalidate, RetiredObservation

#: both tools belong to default (and so to all); reference keeps the reference's 9 tools
DEFAULT_PROFILES = ("default",)


class _InvalidateArgs(BaseModel):
    observations: list[ObservationInvalidate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Observations that stopped being true: each {entityName, observations: [texts], validUntil?}; "
        "validUntil (ISO 8601 with timezone, not in the future) defaults to now. They stay in history.",
    )


class _Retired(BaseModel):
    observations: list[RetiredObservation]


async def invalidate_observations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    items = parse_list(args, "observations", ObservationInvalidate)
    retired = await history.invalidate_observations(rt.store, items)
    data = {"observations": [r.model_dump() for r in retired]}
    return dump(data), data


async def entity_history(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    req = parse_model(args, HistoryIn)
    result = await history.entity_history(rt.store, req)
    data = result.model_dump()
    return dump(data), data


HISTORY_TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="invalidate_observations",
        description=(
            "Retire observations that stopped being true (validUntil, default now) without erasing them: reads "
            "of now, search_nodes and search_memory stop showing them, reads with asOf before that moment still "
            "do, and entity_history lists them. All or nothing. Use delete_observations to erase."
        ),
        input_schema=schema_of(_InvalidateArgs),
        handler=invalidate_observations,
        destructive=False,
        idempotent=False,
        output_schema=schema_of(_Retired),
        profiles=DEFAULT_PROFILES,
    ),
    ToolSpec(
        name="entity_history",
        description=(
            "How what the memory knows about one entity changed, in order of time: created, type changes, "
            "observations added and retired, relations opened, updated (weight, reasoning, source) and closed, "
            "knowledge trust and level changes, forgotten. Give `name`, or `relation` {from, to, relationType} "
            "for one relation's history. Paged: limit (default 100, at most 1000) and the nextCursor returned."
        ),
        input_schema=schema_of(HistoryIn),
        handler=entity_history,
        read_only=True,
        idempotent=True,
        output_schema=schema_of(History),
        profiles=DEFAULT_PROFILES,
    ),
]
