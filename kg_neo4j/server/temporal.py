"""Weighted, time-aware relations: traverse_graph, update_relations, invalidate_relations."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kg_neo4j.models import (
    MAX_ITEMS_PER_CALL,
    RelationFull,
    RelationInvalidate,
    RelationUpdate,
    StrictInput,
    Traversal,
    TraverseIn,
)
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, D, K
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.store.recall_facts import traverse_with_facts


class _Changed(BaseModel):
    relations: list[RelationFull]


class _InvalidateArgs(StrictInput):
    relations: list[RelationInvalidate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Relations that stopped being true: each {from, to, relationType, validUntil?}; "
        "validUntil (ISO 8601 with timezone) defaults to now. The old relation stays in history.",
    )


class _UpdateArgs(StrictInput):
    relations: list[RelationUpdate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Currently valid relations to change: weight (new weight = average of current and given), "
        "reasoning, source, validFrom, validUntil (or clearValidUntil: true).",
    )


@tool(
    "traverse_graph",
    input=TraverseIn,
    output=Traversal,
    read_only=True,
    idempotent=True,
    profiles=(D, K, A),
    example={
        "start": ["Ada Lovelace"],
        "direction": "both",
        "maxDepth": 2,
        "minWeight": 0.0,
        "limit": 10,
        "fanout": 5,
    },
    description=(
        "Walk the graph breadth-first from one or more entities and return the entities reached "
        "(with their depth), the relationships walked (with weight, validity, reasoning, source) and the "
        "path to each entity. Filters: direction (out/in/both), maxDepth (1-4, default 2), relationTypes, "
        "minWeight, asOf (ISO 8601: the graph as it was then). Each entity's fan-out is capped per hop "
        "(fanout, default 50, strongest relations first); `truncated` and `cappedAt` say when a cap cut the answer. "
        "A knowledge entity carries `knowledge` (trust, level, quote, retention, fading)."
    ),
)
async def traverse_graph(rt: Runtime, req: TraverseIn) -> ToolOutput:
    result = await traverse_with_facts(rt.store, req)
    data = result.model_dump(by_alias=True)
    return dump(data), data


@tool(
    "update_relations",
    input=_UpdateArgs,
    output=_Changed,
    idempotent=False,
    profiles=(D, A),
    example={
        "relations": [
            {
                "from": "Ada Lovelace",
                "to": "Analytical Engine",
                "relationType": "wrote_about",
                "weight": 0.5,
                "reasoning": "her notes on it are the longest part of the translation",
                "source": "Sketch of the Analytical Engine",
            }
        ]
    },
    description=(
        "Update currently valid relations: the new weight is the average of the current weight and the "
        "given one (evidence accumulates), and reasoning, source and validity can be changed. "
        "All or nothing: if any relation is not found, nothing changes."
    ),
)
async def update_relations(rt: Runtime, req: _UpdateArgs) -> ToolOutput:
    changed = await rt.store.update_relations(req.relations)
    data = {"relations": [r.model_dump(by_alias=True) for r in changed]}
    return dump(data), data


@tool(
    "invalidate_relations",
    input=_InvalidateArgs,
    output=_Changed,
    destructive=False,
    idempotent=False,
    profiles=(D, A),
    example={"relations": [{"from": "Charles Babbage", "to": "Analytical Engine", "relationType": "built"}]},
    description=(
        "Mark relations as no longer true (sets validUntil, default now) without deleting them: reads of now "
        "stop showing them, reads with asOf before that moment still do. Use delete_relations to erase."
    ),
)
async def invalidate_relations(rt: Runtime, req: _InvalidateArgs) -> ToolOutput:
    changed = await rt.store.invalidate_relations(req.relations)
    data = {"relations": [r.model_dump(by_alias=True) for r in changed]}
    return dump(data), data
