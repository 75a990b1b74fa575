"""Helpers for the store-level search tests (real Neo4j, the real model; not a test module itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_neo4j.fusion import FusionWeights
from kg_neo4j.models import EntityIn, ObservationAdd
from kg_neo4j.store import GraphStore


def with_fusion(store: GraphStore, **weights: Any) -> GraphStore:
    """The same namespace, clock and model, searched with other fusion weights."""
    return GraphStore(
        store.driver,
        database=store.database,
        namespace=store.namespace,
        clock=store.clock,
        embedder=store.embedder,
        fusion=FusionWeights(**weights),
    )


async def write_dialogue(store: GraphStore, dialogue: Sequence[tuple[str, str]]) -> None:
    """One ``person`` entity per speaker, then each line an observation of its speaker, in order, in
    one add_observations call (a chat stored at the end of its day)."""
    speakers = list(dict.fromkeys(who for who, _ in dialogue))
    await store.create_entities([EntityIn(name=n, entityType="person", observations=[]) for n in speakers])
    await store.add_observations([ObservationAdd(entityName=who, contents=[text]) for who, text in dialogue])
