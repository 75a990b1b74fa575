"""search_nodes' text index caught up after the writes (kg_neo4j/store/text_catch_up.py, README "How the graph
looks in Neo4j").

- create_entities and add_observations leave their nodes ``:KgPending``; search_nodes finds the same whether
  they are pending, in the index, or some of each.
- A search racing a catch-up never misses a node written before it (the catch-up moves nodes in two
  transactions; search reads the pending ones before the index), and a node moved now is held its own
  time though its id (reused by Neo4j) was held before.
- Nodes that stopped being entities while pending leave :KgPending without joining the index; an entity
  typed "KgPending" by an earlier kg-neo4j keeps its type label.
- The server catches up by itself: after its writes, and at its start for what a stopped process left; a
  runtime catches up what it wrote before it closes.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest
from neo4j import AsyncDriver

from conftest import Neo4jInfo, server_env, stdio_session
from kg_neo4j.models import EntityIn, ObservationAdd
from kg_neo4j.runtime import open_runtime
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore


def states(sync_driver: Any, namespace: str) -> dict[str, int]:
    records, _, _ = sync_driver.execute_query(
        "MATCH (n {namespace: $ns}) WHERE n:Entity OR n:Observation "
        "RETURN sum(CASE WHEN n:KgPending AND NOT n:KgText THEN 1 ELSE 0 END) AS pending, "
        "sum(CASE WHEN n:KgText THEN 1 ELSE 0 END) AS indexed, count(n) AS nodes",
        ns=namespace,
    )
    return dict(records[0])


def held(sync_driver: Any, namespace: str) -> int:
    """Moved nodes that still carry :KgPending (released ``hold`` seconds after their move)."""
    records, _, _ = sync_driver.execute_query(
        "MATCH (n:KgPending:KgText {namespace: $ns}) RETURN count(n) AS n", ns=namespace
    )
    return int(records[0]["n"])


def wait_until_caught_up(sync_driver: Any, namespace: str, timeout: float = 15.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        got = states(sync_driver, namespace)
        if got["pending"] == 0 or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


PEOPLE = [
    EntityIn(name="Alice", entityType="person", observations=["Speaks Portuguese"]),
    EntityIn(name="Bob", entityType="musician", observations=["Plays the cello"]),
]


@pytest.mark.parametrize("state", ["pending", "indexed", "half"])
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ALI", ["Alice"]),
        ("musi", ["Bob"]),
        ("cello", ["Bob"]),
        ("portug", ["Alice"]),
        ("s", ["Alice", "Bob"]),
        ("alice\nperson", []),
        ("\n", []),
        ("nobody", []),
    ],
)
async def test_search_finds_the_same_pending_or_indexed(
    store: GraphStore, sync_driver: Any, state: str, query: str, expected: list[str]
) -> None:
    await store.create_entities(PEOPLE[:1])
    if state == "half":
        await store.text_index.run()
    await store.create_entities(PEOPLE[1:])
    await store.add_observations([ObservationAdd(entityName="Alice", contents=["Sings"])])
    if state == "indexed":
        await store.text_index.run()
    got = states(sync_driver, store.namespace)
    assert got["nodes"] == 5
    assert got["pending"] == {"pending": 5, "indexed": 0, "half": 3}[state]
    assert sorted(e.name for e in (await store.search_nodes(query)).entities) == expected


async def test_a_search_racing_the_catch_up_never_misses(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    """Each write is searched for at once while another store catches the index up without pause."""
    writer = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    mover = GraphStore(driver, database=neo4j_info.database, namespace=namespace)
    done = asyncio.Event()
    moved = 0

    async def catch_up() -> None:
        nonlocal moved
        while not done.is_set():
            moved += await mover.text_index.run()
            await asyncio.sleep(0)

    task = asyncio.create_task(catch_up())
    try:
        for i in range(120):
            word = f"wombat{uuid.uuid4().hex[:10]}"
            if i % 2:
                await writer.create_entities(
                    [EntityIn(name=f"E{i}", entityType="t", observations=[f"a {word} b"])]
                )
            else:
                await writer.create_entities([EntityIn(name=f"E{i}", entityType="t", observations=[])])
                await writer.add_observations([ObservationAdd(entityName=f"E{i}", contents=[f"x {word}"])])
            assert [e.name for e in (await writer.search_nodes(word)).entities] == [f"E{i}"], (i, word)
            assert f"E{i}" in [e.name for e in (await writer.search_nodes(f"e{i}")).entities], (
                i
            )  # by its name
    finally:
        done.set()
        await task
    assert moved > 0
    await mover.text_index.run()
    assert states(sync_driver, namespace) == {"pending": 0, "indexed": 240, "nodes": 240}
    mover.text_index.hold = 0
    await mover.text_index.run()  # the release of what the last one moved
    assert held(sync_driver, namespace) == 0


async def test_what_left_the_graph_while_pending_stays_out_of_the_index(
    store: GraphStore, sync_driver: Any
) -> None:
    await store.create_entities(
        [
            EntityIn(name="Dup", entityType="t", observations=["x"]),
            EntityIn(name="Keep", entityType="t", observations=["y"]),
        ]
    )
    # what an earlier kg-neo4j's merge or forget left: no longer an entity, still labelled pending
    sync_driver.execute_query(
        "MATCH (n:KgNode {namespace: $ns, name: 'Dup'}) REMOVE n:KgNode:Entity", ns=store.namespace
    )
    # and an entity typed "KgPending" before the label was kg-neo4j's own (its type label)
    sync_driver.execute_query(
        "CREATE (:KgNode:Entity:KgText:KgPending {namespace: $ns, name: 'Old', entityType: 'KgPending', "
        "type_labels: ['KgPending'], text_lower: 'old\\nkgpending', name_lower: 'old', "
        "type_lower: 'kgpending', created_at: datetime('2020-01-01T00:00:00Z')})",
        ns=store.namespace,
    )
    assert await store.text_index.pending() >= 4
    store.text_index.hold = 0
    await store.text_index.run()  # moves
    await store.text_index.run()  # releases
    records, _, _ = sync_driver.execute_query(
        "MATCH (n {namespace: $ns}) WHERE n.name IS NOT NULL RETURN n.name AS name, n:KgText AS indexed, "
        "n:KgPending AS pending ORDER BY name",
        ns=store.namespace,
    )
    assert [(r["name"], r["indexed"], r["pending"]) for r in records] == [
        ("Dup", False, False),
        ("Keep", True, False),
        ("Old", True, True),
    ]
    assert [e.name for e in (await store.search_nodes("kgpending")).entities] == ["Old"]


async def test_a_node_moved_now_serves_its_own_hold(store: GraphStore, sync_driver: Any) -> None:
    """Neo4j gives a deleted node's id to a new node: a node this run moves is held from its own move, not from
    when an earlier node with its id was held (which would release it at once, back in the race above)."""
    await store.create_entities(PEOPLE[:1])
    ids = [
        r["id"]
        for r in sync_driver.execute_query(
            "MATCH (n:KgPending {namespace: $ns}) RETURN elementId(n) AS id", ns=store.namespace
        ).records
    ]
    assert len(ids) == 2
    catch_up = store.text_index
    catch_up.hold = 1.0
    for element_id in ids:  # the same ids held 0.9 s ago (not yet released) by nodes since deleted
        catch_up._held[element_id] = time.monotonic() - 0.9
    before = time.monotonic()
    assert await catch_up.run() >= 2  # and whatever else of the shared database is pending
    assert all(catch_up._held[i] >= before for i in ids)
    await asyncio.sleep(0.2)
    await catch_up._release()  # 0.2 s after their move: none of them goes
    assert held(sync_driver, store.namespace) == 2
    catch_up.hold = 0
    await catch_up.run()
    assert held(sync_driver, store.namespace) == 0


async def test_the_server_catches_up_after_writes_and_at_start(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    # left pending by a process that stopped before catching up
    await GraphStore(driver, database=neo4j_info.database, namespace=namespace).create_entities(PEOPLE)
    assert states(sync_driver, namespace)["pending"] == 4
    async with stdio_session(neo4j_info, env=server_env(neo4j_info, KG_NEO4J_NAMESPACE=namespace)) as s:
        assert wait_until_caught_up(sync_driver, namespace) == {"pending": 0, "indexed": 4, "nodes": 4}
        res = await s.call_tool(
            "create_entities",
            {"entities": [{"name": "Carol", "entityType": "person", "observations": ["Learns the cello"]}]},
        )
        assert not res.is_error, res.content[0].text
        res = await s.call_tool("search_nodes", {"query": "cello"})  # at once: Carol is pending
        assert sorted(e["name"] for e in json.loads(res.content[0].text)["entities"]) == ["Bob", "Carol"]
        assert wait_until_caught_up(sync_driver, namespace) == {"pending": 0, "indexed": 6, "nodes": 6}
        res = await s.call_tool("search_nodes", {"query": "cello"})
        assert sorted(e["name"] for e in json.loads(res.content[0].text)["entities"]) == ["Bob", "Carol"]
        deadline = time.monotonic() + 15  # and it releases them (HOLD after their move)
        while held(sync_driver, namespace) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert held(sync_driver, namespace) == 0


async def test_a_runtime_catches_up_what_it_wrote_before_it_closes(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    settings = Settings(
        neo4j_uri=neo4j_info.uri,
        neo4j_username=neo4j_info.username,
        neo4j_password=neo4j_info.password,
        neo4j_database=neo4j_info.database,
        namespace=namespace,
        embedding_model="none",
    )
    async with open_runtime(settings, bootstrap="schema") as opened:
        await opened.graph_store().create_entities(PEOPLE)  # closed before the scheduled catch-up
        assert states(sync_driver, namespace)["pending"] == 4
    assert states(sync_driver, namespace) == {"pending": 0, "indexed": 4, "nodes": 4}
