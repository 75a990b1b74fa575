"""Writes a small, varied Graphiti graph through graphiti-core's own classes (run by capture.py with the
Python of graphiti-core's throwaway venv, never kg-neo4j's: CI does not install graphiti-core).

No LLM is reachable here, so nothing is *extracted*: the nodes and edges an extraction would produce are
built by hand with graphiti-core's own ``EntityNode``, ``EntityEdge``, ``EpisodicNode`` and
``EpisodicEdge`` and saved with their ``.save(driver)``, which is the code that writes every Graphiti
graph.  Embeddings come from a deterministic local embedder (a hash of the text, 8 dimensions).

    python graphiti_writer.py URI USER PASSWORD DATABASE
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.edges import EntityEdge, EpisodicEdge
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode

GROUP = "capture"
OTHER_GROUP = "capture-other"


class HashEmbedder(EmbedderClient):  # type: ignore[misc]  # graphiti-core: only in its own venv
    """Deterministic and local: 8 floats from the text's SHA-256 (no model, no network)."""

    async def create(
        self, input_data: str | list[str] | Iterable[int] | Iterable[Iterable[int]]
    ) -> list[float]:
        text = input_data[0] if isinstance(input_data, list) else str(input_data)
        digest = hashlib.sha256(str(text).encode()).digest()
        return [round(b / 255.0, 4) for b in digest[:8]]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        return [await self.create([t]) for t in input_data_list]


def at(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


async def main(uri: str, user: str, password: str, database: str) -> None:
    driver = Neo4jDriver(uri, user, password, database=database)
    embedder = HashEmbedder()
    created = at(2025, 3, 1)

    def entity(
        name: str, labels: list[str], summary: str, group: str = GROUP, **attributes: object
    ) -> EntityNode:
        return EntityNode(
            name=name,
            labels=labels,
            summary=summary,
            group_id=group,
            created_at=created,
            attributes=attributes,
        )

    alice = entity("Alice Smith", ["Person"], "Alice Smith is a software engineer who moved to Munich.")
    acme = entity("Acme Corp", ["Organization"], "Acme Corp builds rockets.", founded="1999")
    berlin = entity("Berlin", [], "Capital of Germany.")
    munich = entity("Munich", ["Location"], "")
    apollo = entity("Project Apollo", ["Project"], "Acme's reusable launcher project.", status="active")
    bob = entity("Bob Jones", ["Person"], "Bob is Alice's manager.")
    carol = entity("Carol White", ["Person"], "Carol works in another team.", group=OTHER_GROUP)
    nodes = [alice, acme, berlin, munich, apollo, bob, carol]
    for n in nodes:
        await n.generate_name_embedding(embedder)
        await n.save(driver)

    ep1 = EpisodicNode(
        name="chat 1",
        group_id=GROUP,
        source=EpisodeType.message,
        source_description="chat with Alice",
        content="Alice: I live in Berlin and work at Acme on Project Apollo. Bob is my manager.",
        valid_at=at(2022, 5, 1),
        created_at=created,
    )
    ep2 = EpisodicNode(
        name="chat 2",
        group_id=GROUP,
        source=EpisodeType.text,
        source_description="note",
        content="Alice moved to Munich in June 2023.",
        valid_at=at(2023, 6, 1),
        created_at=created,
    )

    def edge(
        src: EntityNode,
        dst: EntityNode,
        name: str,
        fact: str,
        episodes: list[EpisodicNode],
        **times: datetime,
    ) -> EntityEdge:
        return EntityEdge(
            source_node_uuid=src.uuid,
            target_node_uuid=dst.uuid,
            group_id=src.group_id,
            name=name,
            fact=fact,
            episodes=[e.uuid for e in episodes],
            created_at=created,
            **times,
        )

    edges = [
        edge(alice, acme, "WORKS_AT", "Alice works at Acme Corp.", [ep1], valid_at=at(2021, 1, 1)),
        edge(
            alice,
            berlin,
            "LIVES_IN",
            "Alice lived in Berlin.",
            [ep1, ep2],
            valid_at=at(2019, 4, 1),
            invalid_at=at(2023, 6, 1),
            expired_at=at(2025, 3, 2),
        ),
        edge(alice, munich, "LIVES_IN", "Alice lives in Munich.", [ep2], valid_at=at(2023, 6, 1)),
        edge(alice, apollo, "WORKS_ON", "Alice works on Project Apollo.", [ep1]),
        edge(bob, alice, "MANAGES", "Bob manages Alice.", [ep1], valid_at=at(2022, 1, 1)),
        edge(acme, apollo, "RUNS", "Acme Corp runs Project Apollo.", [ep1]),
        # an edge name as an LLM may write it (spaces, lower case): made a relation type as it is
        edge(bob, acme, "is employed by", "Bob is employed by Acme Corp.", [ep1]),
    ]
    for e in edges:
        await e.generate_embedding(embedder)
        await e.save(driver)
        for ep in (ep1, ep2):
            if ep.uuid in e.episodes and e.uuid not in ep.entity_edges:
                ep.entity_edges.append(e.uuid)

    for ep in (ep1, ep2):
        await ep.save(driver)
    mentions = [
        (ep1, alice),
        (ep1, acme),
        (ep1, berlin),
        (ep1, apollo),
        (ep1, bob),
        (ep2, alice),
        (ep2, munich),
    ]
    for ep, n in mentions:
        await EpisodicEdge(
            source_node_uuid=ep.uuid, target_node_uuid=n.uuid, group_id=GROUP, created_at=created
        ).save(driver)
    await driver.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
