"""The reference, MemoryMesh and Simple Memory files as a stream of items, one per line or array
element, each validated (``EntityIn`` / ``RelationIn``) or carrying its error (see :mod:`kg_neo4j.transfer`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic

from kg_neo4j.models import EntityIn, RelationIn


@dataclass
class Item:
    line: int
    kind: str | None  # entity | relation | node | relationship | header; None when unknown
    value: Any = None
    error: str | None = None
    pos: int = 0  # bytes (or characters) read up to the end of this item: progress


def pydantic_error(exc: pydantic.ValidationError, rename: dict[str, str] | None = None) -> str:
    rename = rename or {}
    parts = []
    for err in exc.errors():
        loc = ".".join(rename.get(str(x), str(x)) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else str(err["msg"]))
    return "; ".join(parts)


def json_lines(path: Path) -> Iterator[tuple[int, Any, str | None, int]]:
    """(line number, parsed JSON, error, bytes read) for every non-empty line, streamed."""
    with path.open("rb") as f:
        pos = 0
        for lineno, raw in enumerate(f, 1):
            pos += len(raw)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield lineno, None, f"not UTF-8 text: {exc}", pos
                continue
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except ValueError as exc:
                yield lineno, None, f"invalid JSON: {exc}", pos
                continue
            if not isinstance(obj, dict):
                yield lineno, None, f"expected a JSON object, got {type(obj).__name__}", pos
                continue
            yield lineno, obj, None, pos


def _entity(obj: dict[str, Any], line: int, pos: int, rename: dict[str, str] | None = None) -> Item:
    try:
        return Item(line, "entity", EntityIn.model_validate(obj), pos=pos)
    except pydantic.ValidationError as exc:
        return Item(line, "entity", error=f"entity: {pydantic_error(exc, rename)}", pos=pos)


def _relation(obj: dict[str, Any], line: int, pos: int, rename: dict[str, str] | None = None) -> Item:
    try:
        return Item(line, "relation", RelationIn.model_validate(obj), pos=pos)
    except pydantic.ValidationError as exc:
        return Item(line, "relation", error=f"relation: {pydantic_error(exc, rename)}", pos=pos)


def reference_items(path: Path) -> Iterator[Item]:
    for line, obj, error, pos in json_lines(path):
        if error:
            yield Item(line, None, error=error, pos=pos)
        elif obj.get("type") == "entity":
            yield _entity(obj, line, pos)
        elif obj.get("type") == "relation":
            yield _relation(obj, line, pos)
        else:
            yield Item(
                line,
                None,
                error=f"unknown type {obj.get('type')!r}: expected 'entity' or 'relation'",
                pos=pos,
            )


_MESH_NODE = {"name": "name", "nodeType": "entityType", "metadata": "observations"}
_MESH_EDGE = {"from": "from", "to": "to", "edgeType": "relationType", "weight": "weight"}


def memorymesh_items(path: Path) -> Iterator[Item]:
    for line, obj, error, pos in json_lines(path):
        if error:
            yield Item(line, None, error=error, pos=pos)
            continue
        kind = obj.get("type")
        if kind == "node":
            mapped = {dst: obj[src] for src, dst in _MESH_NODE.items() if src in obj}
            yield _entity(mapped, line, pos, {v: k for k, v in _MESH_NODE.items()})
        elif kind == "edge":
            mapped = {dst: obj[src] for src, dst in _MESH_EDGE.items() if src in obj}
            yield _relation(mapped, line, pos, {v: k for k, v in _MESH_EDGE.items()})
        else:
            yield Item(line, None, error=f"unknown type {kind!r}: expected 'node' or 'edge'", pos=pos)


def simple_memory_items(path: Path) -> Iterator[Item]:
    """Items of Simple Memory's single JSON object, each with the line its element starts on.

    The document is one JSON value, so it is read whole (and checked whole first: a syntax
    error rejects the file before anything is written).
    """
    text = path.read_text(encoding="utf-8-sig")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        lineno = getattr(exc, "lineno", 1)
        yield Item(lineno, None, error=f"invalid JSON: {exc}", pos=len(text))
        return
    if not isinstance(doc, dict):
        yield Item(
            1,
            None,
            error=f"expected a JSON object with 'entities' and 'relations', got {type(doc).__name__}",
            pos=len(text),
        )
        return
    for key in ("entities", "relations"):
        if key in doc and not isinstance(doc[key], list):
            yield Item(1, None, error=f"'{key}' must be an array", pos=len(text))
            return
    del doc

    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    state = {"line": 1, "at": 0}

    def line_of(i: int) -> int:
        state["line"] += text.count("\n", state["at"], i)
        state["at"] = i
        return state["line"]

    def skip(i: int) -> int:
        return ws.match(text, i).end()  # type: ignore[union-attr]

    i = skip(0) + 1  # past "{" (checked above)
    while True:
        i = skip(i)
        if text[i] == "}":
            return
        if text[i] == ",":
            i += 1
            continue
        key, i = decoder.raw_decode(text, i)
        i = skip(skip(i) + 1)  # past ":"
        if key not in ("entities", "relations"):
            _, i = decoder.raw_decode(text, i)
            continue
        i = skip(i + 1)  # past "["
        while text[i] != "]":
            start = i
            value, i = decoder.raw_decode(text, i)
            line = line_of(start)
            if not isinstance(value, dict):
                yield Item(
                    line,
                    None,
                    error=f"{key} element: expected a JSON object, got {type(value).__name__}",
                    pos=i,
                )
            elif key == "entities":
                yield _entity(value, line, i)
            else:
                yield _relation(value, line, i)
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
        i += 1
