"""The reference memory server's 9 tools: spec 001's names and input schemas, spec 000's
behaviour, and the exact JSON text the reference answers with."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from importlib import resources
from typing import Any

from pydantic import BaseModel

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    Entity,
    EntityIn,
    ObservationAdd,
    ObservationDelete,
    ObservationResult,
    Relation,
    RelationIn,
)
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec, dump, parse_list, parse_strings, schema_of
from kg_neo4j.server.search import record_access

_SCHEMAS: dict[str, dict[str, Any]] = {
    t["name"]: t for t in json.loads(resources.files("kg_neo4j.server").joinpath("reference_tools.json").read_text())
}


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


# --- handlers --------------------------------------------------------------------
async def create_entities(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    entities = parse_list(args, "entities", EntityIn)
    created = await rt.store.create_entities(entities)
    data = [e.model_dump() for e in created]
    return dump(data), {"entities": data}


async def create_relations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    relations = parse_list(args, "relations", RelationIn)
    created = await rt.store.create_relations(relations)
    data = [r.reference() for r in created]
    return dump(data), {"relations": data}


async def add_observations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    additions = parse_list(args, "observations", ObservationAdd)
    results = await rt.store.add_observations(additions)
    data = [r.model_dump() for r in results]
    return dump(data), {"results": data}


async def delete_entities(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    names = parse_strings(args, "entityNames", max_chars=MAX_NAME_CHARS)
    await rt.store.delete_entities(names)
    return _done("Entities deleted successfully")


async def delete_observations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    deletions = parse_list(args, "deletions", ObservationDelete)
    await rt.store.delete_observations(deletions)
    return _done("Observations deleted successfully")


async def delete_relations(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    relations = parse_list(args, "relations", RelationIn)
    await rt.store.delete_relations(relations)
    return _done("Relations deleted successfully")


def _done(message: str) -> ToolOutput:
    return message, {"success": True, "message": message}


_AS_OF = {
    "type": "string",
    "format": "date-time",
    "description": "Optional ISO 8601 timestamp with timezone: answer with the graph as it was at that moment "
    "(default: now)",
}


def _as_of(rt: Runtime, args: dict[str, Any]) -> datetime | None:
    if rt.profile == "reference" or args.get("asOf") is None:
        return None
    value = args["asOf"]
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise ValidationError("asOf must be an ISO 8601 timestamp with a timezone, e.g. 2026-03-01T00:00:00Z",
                              field="asOf")
    return when


async def read_graph(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    limit = cursor = None
    as_of = _as_of(rt, args)
    if rt.profile != "reference":
        limit = args.get("limit")
        cursor = args.get("cursor")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
            raise ValidationError("limit must be an integer between 1 and 10000", field="limit")
        if cursor is not None and not isinstance(cursor, str):
            raise ValidationError("cursor must be the string a previous read_graph returned", field="cursor")
    if limit is None and cursor is None:
        # the whole graph: its text is built once from flat rows (the answers stay byte-identical)
        return await rt.store.read_graph_answer(as_of=as_of)
    graph = await rt.store.read_graph(limit=limit, cursor=cursor, as_of=as_of)
    data = graph.reference()
    structured = dict(data)
    data["nextCursor"] = structured["nextCursor"] = graph.nextCursor
    return dump(data), structured


async def search_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    query = args.get("query")
    if not isinstance(query, str):
        raise ValidationError("missing or non-string argument 'query'", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}", field="query")
    graph = await rt.store.search_nodes(query, as_of=_as_of(rt, args))
    data = graph.reference()
    return dump(data), data


async def open_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    names = parse_strings(args, "names", max_chars=MAX_NAME_CHARS, allow_empty=True)
    as_of = _as_of(rt, args)
    graph = await rt.store.open_nodes(names, as_of=as_of)
    data = graph.reference()
    text = dump(data)
    if as_of is None:
        record_access(rt, [e.name for e in graph.entities], text)
    return text, data


def _read_graph_extended() -> dict[str, Any]:
    schema = copy.deepcopy(_SCHEMAS["read_graph"]["inputSchema"])
    schema["properties"] = {
        "limit": {
            "type": "integer", "minimum": 1, "maximum": 10000,
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
    schema = copy.deepcopy(_SCHEMAS["create_relations"]["inputSchema"])
    props = schema["properties"]["relations"]["items"]["properties"]
    props["weight"] = {"type": "number", "minimum": 0, "maximum": 1,
                       "description": "Optional confidence in [0, 1] (default 1.0)"}
    props["validFrom"] = {"type": "string", "format": "date-time",
                          "description": "Optional ISO 8601 time from which the relation holds (default now)"}
    props["validUntil"] = {"type": "string", "format": "date-time",
                           "description": "Optional ISO 8601 time at which the relation stops holding"}
    props["reasoning"] = {"type": "string", "description": "Optional: why this relation holds"}
    props["source"] = {"type": "string", "description": "Optional: who or what asserted it"}
    return schema


def _with_as_of(name: str) -> dict[str, Any]:
    schema = copy.deepcopy(_SCHEMAS[name]["inputSchema"])
    schema["properties"]["asOf"] = _AS_OF
    return schema


def _spec(name: str, handler: Any, output: type[BaseModel], **kw: Any) -> ToolSpec:
    s = _SCHEMAS[name]
    return ToolSpec(name=name, description=s["description"], input_schema=s["inputSchema"], handler=handler,
                    output_schema=schema_of(output), **kw)


REFERENCE_TOOLS: list[ToolSpec] = [
    _spec("create_entities", create_entities, _Created, idempotent=True),
    _spec("create_relations", create_relations, _CreatedRelations, idempotent=True,
          extended_schema=_create_relations_extended()),
    _spec("add_observations", add_observations, _Added, idempotent=True),
    _spec("delete_entities", delete_entities, _Done, destructive=True, idempotent=True),
    _spec("delete_observations", delete_observations, _Done, destructive=True, idempotent=True),
    _spec("delete_relations", delete_relations, _Done, destructive=True, idempotent=True),
    _spec("read_graph", read_graph, _Graph, read_only=True, idempotent=True, extended_schema=_read_graph_extended()),
    _spec("search_nodes", search_nodes, _Graph, read_only=True, idempotent=True,
          extended_schema=_with_as_of("search_nodes")),
    _spec("open_nodes", open_nodes, _Graph, read_only=True, idempotent=True,
          extended_schema=_with_as_of("open_nodes")),
]
