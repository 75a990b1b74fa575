"""MemoryMesh's tools (docs/memorymesh.md) over the graph the reference tools use: the 11 static tools
(the three tools each schema file generates, ``add_<type>``, ``update_<type>``, ``delete_<type>``, are
built in ``server/mesh_generated.py`` and answer the same way).

Answers follow docs/memorymesh.md#answers-and-errors: one text block holding
``{"data": ..., "actionTaken": "...", "timestamp": "..."}`` (also the structured output);
reads put ``{"nodes": [...], "edges": [...]}`` in ``data``.  Errors go through the one error
mapper of ``registry.call`` and answer as ``{"error", "context", "suggestions"}`` (``mesh_errors``).  In the ``all`` profile the three reads that collide with the
reference's are exposed as ``read_nodes_graph``, ``search_nodes_graph`` and ``open_nodes_graph``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field

from kg_neo4j.input_rules import Batch, LookupName
from kg_neo4j.models import (
    MAX_ITEMS_PER_CALL,
    MAX_QUERY_CHARS,
    Name,
    ObservationText,
    StrictInput,
    not_null,
)
from kg_neo4j.server.declare import M, TypedHandler, register, tool
from kg_neo4j.server.mesh_errors import mesh_error_text
from kg_neo4j.server.profiles import A
from kg_neo4j.server.profiles import M as MESH
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec, dump
from kg_neo4j.store.memorymesh import EdgeIn, EdgeKey, EdgeUpdate, MeshGraph, MeshStore, NodeIn, NodeUpdate

#: MemoryMesh's read tools whose names the reference also uses -> their names in the ``all`` profile.
RENAMED_IN_ALL = {
    "read_graph": "read_nodes_graph",
    "search_nodes": "search_nodes_graph",
    "open_nodes": "open_nodes_graph",
}


def mesh(rt: Runtime) -> MeshStore:
    return MeshStore(rt.store)


def answer(rt: Runtime, data: Any, action: str) -> ToolOutput:
    out = {"data": data, "actionTaken": action, "timestamp": rt.store.clock.now().isoformat()}
    return dump(out), out


def _names(items: Sequence[Any], attr: str = "name", limit: int = 10) -> str:
    names = [str(getattr(i, attr)) for i in items]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


# --- inputs (advertised by the docs/memorymesh.md schemas below) -------------------------------------------


class AddNodesIn(StrictInput):
    nodes: list[NodeIn] = Batch


class UpdateNodesIn(StrictInput):
    nodes: list[NodeUpdate] = Batch


class DeleteNodesIn(StrictInput):
    nodeNames: list[Name] = Batch


class AddEdgesIn(StrictInput):
    edges: list[EdgeIn] = Batch


class UpdateEdgesIn(StrictInput):
    edges: list[EdgeUpdate] = Batch


class DeleteEdgesIn(StrictInput):
    edges: list[EdgeKey] = Batch


class MetadataIn(StrictInput):
    nodeName: Name
    metadata: list[ObservationText] = Batch


class MeshReadIn(StrictInput):
    limit: int | None = Field(default=None, ge=1, le=MAX_ITEMS_PER_CALL)
    cursor: str | None = None

    _nn = not_null("limit", "cursor")


class MeshSearchIn(StrictInput):
    query: str = Field(max_length=MAX_QUERY_CHARS)


class MeshOpenIn(StrictInput):
    names: list[LookupName] = Batch


# --- input schemas (docs/memorymesh.md#static-tools) ---------------------------------------------------

_STR = {"type": "string"}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_WEIGHT = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "description": "Confidence or strength in [0, 1] (default 1.0)",
}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


def _array_of(item: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": item, "description": description}


_EDGE_KEY = {
    "from": {"type": "string", "description": "Name of the source node"},
    "to": {"type": "string", "description": "Name of the target node"},
    "edgeType": {"type": "string", "description": "Type of the edge, e.g. located_in"},
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "add_nodes": _obj(
        {
            "nodes": _array_of(
                _obj(
                    {
                        "name": {"type": "string", "description": "Unique name of the node"},
                        "nodeType": {"type": "string", "description": "Type of the node, e.g. npc"},
                        "metadata": {
                            **_STRINGS,
                            "description": 'Facts about the node, preferably "Key: Value"',
                        },
                    },
                    ["name", "nodeType", "metadata"],
                ),
                "Nodes to add; a name that already exists fails the call",
            )
        },
        ["nodes"],
    ),
    "update_nodes": _obj(
        {
            "nodes": _array_of(
                _obj(
                    {
                        "name": {"type": "string", "description": "Name of an existing node"},
                        "metadata": {
                            **_STRINGS,
                            "description": "Optional: replaces the node's whole metadata",
                        },
                        "nodeType": {"type": "string", "description": "Optional: the node's new type"},
                    },
                    ["name"],
                ),
                "Nodes to update",
            )
        },
        ["nodes"],
    ),
    "delete_nodes": _obj(
        {"nodeNames": {**_STRINGS, "description": "Names of the nodes to delete (with their edges)"}},
        ["nodeNames"],
    ),
    "add_edges": _obj(
        {
            "edges": _array_of(
                _obj({**_EDGE_KEY, "weight": _WEIGHT}, ["from", "to", "edgeType"]),
                "Edges to add between existing nodes",
            )
        },
        ["edges"],
    ),
    "update_edges": _obj(
        {
            "edges": _array_of(
                _obj(
                    {
                        **_EDGE_KEY,
                        "weight": {
                            **_WEIGHT,
                            "description": "New evidence in [0, 1]: the new weight is the average of the current and this",
                        },
                        "newWeight": {
                            **_WEIGHT,
                            "description": "The same as weight (MemoryMesh's name for it); give one of the two",
                        },
                    },
                    ["from", "to", "edgeType"],
                ),
                "Existing edges to update",
            )
        },
        ["edges"],
    ),
    "delete_edges": _obj(
        {
            "edges": _array_of(
                _obj(copy.deepcopy(_EDGE_KEY), ["from", "to", "edgeType"]),
                "Edges to delete (exact from, to, edgeType)",
            )
        },
        ["edges"],
    ),
    "add_metadata": _obj(
        {
            "nodeName": {"type": "string", "description": "Name of an existing node"},
            "metadata": {**_STRINGS, "description": 'Entries to append ("Key: Value")'},
        },
        ["nodeName", "metadata"],
    ),
    "delete_metadata": _obj(
        {
            "nodeName": {"type": "string", "description": "Name of an existing node"},
            "metadata": {**_STRINGS, "description": "Entries to remove (exact text)"},
        },
        ["nodeName", "metadata"],
    ),
    "read_graph": _obj(
        {
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10000,
                "description": "Optional page size: at most this many nodes (name order) and their edges",
            },
            "cursor": {"type": "string", "description": "Optional: the nextCursor of the previous page"},
        },
        [],
    ),
    "search_nodes": _obj(
        {
            "query": {
                "type": "string",
                "description": "Text to find in names, types and metadata (case-insensitive)",
            }
        },
        ["query"],
    ),
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
    "add_metadata": 'Append metadata entries ("Key: Value") to an existing node; entries it already has are '
    "skipped.",
    "delete_metadata": "Remove metadata entries (exact text) from an existing node.",
    "read_graph": "Read the whole graph as {nodes, edges} (current edges). Optional limit/cursor paging.",
    "search_nodes": "Find nodes whose name, nodeType or metadata contain the query (case-insensitive), plus their "
    "immediate neighbours and the edges touching the matches.",
    "open_nodes": "Open nodes by exact name, plus their immediate neighbours and the edges touching them.",
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

#: Each static tool's example call (against server/examples.py's seed).
_EXAMPLES: dict[str, dict[str, Any]] = {
    "add_nodes": {"nodes": [{"name": "Mira", "nodeType": "npc", "metadata": ["Role: blacksmith"]}]},
    "update_nodes": {
        "nodes": [{"name": "Elara", "metadata": ["Role: innkeeper", "Mood: wary"], "nodeType": "npc"}]
    },
    "delete_nodes": {"nodeNames": ["Old Hermit"]},
    "add_edges": {"edges": [{"from": "Brom", "to": "Elara", "edgeType": "serves", "weight": 0.5}]},
    "update_edges": {"edges": [{"from": "Elara", "to": "Brom", "edgeType": "trusts", "weight": 0.5}]},
    "delete_edges": {"edges": [{"from": "Elara", "to": "Brom", "edgeType": "owes_money_to"}]},
    "add_metadata": {"nodeName": "Brom", "metadata": ["Mood: cheerful"]},
    "delete_metadata": {"nodeName": "Brom", "metadata": ["Rumour: hides a map"]},
    "read_graph": {"limit": 10},
    "search_nodes": {"query": "innkeeper"},
    "open_nodes": {"names": ["Elara"]},
}

MESH_OUTPUT = {
    "type": "object",
    "properties": {
        "data": {"type": "object"},
        "actionTaken": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
    },
    "required": ["data", "actionTaken", "timestamp"],
}


def _static(name: str, input: type[M]) -> Callable[[TypedHandler[M]], ToolSpec]:
    """A static MemoryMesh tool: MemoryMesh's description, schema and error answers.  The writes are
    listed by ``memorymesh`` and ``all``; the reads by ``memorymesh`` (``all`` lists them renamed)."""
    return tool(
        name,
        profiles=(MESH,) if name in RENAMED_IN_ALL else (MESH, A),
        example=_EXAMPLES[name],
        description=_DESCRIPTIONS[name],
        input=input,
        schema=SCHEMAS[name],
        output_schema=MESH_OUTPUT,
        error_text=mesh_error_text,
        **_FLAGS.get(name, {}),
    )


def _renamed(spec: ToolSpec, name: str) -> ToolSpec:
    """A MemoryMesh read under its name in ``all`` (the reference's read keeps the plain name there)."""
    desc = (
        spec.description
        + f" (MemoryMesh's {spec.name}, renamed here because the reference's {spec.name} has that name.)"
    )
    return dataclasses.replace(spec, name=name, description=desc, profiles=(A,))


@_static("add_nodes", AddNodesIn)
async def add_nodes(rt: Runtime, req: AddNodesIn) -> ToolOutput:
    added = await mesh(rt).add_nodes(req.nodes)
    return answer(rt, {"nodes": [n.model_dump() for n in added]}, f"Added nodes: {_names(added)}")


@_static("update_nodes", UpdateNodesIn)
async def update_nodes(rt: Runtime, req: UpdateNodesIn) -> ToolOutput:
    updated = await mesh(rt).update_nodes(req.nodes)
    return answer(rt, {"nodes": [n.model_dump() for n in updated]}, f"Updated nodes: {_names(updated)}")


@_static("delete_nodes", DeleteNodesIn)
async def delete_nodes(rt: Runtime, req: DeleteNodesIn) -> ToolOutput:
    names = req.nodeNames
    await mesh(rt).delete_nodes(names)
    return answer(
        rt,
        {"nodeNames": names},
        f"Deleted nodes: {', '.join(names[:10])}"
        + (f" and {len(names) - 10} more" if len(names) > 10 else ""),
    )


@_static("add_edges", AddEdgesIn)
async def add_edges(rt: Runtime, req: AddEdgesIn) -> ToolOutput:
    added = await mesh(rt).add_edges(req.edges)
    return answer(rt, {"edges": [e.dump() for e in added]}, f"Added {len(added)} edge(s)")


@_static("update_edges", UpdateEdgesIn)
async def update_edges(rt: Runtime, req: UpdateEdgesIn) -> ToolOutput:
    updated = await mesh(rt).update_edges(req.edges)
    return answer(rt, {"edges": [e.dump() for e in updated]}, f"Updated {len(updated)} edge(s)")


@_static("delete_edges", DeleteEdgesIn)
async def delete_edges(rt: Runtime, req: DeleteEdgesIn) -> ToolOutput:
    keys = req.edges
    await mesh(rt).delete_edges(keys)
    data = {"edges": [{"from": k.from_, "to": k.to, "edgeType": k.edgeType} for k in keys]}
    return answer(rt, data, f"Deleted {len(keys)} edge(s)")


@_static("add_metadata", MetadataIn)
async def add_metadata(rt: Runtime, req: MetadataIn) -> ToolOutput:
    added = await mesh(rt).add_metadata(req.nodeName, req.metadata)
    return answer(
        rt, {"nodeName": req.nodeName, "metadata": added}, f"Added metadata to node: {req.nodeName}"
    )


@_static("delete_metadata", MetadataIn)
async def delete_metadata(rt: Runtime, req: MetadataIn) -> ToolOutput:
    await mesh(rt).delete_metadata(req.nodeName, req.metadata)
    return answer(
        rt,
        {"nodeName": req.nodeName, "metadata": req.metadata},
        f"Deleted metadata from node: {req.nodeName}",
    )


def _graphanswer(rt: Runtime, graph: MeshGraph, action: str) -> ToolOutput:
    return answer(rt, graph.dump(), action)


@_static("read_graph", MeshReadIn)
async def read_graph(rt: Runtime, req: MeshReadIn) -> ToolOutput:
    graph = await mesh(rt).read_graph(limit=req.limit, cursor=req.cursor)
    return _graphanswer(rt, graph, "Read graph")


@_static("search_nodes", MeshSearchIn)
async def search_nodes(rt: Runtime, req: MeshSearchIn) -> ToolOutput:
    graph = await mesh(rt).search_nodes(req.query)
    return _graphanswer(rt, graph, f"Searched nodes for: {req.query}")


@_static("open_nodes", MeshOpenIn)
async def open_nodes(rt: Runtime, req: MeshOpenIn) -> ToolOutput:
    graph = await mesh(rt).open_nodes(req.names)
    return _graphanswer(rt, graph, f"Opened nodes: {', '.join(req.names[:10])}")


#: ``all`` lists MemoryMesh's writes as they are and its reads renamed.
for _read in (read_graph, search_nodes, open_nodes):
    register(_renamed(_read, RENAMED_IN_ALL[_read.name]), __name__)
