"""The store's shared record helpers: Neo4j values to answer fields, the relation of a row, batch
de-duplication, the paging cursors (read_graph's, entity_history's, find_duplicates'), the text an entity's own embedding encodes."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import neo4j

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import (
    MAX_OBSERVATIONS_PER_CALL,
    Entity,
    KnowledgeGraph,
    KnowledgeItem,
    Relation,
    RelationFull,
    RelationIn,
)


def iso(value: Any) -> str | None:
    """A Neo4j (or Python) date-time as ISO 8601 text; None stays None."""
    if value is None:
        return None
    if hasattr(value, "to_native"):
        value = value.to_native()
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def dedupe(items: Iterable[str]) -> list[str]:
    """``items`` once each, in first-seen order."""
    return list(dict.fromkeys(items))


def relation(r: Any) -> RelationFull:
    """The full relation of a statement's relation row (weight 1.0 when it has none)."""
    return RelationFull(
        **{"from": r["from"]},
        to=r["to"],
        relationType=r["relationType"],
        weight=r["weight"] if r.get("weight") is not None else 1.0,
        validFrom=iso(r.get("validFrom")),
        validUntil=iso(r.get("validUntil")),
        createdAt=iso(r.get("createdAt")),
        reasoning=r.get("reasoning"),
        source=r.get("source"),
    )


def graph_of(record: neo4j.Record) -> KnowledgeGraph:
    """The graph of a statement returning ``entities`` and ``relations`` lists."""
    return KnowledgeGraph(
        entities=[Entity(**e) for e in record["entities"]],
        relations=[relation(r) for r in record["relations"]],
    )


def dedupe_rel_rows(relations: Sequence[RelationIn | Relation]) -> list[dict[str, str]]:
    """One ``{from, to, relationType}`` row per relation key, in first-seen order."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in relations:
        key = (r.from_, r.to, r.relationType)
        seen.setdefault(key, {"from": key[0], "to": key[1], "relationType": key[2]})
    return list(seen.values())


def entity_text(name: str, entity_type: str) -> str:
    """What an entity's own embedding encodes."""
    return f"{name} ({entity_type})" if entity_type else name


def check_observation_total(n: int) -> None:
    if n > MAX_OBSERVATIONS_PER_CALL:
        raise ValidationError(
            f"{n} observations in one call; at most {MAX_OBSERVATIONS_PER_CALL} are accepted "
            "(split the batch); nothing was written"
        )


# Paging cursors are opaque to clients: unpadded base64url of a small JSON object saying where the next
# page starts (read_graph: after a name; entity_history, find_duplicates: an offset).  A cursor that is not
# one of ours is an error naming the field, never a silent first page.


def _pack(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _unpack(cursor: str, key: str, returned_by: str) -> Any:
    try:
        return json.loads(base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode()))[key]
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise _not_ours(returned_by) from exc


def _not_ours(returned_by: str) -> ValidationError:
    return ValidationError(
        f"cursor is not one {returned_by} returned; omit it to start from the beginning", field="cursor"
    )


def encode_cursor(after: str) -> str:
    return _pack({"after": after})


def decode_cursor(cursor: str) -> str:
    after = _unpack(cursor, "after", "this server")
    if not isinstance(after, str):
        raise _not_ours("this server")
    return after


def encode_offset(offset: int, *, key: str = "offset") -> str:
    """A cursor for the page that starts ``offset`` rows in (``key``: the JSON key, kept per tool so that
    the cursors already handed out stay valid)."""
    return _pack({key: offset})


def decode_offset(cursor: str, *, key: str = "offset", returned_by: str = "this server") -> int:
    """The offset of a cursor :func:`encode_offset` made with ``key``; else a ValidationError on the field
    ``cursor`` saying it is not one ``returned_by`` returned."""
    offset = _unpack(cursor, key, returned_by)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise _not_ours(returned_by)
    return offset


def knowledge_item(r: dict[str, Any]) -> KnowledgeItem:
    """A knowledge entity's row as the answer's item."""
    return KnowledgeItem(
        name=r["name"],
        type=r["type"],
        content=r["content"],
        trust=r["trust"],
        category=r["category"],
        quote=r.get("quote"),
        source=r.get("source"),
        stability=round(float(r["stability"]), 6),
        memoryLevel=int(r["memory_level"]),
        accessCount=int(r["access_count"] or 0),
        sessions=int(r["sessions"]),
        retention=round(float(r["retention"]), 6),
        lastAccess=iso(r.get("last_access")),
        createdAt=iso(r.get("created_at")),
        updatedAt=iso(r.get("updated_at")),
        expired=bool(r.get("expired")),
        expiredAt=iso(r.get("expired_at")),
        expiredReason=r.get("expired_reason"),
    )
