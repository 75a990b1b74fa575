"""Reading ``*.schema.json`` files: every key checked, a bad file named with the field at fault."""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from kg_neo4j.errors import ConfigError
from kg_neo4j.json_types import json_type
from kg_neo4j.models import MAX_RELATION_TYPE_CHARS
from kg_neo4j.schemas.model import (
    MAX_TYPE_NAME_CHARS,
    PROPERTY_KEYS,
    PROPERTY_NAME,
    PROPERTY_TYPES,
    RELATIONSHIP_KEYS,
    SUFFIX,
    TOP_KEYS,
    TYPE_NAME,
    NodeSchema,
    Property,
    Relationship,
    SchemaFileError,
    display_name,
)

# --- loading ----------------------------------------------------------------------------


def default_schemas_dir() -> Traversable:
    """The 11 example schemas of MemoryMesh, shipped with the package (a directory, or inside a zip)."""
    return resources.files("kg_neo4j.schemas").joinpath("examples")


def _need_str(path: Traversable, field_path: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise SchemaFileError(path, field_path, f"must be a string, got {json_type(value)}")
    if not allow_empty and not value.strip():
        raise SchemaFileError(path, field_path, "must not be empty")
    return value


def _need_object(path: Traversable, where: str, raw: Any, allowed: set[str]) -> None:
    """``raw`` is an object holding only ``allowed`` keys."""
    if not isinstance(raw, dict):
        raise SchemaFileError(path, where, f"must be an object, got {json_type(raw)}")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise SchemaFileError(
            path, f"{where}.{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(allowed))})"
        )


def _load_property(path: Traversable, pname: str, raw: Any) -> Property:
    where = f"properties.{pname}"
    if not PROPERTY_NAME.match(pname):
        raise SchemaFileError(
            path, where, "property names are letters, digits and _ (not starting with a digit)"
        )
    _need_object(path, where, raw, PROPERTY_KEYS)
    if "type" not in raw:
        raise SchemaFileError(path, f"{where}.type", "is missing (string or array)")
    ptype = raw["type"]
    if ptype not in PROPERTY_TYPES:
        raise SchemaFileError(path, f"{where}.type", f"must be 'string' or 'array', got {json.dumps(ptype)}")
    if "description" not in raw:
        raise SchemaFileError(path, f"{where}.description", "is missing")
    description = _need_str(path, f"{where}.description", raw["description"], allow_empty=True)
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise SchemaFileError(path, f"{where}.required", f"must be true or false, got {json_type(required)}")
    enum: tuple[str, ...] | None = None
    if "enum" in raw:
        values = raw["enum"]
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise SchemaFileError(path, f"{where}.enum", "must be a non-empty array of strings")
        if len(set(values)) != len(values):
            raise SchemaFileError(path, f"{where}.enum", "lists a value twice")
        enum = tuple(values)
    relationship = None
    if "relationship" in raw:
        relationship = _load_relationship(path, f"{where}.relationship", raw["relationship"])
    if pname == "name":
        if ptype != "string" or relationship is not None or enum is not None:
            raise SchemaFileError(
                path, where, "the name property must be a plain string (no enum, no relationship)"
            )
        required = True
    return Property(pname, ptype, description, required, enum, relationship)


def _load_relationship(path: Traversable, where: str, raw: Any) -> Relationship:
    _need_object(path, where, raw, RELATIONSHIP_KEYS)
    if "edgeType" not in raw:
        raise SchemaFileError(path, f"{where}.edgeType", "is missing")
    edge_type = _need_str(path, f"{where}.edgeType", raw["edgeType"])
    if len(edge_type) > MAX_RELATION_TYPE_CHARS:
        raise SchemaFileError(
            path, f"{where}.edgeType", f"is longer than {MAX_RELATION_TYPE_CHARS} characters"
        )
    if "description" not in raw:
        raise SchemaFileError(path, f"{where}.description", "is missing")
    description = _need_str(path, f"{where}.description", raw["description"], allow_empty=True)
    node_type = None
    if "nodeType" in raw:
        node_type = _need_str(path, f"{where}.nodeType", raw["nodeType"])
    return Relationship(edge_type, description, node_type)


def load_schema(path: Traversable) -> NodeSchema:
    """Read and check one ``*.schema.json`` file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SchemaFileError(path, None, f"cannot be read: {exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaFileError(path, None, f"is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise SchemaFileError(path, None, f"must hold a JSON object, got {json_type(raw)}")
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise SchemaFileError(
            path, unknown[0], "unknown key (allowed: name, description, properties, additionalProperties)"
        )
    if "name" not in raw:
        raise SchemaFileError(path, "name", 'is missing (e.g. "add_npc")')
    name = _need_str(path, "name", raw["name"])
    if not name.startswith("add_"):
        raise SchemaFileError(
            path, "name", f"must start with 'add_' (e.g. \"add_npc\"), got {json.dumps(name)}"
        )
    node_type = name[len("add_") :]
    if not TYPE_NAME.match(node_type) or len(node_type) > MAX_TYPE_NAME_CHARS:
        raise SchemaFileError(
            path,
            "name",
            f"the type after 'add_' must be a letter then letters, digits or _ "
            f"(at most {MAX_TYPE_NAME_CHARS} characters), got {json.dumps(node_type)}",
        )
    if "description" not in raw:
        raise SchemaFileError(path, "description", "is missing")
    description = _need_str(path, "description", raw["description"])
    if "properties" not in raw:
        raise SchemaFileError(path, "properties", "is missing")
    props_raw = raw["properties"]
    if not isinstance(props_raw, dict):
        raise SchemaFileError(path, "properties", f"must be an object, got {json_type(props_raw)}")
    properties: dict[str, Property] = {}
    if "name" not in props_raw:  # every node has a name: implied when the file does not list it
        properties["name"] = Property("name", "string", f"The name of the {node_type}", True)
    for pname, praw in props_raw.items():
        properties[pname] = _load_property(path, pname, praw)
    displays: dict[str, str] = {}
    for pname in properties:
        d = display_name(pname)
        if d in displays:
            raise SchemaFileError(
                path,
                f"properties.{pname}",
                f"its metadata key {d!r} is the same as property {displays[d]!r}'s",
            )
        displays[d] = pname
    additional = raw.get("additionalProperties", False)
    if not isinstance(additional, bool):
        raise SchemaFileError(
            path, "additionalProperties", f"must be true or false, got {json_type(additional)}"
        )
    return NodeSchema(
        name=name,
        description=description,
        properties=properties,
        additional_properties=additional,
        path=str(path),
        order=tuple(properties),
    )


def load_schemas(directory: Traversable | None = None, *, reserved: Iterable[str] = ()) -> list[NodeSchema]:
    """Every ``*.schema.json`` of ``directory`` (default: the shipped examples), in file-name order.

    ``reserved``: tool names already taken (the built-in tools); a schema generating one of them,
    or two schemas generating the same tool, is an error naming the file.
    """
    directory = directory or default_schemas_dir()
    if not directory.is_dir():
        raise ConfigError(f"schemas directory {directory} does not exist (--schemas / KG_NEO4J_SCHEMAS_DIR)")
    taken = set(reserved)
    schemas: list[NodeSchema] = []
    owner: dict[str, str] = {}
    # iterdir, not glob: the shipped examples may sit inside a zip (an installed wheel run from a zip)
    for path in sorted((p for p in directory.iterdir() if p.name.endswith(SUFFIX)), key=lambda p: p.name):
        schema = load_schema(path)
        for tool in schema.tool_names:
            if tool in taken:
                raise SchemaFileError(
                    path,
                    "name",
                    f"{json.dumps(schema.name)} would generate the tool {tool!r}, "
                    "which is a built-in tool; rename the schema",
                )
            if tool in owner:
                raise SchemaFileError(
                    path,
                    "name",
                    f"{json.dumps(schema.name)} generates {tool!r}, as {owner[tool]} already does",
                )
        for tool in schema.tool_names:
            owner[tool] = str(path)
        schemas.append(schema)
    return schemas
