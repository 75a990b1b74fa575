"""search_nodes' one text index and the eventually consistent fulltext index (docs/graph-model.md#how-the-graph-looks-in-neo4j,
kg_neo4j/store/text_index.py).

- search_nodes on the one index keeps the reference's matching: a name, a type or an observation holding
  the query; a query across an entity's name and type (the two lines of its ``text_lower``) matches neither.
- A graph written by the earlier layout (three text indexes, a fulltext index that is not eventually
  consistent, no ``:KgText``) moves over: in batches that resume where an interrupted run stopped, then at
  the server's start the rest, the three old indexes dropped and the fulltext index made again; search_nodes
  and search_memory then find what was stored, through a real MCP session.
- Reads of the eventually consistent fulltext index see every write committed before them.
- Writes label their nodes :KgText in their own transaction, and change no other namespace, then or later;
  nodes that kg-neo4j 0.1.x's deferred text index left pending join the index at the next start.

The move is a property of the whole database, so it runs on the private Neo4j (conftest
``private_neo4j_server``, emptied first)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from neo4j import AsyncGraphDatabase, GraphDatabase

from kg_neo4j.models import EntityIn, ObservationAdd
from kg_neo4j.store import GraphStore, text_index
from support.servers import Neo4jInfo, server_env, stdio_session, wipe_neo4j

OLD_TEXT_INDEXES = {"kg_entity_name_lower", "kg_entity_type_lower", "kg_observation_text_lower"}

OLD_SCHEMA = [
    "CREATE CONSTRAINT kg_node_key FOR (n:KgNode) REQUIRE (n.namespace, n.name) IS UNIQUE",
    "CREATE TEXT INDEX kg_entity_name_lower FOR (n:Entity) ON (n.name_lower)",
    "CREATE TEXT INDEX kg_entity_type_lower FOR (n:Entity) ON (n.type_lower)",
    "CREATE TEXT INDEX kg_observation_text_lower FOR (o:Observation) ON (o.text_lower)",
    "CREATE FULLTEXT INDEX kg_fulltext FOR (n:Entity|Observation) ON EACH [n.name, n.entityType, n.text] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
    "CALL db.awaitIndexes(300)",
]

# What the earlier layout wrote for create_entities (no :KgText, no entity text_lower).
OLD_WRITE = """
UNWIND $rows AS row
CREATE (n:KgNode:Entity {namespace: $ns, name: row.name, name_lower: toLower(row.name), entityType: row.type,
                         type_lower: toLower(row.type), created_at: datetime(), obs_next: size(row.obs)})
WITH n, row
UNWIND range(0, size(row.obs) - 1) AS i
CREATE (n)-[:HAS_OBSERVATION]->(:Observation {namespace: $ns, text: row.obs[i], text_lower: toLower(row.obs[i]),
                                             seq: i, created_at: datetime()})
