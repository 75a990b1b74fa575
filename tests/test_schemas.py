"""Schema files (docs/memorymesh.md#schema-files, #example-schemas): loading, checks naming file and field,
generated input schemas, the metadata rules, and `serve` refusing a bad schema at startup."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kg_neo4j.errors import ValidationError
from kg_neo4j.schemas import (
    SchemaFileError,
    default_schemas_dir,
    display_name,
    load_schema,
    load_schemas,
    process_args,
    replace_entries,
)
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES
from support.servers import KG, Neo4jInfo, server_env

NPC: dict[str, Any] = {
    "name": "add_npc",
    "description": "Add a non-player character to the knowledge graph",
    "properties": {
        "name": {"type": "string", "description": "The name of the NPC", "required": True},
        "role": {
            "type": "string",
            "description": "The NPC's role",
            "required": True,
            "enum": ["Warrior", "Wizard", "Merchant", "Noble", "Peasant", "Thief"],
        },
        "status": {
            "type": "string",
            "description": "Current status",
            "required": True,
            "enum": ["Active", "Inactive", "Deceased", "Missing"],
        },
        "currentLocation": {
            "type": "string",
            "description": "Where the NPC currently is",
            "required": False,
            "relationship": {
                "edgeType": "located_in",
                "nodeType": "location",
                "description": "The location where this NPC resides",
            },
        },
        "description": {
            "type": "string",
            "description": "Physical or personality description",
            "required": False,
        },
        "traits": {"type": "array", "description": "Character traits", "required": False},
    },
    "additionalProperties": True,
}


def write(directory: Path, filename: str, content: Any) -> Path:
    path = directory / filename
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def variant(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(NPC))
    for dotted, value in changes.items():
        target = data
        parts = dotted.split("__")
        for p in parts[:-1]:
            target = target[p]
        if value is ...:
            del target[parts[-1]]
        else:
            target[parts[-1]] = value
    return data


# --- 14.1 loading ------------------------------------------------------------------------------------


@pytest.mark.unit
def test_load_valid_schema(tmp_path: Path) -> None:
    schema = load_schema(write(tmp_path, "npc.schema.json", NPC))
    assert schema.node_type == "npc"
    assert schema.tool_names == ("add_npc", "update_npc", "delete_npc")
    assert list(schema.properties) == ["name", "role", "status", "currentLocation", "description", "traits"]
    assert schema.properties["role"].required and schema.properties["role"].enum == (
        "Warrior",
        "Wizard",
        "Merchant",
        "Noble",
        "Peasant",
        "Thief",
    )
    assert schema.properties["traits"].type == "array"
    rel = schema.relationships["currentLocation"]
    assert (rel.edge_type, rel.node_type) == ("located_in", "location")
    assert schema.additional_properties is True


@pytest.mark.unit
def test_load_all_schemas_from_a_directory(tmp_path: Path) -> None:
    write(tmp_path, "npc.schema.json", NPC)
    write(
        tmp_path,
        "location.schema.json",
        {
            "name": "add_location",
            "description": "A place",
            "properties": {"name": {"type": "string", "description": "n"}},
        },
    )
    write(tmp_path, "item.schema.json", {"name": "add_item", "description": "An item", "properties": {}})
    write(tmp_path, "notes.json", "not a schema: ignored, it does not end in .schema.json")
    schemas = load_schemas(tmp_path)
    assert [s.node_type for s in schemas] == ["item", "location", "npc"]
    tools = [t for s in schemas for t in s.tool_names]
    assert len(tools) == 9 and len(set(tools)) == 9
    # a schema without a name property still has one (required)
    assert schemas[0].properties["name"].required


@pytest.mark.unit
def test_the_shipped_examples_are_memorymeshs_eleven_schemas(tmp_path: Path) -> None:
    schemas = {s.node_type: s for s in load_schemas(default_schemas_dir(), reserved=BUILTIN_TOOL_NAMES)}
    assert sorted(schemas) == sorted(
        [
            "npc",
            "location",
            "artifact",
            "quest",
            "faction",
            "player_character",
            "inventory",
            "skills",
            "currency",
            "transportation",
            "temporal",
        ]
    )
    expected_edges = {
        "npc": ("currentLocation", "located_in"),
        "location": ("parentLocation", "contained_in"),
        "artifact": ("owner", "owned_by"),
        "quest": ("location", "takes_place_in"),
        "faction": ("headquarters", "based_in"),
        "player_character": ("currentLocation", "located_in"),
        "inventory": ("owner", "belongs_to"),
        "transportation": ("owner", "owned_by"),
        "temporal": ("location", "occurred_at"),
    }
    for t, s in schemas.items():
        got = {p: r.edge_type for p, r in s.relationships.items()}
        assert got == (dict([expected_edges[t]]) if t in expected_edges else {}), t
    for t, props in {
        "npc": ["role", "status", "description", "traits"],
        "location": ["atmosphere", "region"],
        "artifact": ["rarity", "properties"],
        "quest": ["status", "objectives", "rewards"],
        "faction": ["alignment", "goals"],
        "player_character": ["class", "level", "stats"],
        "inventory": ["contents", "capacity"],
        "skills": ["type", "level", "effects"],
        "currency": ["denomination", "value"],
        "transportation": ["type", "speed"],
        "temporal": ["timestamp", "event"],
    }.items():
        assert set(props) <= set(schemas[t].properties), t


@pytest.mark.unit
@pytest.mark.parametrize(
    ("data", "field", "fragment"),
    [
        (variant(name="npc"), "name", "must start with 'add_'"),
        (variant(name="add_"), "name", "the type after 'add_'"),
        (variant(name="add_bad type"), "name", "the type after 'add_'"),
        (variant(name=...), "name", "is missing"),
        (variant(description=...), "description", "is missing"),
        (variant(properties=...), "properties", "is missing"),
        (variant(properties=[]), "properties", "must be an object"),
        (variant(properties__role__type="number"), "properties.role.type", "must be 'string' or 'array'"),
        (variant(properties__role__type=...), "properties.role.type", "is missing"),
        (variant(properties__role__description=...), "properties.role.description", "is missing"),
        (variant(properties__role__required="yes"), "properties.role.required", "must be true or false"),
        (variant(properties__role__enum=[]), "properties.role.enum", "non-empty array of strings"),
        (variant(properties__role__enum=["A", 1]), "properties.role.enum", "non-empty array of strings"),
        (variant(properties__role__requried=True), "properties.role.requried", "unknown key"),
        (
            variant(properties__currentLocation__relationship__edgeType=...),
            "properties.currentLocation.relationship.edgeType",
            "is missing",
        ),
        (
            variant(properties__currentLocation__relationship__edgeType=""),
            "properties.currentLocation.relationship.edgeType",
            "must not be empty",
        ),
        (
            variant(properties__currentLocation__relationship="located_in"),
            "properties.currentLocation.relationship",
            "must be an object",
        ),
        (variant(properties__name__type="array"), "properties.name", "must be a plain string"),
        (variant(additionalProperties="yes"), "additionalProperties", "must be true or false"),
        (variant(extra=1), "extra", "unknown key"),
    ],
)
def test_bad_schema_names_file_and_field(
    tmp_path: Path, data: dict[str, Any], field: str, fragment: str
) -> None:
    path = write(tmp_path, "npc.schema.json", data)
    with pytest.raises(SchemaFileError) as info:
        load_schema(path)
    assert info.value.path == str(path)
    assert info.value.field == field
    assert str(info.value).startswith(f"{path}: {field}: ")
    assert fragment in str(info.value)


@pytest.mark.unit
@pytest.mark.parametrize("text", ["{not json", "[1, 2]", ""])
def test_unreadable_schema_names_the_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "x.schema.json", text)
    with pytest.raises(SchemaFileError) as info:
        load_schema(path)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.unit
def test_schema_generating_a_builtin_tool_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, "entities.schema.json", {"name": "add_entities", "description": "x", "properties": {}}
    )
    with pytest.raises(SchemaFileError) as info:
        load_schemas(tmp_path, reserved=BUILTIN_TOOL_NAMES)
    assert str(path) in str(info.value) and "'delete_entities'" in str(info.value)
    assert "built-in" in str(info.value)
    for name in ("add_nodes", "add_metadata", "add_observations", "add_edges"):
        path.write_text(json.dumps({"name": name, "description": "x", "properties": {}}))
        with pytest.raises(SchemaFileError, match="built-in"):
            load_schemas(tmp_path, reserved=BUILTIN_TOOL_NAMES)


@pytest.mark.unit
def test_two_schemas_generating_the_same_tool(tmp_path: Path) -> None:
    write(tmp_path, "a.schema.json", NPC)
    second = write(tmp_path, "b.schema.json", NPC)
    with pytest.raises(SchemaFileError) as info:
        load_schemas(tmp_path)
    assert str(info.value).startswith(f"{second}: name: ")
    assert "a.schema.json" in str(info.value)


@pytest.mark.unit
def test_missing_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="does not exist"):
        load_schemas(tmp_path / "nope")


# --- 5.2 generated input schemas --------------------------------------------------------------------


@pytest.mark.unit
def test_generated_input_schemas_wrap_the_properties_in_an_object_named_for_the_type(tmp_path: Path) -> None:
    schema = load_schema(write(tmp_path, "npc.schema.json", NPC))
    add = schema.add_input_schema()
    assert add["type"] == "object" and add["required"] == ["npc"] and list(add["properties"]) == ["npc"]
    inner = add["properties"]["npc"]
    assert inner["type"] == "object"
    assert inner["required"] == ["name", "role", "status"]
    assert inner["properties"]["role"] == {
        "type": "string",
        "enum": NPC["properties"]["role"]["enum"],
        "description": "The NPC's role",
    }
    assert inner["properties"]["traits"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Character traits",
    }
    assert inner["properties"]["currentLocation"] == {
        "type": "string",
        "description": "Where the NPC currently is",
    }
    update = schema.update_input_schema()
    assert update["required"] == ["npc"]
    assert update["properties"]["npc"]["required"] == ["name"]
    # update takes null to remove a property (its description says so), and its schema says so too
    assert update["properties"]["npc"]["properties"] == {
        k: v
        if k == "name"
        else {**v, "type": [v["type"], "null"], **({"enum": [*v["enum"], None]} if "enum" in v else {})}
        for k, v in inner["properties"].items()
    }
    assert schema.delete_input_schema() == {
        "type": "object",
        "properties": {
            "npc": {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The name of the npc to delete"}},
                "required": ["name"],
            }
        },
        "required": ["npc"],
    }


# --- 3.7 processing --------------------------------------------------------------------------------


@pytest.mark.unit
def test_display_names() -> None:
    assert display_name("currentLocation") == "Current Location"
    assert display_name("role") == "Role"
    assert display_name("parent_location") == "Parent Location"
    assert display_name("hitPointsMax") == "Hit Points Max"


@pytest.mark.unit
def test_process_args_metadata_edges_and_checks(tmp_path: Path) -> None:
    schema = load_schema(write(tmp_path, "npc.schema.json", NPC))
    p = process_args(
        schema,
        {
            "name": "Gandalf",
            "traits": ["wise", "old"],
            "role": "Wizard",
            "status": "Active",
            "currentLocation": "Rivendell",
            "mood": "calm",
        },
        partial=False,
    )
    # schema order, arrays joined by ", ", extra properties last (additionalProperties: true)
    assert [f"{k}: {v}" for k, v in p.metadata.items()] == [
        "Role: Wizard",
        "Status: Active",
        "Current Location: Rivendell",
        "Traits: wise, old",
        "Mood: calm",
    ]
    assert p.targets == {"currentLocation": ["Rivendell"]}
    with pytest.raises(ValidationError, match="npc.role: 'Dragon' is not one of"):
        process_args(schema, {"name": "S", "role": "Dragon", "status": "Active"}, partial=False)
    with pytest.raises(ValidationError, match="npc.status is required"):
        process_args(schema, {"name": "S", "role": "Wizard"}, partial=False)
    with pytest.raises(ValidationError, match="npc.name is required"):
        process_args(schema, {"role": "Wizard", "status": "Active"}, partial=False)
    with pytest.raises(ValidationError, match="npc.traits must be an array of strings"):
        process_args(
            schema, {"name": "S", "role": "Wizard", "status": "Active", "traits": "brave"}, partial=False
        )
    # update: only name required; enums still checked
    assert process_args(schema, {"name": "S", "status": "Missing"}, partial=True).metadata == {
        "Status": "Missing"
    }
    with pytest.raises(ValidationError, match="Dragon"):
        process_args(schema, {"name": "S", "role": "Dragon"}, partial=True)
    closed = load_schema(write(tmp_path, "c.schema.json", variant(additionalProperties=False)))
    with pytest.raises(ValidationError, match="npc.mood is not a property of npc"):
        process_args(
            closed, {"name": "S", "role": "Wizard", "status": "Active", "mood": "calm"}, partial=False
        )


@pytest.mark.unit
def test_replace_entries_in_place() -> None:
    meta = ["Role: Wizard", "free text", "Current Location: Rivendell", "Status: Active", "Role: again"]
    assert replace_entries(meta, {"Current Location": "Mordor", "Role": "Noble", "Mood": "grim"}) == [
        "Role: Noble",
        "free text",
        "Current Location: Mordor",
        "Status: Active",
        "Mood: grim",
    ]
    assert replace_entries(meta, {"Status": None}) == [
        "Role: Wizard",
        "free text",
        "Current Location: Rivendell",
        "Role: again",
    ]


# --- startup -----------------------------------------------------------------------------------------


def test_serve_refuses_a_bad_schema_at_startup(tmp_path: Path, neo4j_info: Neo4jInfo) -> None:
    write(tmp_path, "good.schema.json", NPC)
    bad = write(tmp_path, "quest.schema.json", variant(name="add_quest", properties__status__enum="Active"))
    proc = subprocess.run(
        [KG, "serve", "--schemas", str(tmp_path)],
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert f"{bad}: properties.status.enum: must be a non-empty array of strings" in proc.stderr

    # the same through the environment variable, and a collision with a built-in tool
    for p in tmp_path.iterdir():
        p.unlink()
    write(tmp_path, "obs.schema.json", {"name": "add_observations", "description": "x", "properties": {}})
    proc = subprocess.run(
        [KG, "serve"],
        env=server_env(neo4j_info, KG_NEO4J_SCHEMAS_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "obs.schema.json: name:" in proc.stderr and "'add_observations'" in proc.stderr
