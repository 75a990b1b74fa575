"""Memento MCP (npm ``@gannonh/memento-mcp``; the data of tests/data/peers/ was written by 0.3.9 through its
MCP tools, with ``MOCK_EMBEDDINGS=true``: it ran without an embedding service).

Its graph: every version of an entity is a node ``(:Entity {id, name, entityType, observations: "<JSON list>",
version, createdAt, updatedAt, validFrom, validTo, changedBy, embedding?})`` (the current one has no
``validTo``); relation versions are ``(:Entity)-[:RELATES_TO {id, relationType, strength, confidence,
metadata: "<JSON>", version, createdAt, updatedAt, validFrom, validTo, changedBy}]->(:Entity)``, and one
version can hang on several versions of its ends.  Times are JavaScript milliseconds.

Mapping (docs/moving-over.md#moving-over-from-memento-mcp): the current version of an entity is the entity
(entityType, observations), dated by its ``createdAt``, each observation by the start (``validFrom``) of the
oldest version of the run that holds it; the current version of a relation is the relation (``relationType`` its type,
``strength`` its weight, its first ``createdAt`` its start; ``confidence`` and ``metadata``, which our
relations have no field for, go into its reasoning as text).  Older versions are not carried (counted in the
report).  Provenance: ``memento:<element id>``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from kg_neo4j.peers.common import Peer, PeerEntity, PeerRelation, Shape, pages, relation_type, source_of
from kg_neo4j.peers.dates import from_epoch_ms
from kg_neo4j.store.executor import Executor

SYSTEM = "memento"


def _observations(value: Any) -> list[str] | None:
    """Memento stores the list as a JSON string; None when it is not a list of strings."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _observed_at(current: dict[str, Any], older: list[dict[str, Any]]) -> dict[str, datetime]:
    """When each observation of the current version was made: the start (validFrom) of the oldest version of
    the unbroken run of versions, ending at the current one, that holds it."""
    began = from_epoch_ms(current["valid_from"])
    chain = sorted(
        older, key=lambda v: (_number(v["version"]) or 0.0, _number(v["valid_from"]) or 0.0), reverse=True
    )
    held = [(from_epoch_ms(v["valid_from"]), set(_observations(v["observations"]) or [])) for v in chain]
    out: dict[str, datetime] = {}
    for text in _observations(current["observations"]) or []:
        at = began
        for start, texts in held:
            if text not in texts:
                break
            at = start or at
        if at is not None:
            out[text] = at
    return out


async def entities(x: Executor, limit: int) -> AsyncIterator[list[PeerEntity]]:
    async for page in pages(x, "peers_memento_nodes", limit):
        # the page's older versions in one read: the times of its observations
        older: dict[str, list[dict[str, Any]]] = {}
        for v in await x.read("peers_memento_older_versions", names=[r["name"] for r in page]):
            older.setdefault(v["name"], []).append(v.data())
        out = []
        for r in page:
            src = source_of(SYSTEM, r["id"])
            obs = _observations(r["observations"])
            entity = PeerEntity(r["name"], r["type"], src, [(o, src) for o in obs or []])
            if obs is None:
                entity.error = "observations: not a JSON list of strings"
            else:
                entity.created_at = from_epoch_ms(r["created_at"]) or from_epoch_ms(r["valid_from"])
                entity.observed_at = _observed_at(r, older.get(r["name"], []))
            out.append(entity)
        yield out


def _reasoning(confidence: float | None, metadata: Any) -> str | None:
    parts = []
    if confidence is not None:
        parts.append(f"confidence: {confidence:g}")
    if isinstance(metadata, str) and metadata not in ("", "{}", "null"):
        parts.append(f"metadata: {metadata}")
    return "; ".join(parts) or None


async def relations(x: Executor, limit: int) -> AsyncIterator[list[PeerRelation]]:
    seen: set[str] = set()
    async for page in pages(x, "peers_memento_relationships", limit):
        out = []
        for r in page:
            key = r["version_id"] if isinstance(r["version_id"], str) else r["id"]
            if key in seen:
                continue  # the same version on another version of its ends
            seen.add(key)
            strength = _number(r["strength"])
            started = from_epoch_ms(r["created_at"]) or from_epoch_ms(r["valid_from"])
            out.append(
                PeerRelation(
                    from_=r["from"],
                    to=r["to"],
                    type=relation_type(r["type"]),
                    source=source_of(SYSTEM, r["id"]),
                    weight=1.0 if strength is None else strength,
                    valid_from=started,
                    created_at=started,
                    reasoning=_reasoning(_number(r["confidence"]), r["metadata"]),
                )
            )
        if out:
            yield out


async def relation_total(x: Executor) -> int:
    return int((await x.read("peers_memento_relationship_count"))[0]["n"])


async def not_carried(x: Executor) -> dict[str, int]:
    rec = (await x.read("peers_memento_versions"))[0]
    return {
        "older_entity_versions": int(rec["entity_versions"]),
        "older_relation_versions": int(rec["relation_versions"]),
    }


PEER = Peer(
    system=SYSTEM,
    shape=Shape(
        label="Entity",
        signature=("entityType",),
        required=("name", "observations"),
        relationship="RELATES_TO",
        relationship_props=("relationType",),
    ),
    entities=entities,
    relations=relations,
    relation_total=relation_total,
    not_carried=not_carried,
)
