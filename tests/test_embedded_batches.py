"""create_entities with embeddings: the whole batch encoded in one call, then written in one
transaction with one time and every vector, against the real Neo4j and the real MiniLM."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.records import entity_text


def batch(n: int, prefix: str = "person") -> list[EntityIn]:
    return [
        EntityIn(
            name=f"{prefix}-{i:03d}",
            entityType="person",
            observations=[
                f"{prefix} {i} likes hiking in the {w} mountains" for w in ("north", "east", "south")
            ],
        )
        for i in range(n)
    ]


class CountingEmbedder:
    """The real embedder, counting encode calls and failing on the call numbered ``fail_on``."""

    def __init__(self, inner: Any, fail_on: int | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.calls = 0
        self.fail_on = fail_on

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("encoder failed on purpose")
        return self.inner.encode(texts)


async def test_batch_lands_whole_with_one_time_and_every_vector(
    semantic_store: GraphStore, embedder: Any, sync_driver: Any, namespace: str
) -> None:
    entities = batch(100)
    counting = CountingEmbedder(embedder)
    semantic_store.embedder = counting
    created = await semantic_store.create_entities(entities)

    assert [e.name for e in created] == [e.name for e in entities]
    assert counting.calls == 1  # one encode for the batch: observations and entity texts
    records, _, _ = sync_driver.execute_query(
        """MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o:Observation)
           RETURN e.name AS name, e.created_at AS e_at, e.embedding AS ev, o.seq AS seq, o.text AS text,
                  o.created_at AS o_at, o.embedding AS ov ORDER BY name, seq""",
        ns=namespace,
    )
    assert len(records) == 300
    assert len({r["e_at"] for r in records} | {r["o_at"] for r in records}) == 1  # one `now` for the call
    by_name: dict[str, list[str]] = {}
    for r in records:
        by_name.setdefault(r["name"], []).append(r["text"])
        assert r["ov"] is not None and len(r["ov"]) == embedder.dimension
        assert r["ev"] is not None and len(r["ev"]) == embedder.dimension
    assert by_name == {e.name: e.observations for e in entities}  # insertion order kept
    # the vectors are the model's own for those texts (spot check, first and last)
    for r in (records[0], records[-1]):
        expected = embedder.encode([r["text"]])[0]
        assert math.isclose(sum(a * b for a, b in zip(r["ov"], expected, strict=True)), 1.0, abs_tol=1e-4)
    first = records[0]
    expected_entity = embedder.encode([entity_text(first["name"], "person")])[0]
    assert math.isclose(
        sum(a * b for a, b in zip(first["ev"], expected_entity, strict=True)), 1.0, abs_tol=1e-4
    )


async def test_failing_encode_writes_nothing(
    semantic_store: GraphStore, embedder: Any, sync_driver: Any, namespace: str
) -> None:
    semantic_store.embedder = CountingEmbedder(embedder, fail_on=1)
    with pytest.raises(RuntimeError, match="on purpose"):
        await semantic_store.create_entities(batch(100))
    records, _, _ = sync_driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=namespace
    )
    assert records[0]["c"] == 0


async def test_batch_skips_existing_names(
    semantic_store: GraphStore, embedder: Any, sync_driver: Any, namespace: str
) -> None:
    await semantic_store.create_entities(batch(100)[40:60])
    created = await semantic_store.create_entities(batch(100))
    assert [e.name for e in created] == [e.name for e in batch(100) if not 40 <= int(e.name[-3:]) < 60]
    records, _, _ = sync_driver.execute_query(
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN count(DISTINCT e) AS e, count(o) AS o",
        ns=namespace,
    )
    assert (records[0]["e"], records[0]["o"]) == (100, 300)
