"""Issue 39: find_duplicates in a namespace beside others holding copies of its names.  A namespace is
compared exactly over its own vectors (at most ``EXACT_ENTITIES``) or, above it, through the entity
index (on 2026.x the filtered one, on 5.26 the database-wide one, asked again when crowded); either
way it finds its own groups and the same answer as alone, and a call for some names answers the whole
namespace's groups that hold them (it reads only what they connect to)."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import AsyncDriver

from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store import duplicates as dup
from support.kg import ent
from support.servers import Neo4jInfo

SEEN = ["a research lab based in Nairobi"]
ENTITIES = [
    ent("Alice Smith", "person", ["works at Acme in Paris", "lives in Paris"]),
    ent("alice smith", "person", ["lives in Paris"]),
    ent("A. Smith", "person", ["works at Acme in Paris"]),
    ent("Bob Smith", "person", ["works at Globex in Berlin"]),
    ent("Robert Smith", "person", ["works at Globex in Berlin"]),
    # no name rule relates these two (cosine 0.94): only the vectors find them
    ent("Nyota Labs", "organization", SEEN),
    ent("Nyota Laboratories", "organization", SEEN),
    ent("Mercury", "planet", ["the closest planet to the Sun"]),
    ent("mercury", "element", ["a metal, liquid at room temperature"]),
    ent("Acme", "company", []),
    ent("Paris", "city", []),
]
NAMES = [e["name"] for e in ENTITIES]
COPIES = 12


def shape(groups: list[dup.DuplicateGroup]) -> list[tuple[str, tuple[str, ...], float]]:
    """A group as compared here: kept name, names, score to 2 decimals (the index's cosine and the exact one
    differ in the last float digits)."""
    return [(g.keep, tuple(g.names), round(g.score, 2)) for g in groups]


async def answers(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The whole namespace's groups and each name's, compared exactly and through the index."""
    out: dict[str, Any] = {}
    for path, cap in (("exact", dup.EXACT_ENTITIES), ("index", 0)):
        monkeypatch.setattr(dup, "EXACT_ENTITIES", cap)
        out[path] = shape((await dup.find_duplicates(store, limit=dup.MAX_LIMIT)).groups)
        for name in NAMES:
            out[f"{path} {name}"] = shape((await dup.find_duplicates(store, names=[name])).groups)
    return out


async def test_beside_copies_the_same_groups_as_alone_and_per_name(
    semantic_store: GraphStore,
    driver: AsyncDriver,
    neo4j_info: Neo4jInfo,
    namespace: str,
    embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await semantic_store.create_entities([EntityIn(**e) for e in ENTITIES])
    alone = await answers(semantic_store, monkeypatch)
    groups = alone["exact"]
    assert {frozenset(g[1]) for g in groups} == {
        frozenset({"Alice Smith", "alice smith", "A. Smith"}),
        frozenset({"Bob Smith", "Robert Smith"}),
        frozenset({"Nyota Labs", "Nyota Laboratories"}),
    }
    assert alone["index"] == groups
    for name in NAMES:  # a call for one name: the namespace's groups that hold it
        assert alone[f"exact {name}"] == [g for g in groups if name in g[1]] == alone[f"index {name}"]

    others = [f"{namespace}-copy{i:02d}" for i in range(COPIES)]
    try:
        for other in others:
            copy = GraphStore(driver, database=neo4j_info.database, namespace=other, embedder=embedder)
            await copy.create_entities([EntityIn(**e) for e in ENTITIES])
        assert await answers(semantic_store, monkeypatch) == alone
    finally:
        await driver.execute_query(
            "MATCH (n:KgNode|Observation) WHERE n.namespace IN $others DETACH DELETE n",
            others=others,
            database_=neo4j_info.database,
        )


async def test_a_name_connected_through_others_gets_the_whole_group(
    semantic_store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group is found from any of its names, also one linked to the kept entity only through another
    member: the call follows candidate pairs until nothing new is reached."""
    chain = [
        ent("Dr Jane Okafor", "person", ["leads the Lagos office", "writes the quarterly plan"]),
        ent("Jane Okafor", "person", ["leads the Lagos office"]),
        ent("J. Okafor", "person", ["writes the quarterly plan"]),
        ent("Lagos office", "place", []),
    ]
    await semantic_store.create_entities([EntityIn(**e) for e in chain])
    whole = shape((await dup.find_duplicates(semantic_store)).groups)
    assert whole and any("J. Okafor" in g[1] for g in whole)
    for cap in (dup.EXACT_ENTITIES, 0):  # compared exactly, then through the index (name by name)
        monkeypatch.setattr(dup, "EXACT_ENTITIES", cap)
        for e in chain:
            mine = shape((await dup.find_duplicates(semantic_store, names=[e["name"]])).groups)
            assert mine == [g for g in whole if e["name"] in g[1]], (cap, e["name"])
