"""One declaration per tool (server/declare.py): what a tool advertises is what checks its input.

Most tools advertise their input model's own JSON schema.  Where a hand-written schema is advertised
instead (the reference schemas of docs/reference-schemas.md and their extensions, MemoryMesh's schemas (docs/memorymesh.md), the schemas a
node-schema file generates), these tests hold it to the model that validates the call: the same fields at
every level, the same required ones, and every object closed outside the documented open ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import ALL_TOOLS
from kg_neo4j.server.memorymesh import generated_tools
from kg_neo4j.server.registry import ToolSpec, inline_refs, schema_of

SPECS: list[ToolSpec] = [*ALL_TOOLS, *generated_tools(load_schemas())]
IDS = [f"{s.name}-{'+'.join(s.profiles)}" for s in SPECS]


def advertised(spec: ToolSpec) -> dict[str, Any]:
    """The input schema every profile but ``reference`` lists."""
    return spec.extended_schema if spec.extended_schema is not None else spec.input_schema


def shape(schema: dict[str, Any], *, depth: int = 0) -> Any:
    """The fields of a schema, nested, with their required ones (types aside: pydantic checks those)."""
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:
        schema = branches[0]
    if "properties" in schema:
        if schema.get("additionalProperties") is True or depth > 1 and not schema["properties"]:
            return "open object"
        return {
            "required": sorted(schema.get("required", [])),
            "fields": {k: shape(v, depth=depth + 1) for k, v in sorted(schema["properties"].items())},
        }
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return [shape(schema["items"], depth=depth + 1)]
    return "value"


def model_shape(spec: ToolSpec) -> Any:
    assert spec.input_model is not None, f"{spec.name} is not declared through server/declare.py"
    return shape(inline_refs(schema_of(spec.input_model)))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_tool_is_declared_with_an_input_model(spec: ToolSpec) -> None:
    assert spec.input_model is not None, f"{spec.name}: declare it with server.declare.tool"


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_advertised_fields_are_the_checked_fields(spec: ToolSpec) -> None:
    ad = shape(inline_refs(advertised(spec)))
    checked = model_shape(spec)
    if spec.name.startswith(("add_", "update_", "delete_")) and spec.name not in {
        "add_observations",
        "add_nodes",
        "update_nodes",
        "delete_nodes",
        "add_edges",
        "update_edges",
        "delete_edges",
        "add_metadata",
        "delete_metadata",
        "update_relations",
        "update_knowledge",
        "delete_entities",
        "delete_observations",
        "delete_relations",
    }:
        # schema-generated: the model holds the wrapper key; process_args checks inside it against the same
        # node schema that built the advertised one (tests/test_schemas.py)
        assert ad["required"] == checked["required"] and set(ad["fields"]) == set(checked["fields"])
        return
    assert ad == checked


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_advertised_object_is_closed_outside_reference(spec: ToolSpec) -> None:
    def walk(node: Any, path: str) -> None:
        """``node`` is a schema: its ``properties``/``$defs`` map names to schemas."""
        if isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}/{i}")
            return
        if not isinstance(node, dict):
            return
        if "properties" in node:
            assert node.get("additionalProperties") in (True, False), (
                f"{spec.name}: {path or 'top'} does not say whether it is closed"
            )
        for k, v in node.items():
            if k in ("properties", "$defs") and isinstance(v, dict):
                assert "additionalProperties" not in v or isinstance(v["additionalProperties"], dict), (
                    f"{spec.name}: {path}/{k} holds a stray additionalProperties"
                )
                for name, sub in v.items():
                    walk(sub, f"{path}/{k}/{name}")
            elif k not in ("default", "examples", "enum", "const", "required"):
                walk(v, f"{path}/{k}")

    walk(advertised(spec), "")


def test_reference_profile_keeps_spec_001_schemas_exactly() -> None:
    import json
    from importlib import resources

    ref = {
        t["name"]: t
        for t in json.loads(resources.files("kg_neo4j.server").joinpath("reference_tools.json").read_text())
    }
    listed = {s.name: s.tool("reference") for s in SPECS if "reference" in s.profiles}
    assert set(listed) == set(ref)
    for name, tool in listed.items():
        assert tool.input_schema == ref[name]["inputSchema"], name
        assert tool.description == ref[name]["description"], name
