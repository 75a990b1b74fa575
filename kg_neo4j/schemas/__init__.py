"""Schema files (spec 002 section 3): ``*.schema.json`` describing one node type each.

A file looks like::

    {"name": "add_npc", "description": "...",
     "properties": {"name": {"type": "string", "description": "...", "required": true},
                    "role": {"type": "string", "description": "...", "enum": ["Wizard", ...]},
                    "currentLocation": {"type": "string", "description": "...",
                                        "relationship": {"edgeType": "located_in", "nodeType": "location",
                                                         "description": "..."}}},
     "additionalProperties": true}

Each schema generates three tools (``add_npc``, ``update_npc``, ``delete_npc``; the server
module builds them).  This module only reads and checks files and turns tool arguments into
metadata and edges; it never touches Neo4j.  A bad file raises :class:`SchemaFileError`
naming the file and the field at fault.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from kg_neo4j.errors import ConfigError, ValidationError
from kg_neo4j.json_types import json_type
from kg_neo4j.models import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS, MAX_RELATION_TYPE_CHARS

SUFFIX = ".schema.json"
PROPERTY_TYPES = ("string", "array")
_TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_PROPERTY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: MCP tool names are at most 64 characters; ``update_`` is the longest prefix.
MAX_TYPE_NAME_CHARS = 64 - len("update_")
_TOP_KEYS = {"name", "description", "properties", "additionalProperties", "$schema", "$comment"}
_PROPERTY_KEYS = {"type", "description", "required", "enum", "relationship"}
_RELATIONSHIP_KEYS = {"edgeType", "nodeType", "description"}


class SchemaFileError(ConfigError):
    """A ``*.schema.json`` file that breaks the format; the message names the file and the field."""

    def __init__(self, path: Traversable | str, field_path: str | None, problem: str) -> None:
        where = f"{path}: {field_path}: " if field_path else f"{path}: "
        super().__init__(where + problem)
        self.path = str(path)
        self.field = field_path


@dataclass(frozen=True)
class Relationship:
    edge_type: str
    description: str
    node_type: str | None = None


@dataclass(frozen=True)
class Property:
    name: str
    type: str  # "string" | "array"
    description: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    relationship: Relationship | None = None

    @property
    def display_name(self) -> str:
        return display_name(self.name)

    def json_schema(self, *, nullable: bool = False) -> dict[str, Any]:
        """The property as JSON Schema (spec 002 section 5.2); ``nullable`` for update, where null removes it."""
        out: dict[str, Any] = {"type": [self.type, "null"] if nullable else self.type}
        if self.type == "array":
            items: dict[str, Any] = {"type": "string"}
            if self.enum is not None:
                items["enum"] = list(self.enum)
            out["items"] = items
        elif self.enum is not None:
            out["enum"] = list(self.enum)
        out["description"] = self.description
        return out


@dataclass(frozen=True)
class NodeSchema:
    """One loaded schema: ``add_npc`` describes node type ``npc``."""

    name: str
    description: str
    properties: dict[str, Property]
    additional_properties: bool
    path: str = ""
    #: property names in file order (``properties`` keeps it too; this is for clarity)
    order: tuple[str, ...] = field(default=())

    @property
    def node_type(self) -> str:
        return self.name[len("add_"):]

    @property
    def tool_names(self) -> tuple[str, str, str]:
        t = self.node_type
        return (f"add_{t}", f"update_{t}", f"delete_{t}")

    @property
    def relationships(self) -> dict[str, Relationship]:
        return {p.name: p.relationship for p in self.properties.values() if p.relationship is not None}

    # -- generated input schemas (spec 002 section 5.2) ------------------------------
    def _wrapped(self, inner: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {self.node_type: inner}, "required": [self.node_type]}

    def add_input_schema(self) -> dict[str, Any]:
        inner = {
            "type": "object",
            "properties": {n: p.json_schema() for n, p in self.properties.items()},
            "required": [n for n, p in self.properties.items() if p.required],
            "additionalProperties": self.additional_properties,
        }
        return self._wrapped(inner)

    def update_input_schema(self) -> dict[str, Any]:
        inner = {
            "type": "object",
            "properties": {n: p.json_schema(nullable=n != "name") for n, p in self.properties.items()},
            "required": ["name"],
            "additionalProperties": self.additional_properties,
        }
        return self._wrapped(inner)

    def delete_input_schema(self) -> dict[str, Any]:
        inner = {
            "type": "object",
            "properties": {"name": {"type": "string", "description": f"The name of the {self.node_type} to delete"}},
            "required": ["name"],
        }
        return self._wrapped(inner)


# --- metadata helpers (spec 002 sections 3.7 and 9) ----------------------------------


def display_name(prop: str) -> str:
    """``currentLocation`` -> ``Current Location``, ``role`` -> ``Role`` (snake_case splits on ``_`` too)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", prop.replace("_", " "))
    return " ".join(w[:1].upper() + w[1:] for w in spaced.split())


