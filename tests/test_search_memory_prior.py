"""search_memory's memory-score prior (docs/knowledge-model.md#search-score): among equally
relevant hits, the knowledge entity that is better remembered (higher level, fresher) ranks
first; non-knowledge entities get no prior."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kg_neo4j.clock import ManualClock
from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore

TEXT = "Always run the database migrations before deploying the billing service"

# Plain Cypher on purpose: the test plays the knowledge layer, which owns these labels and properties.
SET_MEMORY = """
MATCH (e:Entity {namespace: $ns, name: $name})
SET e:Knowledge, e.category = $category, e.stability = $stability, e.memory_level = $level,
    e.created_at = $created_at, e.last_access = $last_access
"""


def set_memory(sync_driver: Any, ns: str, name: str, **props: Any) -> None:
    sync_driver.execute_query(SET_MEMORY, ns=ns, name=name, **props)


async def test_stronger_memory_ranks_first(
    sync_driver: Any, semantic_store: GraphStore, clock: ManualClock
) -> None:
    store, ns = semantic_store, semantic_store.namespace
    # "kn-a" sorts first, so on a tie it would win; identical observations make the relevance equal.
    await store.create_entities(
        [EntityIn(name=n, entityType="rule", observations=[TEXT]) for n in ("kn-a", "kn-b")]
    )
    now = clock.now()
    question = "what must happen before deploying billing?"

    plain = await store.search_memory(question, limit=4)
    obs_hits = [h for h in plain.hits if h.observation == TEXT]
    assert [h.name for h in obs_hits] == ["kn-a", "kn-b"]
    assert obs_hits[0].score == obs_hits[1].score  # no knowledge yet: no prior, a tie

    # kn-a: a creative inference, level 1, untouched for 400 days (retention ~0);
    # kn-b: core fundamental knowledge (level 4, never decays).
    old = now - timedelta(days=400)
    set_memory(
        sync_driver, ns, "kn-a", category="creative", stability=3.0, level=1, created_at=old, last_access=None
    )
    set_memory(
        sync_driver,
        ns,
        "kn-b",
        category="fundamental",
        stability=365.0,
        level=4,
        created_at=old,
        last_access=now - timedelta(days=1),
    )
    result = await store.search_memory(question, limit=4)
    obs_hits = [h for h in result.hits if h.observation == TEXT]
    assert [h.name for h in obs_hits] == ["kn-b", "kn-a"]
    assert obs_hits[0].score > obs_hits[1].score
    # The answer keeps its shape: names to record access with, their entities.
    assert {e.name for e in result.entities} >= {"kn-a", "kn-b"}

    # An explicit prior from the caller overrides the memory score per name.
    overridden = await store.search_memory(question, limit=4, prior={"kn-a": 1.0, "kn-b": 0.0})
    assert [h.name for h in overridden.hits if h.observation == TEXT] == ["kn-a", "kn-b"]

    # A knowledge entity with a broken state gets no prior rather than failing the search.
    set_memory(
        sync_driver,
        ns,
        "kn-b",
        category="creative",
        stability=-1.0,
        level=9,
        created_at=old,
        last_access=None,
    )
    broken = await store.search_memory(question, limit=4)
    assert [h.name for h in broken.hits if h.observation == TEXT][0] == "kn-a"
