"""The tools each MemoryMesh schema file generates (docs/memorymesh.md#generated-tools): ``add_<type>``,
``update_<type>`` and ``delete_<type>``, answered as the static tools of ``server/memorymesh.py`` are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic
from pydantic import Field

from kg_neo4j.models import Name, StrictInput
from kg_neo4j.schemas import NodeSchema, process_args
from kg_neo4j.server.declare import tool
from kg_neo4j.server.examples import deleted_node_name, new_node_name, node_example, updated_node_name
from kg_neo4j.server.memorymesh import MESH_OUTPUT, answer, mesh
from kg_neo4j.server.mesh_errors import mesh_error_text
from kg_neo4j.server.profiles import GENERATED_PROFILES
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec


def generated_tools(
    schemas: Sequence[NodeSchema], profiles: tuple[str, ...] = GENERATED_PROFILES
) -> list[ToolSpec]:
    """``add_<type>``, ``update_<type>``, ``delete_<type>`` for each schema
    (docs/memorymesh.md#generated-tools)."""
    specs: list[ToolSpec] = []
    for schema in schemas:
        specs.extend(_tools_for(schema, profiles))
    return specs


class _Named(StrictInput):
    name: Name


def _wrapper(tool_name: str, node_type: str, inner: Any) -> type[StrictInput]:
    """The input model of a generated tool: ``{<type>: {...}}`` and nothing else beside it.  The inside is
    checked by ``schemas.process_args`` against the same node schema that builds the advertised one."""
    model: type[StrictInput] = pydantic.create_model(
        f"{tool_name}_input", __base__=StrictInput, value=(inner, Field(alias=node_type))
    )
    return model


def _tools_for(schema: NodeSchema, profiles: tuple[str, ...]) -> list[ToolSpec]:
    t = schema.node_type
    add_name, update_name, delete_name = schema.tool_names
    AddIn, UpdateIn = _wrapper(add_name, t, dict[str, Any]), _wrapper(update_name, t, dict[str, Any])
    DeleteIn = _wrapper(delete_name, t, _Named)
    common: dict[str, Any] = {
        "output_schema": MESH_OUTPUT,
        "profiles": profiles,
        "error_text": mesh_error_text,
        "builtin": False,  # made per server from its schema files
    }
    rel_note = "".join(
        f" Setting {prop} links it by a {r.edge_type} edge"
        + (f" to a {r.node_type}" if r.node_type else "")
        + "."
        for prop, r in schema.relationships.items()
    )

    @tool(
        add_name,
        description=schema.description + rel_note,
        example={t: node_example(schema, new_node_name(schema))},
        input=AddIn,
        schema=schema.add_input_schema(),
        **common,
    )
    async def add(rt: Runtime, req: Any) -> ToolOutput:
        p = process_args(schema, req.value, partial=False)
        result = await mesh(rt).add_typed(schema, p)
        data = {"nodes": [result.node.model_dump()], "edges": [e.dump() for e in result.edges]}
        return answer(rt, data, f"Created {t}: {p.name}")

    @tool(
        update_name,
        description=f"Change an existing {t}: only name is required; each property given overwrites "
        f"its value (a changed relationship closes the old edge, kept as history, and "
        f"creates the new one; null removes a property).",
        example={t: node_example(schema, updated_node_name(schema))},
        input=UpdateIn,
        schema=schema.update_input_schema(),
        destructive=True,
        **common,
    )
    async def update(rt: Runtime, req: Any) -> ToolOutput:
        p = process_args(schema, req.value, partial=True)
        result = await mesh(rt).update_typed(schema, p)
        data = {
            "nodes": [result.node.model_dump()],
            "edges": [e.dump() for e in result.edges],
            "closedEdges": [e.dump() for e in result.closed],
        }
        return answer(rt, data, f"Updated {t}: {p.name}")

    @tool(
        delete_name,
        description=f"Delete a {t} by name, with its metadata and every edge touching it.",
        example={t: {"name": deleted_node_name(schema)}},
        input=DeleteIn,
        schema=schema.delete_input_schema(),
        destructive=True,
        idempotent=False,
        **common,
    )
    async def delete(rt: Runtime, req: Any) -> ToolOutput:
        name = req.value.name
        await mesh(rt).delete_typed(schema, name)
        return answer(rt, {"name": name, "nodeType": t}, f"Deleted {t}: {name}")

    return [add, update, delete]
