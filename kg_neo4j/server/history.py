"""Exact history tools: invalidate_observations (retire, keep) and entity_history (a timeline)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kg_neo4j.models import MAX_ITEMS_PER_CALL, StrictInput
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, D
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.store import history
from kg_neo4j.store.history import History, HistoryIn, ObservationInvalidate, RetiredObservation


class _InvalidateArgs(StrictInput):
    observations: list[ObservationInvalidate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Observations that stopped being true: each {entityName, observations: [texts], validUntil?}; "
        "validUntil (ISO 8601 with timezone, not in the future) defaults to now. They stay in history.",
    )


class _Retired(BaseModel):
    observations: list[RetiredObservation]


@tool(
    "invalidate_observations",
    input=_InvalidateArgs,
    output=_Retired,
    destructive=False,
    idempotent=False,
    profiles=(D, A),
    example={"observations": [{"entityName": "Ada Lovelace", "observations": ["lives in Marylebone"]}]},
    description=(
        "Retire observations that stopped being true (validUntil, default now) without erasing them: reads "
        "of now, search_nodes and search_memory stop showing them, reads with asOf before that moment still "
        "do, and entity_history lists them. All or nothing. Use delete_observations to erase."
    ),
)
async def invalidate_observations(rt: Runtime, req: _InvalidateArgs) -> ToolOutput:
    retired = await history.invalidate_observations(rt.store, req.observations)
    data = {"observations": [r.model_dump() for r in retired]}
    return dump(data), data


@tool(
    "entity_history",
    input=HistoryIn,
    output=History,
    read_only=True,
    idempotent=True,
    profiles=(D, A),
    example={"name": "Ada Lovelace", "limit": 5},
    more_examples=(
        {
            "relation": {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "worked_with"},
            "limit": 5,
        },
    ),
    description=(
        "How what the memory knows about one entity changed, in order of time: created, type changes, "
        "observations added and retired, relations opened, updated (weight, reasoning, source) and closed, "
        "knowledge trust and level changes, forgotten; each event says who made it (by). Give `name`, or `relation` {from, to, relationType} "
        "for one relation's history. Paged: limit (default 100, at most 1000) and the nextCursor returned."
    ),
)
async def entity_history(rt: Runtime, req: HistoryIn) -> ToolOutput:
    result = await history.entity_history(rt.store, req)
    data = result.model_dump()
    return dump(data), data
