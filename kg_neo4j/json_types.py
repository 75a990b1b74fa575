"""JSON's names for Python values, for error messages that say what was sent ("got array")."""

from __future__ import annotations

from typing import Any


def json_type(value: Any) -> str:
    """``null``, ``boolean``, ``number``, ``string``, ``array`` or ``object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
