"""Eight concurrent writers on one namespace, each with its own driver and GraphStore (so their
transactions really run side by side in Neo4j), writing overlapping entities, relations and
observations in shuffled order and batches.  Afterwards: one node per name, one relation per
(from, to, type), every write reported as "created" by exactly one writer, and nothing lost.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from neo4j import AsyncGraphDatabase

from kg_neo4j.models import EntityIn, ObservationAdd, RelationIn
from kg_neo4j.store import GraphStore

WRITERS = 8
N_ENTITIES = 200
N_RELATIONS = 300
ENTITY_BATCH = 20
RELATION_BATCH = 25
REL_TYPES = ["knows", "likes", "works_with"]


def entity_name(i: int) -> str:
    return f"E{i:03d}"


def all_entities() -> list[EntityIn]:
    return [
        EntityIn(name=entity_name(i), entityType="node", observations=[f"born {i}", "shared fact"])
        for i in range(N_ENTITIES)
    ]


def all_relations() -> list[RelationIn]:
    rng = random.Random(42)
    keys: set[tuple[str, str, str]] = set()
    while len(keys) < N_RELATIONS:
        a, b = rng.sample(range(N_ENTITIES), 2)
        keys.add((entity_name(a), entity_name(b), rng.choice(REL_TYPES)))
    return [RelationIn.model_validate({"from": a, "to": b, "relationType": t}) for a, b, t in sorted(keys)]


def batches(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@pytest_asyncio.fixture
async def stores(neo4j_info, namespace) -> AsyncIterator[list[GraphStore]]:
    drivers = [
        AsyncGraphDatabase.driver(
            neo4j_info.uri, auth=(neo4j_info.username, neo4j_info.password), notifications_min_severity="OFF"
        )
        for _ in range(WRITERS)
    ]
    try:
        for d in drivers:
            await d.verify_connectivity()
        yield [GraphStore(d, database=neo4j_info.database, namespace=namespace) for d in drivers]
    finally:
        for d in drivers:
            await d.close()


async def _count(store: GraphStore, query: str) -> list[Any]:
    records, _, _ = await store.driver.execute_query(query, ns=store.namespace, database_=store.database)
    return records


async def test_eight_writers_same_entities_and_relations(stores):
    entities = all_entities()
    relations = all_relations()
    created_entities: Counter[str] = Counter()
    created_relations: Counter[tuple[str, str, str]] = Counter()

    async def writer(idx: int, store: GraphStore) -> None:
        rng = random.Random(idx)
        ents = entities[:]
        rels = relations[:]
        rng.shuffle(ents)
        rng.shuffle(rels)
        # entity and relation batches interleaved at random: a relation often arrives before its
        # entities (placeholder), and its entity is then created concurrently by other writers
        ops: list[tuple[str, list[Any]]] = [("e", b) for b in batches(ents, ENTITY_BATCH)] + [
            ("r", b) for b in batches(rels, RELATION_BATCH)
        ]
        rng.shuffle(ops)
        for kind, batch in ops:
            if kind == "e":
                for e in await store.create_entities(batch):
                    created_entities[e.name] += 1
            else:
                for r in await store.create_relations(batch):
                    created_relations[(r.from_, r.to, r.relationType)] += 1

    await asyncio.gather(*(writer(i, s) for i, s in enumerate(stores)))
    store = stores[0]
    problems: dict[str, Any] = {}  # every check is made; all that fail are reported together

    # exactly one node per name (entity or leftover placeholder), and every one is a real entity
    rows = await _count(
        store,
        "MATCH (n:KgNode {namespace: $ns}) WHERE n.name IS NOT NULL "
        "RETURN n.name AS name, count(*) AS c, sum(CASE WHEN n:Entity THEN 1 ELSE 0 END) AS e",
    )
    per_name = {r["name"]: (r["c"], r["e"]) for r in rows}
    if sorted(per_name) != sorted(entity_name(i) for i in range(N_ENTITIES)):
        problems["node names lost or invented"] = sorted(
            set(per_name) ^ {entity_name(i) for i in range(N_ENTITIES)}
        )
    if bad := {n: v for n, v in per_name.items() if v != (1, 1)}:
        problems["(nodes, entities) per name != (1, 1)"] = bad

    # exactly one relationship per (from, to, type)
    rows = await _count(
        store,
        "MATCH (a:KgNode {namespace: $ns})-[r]->(b:KgNode) "
        "RETURN a.name AS a, b.name AS b, type(r) AS t, count(*) AS c",
    )
    per_rel = {(r["a"], r["b"], r["t"]): r["c"] for r in rows}
    expected_rels = {(r.from_, r.to, r.relationType) for r in relations}
    if set(per_rel) != expected_rels:
        problems["relations lost or invented"] = sorted(set(per_rel) ^ expected_rels)
    if bad := {k: c for k, c in per_rel.items() if c != 1}:
        problems[f"duplicated relationships ({len(bad)})"] = bad

    # each entity's observations exactly once each, in creation order
    rows = await _count(
        store,
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o:Observation) "
        "RETURN e.name AS name, o.text AS text, count(*) AS c",
    )
    if bad := {(r["name"], r["text"]): r["c"] for r in rows if r["c"] != 1}:
        problems[f"duplicated observations ({len(bad)})"] = bad
    graph = await store.read_graph()
    if bad := {
        e.name: e.observations
        for e in graph.entities
        if e.observations != ["born " + str(int(e.name[1:])), "shared fact"]
    }:
        problems["entities read back with other observations"] = bad
    if sorted((r.from_, r.to, r.relationType) for r in graph.relations) != sorted(expected_rels):
        problems["read_graph relations differ from the written set"] = len(graph.relations)

    # every entity and relation was reported created by exactly one writer
    if bad := {n: c for n, c in created_entities.items() if c != 1}:
        problems[f"entities reported created by several writers ({len(bad)})"] = bad
    if sorted(created_entities) != sorted(entity_name(i) for i in range(N_ENTITIES)):
        problems["entities never reported created"] = sorted(
            {entity_name(i) for i in range(N_ENTITIES)} - set(created_entities)
        )
    if bad := {k: c for k, c in created_relations.items() if c != 1}:
        problems[f"relations reported created by several writers ({len(bad)})"] = bad
    if set(created_relations) != expected_rels:
        problems["relations never reported created"] = sorted(expected_rels - set(created_relations))

    assert problems == {}, "\n".join(f"{k}: {str(v)[:400]}" for k, v in problems.items())


async def test_eight_writers_adding_observations_lose_nothing_and_duplicate_nothing(stores):
    n = 40
    names = [entity_name(i) for i in range(n)]
    await stores[0].create_entities(
        [EntityIn(name=x, entityType="node", observations=["seed"]) for x in names]
    )
    added: Counter[tuple[str, str]] = Counter()

    async def writer(idx: int, store: GraphStore) -> None:
        rng = random.Random(100 + idx)
        order = names[:]
        rng.shuffle(order)
        for chunk in batches(order, 8):
            # every writer adds the same two shared texts and one text of its own to each entity
            items = [
                ObservationAdd(entityName=x, contents=["shared A", f"writer {idx}", "shared B"])
                for x in chunk
            ]
            for res in await store.add_observations(items):
                for text in res.addedObservations:
                    added[(res.entityName, text)] += 1

    await asyncio.gather(*(writer(i, s) for i, s in enumerate(stores)))

    rows = await _count(
        stores[0],
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o:Observation) "
        "RETURN e.name AS name, o.text AS text, count(*) AS c",
    )
    stored = {(r["name"], r["text"]): r["c"] for r in rows}
    expected_texts = {"seed", "shared A", "shared B", *(f"writer {i}" for i in range(WRITERS))}
    assert set(stored) == {(x, t) for x in names for t in expected_texts}, "observations lost"
    assert {k: c for k, c in stored.items() if c != 1} == {}, "duplicated observations"
    # every text was reported as added by exactly one writer
    assert {k: c for k, c in added.items() if c != 1} == {}, "an observation reported added twice"
    # observation positions (seq) stay distinct per entity, so insertion order is well defined
    rows = await _count(
        stores[0],
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o:Observation) "
        "WITH e, o.seq AS seq, count(*) AS c WHERE c > 1 RETURN e.name AS name, seq, c",
    )
    assert [dict(r) for r in rows] == [], "two observations share a position"
    graph = await stores[0].read_graph()
    for e in graph.entities:
        assert e.observations[0] == "seed", e.name
        assert sorted(e.observations) == sorted(expected_texts), e.name
