"""Which import format a file holds, from its first lines (see :mod:`kg_neo4j.transfer`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kg_neo4j.errors import ValidationError
from kg_neo4j.formats import FULL_FORMAT, IMPORT_FORMATS

_DETECT_LINES = 50


_SIMPLE_MEMORY_HEAD = re.compile(r'^\s*\{\s*(?:"(?:entities|relations)"\s*:|\})')


def _format_of(obj: Any, suffix: str) -> str | None:
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind == "header" and obj.get("format") == FULL_FORMAT:
        return "full"
    if kind in ("entity", "relation"):
        return "memory-json" if suffix == ".json" else "jsonl"
    if kind in ("node", "edge"):
        return "memorymesh"
    if "type" not in obj and ("entities" in obj or "relations" in obj or not obj):
        return "simple-memory"
    return None


def detect_format(path: str | Path) -> str:
    """The import format of ``path``, from its content (see the module docstring)."""
    p = Path(path)
    suffix = p.suffix.lower()
    head: list[str] = []
    with p.open("r", encoding="utf-8-sig", errors="replace") as f:
        for raw in f:
            if raw.strip():
                head.append(raw)
            if len(head) >= _DETECT_LINES:
                break
    if not head:
        return "jsonl"  # an empty file: nothing to import, in any format
    try:
        found = _format_of(json.loads(head[0]), suffix)
    except ValueError:
        found = None
        if _SIMPLE_MEMORY_HEAD.match("".join(head)):
            return "simple-memory"
    if found:
        return found
    for line in head[1:]:
        try:
            found = _format_of(json.loads(line), suffix)
        except ValueError:
            continue
        if found in ("jsonl", "memory-json", "memorymesh"):
            return found
    raise ValidationError(
        f"cannot tell the format of {p}: its first lines are neither reference JSONL "
        f'({{"type":"entity"|"relation",...}}), MemoryMesh JSONL ({{"type":"node"|"edge",...}}), a Simple '
        f'Memory object ({{"entities": [...], "relations": [...]}}) nor a kg-neo4j full export; '
        f"pass --format ({', '.join(IMPORT_FORMATS)})",
        field="format",
    )
