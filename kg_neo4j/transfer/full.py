"""kg-neo4j's own lossless ``full`` format as a stream of items (see :mod:`kg_neo4j.transfer`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from kg_neo4j.errors import ValidationError
from kg_neo4j.formats import FULL_FORMAT, FULL_VERSION
from kg_neo4j.models import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS, MAX_RELATION_TYPE_CHARS
from kg_neo4j.store.transfer import DERIVED_NODE_PROPERTIES, DERIVED_OBSERVATION_PROPERTIES
from kg_neo4j.store.value_codec import ValueCodecError, decode_property
from kg_neo4j.transfer.readers import Item, json_lines, pydantic_error

_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,254}$")
_RESERVED_LABELS = {"KgNode", "Observation", "KgMeta"}
_NODE_KINDS = {"Entity", "Placeholder"}


class _FullObservation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    labels: list[str] = Field(default_factory=list)
    properties: dict[str, Any]
    link: dict[str, Any] = Field(default_factory=dict)
    #: a retired observation (kept as history; docs/history.md)
    retired: bool = False


class _FullNode(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    labels: list[str]
    properties: dict[str, Any] = Field(default_factory=dict)
    observations: list[_FullObservation] = Field(default_factory=list)


class _FullRelationship(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    from_: str = Field(alias="from", min_length=1, max_length=MAX_NAME_CHARS)
    to: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    relationType: str = Field(min_length=1, max_length=MAX_RELATION_TYPE_CHARS)
    properties: dict[str, Any] = Field(default_factory=dict)


def _decode_props(props: dict[str, Any], reserved: tuple[str, ...], where: str) -> dict[str, Any]:
    out = {}
    for key, raw in props.items():
        if not key:
            raise ValueCodecError(f"{where}: empty property name")
        if key in reserved:
            raise ValueCodecError(
                f"{where}: property {key!r} is not stored as given (it is derived or reserved)"
            )
        try:
            out[key] = decode_property(raw)
        except ValueCodecError as exc:
            raise ValueCodecError(f"{where}.{key}: {exc}") from exc
    return out


def _check_labels(labels: list[str], where: str) -> list[str]:
    for label in labels:
        if not _LABEL.match(label) or label in _RESERVED_LABELS:
            raise ValueCodecError(f"{where}: label {label!r} is not allowed")
    return sorted(set(labels))


def _full_node(obj: dict[str, Any]) -> dict[str, Any]:
    node = _FullNode.model_validate(obj)
    if not node.name.strip():
        raise ValueCodecError("name must not be empty or only whitespace")
    labels = _check_labels([x for x in node.labels if x != "KgNode"], "labels")
    if len(_NODE_KINDS & set(labels)) != 1:
        raise ValueCodecError("labels must hold exactly one of 'Entity' and 'Placeholder'")
    props = _decode_props(node.properties, DERIVED_NODE_PROPERTIES, "properties")
    observations = []
    for i, o in enumerate(node.observations):
        where = f"observations[{i}]"
        olabels = _check_labels(o.labels, f"{where}.labels")
        if _NODE_KINDS & set(olabels):
            raise ValueCodecError(f"{where}.labels: an observation cannot be an Entity or Placeholder")
        oprops = _decode_props(o.properties, DERIVED_OBSERVATION_PROPERTIES, f"{where}.properties")
        text = oprops.get("text")
        if not isinstance(text, str):
            raise ValueCodecError(f"{where}.properties.text: a string is required")
        if len(text) > MAX_OBSERVATION_CHARS:
            raise ValueCodecError(f"{where}.properties.text: longer than {MAX_OBSERVATION_CHARS} characters")
        link = _decode_props(o.link, (), f"{where}.link")
        observations.append({"labels": olabels, "props": oprops, "link": link, "retired": o.retired})
    return {"name": node.name, "labels": labels, "props": props, "observations": observations}


def _full_relationship(obj: dict[str, Any]) -> dict[str, Any]:
    rel = _FullRelationship.model_validate(obj)
    for what, value in (("from", rel.from_), ("to", rel.to), ("relationType", rel.relationType)):
        if not value.strip():
            raise ValueCodecError(f"{what} must not be empty or only whitespace")
    return {
        "from": rel.from_,
        "to": rel.to,
        "relationType": rel.relationType,
        "props": _decode_props(rel.properties, (), "properties"),
    }


def full_items(path: Path) -> Iterator[Item]:
    first = True
    for line, obj, error, pos in json_lines(path):
        if error:
            yield Item(line, None, error=error, pos=pos)
            first = False
            continue
        kind = obj.get("type")
        if first:
            first = False
            if kind != "header" or obj.get("format") != FULL_FORMAT:
                yield Item(
                    line,
                    None,
                    error=f"a full export starts with a header line "
                    f'{{"type":"header","format":"{FULL_FORMAT}",...}}',
                    pos=pos,
                )
                continue
            version = obj.get("version")
            if not isinstance(version, int) or version > FULL_VERSION:
                raise ValidationError(
                    f"{path}: full export version {version!r} is newer than this kg-neo4j "
                    f"reads ({FULL_VERSION}); upgrade kg-neo4j",
                    field="path",
                )
            yield Item(line, "header", obj, pos=pos)
            continue
        try:
            if kind == "node":
                yield Item(line, "node", _full_node(obj), pos=pos)
            elif kind == "relationship":
                yield Item(line, "relationship", _full_relationship(obj), pos=pos)
            else:
                yield Item(
                    line, None, error=f"unknown type {kind!r}: expected 'node' or 'relationship'", pos=pos
                )
        except pydantic.ValidationError as exc:
            yield Item(line, kind, error=f"{kind}: {pydantic_error(exc)}", pos=pos)
        except ValueCodecError as exc:
            yield Item(line, kind, error=f"{kind}: {exc}", pos=pos)
