"""Lossless JSON for values stored in Neo4j (the full export and import, ``store/transfer.py``):
:func:`encode_value` and :func:`decode_value`.  Temporal and spatial values become tagged objects such
as ``{"$datetime": "2026-01-01T00:00:00+00:00"}``; a datetime in a named zone carries ``"zone"`` as
well."""

from __future__ import annotations

import base64
import binascii
import math
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import neo4j
import neo4j.spatial
import neo4j.time
import pytz

__all__ = ["ValueCodecError", "decode_property", "decode_value", "encode_value"]

_CARTESIAN = {7203, 9157}
_WGS84 = {4326, 4979}


class ValueCodecError(ValueError):
    """A value that cannot be encoded to or decoded from the full format."""


def _offset_tz(value: Any) -> timezone:
    off = value.utcoffset()
    return timezone(off if off is not None else timedelta(0))


def encode_value(value: Any, *, named_zone: bool = False) -> Any:
    """A stored Neo4j value as JSON (tagged objects for temporal, spatial and byte values).

    ``named_zone``: the value is a DateTime in a named zone (``...[Europe/Berlin]``); the
    driver hydrates both ``Z`` and ``[UTC]`` as pytz's UTC, so the caller tells them apart.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return value
    if isinstance(value, neo4j.time.DateTime | datetime):
        dt = value if isinstance(value, neo4j.time.DateTime) else neo4j.time.DateTime.from_native(value)
        if dt.tzinfo is None:
            return {"$localdatetime": dt.iso_format()}
        out: dict[str, Any] = {"$datetime": dt.iso_format()}
        zone = getattr(dt.tzinfo, "zone", None) or getattr(dt.tzinfo, "key", None)
        if isinstance(zone, str) and (named_zone or zone != "UTC"):
            out["zone"] = zone
        return out
    if isinstance(value, neo4j.time.Date | date):
        d = value if isinstance(value, neo4j.time.Date) else neo4j.time.Date.from_native(value)
        return {"$date": d.iso_format()}
    if isinstance(value, neo4j.time.Time | time):
        t = value if isinstance(value, neo4j.time.Time) else neo4j.time.Time.from_native(value)
        if t.tzinfo is None:
            return {"$localtime": t.iso_format()}
        return {"$time": t.iso_format()}
    if isinstance(value, neo4j.time.Duration):
        return {
            "$duration": {
                "months": value.months,
                "days": value.days,
                "seconds": value.seconds,
                "nanoseconds": value.nanoseconds,
            }
        }
    if isinstance(value, timedelta):
        return encode_value(
            neo4j.time.Duration(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
        )
    if isinstance(value, neo4j.spatial.Point):
        return {"$point": {"srid": value.srid, "coordinates": [float(c) for c in value]}}
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list | tuple):  # after Duration and Point, which are tuples too
        return [encode_value(v, named_zone=named_zone) for v in value]
    raise ValueCodecError(f"cannot encode a value of type {type(value).__name__}")


def _tz_for(dt: neo4j.time.DateTime, zone: str | None) -> neo4j.time.DateTime:
    if zone:
        # pytz, not zoneinfo: the driver hashes the value while packing it, and zoneinfo's C
        # utcoffset() handed a neo4j.time.DateTime (not a datetime) can crash the interpreter.
        try:
            return dt.astimezone(pytz.timezone(zone))
        except (pytz.UnknownTimeZoneError, ValueError) as exc:
            raise ValueCodecError(f"unknown time zone {zone!r}") from exc
    # A fixed offset: a stdlib timezone, which the driver sends as an offset (pytz's UTC
    # would be sent as the named zone "UTC").
    return dt.replace(tzinfo=_offset_tz(dt))


def decode_value(value: Any) -> Any:
    """The inverse of :func:`encode_value`: JSON into values the driver stores as they were."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict) or len(value) == 0:
        raise ValueCodecError(f"not a storable value: {value!r:.80}")
    tags = [k for k in value if k.startswith("$")]
    if len(tags) != 1:
        raise ValueCodecError(f"a typed value needs exactly one $tag: {value!r:.80}")
    tag = tags[0]
    raw = value[tag]
    extra = set(value) - {tag, "zone"} if tag == "$datetime" else set(value) - {tag}
    if extra:
        raise ValueCodecError(f"unexpected keys {sorted(extra)} in {tag} value")
    try:
        if tag == "$datetime":
            dt = neo4j.time.DateTime.from_iso_format(str(raw))
            if dt.tzinfo is None:
                raise ValueCodecError(f"$datetime needs an offset: {raw!r}")
            zone = value.get("zone")
            if zone is not None and not isinstance(zone, str):
                raise ValueCodecError("zone must be a string")
            return _tz_for(dt, zone)
        if tag == "$localdatetime":
            dt = neo4j.time.DateTime.from_iso_format(str(raw))
            if dt.tzinfo is not None:
                raise ValueCodecError(f"$localdatetime must not have an offset: {raw!r}")
            return dt
        if tag == "$date":
            return neo4j.time.Date.from_iso_format(str(raw))
        if tag == "$time":
            t = neo4j.time.Time.from_iso_format(str(raw))
            if t.tzinfo is None:
                raise ValueCodecError(f"$time needs an offset: {raw!r}")
            return t
        if tag == "$localtime":
            t = neo4j.time.Time.from_iso_format(str(raw))
            if t.tzinfo is not None:
                raise ValueCodecError(f"$localtime must not have an offset: {raw!r}")
            return t
        if tag == "$duration":
            if not isinstance(raw, dict) or set(raw) - {"months", "days", "seconds", "nanoseconds"}:
                raise ValueCodecError("$duration needs {months, days, seconds, nanoseconds}")
            parts = {k: raw.get(k, 0) for k in ("months", "days", "seconds", "nanoseconds")}
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in parts.values()):
                raise ValueCodecError("$duration parts must be integers")
            return neo4j.time.Duration(**parts)
        if tag == "$point":
            if not isinstance(raw, dict):
                raise ValueCodecError("$point needs {srid, coordinates}")
            srid, coords = raw.get("srid"), raw.get("coordinates")
            if (
                not isinstance(coords, list)
                or len(coords) not in (2, 3)
                or not all(isinstance(c, int | float) and not isinstance(c, bool) for c in coords)
            ):
                raise ValueCodecError("$point coordinates must be 2 or 3 numbers")
            if srid in _CARTESIAN:
                return neo4j.spatial.CartesianPoint(coords)
            if srid in _WGS84:
                return neo4j.spatial.WGS84Point(coords)
            raise ValueCodecError(f"unknown point srid {srid!r}")
        if tag == "$bytes":
            return base64.b64decode(str(raw), validate=True)
        if tag == "$float":
            if raw not in ("nan", "inf", "-inf"):
                raise ValueCodecError(f"$float is for nan/inf only: {raw!r}")
            return float(raw)
    except ValueCodecError:
        raise
    except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
        raise ValueCodecError(f"bad {tag} value {raw!r:.80}: {exc}") from exc
    raise ValueCodecError(f"unknown value tag {tag}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, neo4j.time.DateTime):
        return "datetime" if value.tzinfo is not None else "localdatetime"
    if isinstance(value, neo4j.time.Time):
        return "time" if value.tzinfo is not None else "localtime"
    if isinstance(value, neo4j.spatial.Point):
        return f"point{value.srid}"
    return type(value).__name__


def decode_property(value: Any) -> Any:
    """:func:`decode_value` for a whole property, checked the way Neo4j stores properties:
    a list holds no lists, no nulls, no byte arrays and one kind of value only."""
    decoded = decode_value(value)
    if isinstance(decoded, list):
        kinds = set()
        for item in decoded:
            if item is None or isinstance(item, list | bytes):
                raise ValueCodecError("a list property cannot hold nulls, lists or byte arrays")
            kinds.add(_kind(item))
        if len(kinds) > 1:
            raise ValueCodecError(f"a list property holds one kind of value, not {sorted(kinds)}")
    return decoded