def parse_entry(entry: str) -> tuple[str, str] | None:
    """``"Key: Value"`` -> ``("Key", "Value")`` (split on the first ``": "``); None if it has no key."""
    key, sep, value = entry.partition(": ")
    return (key, value) if sep else None


def format_entry(key: str, value: str) -> str:
    return f"{key}: {value}"


def replace_entries(metadata: list[str], changes: dict[str, str | None]) -> list[str]:
    """Metadata with each changed key's first entry replaced in place (later entries of the key
    dropped), new keys appended in ``changes`` order, and keys mapped to None removed.  Entries
    without a ``Key: `` prefix are kept as they are."""
    out: list[str] = []
    done: set[str] = set()
    for entry in metadata:
        parsed = parse_entry(entry)
        if parsed is None or parsed[0] not in changes:
            out.append(entry)
            continue
        key = parsed[0]
        if key in done:
            continue
        done.add(key)
        value = changes[key]
        if value is not None:
            out.append(format_entry(key, value))
    for key, value in changes.items():
        if key not in done and value is not None:
            out.append(format_entry(key, value))
    return out


@dataclass
class Processed:
    """A node's data from tool arguments: metadata changes in order and relationship targets."""

    name: str
    #: display key -> value (None: remove the key), in schema order then extra properties
    metadata: dict[str, str | None]
    #: property name -> targets (empty list: no edge; only present for properties given)
    targets: dict[str, list[str]]


def _value_text(value: Any) -> str:
    return ", ".join(value) if isinstance(value, list) else str(value)


def process_args(schema: NodeSchema, args: Any, *, partial: bool) -> Processed:
    """Check one tool call's ``{<type>: {...}}`` object against ``schema`` (spec 002 section 3.7).

    ``partial`` (update): only ``name`` is required, and a property given as null removes it.
    Raises :class:`ValidationError` naming the field; nothing is written.
    """
    t = schema.node_type
    if not isinstance(args, dict):
        raise ValidationError(f"'{t}' must be an object with the {t}'s properties", field=t)
    name = args.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(f"{t}.name is required and must be a non-empty string", field=f"{t}.name")
    if len(name) > MAX_NAME_CHARS:
        raise ValidationError(f"{t}.name is {len(name)} characters; the limit is {MAX_NAME_CHARS}",
                              field=f"{t}.name")
    metadata: dict[str, str | None] = {}
    targets: dict[str, list[str]] = {}
    for prop in schema.properties.values():
        if prop.name == "name":
            continue
        where = f"{t}.{prop.name}"
        if prop.name in args and args[prop.name] is None and not partial:
            # the add schema has no null (update's has: there it removes the property)
            raise ValidationError(f"{where} must not be null (omit it instead)", field=where)
        if prop.name not in args:
            if prop.required and not partial:
                raise ValidationError(f"{where} is required", field=where)
            continue
        value = args[prop.name]
        if value is None:  # update: remove the property (and close its edges)
            metadata[prop.display_name] = None
            if prop.relationship is not None:
                targets[prop.name] = []
            continue
        items = _check_value(prop, value, where)
        metadata[prop.display_name] = _value_text(value)
        if prop.relationship is not None:
            for i, target in enumerate(items):
                if not target.strip():
                    raise ValidationError(f"{where}: the target of a {prop.relationship.edge_type} edge must "
                                          "not be empty", field=where if len(items) == 1 else f"{where}[{i}]")
                if len(target) > MAX_NAME_CHARS:
                    raise ValidationError(f"{where}: a node name is at most {MAX_NAME_CHARS} characters",
                                          field=where)
            targets[prop.name] = list(dict.fromkeys(items))
    for key, value in args.items():
        if key in schema.properties:
            continue
        where = f"{t}.{key}"
        if not schema.additional_properties:
            raise ValidationError(f"{where} is not a property of {t} (the schema allows no others; known: "
                                  f"{', '.join(schema.properties)})", field=where)
        if value is None:
            if partial:
                metadata[display_name(key)] = None
            continue
        if any(isinstance(v, float) and not math.isfinite(v) for v in (value if isinstance(value, list) else [value])):
            raise ValidationError(f"{where} must be a finite number (not NaN or Infinity)", field=where)
        if isinstance(value, list):
            if not all(isinstance(v, str | int | float | bool) for v in value):
                raise ValidationError(f"{where} must be a string, number, boolean or array of them", field=where)
            value = [_scalar(v) for v in value]
        elif isinstance(value, str | int | float | bool):
            value = _scalar(value)
        else:
            raise ValidationError(f"{where} must be a string, number, boolean or array of them", field=where)
        metadata[display_name(key)] = _value_text(value)
    for key, text in metadata.items():
        if text is not None and len(key) + 2 + len(text) > MAX_OBSERVATION_CHARS:
            raise ValidationError(f"{t}: the metadata entry for {key!r} would be longer than "
                                  f"{MAX_OBSERVATION_CHARS} characters", field=t)
    return Processed(name=name, metadata=metadata, targets=targets)


