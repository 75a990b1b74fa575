"""Issue 31 item 1: find_duplicates through real MCP sessions (stdio and HTTP) on the real Neo4j:
groups with the kept entity, score and reasons, paging, the names filter, the model on and off, other
namespaces never seen, bad input refused naming the field.  The rules themselves: tests/test_resolution.py."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import AsyncDriver

from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.duplicates import duplicate_groups
from support.kg import dumps, ent, err, ok, rel, text_of
from support.servers import Neo4jInfo, mcp_session, server_env, stdio_session

ENTITIES = [
    ent("Alice Smith", "person", ["works at Acme in Paris"]),
    ent("alice smith", "person", ["lives in Paris"]),
    ent("A. Smith", "person", []),
    ent("Bob Smith", "person", ["works at Globex in Berlin"]),
    ent("Robert Smith", "person", ["works at Globex in Berlin"]),
    ent("Mercury", "planet", ["the closest planet to the Sun"]),
    ent("mercury", "element", ["a metal, liquid at room temperature"]),
    ent("Acme", "company", []),
    ent("Globex", "company", []),
    ent("Paris", "city", []),
]
RELATIONS = [
    rel("Alice Smith", "Acme", "works_at"),
    rel("Alice Smith", "Paris", "lives_in"),
    rel("A. Smith", "Acme", "works_at"),
    rel("alice smith", "Paris", "lives_in"),
    rel("Bob Smith", "Globex", "works_at"),
    rel("Robert Smith", "Globex", "works_at"),
]
ALICE = {"Alice Smith", "alice smith", "A. Smith"}
BOB = {"Bob Smith", "Robert Smith"}


async def seed(session: Any) -> None:
    await ok(session, "create_entities", {"entities": ENTITIES})
    await ok(session, "create_relations", {"relations": RELATIONS})


async def found(session: Any, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """find_duplicates' answer: its text is the structured content's JSON."""
    result = await session.call_tool("find_duplicates", args or {})
    text = text_of(result)
    assert not result.is_error, text
    assert text == dumps(result.structured_content)
    data: dict[str, Any] = result.structured_content
    return data


def codes(group: dict[str, Any]) -> set[str]:
    return {r["code"] for r in group["reasons"]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_groups_with_reasons_paging_and_the_names_filter(
    transport: str, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with mcp_session(transport, neo4j_info, namespace) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["find_duplicates"].annotations.read_only_hint is True
        await seed(s)
        answer = await found(s)
        groups = answer["groups"]
        assert [set(g["names"]) for g in groups] in ([ALICE, BOB], [BOB, ALICE])
        assert answer["nextCursor"] is None
        alice = next(g for g in groups if set(g["names"]) == ALICE)
        # the kept entity has the most observations and relations; it is first in names
        assert alice["keep"] == "Alice Smith" == alice["names"][0]
        assert {"same_normalised_name", "initials", "shared_neighbours"} <= codes(alice)
        for r in alice["reasons"]:
            assert r["detail"] and r["names"][0] == "Alice Smith" and r["names"][1] in ALICE
        bob = next(g for g in groups if set(g["names"]) == BOB)
        assert {"nickname", "shared_neighbours", "overlapping_observations"} <= codes(bob)
        assert all(0.5 <= g["score"] <= 1 for g in groups)
        assert groups[0]["score"] >= groups[1]["score"]
        # no group for the planet and the element
        assert not any("Mercury" in g["names"] for g in groups)

        first = await found(s, {"limit": 1})
        assert first["groups"] == groups[:1] and first["nextCursor"]
        second = await found(s, {"limit": 1, "cursor": first["nextCursor"]})
        assert second["groups"] == groups[1:] and second["nextCursor"] is None

        only_bob = await found(s, {"names": ["Robert Smith"]})
        assert only_bob["groups"] == [bob]
        # a higher bar drops the weaker group
        strict = await found(s, {"minScore": max(g["score"] for g in groups)})
        assert [g["keep"] for g in strict["groups"]] == [groups[0]["keep"]]


async def test_other_namespaces_are_never_seen(neo4j_info: Neo4jInfo, namespace: str) -> None:
    other = namespace + "-other"
    async with stdio_session(neo4j_info, "--namespace", other, "--embedding-model", "none") as s:
        await ok(
            s, "create_entities", {"entities": [ent("Carol Jones", "person"), ent("carol jones", "person")]}
        )
        theirs = await found(s, {"minScore": 0.4})
        assert [set(g["names"]) for g in theirs["groups"]] == [{"Carol Jones", "carol jones"}]
    async with stdio_session(neo4j_info, "--namespace", namespace, "--embedding-model", "none") as s:
        await ok(
            s, "create_entities", {"entities": [ent("Carol Jones", "person"), ent("Dan Jones", "person")]}
        )
        mine = await found(s, {"minScore": 0.0})
        assert mine["groups"] == []


async def test_the_model_adds_the_embedding_signal(neo4j_info: Neo4jInfo, namespace: str) -> None:
    env = server_env(neo4j_info, KG_NEO4J_EMBEDDING_MODEL="all-MiniLM-L6-v2")
    async with stdio_session(neo4j_info, "--namespace", namespace, env=env) as s:
        await seed(s)
        answer = await found(s)
        alice = next(g for g in answer["groups"] if g["keep"] == "Alice Smith")
        assert set(alice["names"]) == ALICE
        assert "embedding_cosine" in codes(alice)
        cosines = [r["detail"] for r in alice["reasons"] if r["code"] == "embedding_cosine"]
        assert all("cosine" in d for d in cosines)
        assert not any("Mercury" in g["names"] for g in answer["groups"])


async def test_near_copies_in_other_namespaces_do_not_hide_a_duplicate(
    semantic_store: GraphStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, embedder: Any
) -> None:
    """The 5.26 vector index holds every namespace: 12 other namespaces holding the same two names take
    every place among an entity's first nearest (identical vectors score 1.0), so find_duplicates asks
    again with more until this namespace's own near name is among them.  The pair has no name rule
    (cosine 0.94, one observation alike): only the index finds it."""
    seen = ["a research lab based in Nairobi"]
    pair = [ent("Nyota Labs", "organization", seen), ent("Nyota Laboratories", "organization", seen)]
    others = [f"{namespace}-copy{i:02d}" for i in range(12)]
    try:
        for other in others:
            copy = GraphStore(driver, database=neo4j_info.database, namespace=other, embedder=embedder)
            await copy.create_entities([EntityIn(**e) for e in pair])
        await semantic_store.create_entities([EntityIn(**e) for e in pair])
        groups = await duplicate_groups(semantic_store, model=embedder.name)
        assert [set(g.names) for g in groups] == [{"Nyota Labs", "Nyota Laboratories"}]
        assert {r.code for r in groups[0].reasons} == {"embedding_cosine", "overlapping_observations"}
    finally:
        await driver.execute_query(
            "MATCH (n:KgNode|Observation) WHERE n.namespace IN $others DETACH DELETE n",
            others=others,
            database_=neo4j_info.database,
        )


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"minScore": 1.5}, "minScore"),
        ({"minScore": "high"}, "minScore"),
        ({"limit": 0}, "limit"),
        ({"limit": 100_000}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"names": []}, "names"),
        ({"names": [""]}, "names"),
        ({"threshold": 0.5}, "threshold"),
    ],
)
async def test_bad_input_names_the_field(
    args: dict[str, Any], field: str, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace, "--embedding-model", "none") as s:
        message = await err(s, "find_duplicates", args)
    assert field in message, message
