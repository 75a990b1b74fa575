"""The write statements lock before they look: create_relations holds its start node's write lock and
create_entities the entity's, from before their existence checks until commit, even when they end up
writing nothing (the statements take it with ``REMOVE n.kg_lock`` of a property the node never has,
which locks without writing)."""

from __future__ import annotations

import asyncio
from typing import Any

from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.store import GraphStore

# Plain Cypher on purpose: a second writer touching the node the open transaction must hold.
PROBE = "MATCH (n:KgNode {namespace: $ns, name: $name}) SET n.probe = 1"


async def assert_holds_lock(store: GraphStore, name: str, write: Any) -> None:
    async with store.driver.session(database=store.database) as session:
        tx = await session.begin_transaction()
        try:
            await write(store.within(tx))
            probe = asyncio.create_task(
                store.driver.execute_query(PROBE, ns=store.namespace, name=name, database_=store.database)
            )
            await asyncio.sleep(1.0)
            assert not probe.done(), f"a concurrent write to {name!r} went through: no lock held"
            await tx.commit()
        except BaseException:
            await tx.rollback()
            raise
        await asyncio.wait_for(probe, 30)


async def test_create_relations_locks_the_start_node(store: GraphStore) -> None:
    await store.create_entities([EntityIn(name=n, entityType="t", observations=[]) for n in ("A", "B")])
    rel = RelationIn.model_validate({"from": "A", "to": "B", "relationType": "knows"})
    assert len(await store.create_relations([rel])) == 1

    async def write(view: GraphStore) -> None:
        # already there: nothing is created, so only the statement's own lock can hold A
        assert await view.create_relations([rel]) == []

    await assert_holds_lock(store, "A", write)
    # the probe wrote nothing the statements care about, and the lock property never stays
    records, _, _ = await store.driver.execute_query(
        "MATCH (n:KgNode {namespace: $ns}) RETURN collect(n.kg_lock) AS locks",
        ns=store.namespace,
        database_=store.database,
    )
    assert records[0]["locks"] == []


async def test_create_entities_locks_before_looking_at_labels(store: GraphStore) -> None:
    await store.create_entities([EntityIn(name="A", entityType="t", observations=[])])

    async def write(view: GraphStore) -> None:
        # already an entity: skipped, so only the statement's own lock can hold A
        assert await view.create_entities([EntityIn(name="A", entityType="t", observations=[])]) == []

    await assert_holds_lock(store, "A", write)
