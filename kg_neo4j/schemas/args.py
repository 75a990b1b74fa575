"""A generated tool's arguments turned into metadata entries and edge targets
(docs/memorymesh.md#creating-a-node-from-a-schema, #metadata), checked against the node schema that also built the advertised input schema."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS
from kg_neo4j.schemas.model import NodeSchema, Property, display_name

# --- metadata helpers (docs/memorymesh.md#creating-a-node-from-a-schema, #metadata) ---


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
    """Check one tool call's ``{<type>: {...}}`` object against ``schema``
    (docs/memorymesh.md#creating-a-node-from-a-schema).

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
        raise ValidationError(
            f"{t}.name is {len(name)} characters; the limit is {MAX_NAME_CHARS}", field=f"{t}.name"
        )
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
                    raise ValidationError(
                        f"{where}: the target of a {prop.relationship.edge_type} edge must not be empty",
                        field=where if len(items) == 1 else f"{where}[{i}]",
                    )
                if len(target) > MAX_NAME_CHARS:
                    raise ValidationError(
                        f"{where}: a node name is at most {MAX_NAME_CHARS} characters", field=where
                    )
            targets[prop.name] = list(dict.fromkeys(items))
    for key, value in args.items():
        if key in schema.properties:
            continue
        where = f"{t}.{key}"
        if not schema.additional_properties:
            raise ValidationError(
                f"{where} is not a property of {t} (the schema allows no others; known: "
                f"{', '.join(schema.properties)})",
                field=where,
            )
        if value is None:
            if partial:
                metadata[display_name(key)] = None
            continue
        if any(
            isinstance(v, float) and not math.isfinite(v)
            for v in (value if isinstance(value, list) else [value])
        ):
            raise ValidationError(f"{where} must be a finite number (not NaN or Infinity)", field=where)
        if isinstance(value, list):
            if not all(isinstance(v, str | int | float | bool) for v in value):
                raise ValidationError(
                    f"{where} must be a string, number, boolean or array of them", field=where
                )
            value = [_scalar(v) for v in value]
        elif isinstance(value, str | int | float | bool):
            value = _scalar(value)
        else:
            raise ValidationError(f"{where} must be a string, number, boolean or array of them", field=where)
        metadata[display_name(key)] = _value_text(value)
    for key, text in metadata.items():
        if text is not None and len(key) + 2 + len(text) > MAX_OBSERVATION_CHARS:
            raise ValidationError(
                f"{t}: the metadata entry for {key!r} would be longer than "
                f"{MAX_OBSERVATION_CHARS} characters",
                field=t,
            )
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
                raise ValidationError(
                    f"{where}: {v!r} is not one of the allowed values: {', '.join(prop.enum)}", field=where
                )
    return items
