"""mcp-neo4j-memory (Neo4j Labs' memory server; the data of tests/data/peers/ was written by 0.4.5).

Its graph: ``(:Memory:<type> {name, type, observations: [text, ...]})`` nodes (``name`` is its key; the
type is also a label) and relationships between them typed by the relation, without properties.

Mapping (docs/moving-over.md#moving-over-from-mcp-neo4j-memory): a :Memory node is an entity (``type`` its
entityType, each of ``observations`` an observation), a relationship is a relation of its type (weight 1,
holding from the import on: the source records no time).  Provenance: ``mcp-neo4j-memory:<element id>``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from kg_neo4j.peers.common import Peer, PeerEntity, PeerRelation, Shape, pages, source_of
from kg_neo4j.store.executor import Executor

SYSTEM = "mcp-neo4j-memory"


async def entities(x: Executor, limit: int) -> AsyncIterator[list[PeerEntity]]:
    async for page in pages(x, "peers_memory_nodes", limit):
        out = []
        for r in page:
            src = source_of(SYSTEM, r["id"])
            obs = r["observations"] if isinstance(r["observations"], list) else []
            out.append(
                PeerEntity(
                    name=r["name"],
                    entity_type=r["type"],
                    source=src,
                    observations=[(str(o), src) for o in obs if isinstance(o, str)],
                )
            )
        yield out


async def relations(x: Executor, limit: int) -> AsyncIterator[list[PeerRelation]]:
    async for page in pages(x, "peers_memory_relationships", limit):
        yield [PeerRelation(r["from"], r["to"], r["type"], source_of(SYSTEM, r["id"])) for r in page]


async def relation_total(x: Executor) -> int:
    return int((await x.read("peers_memory_relationship_count"))[0]["n"])


async def not_carried(x: Executor) -> dict[str, int]:
    return {}


PEER = Peer(
    system=SYSTEM,
    shape=Shape(label="Memory", signature=("name",), required=("type",)),
    entities=entities,
    relations=relations,
    relation_total=relation_total,
    not_carried=not_carried,
)
