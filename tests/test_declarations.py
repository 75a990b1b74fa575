"""One declaration per tool (server/declare.py): what a tool advertises is what checks its input.

Most tools advertise their input model's own JSON schema.  Where a hand-written schema is advertised
instead (the reference schemas of docs/reference-schemas.md and their extensions, MemoryMesh's schemas (docs/memorymesh.md), the schemas a
node-schema file generates), these tests hold it to the model that validates the call: the same fields at
every level, the same required ones, and every object closed outside the documented open ones.

Every declaration carries its profiles and an example call; the examples are valid input here (in
process), and tests/test_input_sweep.py calls each one against the seed of ``server/examples.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import ALL_TOOLS, LISTING_ORDER, profile_tools
from kg_neo4j.server.declare import declared, validate
from kg_neo4j.server.mesh_generated import generated_tools
from kg_neo4j.server.profiles import ALL
from kg_neo4j.server.registry import ToolSpec, inline_refs, schema_of
from kg_neo4j.settings import PROFILES

pytestmark = pytest.mark.unit

GENERATED: list[ToolSpec] = generated_tools(load_schemas())
SPECS: list[ToolSpec] = [*ALL_TOOLS, *GENERATED]
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
    if spec in GENERATED:
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


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_declaration_has_profiles_and_an_example(spec: ToolSpec) -> None:
    assert spec.profiles and set(spec.profiles) <= set(PROFILES), f"{spec.name}: profiles {spec.profiles}"
    assert spec.example is not None, f"{spec.name}: declare an example call (example=...)"


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_example_is_valid_input_in_every_profile_that_lists_it(spec: ToolSpec) -> None:
    assert spec.input_model is not None and spec.example is not None
    for example in (spec.example, *spec.more_examples):
        for profile in spec.profiles:
            validate(spec.input_model, example, profile)


def test_a_tool_missing_from_all_is_there_under_another_name_with_its_example() -> None:
    """The sweep calls the examples in ``all``: a declaration ``all`` does not list (MemoryMesh's reads,
    renamed there) has a twin in ``all`` with the same handler and example, so its example is called."""
    in_all = [s for s in ALL_TOOLS if ALL in s.profiles]
    for spec in ALL_TOOLS:
        if ALL not in spec.profiles:
            twins = [s for s in in_all if s.handler is spec.handler and s.example == spec.example]
            assert twins, f"{spec.name}: no tool of all runs its handler with its example"


def test_every_declared_tool_is_served_in_its_family_s_place() -> None:
    """Declaring a tool (``@tool``) is all it takes: the served tools are exactly the declared ones,
    each family (module) in ``LISTING_ORDER``'s place and its tools in declaration order."""
    by_module = declared()
    families = [m.rsplit(".", 1)[-1] for m in by_module]
    assert sorted(families) == sorted(LISTING_ORDER), "name a new tool module in app.LISTING_ORDER"
    listed = [spec for family in LISTING_ORDER for spec in by_module[f"kg_neo4j.server.{family}"]]
    assert [id(s) for s in ALL_TOOLS] == [id(s) for s in listed]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_profile_lists_what_its_declarations_say(profile: str) -> None:
    """``profile_tools`` (what ``serve --tools X`` lists) is the declarations that name the profile, then
    the schema-generated tools where they belong; no name twice."""
    listed = [s.name for s in profile_tools(profile, load_schemas())]
    generated = [s.name for s in GENERATED if profile in s.profiles]
    assert listed == [*(s.name for s in ALL_TOOLS if profile in s.profiles), *generated]
    assert len(set(listed)) == len(listed)
