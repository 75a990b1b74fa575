"""Checks every incoming JSON-RPC message before the MCP SDK sees it, so each bad one gets the
answer JSON-RPC 2.0 prescribes (docs/connecting.md#protocol-errors) instead of silence or a vague error.

The SDK drops some messages without answering (over stdio: text that is not JSON, a request
whose ``jsonrpc`` is not ``"2.0"``, a lone surrogate, deep nesting) and answers others with a
code or ``id`` other than the ones JSON-RPC prescribes.  Both transports call
:func:`check_message` first; a :class:`Rejection` is answered by the transport itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kg_neo4j.json_types import json_type

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

#: Deepest nesting of arrays and objects accepted in one message (the message object is level 1).
#: The deepest tool argument kg-neo4j reads sits at about level 7; the SDK's own parser gives up
#: near 200 levels without answering.
MAX_JSON_DEPTH = 64


@dataclass(frozen=True)
class Rejection:
    """A message refused with a JSON-RPC error; ``id`` is None when the message has no usable id."""

    code: int
    message: str
    id: str | int | None = None
    #: False for a notification: JSON-RPC never answers one, the server only logs it.
    answer: bool = True

    def response(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}

    def response_bytes(self) -> bytes:
        return json.dumps(self.response(), ensure_ascii=False, separators=(",", ":")).encode()


#: A lone surrogate can only arrive as a ``\\uD800``-``\\uDFFF`` escape (UTF-8 text cannot carry one).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def check_message(raw: bytes | str) -> tuple[Any, Rejection | None]:
    """Parse one message and check it; returns ``(parsed, None)`` or ``(parsed_or_None, rejection)``."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, Rejection(
                PARSE_ERROR,
                f"Parse error: the message is not UTF-8 text "
                f"(byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            )
    try:
        obj = json.loads(raw)
    except RecursionError:
        return None, Rejection(
            INVALID_PARAMS,
            f"the message nests arrays and objects deeper than {MAX_JSON_DEPTH} levels (the limit)",
        )
    except ValueError as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        where = f" (line {exc.lineno} column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return None, Rejection(PARSE_ERROR, f"Parse error: {msg}{where}; the message is not JSON")
    return obj, check_object(obj, strings=_SURROGATE_ESCAPE.search(raw) is not None)


def usable_id(obj: dict[str, Any]) -> str | int | None:
    """The message's ``id`` when JSON-RPC allows it (a string or an integer), else None."""
    rid = obj.get("id")
    return rid if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)) else None


def check_object(obj: Any, *, strings: bool = True) -> Rejection | None:
    """The JSON-RPC 2.0 envelope, MCP's ``tools/call`` shape, nesting depth and Unicode of a parsed message
    (``strings=False`` when the text had no surrogate escape, so no string can hold a lone surrogate)."""
    if isinstance(obj, list):
        return Rejection(
            INVALID_REQUEST,
            "Invalid request: batches (JSON arrays) are not part of MCP; "
            "send one JSON-RPC object per message",
        )
    if not isinstance(obj, dict):
        return Rejection(
            INVALID_REQUEST, f"Invalid request: a message must be a JSON object, got {json_type(obj)}"
        )
    rid = usable_id(obj)
    if obj.get("jsonrpc") != "2.0":
        return Rejection(
            INVALID_REQUEST,
            f"Invalid request: 'jsonrpc' must be \"2.0\", got {json.dumps(obj.get('jsonrpc'))}",
            rid,
        )
    if "id" in obj and rid is None:
        return Rejection(
            INVALID_REQUEST,
            f"Invalid request: 'id' must be a string or an integer, got {json_type(obj['id'])}",
        )
    if "method" not in obj:
        if "id" in obj and ("result" in obj or "error" in obj):
            return _deep_check(obj, rid, answer=False, strings=strings)  # a response to one of our requests
        return Rejection(
            INVALID_REQUEST,
            "Invalid request: 'method' is missing (a request needs "
            "'method'; a response needs 'result' or 'error')",
            rid,
        )
    answer = "id" in obj
    method = obj["method"]
    if not isinstance(method, str):
        return Rejection(
            INVALID_REQUEST,
            f"Invalid request: 'method' must be a string, got {json_type(method)}",
            rid,
            answer,
        )
    params = obj.get("params")
    if "params" in obj and not isinstance(params, dict):
        return Rejection(
            INVALID_PARAMS, f"{method}: 'params' must be an object, got {json_type(params)}", rid, answer
        )
    if method == "tools/call" and isinstance(params, dict):
        if not isinstance(params.get("name"), str):
            return Rejection(
                INVALID_PARAMS,
                f"tools/call: 'params.name' must be a string (the tool's name), "
                f"got {json_type(params.get('name'))}",
                rid,
                answer,
            )
        if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
            return Rejection(
                INVALID_PARAMS,
                f"tools/call {params['name']}: 'arguments' must be an object "
                f"(the tool's named arguments), got {json_type(params['arguments'])}",
                rid,
                answer,
            )
    return _deep_check(obj, rid, answer, strings=strings)


def _fine(obj: Any, strings: bool) -> bool:
    """True when nothing is nested too deep and (if ``strings``) no string or key has a lone surrogate:
    the quick walk every message takes; only a failing one is walked again for the path to name."""
    stack = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        items = node.values() if isinstance(node, dict) else node
        if strings and isinstance(node, dict) and any(_has_surrogate(k) for k in node):
            return False
        for v in items:
            if isinstance(v, dict | list):
                stack.append((v, depth + 1))
            elif strings and isinstance(v, str) and _has_surrogate(v):
                return False
    return True


def _deep_check(
    obj: dict[str, Any], rid: str | int | None, answer: bool, *, strings: bool = True
) -> Rejection | None:
    """Nesting depth and lone surrogates, in one walk without recursion (no Python stack limit)."""
    if _fine(obj, strings):
        return None
    stack: list[tuple[Any, int, str]] = [(obj, 1, "")]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            if depth > MAX_JSON_DEPTH:
                return _too_deep(path, rid, answer)
            for k, v in node.items():
                sub = f"{path}.{k}" if path else k
                if _has_surrogate(k):
                    return _surrogate(f"{path or 'the message'}: a key", k, rid, answer)
                stack.append((v, depth + 1, sub))
        elif isinstance(node, list):
            if depth > MAX_JSON_DEPTH:
                return _too_deep(path, rid, answer)
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(node))
        elif isinstance(node, str) and _has_surrogate(node):
            return _surrogate(path, node, rid, answer)
    return None


def _too_deep(path: str, rid: str | int | None, answer: bool) -> Rejection:
    where = path if len(path) <= 80 else path[:80] + "..."
    return Rejection(
        INVALID_PARAMS,
        f"{where or 'the message'}: arrays and objects nested deeper than "
        f"{MAX_JSON_DEPTH} levels (the limit)",
        rid,
        answer,
    )


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate(where: str, s: str, rid: str | int | None, answer: bool) -> Rejection:
    bad = next(c for c in s if 0xD800 <= ord(c) <= 0xDFFF)
    return Rejection(
        INVALID_PARAMS,
        f"{where}: contains a lone surrogate (U+{ord(bad):04X}), which is not "
        "Unicode text; send the character itself or a valid surrogate pair",
        rid,
        answer,
    )
