"""Two namespaces in one Neo4j database never see each other, with the same names in both:
reads, search, open, writes, deletes and relations -- in the store, and through MCP (``--namespace``).
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from kg_neo4j.clock import ManualClock
from kg_neo4j.errors import NotFoundError
from kg_neo4j.models import EntityIn, KnowledgeGraph, ObservationAdd, ObservationDelete, RelationIn
from kg_neo4j.store import GraphStore
from support.kg import ent, err, names, ok, rel, rel_keys, session


def E(name: str, entity_type: str, obs: list[str]) -> EntityIn:
    return EntityIn(name=name, entityType=entity_type, observations=obs)


def R(a: str, b: str, rtype: str = "knows") -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": rtype})


def snap(graph: KnowledgeGraph) -> dict[str, Any]:
    return {
        "entities": sorted((e.name, e.entityType, tuple(e.observations)) for e in graph.entities),
        "relations": sorted((r.from_, r.to, r.relationType) for r in graph.relations),
    }


@pytest_asyncio.fixture
async def two_stores(driver, neo4j_info, namespace) -> tuple[GraphStore, GraphStore]:
    clock = ManualClock()
    one = GraphStore(driver, database=neo4j_info.database, namespace=f"{namespace}-one", clock=clock)
    two = GraphStore(driver, database=neo4j_info.database, namespace=f"{namespace}-two", clock=clock)
    return one, two


async def test_same_names_in_two_namespaces_are_independent(two_stores):
    one, two = two_stores

    # -- create: the same names in both namespaces are each created (no cross-namespace dedupe)
    created_one = await one.create_entities([E("Alice", "person", ["in one"]), E("Bob", "person", ["b1"])])
    created_two = await two.create_entities([E("Alice", "robot", ["in two"]), E("Bob", "robot", ["b2"])])
    assert [e.name for e in created_one] == ["Alice", "Bob"]
    assert [e.name for e in created_two] == ["Alice", "Bob"]

    # -- relations: the same (from, to, type) is created in each; a two-only relation stays in two
    assert len(await one.create_relations([R("Alice", "Bob")])) == 1
    assert len(await two.create_relations([R("Alice", "Bob"), R("Bob", "Alice", "fixes")])) == 2

    # -- reads
    assert snap(await one.read_graph()) == {
        "entities": [("Alice", "person", ("in one",)), ("Bob", "person", ("b1",))],
        "relations": [("Alice", "Bob", "knows")],
    }
    assert snap(await two.read_graph()) == {
        "entities": [("Alice", "robot", ("in two",)), ("Bob", "robot", ("b2",))],
        "relations": [("Alice", "Bob", "knows"), ("Bob", "Alice", "fixes")],
    }
    page = await one.read_graph(limit=10)
    assert snap(page) == snap(await one.read_graph())

    # -- search and open see only their own namespace
    assert snap(await one.search_nodes("robot")) == {"entities": [], "relations": []}
    assert snap(await two.search_nodes("in one")) == {"entities": [], "relations": []}
    assert [e.entityType for e in (await one.search_nodes("alice")).entities] == ["person"]
    opened = await two.open_nodes(["Alice"])
    assert snap(opened) == {
        "entities": [("Alice", "robot", ("in two",))],
        "relations": [("Alice", "Bob", "knows"), ("Bob", "Alice", "fixes")],
    }

    # -- observations: added / deleted in one namespace only
    await one.add_observations([ObservationAdd(entityName="Alice", contents=["in two"])])
    assert (await one.open_nodes(["Alice"])).entities[0].observations == ["in one", "in two"]
    assert (await two.open_nodes(["Alice"])).entities[0].observations == ["in two"]
    await two.delete_observations([ObservationDelete(entityName="Bob", observations=["b1", "b2"])])
    assert (await two.open_nodes(["Bob"])).entities[0].observations == []
    assert (await one.open_nodes(["Bob"])).entities[0].observations == ["b1"]

    # -- an entity only in one namespace is unknown in the other
    await one.create_entities([E("OnlyOne", "x", [])])
    with pytest.raises(NotFoundError, match="^Entity with name OnlyOne not found$"):
        await two.add_observations([ObservationAdd(entityName="OnlyOne", contents=["x"])])
    assert (await two.open_nodes(["OnlyOne"])).entities == []

    # -- delete_relations in two leaves one's copy alone
    await two.delete_relations([R("Alice", "Bob")])
    assert snap(await one.read_graph())["relations"] == [("Alice", "Bob", "knows")]
    assert snap(await two.read_graph())["relations"] == [("Bob", "Alice", "fixes")]

    # -- delete_entities in one leaves two's Alice and her relations alone
    before_two = snap(await two.read_graph())
    await one.delete_entities(["Alice", "Bob"])
    assert snap(await one.read_graph()) == {"entities": [("OnlyOne", "x", ())], "relations": []}
    assert snap(await two.read_graph()) == before_two


async def test_placeholders_are_per_namespace(two_stores):
    one, two = two_stores
    await one.create_entities([E("Alice", "person", [])])
    await one.create_relations([R("Alice", "Ghost")])
    # Ghost is a placeholder in one only: in two it is created as a plain new entity without relations
    assert [e.name for e in await two.create_entities([E("Ghost", "spirit", [])])] == ["Ghost"]
    assert snap(await two.read_graph()) == {"entities": [("Ghost", "spirit", ())], "relations": []}
    # ... and one still has the placeholder (not an entity) with its relation
    assert snap(await one.read_graph()) == {
        "entities": [("Alice", "person", ())],
        "relations": [("Alice", "Ghost", "knows")],
    }
    # deleting Ghost in two does not touch one's relation
    await two.delete_entities(["Ghost"])
    assert snap(await one.read_graph())["relations"] == [("Alice", "Ghost", "knows")]


async def test_namespaces_are_isolated_through_mcp(transport, neo4j_info, namespace):
    ns_one, ns_two = f"{namespace}-one", f"{namespace}-two"
    async with session(transport, neo4j_info, ns_one) as one, session(transport, neo4j_info, ns_two) as two:
        # same names in both
        assert names(
            await ok(
                one, "create_entities", {"entities": [ent("Alice", "person", ["one"]), ent("Bob", "person")]}
            )
        ) == ["Alice", "Bob"]
        assert names(await ok(two, "create_entities", {"entities": [ent("Alice", "robot", ["two"])]})) == [
            "Alice"
        ]
        assert len(await ok(one, "create_relations", {"relations": [rel("Alice", "Bob")]})) == 1
        assert len(await ok(two, "create_relations", {"relations": [rel("Alice", "Bob")]})) == 1, (
            "the same relation in another namespace is new"
        )

        g1 = await ok(one, "read_graph")
        g2 = await ok(two, "read_graph")
        assert g1 == {
            "entities": [ent("Alice", "person", ["one"]), ent("Bob", "person")],
            "relations": [rel("Alice", "Bob")],
        }
        assert g2 == {"entities": [ent("Alice", "robot", ["two"])], "relations": [rel("Alice", "Bob")]}

        assert await ok(two, "search_nodes", {"query": "person"}) == {"entities": [], "relations": []}
        assert names(await ok(one, "search_nodes", {"query": "alice"})) == ["Alice"]
        assert (await ok(one, "open_nodes", {"names": ["Alice"]}))["entities"] == [
            ent("Alice", "person", ["one"])
        ]
        assert (await ok(two, "open_nodes", {"names": ["Bob"]}))["entities"] == []

        # Bob exists only in one
        assert (
            await err(two, "add_observations", {"observations": [{"entityName": "Bob", "contents": ["x"]}]})
            == "Entity with name Bob not found"
        )

        # deletes in two never reach one
        await ok(two, "delete_relations", {"relations": [rel("Alice", "Bob")]})
        await ok(two, "delete_entities", {"entityNames": ["Alice", "Bob"]})
        await ok(
            two, "delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["one"]}]}
        )
        assert await ok(two, "read_graph") == {"entities": [], "relations": []}
        assert await ok(one, "read_graph") == g1
        assert rel_keys(await ok(one, "open_nodes", {"names": ["Bob"]})) == [("Alice", "Bob", "knows")]
