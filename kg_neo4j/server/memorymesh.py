"""MemoryMesh's tools (spec 002) over the graph the reference tools use: the 11 static tools
and the three tools each schema file generates (``add_<type>``, ``update_<type>``, ``delete_<type>``).

Answers follow spec 002 section 7.2: one text block holding
``{"data": ..., "actionTaken": "...", "timestamp": "..."}`` (also the structured output);
reads put ``{"nodes": [...], "edges": [...]}`` in ``data``.  Errors go through the one error
mapper of ``registry.call`` and answer as ``{"error", "context", "suggestions"}`` (``mesh_errors``).  In the ``all`` profile the three reads that collide with the
reference's are exposed as ``read_nodes_graph``, ``search_nodes_graph`` and ``open_nodes_graph``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS, MAX_QUERY_CHARS
from kg_neo4j.schemas import NodeSchema, process_args
from kg_neo4j.server.mesh_errors import mesh_error_text
from kg_neo4j.server.registry import (
    Handler,
    Runtime,
    ToolOutput,
    ToolSpec,
    dump,
    parse_list,
    parse_strings,
)
from kg_neo4j.store.memorymesh import EdgeIn, EdgeKey, EdgeUpdate, MeshGraph, MeshStore, NodeIn, NodeUpdate

MESH_PROFILES = ("memorymesh",)
ALL_PROFILES = ("all",)
GENERATED_PROFILES = ("memorymesh", "all")

#: MemoryMesh's read tools whose names the reference also uses -> their names in the ``all`` profile.
RENAMED_IN_ALL = {"read_graph": "read_nodes_graph", "search_nodes": "search_nodes_graph",
                  "open_nodes": "open_nodes_graph"}


def mesh(rt: Runtime) -> MeshStore:
    return MeshStore(rt.store)


def _answer(rt: Runtime, data: Any, action: str) -> ToolOutput:
    out = {"data": data, "actionTaken": action, "timestamp": rt.store.clock.now().isoformat()}
    return dump(out), out


def _names(items: Sequence[Any], attr: str = "name", limit: int = 10) -> str:
    names = [str(getattr(i, attr)) for i in items]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _string(args: dict[str, Any], key: str, *, max_chars: int) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"missing or empty string argument '{key}'", field=key)
    if len(value) > max_chars:
        raise ValidationError(f"'{key}' is {len(value)} characters; the limit is {max_chars}", field=key)
    return value


# --- static tools -------------------------------------------------------------------------------


async def add_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    nodes = parse_list(args, "nodes", NodeIn)
    added = await mesh(rt).add_nodes(nodes)
    return _answer(rt, {"nodes": [n.model_dump() for n in added]}, f"Added nodes: {_names(added)}")


async def update_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    updates = parse_list(args, "nodes", NodeUpdate)
    updated = await mesh(rt).update_nodes(updates)
    return _answer(rt, {"nodes": [n.model_dump() for n in updated]}, f"Updated nodes: {_names(updated)}")


async def delete_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    names = parse_strings(args, "nodeNames", max_chars=MAX_NAME_CHARS)
    await mesh(rt).delete_nodes(names)
    return _answer(rt, {"nodeNames": names}, f"Deleted nodes: {', '.join(names[:10])}"
                   + (f" and {len(names) - 10} more" if len(names) > 10 else ""))


async def add_edges(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    edges = parse_list(args, "edges", EdgeIn)
    added = await mesh(rt).add_edges(edges)
    return _answer(rt, {"edges": [e.dump() for e in added]}, f"Added {len(added)} edge(s)")


async def update_edges(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    updates = parse_list(args, "edges", EdgeUpdate)
    updated = await mesh(rt).update_edges(updates)
    return _answer(rt, {"edges": [e.dump() for e in updated]}, f"Updated {len(updated)} edge(s)")


async def delete_edges(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    keys = parse_list(args, "edges", EdgeKey)
    await mesh(rt).delete_edges(keys)
    data = {"edges": [{"from": k.from_, "to": k.to, "edgeType": k.edgeType} for k in keys]}
    return _answer(rt, data, f"Deleted {len(keys)} edge(s)")


async def add_metadata(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    name = _string(args, "nodeName", max_chars=MAX_NAME_CHARS)
    entries = parse_strings(args, "metadata", max_chars=MAX_OBSERVATION_CHARS, allow_empty=True)
    added = await mesh(rt).add_metadata(name, entries)
    return _answer(rt, {"nodeName": name, "metadata": added}, f"Added metadata to node: {name}")


async def delete_metadata(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    name = _string(args, "nodeName", max_chars=MAX_NAME_CHARS)
    entries = parse_strings(args, "metadata", max_chars=MAX_OBSERVATION_CHARS, allow_empty=True)
    await mesh(rt).delete_metadata(name, entries)
    return _answer(rt, {"nodeName": name, "metadata": entries}, f"Deleted metadata from node: {name}")


def _graph_answer(rt: Runtime, graph: MeshGraph, action: str) -> ToolOutput:
    return _answer(rt, graph.dump(), action)


async def read_graph(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    limit, cursor = args.get("limit"), args.get("cursor")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise ValidationError("limit must be an integer between 1 and 10000", field="limit")
    if cursor is not None and not isinstance(cursor, str):
        raise ValidationError("cursor must be the string a previous read returned", field="cursor")
    graph = await mesh(rt).read_graph(limit=limit, cursor=cursor)
    return _graph_answer(rt, graph, "Read graph")


async def search_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    query = args.get("query")
    if not isinstance(query, str):
        raise ValidationError("missing or non-string argument 'query'", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}", field="query")
    graph = await mesh(rt).search_nodes(query)
    return _graph_answer(rt, graph, f"Searched nodes for: {query}")


async def open_nodes(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    names = parse_strings(args, "names", max_chars=MAX_NAME_CHARS, allow_empty=True)
    graph = await mesh(rt).open_nodes(names)
    return _graph_answer(rt, graph, f"Opened nodes: {', '.join(names[:10])}")


# --- input schemas (spec 002 section 6) ----------------------------------------------------------

_STR = {"type": "string"}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_WEIGHT = {"type": "number", "minimum": 0, "maximum": 1,
           "description": "Confidence or strength in [0, 1] (default 1.0)"}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


def _array_of(item: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": item, "description": description}


_EDGE_KEY = {"from": {"type": "string", "description": "Name of the source node"},
             "to": {"type": "string", "description": "Name of the target node"},
             "edgeType": {"type": "string", "description": "Type of the edge, e.g. located_in"}}

SCHEMAS: dict[str, dict[str, Any]] = {
    "add_nodes": _obj({"nodes": _array_of(_obj({
        "name": {"type": "string", "description": "Unique name of the node"},
        "nodeType": {"type": "string", "description": "Type of the node, e.g. npc"},
        "metadata": {**_STRINGS, "description": "Facts about the node, preferably \"Key: Value\""},
    }, ["name", "nodeType", "metadata"]), "Nodes to add; a name that already exists fails the call")}, ["nodes"]),
    "update_nodes": _obj({"nodes": _array_of(_obj({
        "name": {"type": "string", "description": "Name of an existing node"},
        "metadata": {**_STRINGS, "description": "Optional: replaces the node's whole metadata"},
        "nodeType": {"type": "string", "description": "Optional: the node's new type"},
    }, ["name"]), "Nodes to update")}, ["nodes"]),
    "delete_nodes": _obj({"nodeNames": {**_STRINGS, "description": "Names of the nodes to delete (with their edges)"}},
                         ["nodeNames"]),
    "add_edges": _obj({"edges": _array_of(_obj({**_EDGE_KEY, "weight": _WEIGHT}, ["from", "to", "edgeType"]),
                                          "Edges to add between existing nodes")}, ["edges"]),
    "update_edges": _obj({"edges": _array_of(_obj({**_EDGE_KEY, "weight": {
        **_WEIGHT, "description": "New evidence in [0, 1]: the new weight is the average of the current and this"}},
        ["from", "to", "edgeType"]), "Existing edges to update")}, ["edges"]),
    "delete_edges": _obj({"edges": _array_of(_obj(copy.deepcopy(_EDGE_KEY), ["from", "to", "edgeType"]),
                                             "Edges to delete (exact from, to, edgeType)")}, ["edges"]),
    "add_metadata": _obj({"nodeName": {"type": "string", "description": "Name of an existing node"},
                          "metadata": {**_STRINGS, "description": "Entries to append (\"Key: Value\")"}},
                         ["nodeName", "metadata"]),
    "delete_metadata": _obj({"nodeName": {"type": "string", "description": "Name of an existing node"},
                             "metadata": {**_STRINGS, "description": "Entries to remove (exact text)"}},
                            ["nodeName", "metadata"]),
    "read_graph": _obj({
        "limit": {"type": "integer", "minimum": 1, "maximum": 10000,
                  "description": "Optional page size: at most this many nodes (name order) and their edges"},
        "cursor": {"type": "string", "description": "Optional: the nextCursor of the previous page"},
    }, []),
    "search_nodes": _obj({"query": {"type": "string", "description": "Text to find in names, types and metadata "
                                                                       "(case-insensitive)"}}, ["query"]),
    "open_nodes": _obj({"names": {**_STRINGS, "description": "Exact names of the nodes to open"}}, ["names"]),
}

_DESCRIPTIONS = {
    "add_nodes": "Add nodes {name, nodeType, metadata} to the knowledge graph (MemoryMesh dialect: a node is an "
                 "entity, its metadata its observations). A name that already exists fails the whole call.",
    "update_nodes": "Update existing nodes: metadata (replaces the whole list) and/or nodeType.",
    "delete_nodes": "Delete nodes by name together with every edge touching them.",
    "add_edges": "Add directed edges {from, to, edgeType, weight?} between existing nodes; weight in [0, 1] "
                 "(default 1.0). An edge that already exists, or a missing node, fails the whole call.",
    "update_edges": "Update edge weights: the new weight is the average of the current one and the given one "
                    "(evidence accumulates). An unknown edge fails the whole call.",
    "delete_edges": "Delete edges by exact (from, to, edgeType), including their history.",
    "add_metadata": "Append metadata entries (\"Key: Value\") to an existing node; entries it already has are "
                    "skipped.",
    "delete_metadata": "Remove metadata entries (exact text) from an existing node.",
    "read_graph": "Read the whole graph as {nodes, edges} (current edges). Optional limit/cursor paging.",
    "search_nodes": "Find nodes whose name, nodeType or metadata contain the query (case-insensitive), plus their "
                    "immediate neighbours and the edges touching the matches.",
    "open_nodes": "Open nodes by exact name, plus their immediate neighbours and the edges touching them.",
}

_HANDLERS: dict[str, Handler] = {
    "add_nodes": add_nodes, "update_nodes": update_nodes, "delete_nodes": delete_nodes,
    "add_edges": add_edges, "update_edges": update_edges, "delete_edges": delete_edges,
    "add_metadata": add_metadata, "delete_metadata": delete_metadata,
    "read_graph": read_graph, "search_nodes": search_nodes, "open_nodes": open_nodes,
}

_FLAGS: dict[str, dict[str, Any]] = {
    "delete_nodes": {"destructive": True, "idempotent": True},
    "delete_edges": {"destructive": True, "idempotent": True},
    "delete_metadata": {"destructive": True, "idempotent": True},
    "update_nodes": {"destructive": True},
    "add_metadata": {"idempotent": True},
    "read_graph": {"read_only": True, "idempotent": True},
    "search_nodes": {"read_only": True, "idempotent": True},
    "open_nodes": {"read_only": True, "idempotent": True},
}

_OUTPUT = {
    "type": "object",
    "properties": {"data": {"type": "object"}, "actionTaken": {"type": "string"},
                   "timestamp": {"type": "string", "format": "date-time"}},
    "required": ["data", "actionTaken", "timestamp"],
}


def _static(name: str, tool_name: str, profiles: tuple[str, ...]) -> ToolSpec:
    desc = _DESCRIPTIONS[name]
    if tool_name != name:
        desc += f" (MemoryMesh's {name}, renamed here because the reference's {name} has that name.)"
    return ToolSpec(name=tool_name, description=desc, input_schema=SCHEMAS[name], handler=_HANDLERS[name],
                    output_schema=_OUTPUT, profiles=profiles, error_text=mesh_error_text, **_FLAGS.get(name, {}))


#: The 11 static tools (``memorymesh`` profile) and, for ``all``, the 8 writes plus the renamed reads.
MESH_TOOLS: list[ToolSpec] = [
    *(_static(n, n, MESH_PROFILES + (ALL_PROFILES if n not in RENAMED_IN_ALL else ())) for n in _HANDLERS),
    *(_static(n, renamed, ALL_PROFILES) for n, renamed in RENAMED_IN_ALL.items()),
]

#: Tool names a schema may not generate (every static MemoryMesh tool name, renamed ones included).
MESH_TOOL_NAMES = frozenset(s.name for s in MESH_TOOLS)


# --- generated tools ---------------------------------------------------------------------------


def generated_tools(schemas: Sequence[NodeSchema], profiles: tuple[str, ...] = GENERATED_PROFILES) -> list[ToolSpec]:
    """``add_<type>``, ``update_<type>``, ``delete_<type>`` for each schema (spec 002 section 5)."""
    specs: list[ToolSpec] = []
    for schema in schemas:
        specs.extend(_tools_for(schema, profiles))
    return specs


def _tools_for(schema: NodeSchema, profiles: tuple[str, ...]) -> list[ToolSpec]:
    t = schema.node_type
    add_name, update_name, delete_name = schema.tool_names

    def wrapped(args: dict[str, Any]) -> Any:
        if t not in args:
            raise ValidationError(f"missing required argument '{t}' (the {t}'s properties go inside it: "
                                  f"{{\"{t}\": {{\"name\": ...}}}})", field=t)
        return args[t]

    async def add(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
        p = process_args(schema, wrapped(args), partial=False)
        result = await mesh(rt).add_typed(schema, p)
        data = {"nodes": [result.node.model_dump()], "edges": [e.dump() for e in result.edges]}
        return _answer(rt, data, f"Created {t}: {p.name}")

    async def update(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
        p = process_args(schema, wrapped(args), partial=True)
        result = await mesh(rt).update_typed(schema, p)
        data = {"nodes": [result.node.model_dump()], "edges": [e.dump() for e in result.edges],
                "closedEdges": [e.dump() for e in result.closed]}
        return _answer(rt, data, f"Updated {t}: {p.name}")

    async def delete(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
        inner = wrapped(args)
        if not isinstance(inner, dict) or not isinstance(inner.get("name"), str) or not inner["name"].strip():
            raise ValidationError(f"{t}.name is required and must be a non-empty string", field=f"{t}.name")
        await mesh(rt).delete_typed(schema, inner["name"])
        return _answer(rt, {"name": inner["name"], "nodeType": t}, f"Deleted {t}: {inner['name']}")

    rel_note = "".join(
        f" Setting {prop} links it by a {r.edge_type} edge" + (f" to a {r.node_type}" if r.node_type else "") + "."
        for prop, r in schema.relationships.items())
    return [
        ToolSpec(name=add_name, description=schema.description + rel_note, input_schema=schema.add_input_schema(),
                 handler=add, output_schema=_OUTPUT, profiles=profiles, error_text=mesh_error_text),
        ToolSpec(name=update_name,
                 description=f"Change an existing {t}: only name is required; each property given overwrites its "
                             f"value (a changed relationship closes the old edge, kept as history, and creates the "
                             f"new one; null removes a property).",
                 input_schema=schema.update_input_schema(), handler=update, output_schema=_OUTPUT,
                 profiles=profiles, destructive=True, error_text=mesh_error_text),
        ToolSpec(name=delete_name, description=f"Delete a {t} by name, with its metadata and every edge touching it.",
                 input_schema=schema.delete_input_schema(), handler=delete, output_schema=_OUTPUT,
                 profiles=profiles, destructive=True, idempotent=False, error_text=mesh_error_text),
    ]
