"""A loaded node schema (docs/memorymesh.md#generated-tools): its properties, relationships and the input schemas
of the three tools it generates.  Read from files by ``schemas.loading``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any

from kg_neo4j.errors import ConfigError

SUFFIX = ".schema.json"
PROPERTY_TYPES = ("string", "array")
TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PROPERTY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: MCP tool names are at most 64 characters; ``update_`` is the longest prefix.
MAX_TYPE_NAME_CHARS = 64 - len("update_")
TOP_KEYS = {"name", "description", "properties", "additionalProperties", "$schema", "$comment"}
PROPERTY_KEYS = {"type", "description", "required", "enum", "relationship"}
RELATIONSHIP_KEYS = {"edgeType", "nodeType", "description"}


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
        """The property as JSON Schema (docs/memorymesh.md#generated-input-schemas); ``nullable`` for
        update, where null removes it (an ``enum`` is checked on its own, so it lists null too)."""
        out: dict[str, Any] = {"type": [self.type, "null"] if nullable else self.type}
        if self.type == "array":
            items: dict[str, Any] = {"type": "string"}
            if self.enum is not None:
                items["enum"] = list(self.enum)
            out["items"] = items
        elif self.enum is not None:
            out["enum"] = [*self.enum, None] if nullable else list(self.enum)
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
        return self.name[len("add_") :]

    @property
    def tool_names(self) -> tuple[str, str, str]:
        t = self.node_type
        return (f"add_{t}", f"update_{t}", f"delete_{t}")

    @property
    def relationships(self) -> dict[str, Relationship]:
        return {p.name: p.relationship for p in self.properties.values() if p.relationship is not None}

    # -- generated input schemas (docs/memorymesh.md#generated-input-schemas) ---
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
            "properties": {
                "name": {"type": "string", "description": f"The name of the {self.node_type} to delete"}
            },
            "required": ["name"],
        }
        return self._wrapped(inner)


def display_name(prop: str) -> str:
    """``currentLocation`` -> ``Current Location``, ``role`` -> ``Role`` (snake_case splits on ``_`` too)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", prop.replace("_", " "))
    return " ".join(w[:1].upper() + w[1:] for w in spaced.split())
