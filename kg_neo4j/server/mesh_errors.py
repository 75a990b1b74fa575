"""MemoryMesh's error answer (docs/mesh-dialect.md#memorymesh-dialect-and-schema-driven-tools): one text block holding
``{"error", "context", "suggestions"}``, where ``context`` names the tool and the input that
failed and ``suggestions`` lists concrete next steps."""

from __future__ import annotations

import json
from typing import Any

import neo4j

from kg_neo4j.errors import ConflictError, KgError, NotFoundError, TooLargeError, ValidationError
from kg_neo4j.server.registry import dump

#: The failed input is repeated in ``context`` up to this size; a larger one is summarised.
MAX_ECHOED_INPUT_BYTES = 4096


def suggestions_for(tool: str, exc: BaseException) -> list[str]:
    """What the caller can do next: the error's own suggestions, else ones that fit its kind."""
    if isinstance(exc, KgError) and exc.suggestions:
        return list(exc.suggestions)
    if isinstance(exc, NotFoundError):
        return [
            f"add the {exc.kind} first with add_nodes (or the add_<type> tool of its type), then call "
            f"{tool} again",
            f"names are case-sensitive: search_nodes finds the exact name of '{exc.name}'",
        ]
    if isinstance(exc, ConflictError):
        return ["change the existing one with its update tool instead", "or choose another name"]
    if isinstance(exc, ValidationError):
        where = f"'{exc.field}'" if exc.field else "the input"
        return [
            f"fix {where} as the input schema of {tool} describes (tools/list) and call {tool} again",
            "nothing was written, so the whole call can be repeated",
        ]
    if isinstance(exc, TooLargeError):
        return [
            "narrow the request: search_nodes with a longer query, or open_nodes with fewer names",
            "for the whole graph use kg-neo4j export --format memorymesh",
        ]
    if isinstance(exc, neo4j.exceptions.ServiceUnavailable | neo4j.exceptions.SessionExpired):
        return [f"call {tool} again when Neo4j is reachable: nothing was written"]
    if isinstance(exc, neo4j.exceptions.ClientError):
        return ["check the values of the input against the tool's input schema; nothing was written"]
    return ["this is a bug in kg-neo4j: report it with the input in context"]


def _echo(args: dict[str, Any]) -> Any:
    size = len(json.dumps(args, ensure_ascii=False).encode())
    if size <= MAX_ECHOED_INPUT_BYTES:
        return args
    return {"omitted": f"{size} bytes, too large to repeat", "fields": sorted(args)}


def mesh_error_text(tool: str, args: dict[str, Any], message: str, exc: BaseException) -> str:
    """The error's text in MemoryMesh's shape (pretty-printed like its other answers)."""
    return dump(
        {
            "error": message,
            "context": {"tool": tool, "input": _echo(args)},
            "suggestions": suggestions_for(tool, exc),
        }
    )
