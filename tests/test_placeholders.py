"""Relations to names that are not entities (docs/reference-server.md#no-referential-integrity), store level.

The far end of such a relation is kept as a placeholder: never listed as an entity by any read,
while the relation itself is listed like any other; creating an entity of that name turns it into
a real entity that keeps its relations; deleting the name removes its relations.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kg_neo4j.errors import NotFoundError
from kg_neo4j.models import EntityIn, KnowledgeGraph, ObservationAdd, ObservationDelete, RelationIn
from kg_neo4j.store import GraphStore


def E(name: str, entity_type: str = "person", obs: list[str] | None = None) -> EntityIn:
    return EntityIn(name=name, entityType=entity_type, observations=obs or [])


def R(a: str, b: str, rtype: str = "knows") -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": rtype})


def ents(graph: KnowledgeGraph) -> list[str]:
    return sorted(e.name for e in graph.entities)


def keys(graph: Any) -> list[tuple[str, str, str]]:
    rels = graph.relations if isinstance(graph, KnowledgeGraph) else graph
    return sorted((r.from_, r.to, r.relationType) for r in rels)


async def node_names(driver: Any, database: str, namespace: str) -> list[str]:
    """Every named node (entity or placeholder) the namespace holds, straight from Neo4j."""
    records, _, _ = await driver.execute_query(
        "MATCH (n:KgNode {namespace: $ns}) WHERE n.name IS NOT NULL RETURN n.name AS name ORDER BY name",
        ns=namespace,
        database_=database,
    )
    return [r["name"] for r in records]


async def test_placeholder_is_listed_by_no_read_but_its_relations_are(store: GraphStore):
    await store.create_entities([E("Alice"), E("Bob")])
    created = await store.create_relations(
        [R("Alice", "Ghost", "knows"), R("Phantom", "Alice", "haunts"), R("Ghost", "Phantom", "befriends")]
    )
    # relations to unknown names are created (and returned) like any other
    assert keys(created) == [
        ("Alice", "Ghost", "knows"),
        ("Ghost", "Phantom", "befriends"),
        ("Phantom", "Alice", "haunts"),
    ]
    all_rels = keys(created)

    # read_graph: placeholders are not entities; every relation is listed, even placeholder-to-placeholder
    graph = await store.read_graph()
    assert ents(graph) == ["Alice", "Bob"]
    assert keys(graph) == all_rels

    # search_nodes: a match on the entity lists its relations, placeholder ends included
    found = await store.search_nodes("alice")
    assert ents(found) == ["Alice"]
    assert keys(found) == [("Alice", "Ghost", "knows"), ("Phantom", "Alice", "haunts")]
    # ... and a query matching only a placeholder's name finds no entity
    assert ents(await store.search_nodes("ghost")) == []
    assert ents(await store.search_nodes("phantom")) == []

    # open_nodes: the entity and its relations; the placeholder's name opens no entity
    opened = await store.open_nodes(["Alice"])
    assert ents(opened) == ["Alice"]
    assert keys(opened) == [("Alice", "Ghost", "knows"), ("Phantom", "Alice", "haunts")]
    assert ents(await store.open_nodes(["Ghost"])) == []
    opened = await store.open_nodes(["Ghost", "Bob"])
    assert ents(opened) == ["Bob"]

    # a placeholder is not an entity for add_observations either (the reference's error),
    # and nothing of that call is written
    with pytest.raises(NotFoundError, match="^Entity with name Ghost not found$"):
        await store.add_observations(
            [
                ObservationAdd(entityName="Bob", contents=["x"]),
                ObservationAdd(entityName="Ghost", contents=["boo"]),
            ]
        )
    assert (await store.open_nodes(["Bob"])).entities[0].observations == []
    # delete_observations on it is silent
    await store.delete_observations([ObservationDelete(entityName="Ghost", observations=["boo"])])
    assert ents(await store.read_graph()) == ["Alice", "Bob"]


async def test_paged_read_graph_lists_every_relation_once_placeholder_ends_included(store: GraphStore):
    """Paging is the documented way to read a graph too big for one answer, so paging to the end
    must give what unpaged read_graph gives: every entity once and every relation once, including
    one whose two ends are both placeholders."""
    await store.create_entities([E("Alice"), E("Bob")])
    await store.create_relations(
        [R("Alice", "Ghost", "knows"), R("Phantom", "Alice", "haunts"), R("Ghost", "Phantom", "befriends")]
    )
    unpaged = await store.read_graph()
    all_rels = keys(unpaged)
    assert ("Ghost", "Phantom", "befriends") in all_rels

    seen_entities: list[str] = []
    seen_relations: list[tuple[str, str, str]] = []
    cursor = None
    for _ in range(10):
        page = await store.read_graph(limit=1, cursor=cursor)
        seen_entities += [e.name for e in page.entities]
        seen_relations += keys(page)
        cursor = page.nextCursor
        if cursor is None:
            break
    assert cursor is None, "paging did not end"
    assert sorted(seen_entities) == ["Alice", "Bob"]
    assert sorted(seen_relations) == sorted(set(seen_relations)), "a relation was listed twice"
    assert sorted(seen_relations) == all_rels


async def test_creating_a_placeholder_name_makes_a_real_entity_that_keeps_its_relations(store: GraphStore):
    await store.create_entities([E("Alice")])
    await store.create_relations([R("Alice", "Ghost", "knows"), R("Ghost", "Alice", "haunts")])

    created = await store.create_entities([E("Ghost", "spirit", ["says boo"]), E("Alice", "robot")])
    assert [e.model_dump() for e in created] == [
        {"name": "Ghost", "entityType": "spirit", "observations": ["says boo"]}
    ], "Ghost is created, Alice skipped"

    graph = await store.read_graph()
    assert ents(graph) == ["Alice", "Ghost"]
    assert {e.name: e.entityType for e in graph.entities} == {"Alice": "person", "Ghost": "spirit"}
    assert keys(graph) == [("Alice", "Ghost", "knows"), ("Ghost", "Alice", "haunts")]

    # it now behaves as an entity everywhere
    opened = await store.open_nodes(["Ghost"])
    assert [e.model_dump() for e in opened.entities] == [
        {"name": "Ghost", "entityType": "spirit", "observations": ["says boo"]}
    ]
    assert keys(opened) == [("Alice", "Ghost", "knows"), ("Ghost", "Alice", "haunts")]
    found = await store.search_nodes("SPIRIT")
    assert ents(found) == ["Ghost"]
    assert keys(found) == [("Alice", "Ghost", "knows"), ("Ghost", "Alice", "haunts")]
    added = await store.add_observations([ObservationAdd(entityName="Ghost", contents=["rattles chains"])])
    assert added[0].addedObservations == ["rattles chains"]
    assert (await store.open_nodes(["Ghost"])).entities[0].observations == ["says boo", "rattles chains"]

    # and it is created only once
    assert await store.create_entities([E("Ghost", "spirit")]) == []
    # the relations were not duplicated by the conversion
    assert await store.create_relations([R("Alice", "Ghost", "knows")]) == []


async def test_deleting_a_placeholder_name_removes_its_relations(
    store: GraphStore, driver, neo4j_info, namespace
):
    await store.create_entities([E("Alice"), E("Bob")])
    await store.create_relations(
        [R("Alice", "Ghost", "knows"), R("Ghost", "Bob", "haunts"), R("Alice", "Bob", "likes")]
    )
    assert await node_names(driver, neo4j_info.database, namespace) == ["Alice", "Bob", "Ghost"]

    await store.delete_entities(["Ghost"])
    graph = await store.read_graph()
    assert ents(graph) == ["Alice", "Bob"], "the real entities stay"
    assert keys(graph) == [("Alice", "Bob", "likes")], "both relations of the placeholder are gone"
    assert await node_names(driver, neo4j_info.database, namespace) == ["Alice", "Bob"]

    # the name is free again: creating it gives a fresh entity without the old relations
    assert [e.name for e in await store.create_entities([E("Ghost")])] == ["Ghost"]
    assert keys(await store.open_nodes(["Ghost"])) == []


async def test_placeholders_left_without_relations_do_not_linger(
    store: GraphStore, driver, neo4j_info, namespace
):
    await store.create_entities([E("Alice")])
    await store.create_relations([R("Alice", "Ghost", "knows"), R("Alice", "Phantom", "knows")])

    # deleting the entity at the other end removes the relation and the now unconnected placeholder
    await store.delete_relations([R("Alice", "Phantom", "knows")])
    assert await node_names(driver, neo4j_info.database, namespace) == ["Alice", "Ghost"]
    await store.delete_entities(["Alice"])
    assert await node_names(driver, neo4j_info.database, namespace) == []
    assert (await store.read_graph()).model_dump(exclude_none=True) == {"entities": [], "relations": []}

    # and a later entity of that name starts clean
    await store.create_entities([E("Ghost")])
    assert keys(await store.read_graph()) == []


# --- placeholders under concurrency and in the past --------------------------------------------


async def test_create_relations_racing_a_placeholder_cleanup_is_retried(
    driver, neo4j_info, namespace
) -> None:  # type: ignore[no-untyped-def]
    a = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    b = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    await a.create_entities([E(n, "t") for n in ("A", "B")])
    for i in range(25):
        await a.create_relations([R("A", f"P{i}")])
        await asyncio.gather(a.delete_relations([R("A", f"P{i}")]), b.create_relations([R("B", f"P{i}")]))
    records, _, _ = await driver.execute_query(
        "MATCH (x:KgNode {namespace: $ns})-[r]->(p:KgNode) WHERE p.name STARTS WITH 'P' "
        "RETURN x.name AS x, count(r) AS n",
        ns=namespace,
    )
    assert {r["x"]: r["n"] for r in records} == {"B": 25}


async def test_paged_as_of_read_keeps_relations_of_placeholders_that_became_entities_later(
    store: GraphStore, clock
) -> None:  # type: ignore[no-untyped-def]
    await store.create_entities([E("A", "t")])
    await store.create_relations([R("B", "A"), R("C", "D")])  # B, C, D are placeholders now
    t0 = clock.now()
    clock.advance(days=1)
    await store.create_entities([E(n, "t") for n in ("B", "C")])
    whole = await store.read_graph(as_of=t0)
    pages, cursor = [], None
    while True:
        page = await store.read_graph(limit=1, cursor=cursor, as_of=t0)
        pages.extend((r.from_, r.to) for r in page.relations)
        cursor = page.nextCursor
        if cursor is None:
            break
    assert sorted(pages) == sorted((r.from_, r.to) for r in whole.relations) == [("B", "A"), ("C", "D")]
