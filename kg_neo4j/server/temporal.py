"""Weighted, time-aware relations: traverse_graph, update_relations, invalidate_relations."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg_neo4j.models import (
    MAX_ITEMS_PER_CALL,
    RelationFull,
    RelationInvalidate,
    RelationUpdate,
    Traversal,
    TraverseIn,
)
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec, dump, parse_list, parse_model, schema_of
from kg_neo4j.store.recall_facts import traverse_with_facts

DEFAULT_PROFILES = ("default",)
#: traverse_graph is also one of the knowledge tools (spec 004)
KNOWLEDGE_TOO = ("default", "knowledge")


class _Changed(BaseModel):
    relations: list[RelationFull]


class _InvalidateArgs(BaseModel):
    relations: list[RelationInvalidate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Relations that stopped being true: each {from, to, relationType, validUntil?}; "
        "validUntil (ISO 8601 with timezone) defaults to now. The old relation stays in history.",
    )


class _UpdateArgs(BaseModel):
    relations: list[RelationUpdate] = Field(
        max_length=MAX_ITEMS_PER_CALL,
        description="Currently valid relations to change: weight (new weight = average of current and given), "
        "reasoning, source, validFrom, validUntil (or clearValidUntil: true).",
    )


async def traverse_graph(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    req = parse_model(args, TraverseIn)
    result = await traverse_with_facts(rt.store, req)
    data = result.model_dump(by_alias=True)
    return dump(data), data


async def invalidate_relations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    items = parse_list(args, "relations", RelationInvalidate)
    changed = await rt.store.invalidate_relations(items)
    data = {"relations": [r.model_dump(by_alias=True) for r in changed]}
    return dump(data), data


async def update_relations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    items = parse_list(args, "relations", RelationUpdate)
    changed = await rt.store.update_relations(items)
    data = {"relations": [r.model_dump(by_alias=True) for r in changed]}
    return dump(data), data


TEMPORAL_TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="traverse_graph",
        description=(
            "Walk the graph breadth-first from one or more entities and return the entities reached "
            "(with their depth), the relationships walked (with weight, validity, reasoning, source) and the "
            "path to each entity. Filters: direction (out/in/both), maxDepth (1-4, default 2), relationTypes, "
            "minWeight, asOf (ISO 8601: the graph as it was then). Each entity's fan-out is capped per hop "
            "(fanout, default 50, strongest relations first); `truncated` and `cappedAt` say when a cap cut the answer. "
            "A knowledge entity carries `knowledge` (trust, level, quote, retention, fading)."
        ),
        input_schema=schema_of(TraverseIn),
        handler=traverse_graph,
        read_only=True,
        idempotent=True,
        output_schema=schema_of(Traversal),
        profiles=KNOWLEDGE_TOO,
    ),
    ToolSpec(
        name="update_relations",
        description=(
            "Update currently valid relations: the new weight is the average of the current weight and the "
            "given one (evidence accumulates), and reasoning, source and validity can be changed. "
            "All or nothing: if any relation is not found, nothing changes."
        ),
        input_schema=schema_of(_UpdateArgs),
        handler=update_relations,
        idempotent=False,
        output_schema=schema_of(_Changed),
        profiles=DEFAULT_PROFILES,
    ),
    ToolSpec(
        name="invalidate_relations",
        description=(
            "Mark relations as no longer true (sets validUntil, default now) without deleting them: reads of now "
            "stop showing them, reads with asOf before that moment still do. Use delete_relations to erase."
        ),
        input_schema=schema_of(_InvalidateArgs),
        handler=invalidate_relations,
        destructive=False,
        idempotent=False,
        output_schema=schema_of(_Changed),
        profiles=DEFAULT_PROFILES,
    ),
]
