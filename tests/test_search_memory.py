"""search_memory: vector + fulltext + graph on Neo4j's own indexes, with the real MiniLM model."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.capabilities import search_indexes
from kg_neo4j.text import fulltext_words
from support.servers import Neo4jInfo, mcp_session, server_env, stdio_session

PEOPLE = [
    EntityIn(
        name="Alice",
        entityType="person",
        observations=[
            "Started a new position as head of design at Initech in March",
            "Goes hiking in the Alps every summer",
            "Is allergic to peanuts",
        ],
    ),
    EntityIn(
        name="Bob",
        entityType="person",
        observations=[
            "Plays the cello in a community orchestra",
            "Adopted a rescue greyhound called Pixel",
        ],
    ),
    EntityIn(
        name="Initech", entityType="company", observations=["Makes accounting software, based in Austin"]
    ),
    EntityIn(name="Carol", entityType="person", observations=["Is training for the Berlin marathon"]),
]


async def seed(store: GraphStore) -> None:
    await store.create_entities(PEOPLE)
    await store.create_relations(
        [
            RelationIn.model_validate(
                {"from": "Alice", "to": "Initech", "relationType": "works_at", "weight": 0.9}
            ),
            RelationIn.model_validate({"from": "Bob", "to": "Alice", "relationType": "knows"}),
        ]
    )


def test_indexes_exist_and_are_online(sync_driver, semantic_store: GraphStore) -> None:  # type: ignore[no-untyped-def]
    records, _, _ = sync_driver.execute_query("SHOW INDEXES YIELD name, type, state")
    state = {r["name"]: (r["type"], r["state"]) for r in records}
    assert state["kg_fulltext_ns"] == ("FULLTEXT", "ONLINE")
    assert state["kg_text_lower"] == ("TEXT", "ONLINE")
    assert state["kg_observation_embedding"] == ("VECTOR", "ONLINE")
    assert state["kg_entity_embedding"] == ("VECTOR", "ONLINE")
    # the one text index replaced these three (kg_neo4j/store/text_index.py)
    assert not {"kg_entity_name_lower", "kg_entity_type_lower", "kg_observation_text_lower"} & set(state)


async def test_vectors_are_written_with_the_observations(sync_driver, semantic_store: GraphStore) -> None:  # type: ignore[no-untyped-def]
    await seed(semantic_store)
    records, _, _ = sync_driver.execute_query(
        "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o) "
        "RETURN size(o.embedding) AS dim, o.embedding_model AS model, size(e.embedding) AS edim",
        ns=semantic_store.namespace,
    )
    assert len(records) == 7
    assert {(r["dim"], r["model"], r["edim"]) for r in records} == {(384, "all-MiniLM-L6-v2", 384)}


async def test_a_user_relation_named_has_observation_is_not_taken_for_an_observation(
    semantic_store: GraphStore,
) -> None:
    s = semantic_store
    await s.create_entities(
        [
            EntityIn(name="Owner", entityType="t", observations=[]),
            EntityIn(name="Zephyrine", entityType="t", observations=["a rare mineral"]),
        ]
    )
    await s.create_relations(
        [RelationIn.model_validate({"from": "Owner", "to": "Zephyrine", "relationType": "HAS_OBSERVATION"})]
    )
    hits = (await s.search_memory("Zephyrine", limit=5)).hits
    assert all(h.name == "Zephyrine" or h.observation is None for h in hits)
    assert hits[0].name == "Zephyrine"
    graph = await s.open_nodes(["Owner"])
    assert [e.observations for e in graph.entities] == [[]]
    assert [(r.from_, r.to, r.relationType) for r in graph.relations] == [
        ("Owner", "Zephyrine", "HAS_OBSERVATION")
    ]


@pytest.mark.parametrize(
    ("question", "name", "fragment"),
    [
        ("what did Alice say about her new job?", "Alice", "new position"),
        ("who has a dog?", "Bob", "greyhound"),
        ("which musical instrument does Bob play", "Bob", "cello"),
        ("food intolerance", "Alice", "peanuts"),
        ("who is preparing for a long-distance running race?", "Carol", "marathon"),
    ],
)
async def test_paraphrased_questions_find_their_entity(
    semantic_store: GraphStore, question: str, name: str, fragment: str
) -> None:
    await seed(semantic_store)
    result = await semantic_store.search_memory(question, limit=3)
    assert result.mode == "hybrid"
    top = result.hits[0]
    assert top.name == name
    assert top.observation is not None and fragment in top.observation
    assert {e.name for e in result.entities} >= {name}


async def test_result_shape_and_relations_among_hits(semantic_store: GraphStore) -> None:
    await seed(semantic_store)
    result = await semantic_store.search_memory("Alice design job at Initech", limit=10)
    assert len(result.hits) <= 10
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    names = {h.name for h in result.hits}
    assert {"Alice", "Initech"} <= names
    assert [e.name for e in result.entities] == list(dict.fromkeys(h.name for h in result.hits))
    rel = {(r.from_, r.to, r.relationType) for r in result.relations}
    assert ("Alice", "Initech", "works_at") in rel
    for r in result.relations:
        assert r.from_ in names and r.to in names


async def test_entity_types_filter(semantic_store: GraphStore) -> None:
    await seed(semantic_store)
    result = await semantic_store.search_memory(
        "software company in Texas", limit=5, entity_types=["company"]
    )
    assert result.hits and {h.entityType for h in result.hits} == {"company"}


@pytest.mark.parametrize(
    "query",
    [
        "alice/bob",
        "name:Alice",
        "(cello",
        '"unbalanced',
        "cello AND",
        "OR",
        "NOT cello",
        "*",
        "cel*lo?",
        "a~2 ^3 [x TO y] {z} !!",
        "back\\slash",
        "&& || -",
        "",
    ],
)
async def test_lucene_syntax_in_questions_is_safe(semantic_store: GraphStore, query: str) -> None:
    await seed(semantic_store)
    if not query:
        assert fulltext_words(query) == ""
        return
    result = await semantic_store.search_memory(query, limit=5)
    assert len(result.hits) <= 5
    # Only plain words reach Lucene, lower-cased (so AND/OR/NOT are words, not operators).
    assert all(t.isalnum() or "_" in t for t in fulltext_words(query).split())


@pytest.mark.unit
def test_fulltext_words_keeps_words_only() -> None:
    assert (
        fulltext_words('What did "Alice" say: (job) AND pay/hours*?')
        == "what did alice say job and pay hours"
    )
    assert fulltext_words("Zoë's café") == "zoë s café"


async def test_namespace_isolation_under_overfetch(
    driver,
    neo4j_info: Neo4jInfo,
    embedder,  # type: ignore[no-untyped-def]
    semantic_store: GraphStore,
) -> None:
    """A foreign namespace ten times larger holding near-duplicates of the question never leaks,
    and the own namespace still fills `limit` hits."""
    own = semantic_store
    await own.create_entities(
        [
            EntityIn(
                name=f"own-{i}",
                entityType="note",
                observations=[f"The quarterly budget review meeting, part {i}"],
            )
            for i in range(12)
        ]
    )
    foreign = GraphStore(
        driver, database=neo4j_info.database, namespace=f"foreign-{uuid.uuid4().hex[:8]}", embedder=embedder
    )
    await foreign.create_entities(
        [
            EntityIn(
                name=f"foreign-{i}",
                entityType="note",
                observations=[f"Quarterly budget review meeting notes, copy {i}", "Quarterly budget review"],
            )
            for i in range(120)
        ]
    )
    searched = await own.search_memory_traced("quarterly budget review meeting", limit=10)
    result = searched.result
    assert len(result.hits) == 10
    assert all(h.name.startswith("own-") for h in result.hits)
    assert searched.diagnostics.rounds >= 1
    other = await foreign.search_memory("quarterly budget review meeting", limit=10)
    assert all(h.name.startswith("foreign-") for h in other.hits)


async def test_as_of_hides_later_observations(semantic_store: GraphStore, clock) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    await seed(semantic_store)
    before = clock.now()
    clock.advance(days=1)
    from kg_neo4j.models import ObservationAdd

    await semantic_store.add_observations(
        [ObservationAdd(entityName="Carol", contents=["Bought a sailing boat"])]
    )
    now_hits = await semantic_store.search_memory("sailing boat", limit=3)
    assert any(h.observation == "Bought a sailing boat" for h in now_hits.hits)
    past = await semantic_store.search_memory("sailing boat", limit=3, as_of=before + timedelta(hours=1))
    assert all(h.observation != "Bought a sailing boat" for h in past.hits)


async def test_model_none_searches_fulltext_and_graph(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with stdio_session(neo4j_info, "--namespace", namespace, "--embedding-model", "none") as session:
        await session.call_tool("create_entities", {"entities": [e.model_dump() for e in PEOPLE]})
        res = await session.call_tool("search_memory", {"query": "cello orchestra"})
        assert not res.is_error, res.content[0].text
        data = res.structured_content
        assert data["mode"] == "fulltext+graph"
        assert data["hits"][0]["name"] == "Bob"
        assert json.loads(res.content[0].text) == data


async def test_search_memory_through_mcp_with_the_model(neo4j_info: Neo4jInfo, namespace: str) -> None:
    env = server_env(neo4j_info, KG_NEO4J_EMBEDDING_MODEL="all-MiniLM-L6-v2")
    async with stdio_session(neo4j_info, "--namespace", namespace, env=env) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["search_memory"].annotations.read_only_hint is True
        await session.call_tool("create_entities", {"entities": [e.model_dump() for e in PEOPLE]})
        res = await session.call_tool("search_memory", {"query": "who has a pet?", "limit": 2})
        assert not res.is_error, res.content[0].text
        data = res.structured_content
        assert data["mode"] == "hybrid"
        assert len(data["hits"]) == 2
        assert data["hits"][0]["name"] == "Bob" and "greyhound" in data["hits"][0]["observation"]
        bad = await session.call_tool("search_memory", {"query": ""})
        assert bad.is_error and "query" in bad.content[0].text


async def test_search_memory_not_in_reference_profile(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "reference") as session:
        names = {t.name for t in (await session.list_tools()).tools}
    assert "search_memory" not in names and "search_nodes" in names


async def test_the_vector_channels_follow_the_server_line(semantic_store: GraphStore) -> None:
    """On 5.26 (no in-index filters) search_memory over-fetches and filters; on 2026.x, once the
    filtered indexes are ONLINE, it runs the filtered statements (CI runs the suite on both lines;
    tests/test_neo4j_versions.py checks the filtered ones against exact cosine)."""
    indexes = search_indexes(semantic_store.driver, semantic_store.database)
    assert indexes is not None  # the fixture bootstrapped
    filters = indexes.capabilities.vector_search_filters
    assert filters is (indexes.capabilities.version.split(".")[0] != "5")
    deadline = time.monotonic() + 120
    while filters and indexes.state != "online" and time.monotonic() < deadline:
        await asyncio.sleep(1)  # a fresh database fills them in the background
        await indexes.refresh(semantic_store.driver, semantic_store.database)
    await semantic_store.create_entities(
        [EntityIn(name="Ann", entityType="person", observations=["bakes bread"])]
    )
    searched = await semantic_store.search_memory_traced("who makes bread", limit=5)
    result = searched.result
    assert [h.name for h in result.hits][:1] == ["Ann"]
    assert searched.diagnostics.filtered is filters
    if filters:  # one query per vector channel however small the namespace (5.26 may need more rounds);
        # the fulltext channel is still filtered after the index (no filters in fulltext SEARCH) and may grow
        assert all(c == "fulltext" for again in searched.diagnostics.starved for c in again)
