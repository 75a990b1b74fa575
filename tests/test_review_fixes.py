"""Regressions found in review: races with placeholder clean-up, a user relation named
HAS_OBSERVATION, paged asOf reads across a placeholder that later became an entity,
relations that have already ended, and closing that never extends validity."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import EntityIn, ObservationDelete, RelationIn, RelationInvalidate
from kg_neo4j.store import GraphStore


def rel(a: str, b: str, t: str = "knows", **kw: object) -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": t, **kw})


async def test_create_racing_placeholder_cleanup_is_retried(driver, neo4j_info, namespace) -> None:  # type: ignore[no-untyped-def]
    a = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    b = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    await a.create_entities([EntityIn(name=n, entityType="t", observations=[]) for n in ("A", "B")])
    for i in range(25):
        await a.create_relations([rel("A", f"P{i}")])
        await asyncio.gather(a.delete_relations([rel("A", f"P{i}")]), b.create_relations([rel("B", f"P{i}")]))
    records, _, _ = await driver.execute_query(
        "MATCH (x:KgNode {namespace: $ns})-[r]->(p:KgNode) WHERE p.name STARTS WITH 'P' "
        "RETURN x.name AS x, count(r) AS n", ns=namespace)
    assert {r["x"]: r["n"] for r in records} == {"B": 25}


async def test_user_relation_named_has_observation(semantic_store: GraphStore) -> None:
    s = semantic_store
    await s.create_entities([EntityIn(name="Owner", entityType="t", observations=[]),
                             EntityIn(name="Zephyrine", entityType="t", observations=["a rare mineral"])])
    await s.create_relations([rel("Owner", "Zephyrine", "HAS_OBSERVATION")])
    hits = (await s.search_memory("Zephyrine", limit=5)).hits
    assert all(h.name == "Zephyrine" or h.observation is None for h in hits)
    assert hits[0].name == "Zephyrine"
    graph = await s.open_nodes(["Owner"])
    assert [e.observations for e in graph.entities] == [[]]
    assert [(r.from_, r.to, r.relationType) for r in graph.relations] == [("Owner", "Zephyrine", "HAS_OBSERVATION")]


async def test_paged_as_of_keeps_relations_of_later_entities(store: GraphStore, clock) -> None:  # type: ignore[no-untyped-def]
    await store.create_entities([EntityIn(name="A", entityType="t", observations=[])])
    await store.create_relations([rel("B", "A"), rel("C", "D")])  # B, C, D are placeholders now
    t0 = clock.now()
    clock.advance(days=1)
    await store.create_entities([EntityIn(name=n, entityType="t", observations=[]) for n in ("B", "C")])
    whole = await store.read_graph(as_of=t0)
    pages, cursor = [], None
    while True:
        page = await store.read_graph(limit=1, cursor=cursor, as_of=t0)
        pages.extend((r.from_, r.to) for r in page.relations)
        cursor = page.nextCursor
        if cursor is None:
            break
    assert sorted(pages) == sorted((r.from_, r.to) for r in whole.relations) == [("B", "A"), ("C", "D")]


async def test_relation_that_already_ended_is_refused(store: GraphStore, clock) -> None:  # type: ignore[no-untyped-def]
    past = clock.now() - timedelta(days=1)
    with pytest.raises(ValidationError, match="already ended"):
        await store.create_relations([rel("A", "B", validFrom=(past - timedelta(days=9)).isoformat(),
                                          validUntil=past.isoformat())])
    assert (await store.read_graph()).relations == []


async def test_invalidate_never_extends_validity(store: GraphStore, clock) -> None:  # type: ignore[no-untyped-def]
    end = clock.now() + timedelta(days=1)
    await store.create_relations([rel("A", "B", validUntil=end.isoformat())])
    changed = await store.invalidate_relations([RelationInvalidate.model_validate(
        {"from": "A", "to": "B", "relationType": "knows",
         "validUntil": (clock.now() + timedelta(days=30)).isoformat()})])
    assert changed[0].validUntil == end.isoformat()


async def test_delete_observations_total_is_capped(store: GraphStore) -> None:
    many = [ObservationDelete(entityName=f"E{i}", observations=[str(j) for j in range(60_000)]) for i in range(2)]
    with pytest.raises(ValidationError, match="at most 100000"):
        await store.delete_observations(many)