"""

OLD_ROWS = [
    {"name": "Alice", "type": "person", "obs": ["Speaks Portuguese", "Runs the Lisbon office"]},
    {"name": "Bob", "type": "person", "obs": ["Plays the cello"]},
    {"name": "Initech", "type": "company", "obs": ["Makes accounting software", "Based in Austin"]},
    {"name": "Lisbon", "type": "city", "obs": ["Capital of Portugal"]},
    {"name": "Mallard", "type": "bird", "obs": ["A duck seen by the river"]},
]


async def names(session: Any, query: str) -> list[str]:
    res = await session.call_tool("search_nodes", {"query": query})
    assert not res.is_error, res.content[0].text
    return sorted(e["name"] for e in json.loads(res.content[0].text)["entities"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ALI", ["Alice"]),  # a name, any case
        ("erso", ["Alice", "Bob"]),  # a type
        ("cello", ["Bob"]),  # an observation
        ("alice\nperson", []),  # across an entity's name and type: neither holds it
        ("e\np", []),
        ("\n", []),
    ],
)
async def test_search_nodes_matches_name_type_or_observation(
    store: GraphStore, query: str, expected: list[str]
) -> None:
    await store.create_entities(
        [
            EntityIn(name="Alice", entityType="person", observations=["Speaks Portuguese"]),
            EntityIn(name="Bob", entityType="person", observations=["Plays the cello"]),
        ]
    )
    graph = await store.search_nodes(query)
    assert sorted(e.name for e in graph.entities) == expected


async def test_create_and_add_label_their_nodes(store: GraphStore, sync_driver: Any) -> None:
    """In the text index from their own transaction: nothing moves them later."""
    await store.create_entities([EntityIn(name="Alice", entityType="Person", observations=["one"])])
    await store.add_observations([ObservationAdd(entityName="Alice", contents=["two"])])
    records, _, _ = sync_driver.execute_query(
        "MATCH (n {namespace: $ns}) WHERE n:Entity OR n:Observation "
        "RETURN labels(n) AS labels, n.text_lower AS text ORDER BY text",
        ns=store.namespace,
    )
    assert [(sorted(r["labels"]), r["text"]) for r in records] == [
        (["Entity", "KgNode", "KgText", "Person"], "alice\nperson"),
        (["KgText", "Observation"], "one"),
        (["KgText", "Observation"], "two"),
    ]


def fingerprint(sync_driver: Any, namespace: str) -> list[Any]:
    """Every node of ``namespace`` with its labels and properties, and its relationships (labels and
    properties read once per node, before the relationship rows)."""
    records, _, _ = sync_driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns "
        "WITH n, labels(n) AS labels, properties(n) AS props "
        "OPTIONAL MATCH (n)-[r]->(m) "
        "WITH n, labels, props, collect([type(r), properties(r), elementId(m)]) AS out "
        "RETURN elementId(n) AS id, labels, props, out ORDER BY id",
        ns=namespace,
    )
    return [
        (r["id"], sorted(r["labels"]), sorted(r["props"].items(), key=str), sorted(r["out"], key=str))
        for r in records
    ]


async def test_a_write_leaves_other_namespaces_alone(neo4j_info: Neo4jInfo, sync_driver: Any) -> None:
    """Writes in namespace B, through a server process, change nothing of namespace A: not at the write, not
    in the seconds after it, not when the process stops (0.1.x relabelled every namespace's recent writes a
    second later and at exit)."""
    a, b = f"test-iso-a-{uuid.uuid4().hex[:8]}", f"test-iso-b-{uuid.uuid4().hex[:8]}"
    async with stdio_session(neo4j_info, env=server_env(neo4j_info, KG_NEO4J_NAMESPACE=a)) as s:
        for call, args in WRITES:
            res = await s.call_tool(call, args)
            assert not res.is_error, res.content[0].text
    before = fingerprint(sync_driver, a)
    assert len(before) == 3 + 3  # the three entities and their observations
    async with stdio_session(neo4j_info, env=server_env(neo4j_info, KG_NEO4J_NAMESPACE=b)) as s:
        for call, args in WRITES:
            res = await s.call_tool(call, args)
            assert not res.is_error, res.content[0].text
            assert fingerprint(sync_driver, a) == before, call
        # Nothing to wait for: this proves nothing happens later (0.1.x's mover ran one second after a write
        # and held nodes one second more), so the test waits out three times that.
        await asyncio.sleep(6)
        assert fingerprint(sync_driver, a) == before
    assert fingerprint(sync_driver, a) == before  # after the process closed
    assert len(fingerprint(sync_driver, b)) == len(before)


WRITES: list[tuple[str, dict[str, Any]]] = [
    (
        "create_entities",
        {
            "entities": [
                {"name": "Alice", "entityType": "person", "observations": ["Speaks Portuguese"]},
                {"name": "Bob", "entityType": "person", "observations": []},
                {"name": "Lisbon", "entityType": "city", "observations": ["Capital of Portugal"]},
            ]
        },
    ),
    ("add_observations", {"observations": [{"entityName": "Bob", "contents": ["Plays the cello"]}]}),
    ("create_relations", {"relations": [{"from": "Alice", "to": "Lisbon", "relationType": "lives_in"}]}),
]


async def test_fulltext_reads_see_the_writes_before_them(store: GraphStore) -> None:
    """The index is eventually consistent; each read waits for what was committed before it."""
    await store.create_entities([EntityIn(name="Owner", entityType="note", observations=[])])
    for i in range(15):
        word = f"quokka{uuid.uuid4().hex[:8]}"
        await store.add_observations([ObservationAdd(entityName="Owner", contents=[f"seen a {word} today"])])
        hits = (await store.search_memory(word, limit=5)).hits
        assert [h.name for h in hits][:1] == ["Owner"], (i, word, hits)


@pytest.fixture
def private(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    wipe_neo4j(private_neo4j_server)
    return private_neo4j_server


def index_states(info: Neo4jInfo) -> dict[str, dict[str, Any]]:
    with GraphDatabase.driver(info.uri, auth=(info.username, info.password)) as drv:
        records = drv.execute_query(
            "SHOW INDEXES YIELD name, type, state, options, properties", database_=info.database
        ).records
    return {
        r["name"]: {
            "type": r["type"],
            "state": r["state"],
            "config": r["options"]["indexConfig"],
            "properties": r["properties"],
        }
        for r in records
    }


def unlabelled(info: Neo4jInfo) -> int:
    with GraphDatabase.driver(info.uri, auth=(info.username, info.password)) as drv:
        records = drv.execute_query(
            "MATCH (n) WHERE (n:Entity OR n:Observation) AND NOT n:KgText RETURN count(n) AS n",
            database_=info.database,
        ).records
    return int(records[0]["n"])


async def test_an_earlier_graph_moves_over_resumably(private: Neo4jInfo) -> None:
    ns = "old-layout"
    with GraphDatabase.driver(private.uri, auth=(private.username, private.password)) as drv:
        for statement in OLD_SCHEMA:
            drv.execute_query(statement, database_=private.database)
        drv.execute_query(OLD_WRITE, rows=OLD_ROWS, ns=ns, database_=private.database)
    assert unlabelled(private) == 5 + 7
    assert index_states(private)["kg_fulltext"]["config"].get("fulltext.eventually_consistent") is not True

    # a move interrupted after its first batches: four entities moved, nothing recorded as done
    with GraphDatabase.driver(private.uri, auth=(private.username, private.password)) as drv:
        drv.execute_query(
            "MATCH (n:Entity) WITH n ORDER BY n.name LIMIT 4 "
            "SET n:KgText, n.text_lower = n.name_lower + '\\n' + n.type_lower",
            database_=private.database,
        )
    assert unlabelled(private) == 1 + 7
    assert OLD_TEXT_INDEXES <= set(index_states(private))

    # the server's start finishes it; a real MCP session finds what the earlier layout stored
    async with stdio_session(private, env=server_env(private, KG_NEO4J_NAMESPACE=ns)) as s:
        assert await names(s, "lisbon") == ["Alice", "Lisbon"]  # a name and an observation
        assert await names(s, "COMPANY") == ["Initech"]  # a type
        assert await names(s, "duck seen") == ["Mallard"]
        res = await s.call_tool("search_memory", {"query": "cello", "limit": 3})
        assert not res.is_error, res.content[0].text
        assert [h["name"] for h in json.loads(res.content[0].text)["hits"]][:1] == ["Bob"]
        # and what it writes now is found the same way
        created = await s.call_tool(
            "create_entities",
            {"entities": [{"name": "Carol", "entityType": "person", "observations": ["Learns the cello"]}]},
        )
        assert not created.is_error, created.content[0].text
        assert await names(s, "cello") == ["Bob", "Carol"]
    assert unlabelled(private) == 0
    states = index_states(private)
    assert not OLD_TEXT_INDEXES & set(states)
    assert states["kg_text_lower"]["type"] == "TEXT" and states["kg_text_lower"]["state"] == "ONLINE"
    assert "kg_fulltext" not in states  # the earlier index, replaced by one that holds the namespace
    assert states["kg_fulltext_ns"]["state"] == "ONLINE"
    assert states["kg_fulltext_ns"]["config"]["fulltext.eventually_consistent"] is True
    assert states["kg_fulltext_ns"]["config"]["fulltext.analyzer"] == "english"
    assert states["kg_fulltext_ns"]["properties"] == ["name", "entityType", "text", "namespace"]

    # done once: the next start moves nothing and reads only the record
    drv = AsyncGraphDatabase.driver(private.uri, auth=(private.username, private.password))
    try:
        assert await text_index.migrate(drv, private.database) == 0
    finally:
        await drv.close()


async def test_the_move_counts_what_it_moved(private: Neo4jInfo) -> None:
    with GraphDatabase.driver(private.uri, auth=(private.username, private.password)) as drv:
        for statement in OLD_SCHEMA:
            drv.execute_query(statement, database_=private.database)
        drv.execute_query(OLD_WRITE, rows=OLD_ROWS, ns="old-layout", database_=private.database)
    drv = AsyncGraphDatabase.driver(private.uri, auth=(private.username, private.password))
    try:
        assert await text_index.migrate(drv, private.database, batch=3) == 5 + 7
    finally:
        await drv.close()
    assert unlabelled(private) == 0
    assert not OLD_TEXT_INDEXES & set(index_states(private))


# What 0.1.x's deferred text index could leave behind when its process stopped between a write and the
# move: entities and observations carrying its label instead of :KgText, a label on a node that was
# forgotten since, and (not to be touched) an entity whose type is that label's name.
LEGACY_WRITE = """
CREATE (a:KgNode:Entity:$($old) {namespace: $ns, name: 'Dana', name_lower: 'dana', entityType: 'person',
                                 type_lower: 'person', text_lower: 'dana\nperson', created_at: datetime(),
                                 obs_next: 1, type_labels: []})