def _scalar(v: str | int | float | bool) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _check_value(prop: Property, value: Any, where: str) -> list[str]:
    if prop.type == "string":
        if not isinstance(value, str):
            raise ValidationError(f"{where} must be a string, got {type(value).__name__}", field=where)
        items = [value]
    else:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValidationError(f"{where} must be an array of strings", field=where)
        items = list(value)
    if prop.enum is not None:
        for v in items:
            if v not in prop.enum:
                raise ValidationError(f"{where}: {v!r} is not one of the allowed values: {', '.join(prop.enum)}",
                                      field=where)
    return items


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


def _load_property(path: Traversable, pname: str, raw: Any) -> Property:
    where = f"properties.{pname}"
    if not _PROPERTY_NAME.match(pname):
        raise SchemaFileError(path, where, "property names are letters, digits and _ (not starting with a digit)")
    if not isinstance(raw, dict):
        raise SchemaFileError(path, where, f"must be an object, got {json_type(raw)}")
    unknown = sorted(set(raw) - _PROPERTY_KEYS)
    if unknown:
        raise SchemaFileError(path, f"{where}.{unknown[0]}",
                              f"unknown key (allowed: {', '.join(sorted(_PROPERTY_KEYS))})")
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
            raise SchemaFileError(path, where, "the name property must be a plain string (no enum, no relationship)")
        required = True
    return Property(pname, ptype, description, required, enum, relationship)


def _load_relationship(path: Traversable, where: str, raw: Any) -> Relationship:
    if not isinstance(raw, dict):
        raise SchemaFileError(path, where, f"must be an object, got {json_type(raw)}")
    unknown = sorted(set(raw) - _RELATIONSHIP_KEYS)
    if unknown:
        raise SchemaFileError(path, f"{where}.{unknown[0]}",
                              f"unknown key (allowed: {', '.join(sorted(_RELATIONSHIP_KEYS))})")
    if "edgeType" not in raw:
        raise SchemaFileError(path, f"{where}.edgeType", "is missing")
    edge_type = _need_str(path, f"{where}.edgeType", raw["edgeType"])
    if len(edge_type) > MAX_RELATION_TYPE_CHARS:
        raise SchemaFileError(path, f"{where}.edgeType", f"is longer than {MAX_RELATION_TYPE_CHARS} characters")
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
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise SchemaFileError(path, unknown[0], "unknown key (allowed: name, description, properties, "
                                                "additionalProperties)")
    if "name" not in raw:
        raise SchemaFileError(path, "name", "is missing (e.g. \"add_npc\")")
    name = _need_str(path, "name", raw["name"])
    if not name.startswith("add_"):
        raise SchemaFileError(path, "name", f"must start with 'add_' (e.g. \"add_npc\"), got {json.dumps(name)}")
    node_type = name[len("add_"):]
    if not _TYPE_NAME.match(node_type) or len(node_type) > MAX_TYPE_NAME_CHARS:
        raise SchemaFileError(path, "name", f"the type after 'add_' must be a letter then letters, digits or _ "
                                            f"(at most {MAX_TYPE_NAME_CHARS} characters), got {json.dumps(node_type)}")
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
            raise SchemaFileError(path, f"properties.{pname}",
                                  f"its metadata key {d!r} is the same as property {displays[d]!r}'s")
        displays[d] = pname
    additional = raw.get("additionalProperties", False)
    if not isinstance(additional, bool):
        raise SchemaFileError(path, "additionalProperties", f"must be true or false, got {json_type(additional)}")
    return NodeSchema(name=name, description=description, properties=properties,
                      additional_properties=additional, path=str(path), order=tuple(properties))


def load_schemas(directory: Traversable | None = None, *, reserved: Iterable[str] = ()
                 ) -> list[NodeSchema]:
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
                raise SchemaFileError(path, "name", f"{json.dumps(schema.name)} would generate the tool {tool!r}, "
                                                    "which is a built-in tool; rename the schema")
            if tool in owner:
                raise SchemaFileError(path, "name", f"{json.dumps(schema.name)} generates {tool!r}, as "
                                                    f"{owner[tool]} already does")
        for tool in schema.tool_names:
            owner[tool] = str(path)
        schemas.append(schema)
    return schemas
