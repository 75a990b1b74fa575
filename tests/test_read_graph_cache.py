"""read_graph's kept answer (kg_neo4j/store/answer_cache.py): reused only while it is exact.

A kept answer is reused only when no transaction has been applied since it was read (by anyone:
this store, another store or process, another namespace) and the clock has not passed a moment at
which the namespace's answer changes by itself (a relation closed or opened later, an item created
with a later timestamp).  Every test checks the answer against a fresh build, never only a counter.

A commit anywhere in the database ends a kept answer, so these tests run on the run's private Neo4j
(conftest ``private_neo4j_server``: one per test process, used by one test at a time), where nothing else
writes between two reads: ``neo4j_info`` and ``driver`` are overridden for this module.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import pytest_asyncio
from neo4j import AsyncDriver, AsyncGraphDatabase

from kg_neo4j.models import EntityIn, ObservationAdd, RelationIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.answer_cache import AnswerCache, cache_applies
from kg_neo4j.store.connection import bootstrap
from support.kg import ok, session, text_of
from support.servers import Neo4jInfo

pytestmark = pytest.mark.asyncio


@pytest.fixture
def neo4j_info(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    return private_neo4j_server


@pytest_asyncio.fixture
async def driver(neo4j_info: Neo4jInfo) -> AsyncIterator[AsyncDriver]:
    drv = AsyncGraphDatabase.driver(
        neo4j_info.uri, auth=(neo4j_info.username, neo4j_info.password), notifications_min_severity="OFF"
    )
    await bootstrap(drv, neo4j_info.database)  # another module may have wiped it
    yield drv
    await drv.close()


def _ent(name: str, *obs: str) -> EntityIn:
    return EntityIn(name=name, entityType="thing", observations=list(obs))


def _rel(a: str, b: str, t: str, **kw: object) -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": t, **kw})


async def _kept(store: GraphStore) -> tuple[str, dict]:
    """Two reads in a row answer the same kept object (nothing else writes to this database)."""
    first = await store.read_graph_answer()
    assert await store.read_graph_answer() is first, "read_graph's answer was not kept across two reads"
    return first


async def _fresh(store: GraphStore) -> tuple[str, dict]:
    return await store._graph_answer(store.clock.now())


async def test_unchanged_database_reuses_the_answer(store: GraphStore) -> None:
    await store.create_entities([_ent("a", "x"), _ent("b")])
    kept = await _kept(store)
    assert store._answers.hits >= 1
    assert kept == await _fresh(store)


async def test_unknown_horizon_is_never_reused(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The horizon is read after the answer goes out; if that read fails, the answer is built again."""
    await store.create_entities([_ent("a", "x")])

    async def failing(at: object) -> None:
        raise RuntimeError("horizon read failed on purpose")

    monkeypatch.setattr(store, "_horizon", failing)
    first = await store.read_graph_answer()
    second = await store.read_graph_answer()
    assert second is not first and second == first == await _fresh(store)
    assert store._answers.hits == 0


async def test_any_commit_rebuilds(store: GraphStore, driver, neo4j_info, clock) -> None:
    await store.create_entities([_ent("a", "x")])
    await store.read_graph_answer()
    # another store of the same namespace (as another process would be) writes
    other = GraphStore(driver, database=neo4j_info.database, namespace=store.namespace, clock=clock)
    await other.add_observations([ObservationAdd(entityName="a", contents=["y"])])
    text, structured = await store.read_graph_answer()
    assert structured["entities"][0]["observations"] == ["x", "y"]
    assert (text, structured) == await _fresh(store)
    # a write in another namespace changes the database position too: rebuilt, same answer
    elsewhere = GraphStore(
        driver, database=neo4j_info.database, namespace=store.namespace + "-other", clock=clock
    )
    await _kept(store)
    misses = store._answers.misses
    await elsewhere.create_entities([_ent("z")])
    assert await store.read_graph_answer() == (text, structured)
    assert store._answers.misses >= misses + 1


async def test_a_relation_closing_later_is_not_shown_past_its_moment(store: GraphStore, clock) -> None:
    now = clock.now()
    await store.create_entities([_ent("a"), _ent("b")])
    await store.create_relations(
        [
            _rel("a", "b", "knows", validUntil=(now + timedelta(hours=1)).isoformat()),
            _rel("b", "a", "opens_later", validFrom=(now + timedelta(hours=2)).isoformat()),
        ]
    )
    _, before = await _kept(store)
    assert [r["relationType"] for r in before["relations"]] == ["knows"]
    clock.advance(minutes=90)  # no write, but the answer changed at +1 h
    _, later = await store.read_graph_answer()
    assert later["relations"] == []
    clock.advance(hours=1)  # and again at +2 h
    _, last = await store.read_graph_answer()
    assert [r["relationType"] for r in last["relations"]] == ["opens_later"]
    assert last == (await _fresh(store))[1]


async def test_an_earlier_moment_is_never_answered_from_a_later_read(store: GraphStore, clock) -> None:
    await store.create_entities([_ent("a")])
    t0 = clock.now()
    clock.advance(hours=1)
    await store.create_entities([_ent("b")])
    _, now_answer = await store.read_graph_answer()
    assert [e["name"] for e in now_answer["entities"]] == ["a", "b"]
    clock.set(t0)  # an injected clock may go back: the kept answer (read later) must not serve it
    _, then = await store.read_graph_answer()
    assert [e["name"] for e in then["entities"]] == ["a"]


async def test_routing_driver_turns_the_cache_off(neo4j_info, namespace, clock) -> None:
    uri = neo4j_info.uri.replace("bolt://", "neo4j://")
    async with AsyncGraphDatabase.driver(uri, auth=(neo4j_info.username, neo4j_info.password)) as routing:
        assert not cache_applies(routing)
        store = GraphStore(routing, database=neo4j_info.database, namespace=namespace, clock=clock)
        await store.create_entities([_ent("a", "x")])
        first = await store.read_graph_answer()
        assert await store.read_graph_answer() == first
        assert (store._answers.hits, store._answers.misses) == (0, 0)
        assert AnswerCache(routing, neo4j_info.database).enabled is False


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_another_process_write_shows_in_the_next_read(transport, neo4j_info, namespace) -> None:
    async with session(transport, neo4j_info, namespace, "--tools", "reference") as reader:
        await ok(
            reader, "create_entities", {"entities": [{"name": "a", "entityType": "t", "observations": []}]}
        )
        first = await reader.call_tool("read_graph", {})
        again = await reader.call_tool("read_graph", {})
        assert text_of(again) == text_of(first) and again.structured_content == first.structured_content
        async with session("stdio", neo4j_info, namespace, "--tools", "reference") as writer:
            await ok(writer, "add_observations", {"observations": [{"entityName": "a", "contents": ["new"]}]})
        after = await reader.call_tool("read_graph", {})
        assert after.structured_content["entities"][0]["observations"] == ["new"]
        assert json.loads(text_of(after)) == after.structured_content
