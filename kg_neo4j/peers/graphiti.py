"""Graphiti (graphiti-core; the data of tests/data/peers/ was written by 0.31.2's own node and edge classes).

Its graph: ``(:Entity:<label>... {uuid, name, group_id, summary, name_embedding, created_at, <attributes>})``,
``(:Entity)-[:RELATES_TO {uuid, name, fact, fact_embedding, episodes, valid_at, invalid_at, expired_at,
created_at, group_id}]->(:Entity)``, ``(:Episodic {content, ...})-[:MENTIONS]->(:Entity)``.

Mapping (docs/moving-over.md#moving-over-from-graphiti): an entity node is an entity, its type the first of
its labels beyond ``Entity`` (``Entity`` when it has none); its summary and each custom attribute
(``key: value``) are observations, dated by the node's ``created_at``.  A RELATES_TO edge is a relation typed by its ``name``, its ``fact`` the
relation's reasoning, ``valid_at`` / ``invalid_at`` its validity (a closed one is history), ``expired_at``
when it was closed.  Episodes are not carried (counted in the report).  Every group_id goes to the one
namespace.  Provenance: ``graphiti:<element id>``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from kg_neo4j.peers.common import Peer, PeerEntity, PeerRelation, Shape, pages, relation_type, source_of
from kg_neo4j.peers.dates import to_datetime
from kg_neo4j.store.executor import Executor

SYSTEM = "graphiti"
#: Properties graphiti-core writes on every entity node: not custom attributes (embeddings are left out too).
KNOWN = ["uuid", "name", "group_id", "summary", "created_at", "labels", "name_embedding"]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


async def entities(x: Executor, limit: int) -> AsyncIterator[list[PeerEntity]]:
    async for page in pages(x, "peers_graphiti_nodes", limit, known=KNOWN):
        out = []
        for r in page:
            src = source_of(SYSTEM, r["id"])
            labels = sorted(r["labels"])
            obs: list[tuple[str, str]] = []
            if isinstance(r["summary"], str) and r["summary"].strip():
                obs.append((r["summary"], src))
            if len(labels) > 1:
                obs.append((f"labels: {', '.join(labels)}", src))
            for key, value in sorted(r["attributes"]):
                if not key.endswith("_embedding") and value is not None:
                    obs.append((f"{key}: {_text(value)}", src))
            # the node's created_at dates the entity and every observation made of it
            entity = PeerEntity(r["name"], labels[0] if labels else "Entity", src, obs)
            entity.created_at = to_datetime(r["created_at"])
            out.append(entity)
        yield out


async def relations(x: Executor, limit: int) -> AsyncIterator[list[PeerRelation]]:
    async for page in pages(x, "peers_graphiti_relationships", limit):
        out = []
        for r in page:
            expired = to_datetime(r["expired_at"])
            until = to_datetime(r["invalid_at"]) or expired  # expired without an end: it ended then
            out.append(
                PeerRelation(
                    from_=r["from"],
                    to=r["to"],
                    type=relation_type(r["name"]),
                    source=source_of(SYSTEM, r["id"]),
                    valid_from=to_datetime(r["valid_at"]),
                    valid_until=until,
                    closed_at=expired if until is not None else None,
                    created_at=to_datetime(r["created_at"]),
                    reasoning=r["fact"] if isinstance(r["fact"], str) and r["fact"].strip() else None,
                )
            )
        yield out


async def relation_total(x: Executor) -> int:
    return int((await x.read("peers_graphiti_relationship_count"))[0]["n"])


async def not_carried(x: Executor) -> dict[str, int]:
    rec = (await x.read("peers_graphiti_episodes"))[0]
    return {"episodes": int(rec["episodes"]), "mentions": int(rec["mentions"])}


PEER = Peer(
    system=SYSTEM,
    shape=Shape(
        label="Entity",
        signature=("uuid", "group_id"),
        required=("name",),
        relationship="RELATES_TO",
        relationship_props=("uuid", "name", "fact"),
    ),
    entities=entities,
    relations=relations,
    relation_total=relation_total,
    not_carried=not_carried,
)
