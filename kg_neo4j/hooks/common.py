"""What every hook shares: the input payload, the time budget, and how knowledge is printed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

#: Seconds a hook may spend once started (Python's start and imports come on top: docs/hooks.md#latency;
#: past TIME_BUDGET + 0.2 s it gives up and prints nothing).
TIME_BUDGET = 1.0
#: Seconds to wait for Neo4j to accept the connection.
CONNECT_TIMEOUT = 1.0
#: A printed item is cut at this many characters (so one long item cannot use up the whole budget).
LINE_CHARS = 500


def parse_payload(text: str) -> dict[str, Any]:
    """The hook input: empty input is ``{}``; anything but a JSON object raises ValueError."""
    if not text.strip():
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def text_of(payload: dict[str, Any], key: str) -> str:
    """A string field of the payload ('' when absent or not a string)."""
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def prompt_key(prompt: str) -> str:
    """A short stable key of a user prompt (the session state keeps keys, not the user's words)."""
    return hashlib.sha256(" ".join(prompt.split()).encode()).hexdigest()[:16]


def clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: max(0, n - 1)] + "…"


def line(rec: dict[str, Any], width: int) -> str:
    """One recalled item: ``- [type · trust · level N] name: content (expert: "quote")``."""
    if rec.get("knowledge"):
        tags = [
            t
            for t in (
                rec.get("type"),
                rec.get("trust"),
                "fundamental" if rec.get("category") == "fundamental" else None,
                f"level {rec['level']}" if rec.get("level") is not None else None,
            )
            if t
        ]
        text = f"- [{' · '.join(str(t) for t in tags)}] {rec['name']}: {rec.get('content') or ''}"
        if rec.get("quote"):
            text += f' (expert: "{rec["quote"]}")'
    else:
        text = f"- [{rec.get('type') or 'entity'}] {rec['name']}: " + "; ".join(rec.get("observations") or [])
    return clip(text, width)


def fit(header: str, lines: Sequence[str], budget: int) -> str:
    """``header`` and as many whole ``lines`` as fit in ``budget`` characters ('' if none fits)."""
    out = [header]
    size = len(header)
    for item in lines:
        if size + 1 + len(item) > budget:
            break
        out.append(item)
        size += 1 + len(item)
    return "\n".join(out) if len(out) > 1 else ""