CREATE (a)-[:HAS_OBSERVATION]->(:Observation:$($old) {namespace: $ns, text: 'Keeps bees', text_lower: 'keeps bees',
                                                      seq: 0, created_at: datetime()})
CREATE (:ExpiredKnowledge:$($old) {namespace: $ns, name: 'gone', expired_at: datetime()})
CREATE (:KgNode:Entity:KgText:$($old) {namespace: $ns, name: 'Typed', name_lower: 'typed', entityType: $old,
                                       type_lower: toLower($old), text_lower: 'typed\n' + toLower($old),
                                       created_at: datetime(), obs_next: 0, type_labels: [$old]})
"""


async def test_nodes_left_pending_by_0_1_join_the_index_at_start(private: Neo4jInfo) -> None:
    (old,) = text_index.LEGACY_LABELS
    ns = "left-pending"
    async with stdio_session(private, env=server_env(private, KG_NEO4J_NAMESPACE=ns)):
        pass  # the current layout's schema and indexes
    with GraphDatabase.driver(private.uri, auth=(private.username, private.password)) as drv:
        drv.execute_query(LEGACY_WRITE, ns=ns, old=old, database_=private.database)
    async with stdio_session(private, env=server_env(private, KG_NEO4J_NAMESPACE=ns)) as s:
        assert await names(s, "dana") == ["Dana"]
        assert await names(s, "bees") == ["Dana"]
    with GraphDatabase.driver(private.uri, auth=(private.username, private.password)) as drv:
        records = drv.execute_query(
            "MATCH (n {namespace: $ns}) RETURN coalesce(n.name, n.text) AS key, labels(n) AS labels ORDER BY key",
            ns=ns,
            database_=private.database,
        ).records
    assert {r["key"]: sorted(r["labels"]) for r in records} == {
        "Dana": ["Entity", "KgNode", "KgText"],
        "Keeps bees": ["KgText", "Observation"],
        "gone": ["ExpiredKnowledge"],
        "Typed": sorted(["Entity", "KgNode", "KgText", old]),  # its type label stays
    }
    drv = AsyncGraphDatabase.driver(private.uri, auth=(private.username, private.password))
    try:
        assert await text_index.migrate(drv, private.database) == 0  # done: nothing left to move
    finally:
        await drv.close()
