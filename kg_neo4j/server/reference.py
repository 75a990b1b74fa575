"""The reference memory server's 9 tools: names and input schemas (docs/reference-schemas.md),
behaviour (docs/reference-server.md), and the exact JSON text the reference answers with."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, cast

from pydantic import AwareDatetime, BaseModel, Field

from kg_neo4j.input_rules import Batch, LookupName
from kg_neo4j.models import (
    MAX_ITEMS_PER_CALL,
    MAX_QUERY_CHARS,
    Entity,
    EntityIn,
    Name,
    ObservationAdd,
    ObservationDelete,
    ObservationResult,
    Relation,
    RelationIn,
    RelationKey,
    StrictInput,
    not_null,
    reference_text,
)
from kg_neo4j.server.declare import M, TypedHandler, tool
from kg_neo4j.server.profiles import A, D, R
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec
from kg_neo4j.server.search import record_access
from kg_neo4j.store import GraphStore, duplicate_hints
from kg_neo4j.store.aliases import ResolvedWrite
from kg_neo4j.store.duplicate_hints import DuplicateHint

_SCHEMAS: dict[str, dict[str, Any]] = {
    t["name"]: t
    for t in json.loads(resources.files("kg_neo4j.server").joinpath("reference_tools.json").read_text())
}


# --- inputs (advertised by the reference's JSON below, docs/reference-schemas.md, extended outside ``reference``) ---
class CreateEntitiesIn(StrictInput):
    entities: list[EntityIn] = Batch


class CreateRelationsIn(StrictInput):
    relations: list[RelationIn] = Batch


class AddObservationsIn(StrictInput):
    observations: list[ObservationAdd] = Batch


class DeleteEntitiesIn(StrictInput):
    entityNames: list[Name] = Batch


class DeleteObservationsIn(StrictInput):
    deletions: list[ObservationDelete] = Batch


class DeleteRelationsIn(StrictInput):
    relations: list[RelationKey] = Batch


class ReadGraphIn(StrictInput):
    limit: int | None = Field(default=None, ge=1, le=MAX_ITEMS_PER_CALL)
    cursor: str | None = None
    asOf: AwareDatetime | None = None

    _nn = not_null("limit", "cursor", "asOf")


class SearchNodesIn(StrictInput):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    asOf: AwareDatetime | None = None

    _nn = not_null("asOf")


class OpenNodesIn(StrictInput):
    names: list[LookupName] = Batch
    asOf: AwareDatetime | None = None

    _nn = not_null("asOf")


# --- structured output shapes ---------------------------------------------------
class _Graph(BaseModel):
    entities: list[Entity]
    relations: list[Relation]
    nextCursor: str | None = None


class _Created(BaseModel):
    entities: list[Entity]


class _CreatedRelations(BaseModel):
    relations: list[Relation]


class _Added(BaseModel):
    results: list[ObservationResult]


class _Done(BaseModel):
    success: bool
    message: str


_AS_OF = {
    "type": "string",
    "format": "date-time",
    "description": "Optional ISO 8601 timestamp with timezone: answer with the graph as it was at that moment "
    "(default: now)",
}


def _read_graph_extended() -> dict[str, Any]:
    schema: dict[str, Any] = copy.deepcopy(_SCHEMAS["read_graph"]["inputSchema"])
    schema["properties"] = {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10000,
            "description": "Optional page size: return at most this many entities (name order) and their relations",
        },
        "cursor": {
            "type": "string",
            "description": "Optional: the nextCursor of the previous page, to continue after it",
        },
        "asOf": _AS_OF,
    }
    return schema


def _create_relations_extended() -> dict[str, Any]:
    schema: dict[str, Any] = copy.deepcopy(_SCHEMAS["create_relations"]["inputSchema"])
    props = schema["properties"]["relations"]["items"]["properties"]
    props["weight"] = {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "Optional confidence in [0, 1] (default 1.0)",
    }
    props["validFrom"] = {
        "type": "string",
        "format": "date-time",
        "description": "Optional ISO 8601 time from which the relation holds (default now)",
    }
    props["validUntil"] = {
        "type": "string",
        "format": "date-time",
        "description": "Optional ISO 8601 time at which the relation stops holding",
    }
    props["reasoning"] = {"type": "string", "description": "Optional: why this relation holds"}
    props["source"] = {"type": "string", "description": "Optional: who or what asserted it"}
    return schema


def _with_as_of(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = copy.deepcopy(_SCHEMAS[name]["inputSchema"])
    schema["properties"]["asOf"] = _AS_OF
    return schema


def _reference(
    name: str, input: type[M], output: type[BaseModel], *, schema: dict[str, Any] | None = None, **flags: Any
) -> Callable[[TypedHandler[M]], ToolSpec]:
    """A reference tool: the reference's description and exact schema (docs/reference-schemas.md) in
    ``reference``; elsewhere that schema (or its extension), closed.  Listed by ``reference``,
    ``default`` and ``all``."""
    s = _SCHEMAS[name]
    return tool(
        name,
        description=s["description"],
        input=input,
        output=output,
        schema=schema if schema is not None else s["inputSchema"],
        reference_schema=s["inputSchema"],
        profiles=(R, D, A),
        **flags,
    )


@_reference(
    "create_entities",
    CreateEntitiesIn,
    _Created,
    idempotent=True,
    example={
        "entities": [{"name": "Lord Byron", "entityType": "person", "observations": ["a poet, Ada's father"]}]
    },
)
async def create_entities(rt: Runtime, req: CreateEntitiesIn) -> ToolOutput:
    async def write(
        store: GraphStore, candidates: dict[str, list[str]] | None = None
    ) -> tuple[list[Entity], list[ResolvedWrite]]:
        if _resolving(rt):
            return await store.create_entities_resolving(req.entities, candidates)
        return await store.create_entities(req.entities, candidates), []

    hints: list[DuplicateHint] = []
    if rt.settings.hint_on(rt.store.embedder is not None) and rt.profile != "reference":
        (made, resolved), hints = await duplicate_hints.with_hints(
            rt.store, write, lambda o: [e.name for e in o[0]]
        )
    else:
        made, resolved = await write(rt.store)
    data = [e.model_dump() for e in made]
    out: dict[str, Any] = {"entities": data}
    if resolved:  # an alias written to: the answer says which entity took the observations
        out["resolved"] = [r.model_dump() for r in resolved]
    if hints:  # a new entity probably duplicates an existing one: nothing merged, the agent is told
        out["duplicates"] = [h.model_dump() for h in hints]
    return reference_text(out if len(out) > 1 else data), out


def _resolving(rt: Runtime) -> bool:
    """Writes resolve aliases (docs/entities.md#writes-that-resolve): a setting, never in ``reference``."""
    return rt.settings.resolve_writes and rt.profile != "reference"


@_reference(
    "create_relations",
    CreateRelationsIn,
    _CreatedRelations,
    idempotent=True,
    schema=_create_relations_extended(),
    example={
        "relations": [
            {
                "from": "Ada Lovelace",
                "to": "Analytical Engine",
                "relationType": "programmed",
                "weight": 0.9,
                "validFrom": "2020-01-01T00:00:00Z",
                "validUntil": "2099-01-01T00:00:00Z",
                "reasoning": "her notes hold a program for it",
                "source": "Sketch of the Analytical Engine",
            }
        ]
    },
)
async def create_relations(rt: Runtime, req: CreateRelationsIn) -> ToolOutput:
    created = await rt.store.create_relations(req.relations)
    data = [r.reference() for r in created]
    return reference_text(data), {"relations": data}


@_reference(
    "add_observations",
    AddObservationsIn,
    _Added,
    idempotent=True,
    example={"observations": [{"entityName": "Charles Babbage", "contents": ["invented the cowcatcher"]}]},
)
async def add_observations(rt: Runtime, req: AddObservationsIn) -> ToolOutput:
    if _resolving(rt):
        named, targets = await rt.store.add_observations_resolving(req.observations)
        data = [
            {**r.model_dump(), **({"resolvedTo": targets[r.entityName]} if r.entityName in targets else {})}
            for r in named
        ]
        return reference_text(data), {"results": data}
    results = await rt.store.add_observations(req.observations)
    data = [r.model_dump() for r in results]
    return reference_text(data), {"results": data}


@_reference(
    "delete_entities",
    DeleteEntitiesIn,
    _Done,
    destructive=True,
    idempotent=True,
    example={"entityNames": ["Draft Notes"]},
)
async def delete_entities(rt: Runtime, req: DeleteEntitiesIn) -> ToolOutput:
    await rt.store.delete_entities(req.entityNames)
    return _done("Entities deleted successfully")


@_reference(
    "delete_observations",
    DeleteObservationsIn,
    _Done,
    destructive=True,
    idempotent=True,
    example={"deletions": [{"entityName": "Ada Lovelace", "observations": ["liked horses"]}]},
)
async def delete_observations(rt: Runtime, req: DeleteObservationsIn) -> ToolOutput:
    await rt.store.delete_observations(req.deletions)
    return _done("Observations deleted successfully")


@_reference(
    "delete_relations",
    DeleteRelationsIn,
    _Done,
    destructive=True,
    idempotent=True,
    example={
        "relations": [{"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "corresponded_with"}]
    },
)
async def delete_relations(rt: Runtime, req: DeleteRelationsIn) -> ToolOutput:
    # a RelationKey has the (from_, to, relationType) the store reads from a Relation
    await rt.store.delete_relations(cast(Sequence[Relation], req.relations))
    return _done("Relations deleted successfully")


def _done(message: str) -> ToolOutput:
    return message, {"success": True, "message": message}


@_reference(
    "read_graph",
    ReadGraphIn,
    _Graph,
    read_only=True,
    idempotent=True,
    schema=_read_graph_extended(),
    example={"limit": 10},
)
async def read_graph(rt: Runtime, req: ReadGraphIn) -> ToolOutput:
    if req.limit is None and req.cursor is None:
        # the whole graph: its text is built once from flat rows (the answers stay byte-identical)
        return await rt.store.read_graph_answer(as_of=req.asOf)
    graph = await rt.store.read_graph(limit=req.limit, cursor=req.cursor, as_of=req.asOf)
    data = graph.reference()
    structured = dict(data)
    data["nextCursor"] = structured["nextCursor"] = graph.nextCursor
    return reference_text(data), structured


@_reference(
    "search_nodes",
    SearchNodesIn,
    _Graph,
    read_only=True,
    idempotent=True,
    schema=_with_as_of("search_nodes"),
    example={"query": "Babbage"},
)
async def search_nodes(rt: Runtime, req: SearchNodesIn) -> ToolOutput:
    graph = await rt.store.search_nodes(req.query, as_of=req.asOf)
    data = graph.reference()
    return reference_text(data), data


@_reference(
    "open_nodes",
    OpenNodesIn,
    _Graph,
    read_only=True,
    idempotent=True,
    schema=_with_as_of("open_nodes"),
    example={"names": ["Ada Lovelace"]},
)
async def open_nodes(rt: Runtime, req: OpenNodesIn) -> ToolOutput:
    graph = await rt.store.open_nodes(req.names, as_of=req.asOf)
    data = graph.reference()
    if rt.profile != "reference":
        # names merged into an entity (merge_entities); the reference's answers keep their shape
        for e in data["entities"]:
            if e["name"] in graph.aliases:
                e["aliases"] = graph.aliases[e["name"]]
    text = reference_text(data)
    if req.asOf is None:
        record_access(rt, [e.name for e in graph.entities], text)
    return text, data
