"""Issue 39: search_memory in a small namespace beside others holding copies of its sentences.  On 5.26
the vector indexes hold every namespace, so the copies would take the first hits: a namespace of at most
``EXACT_CAP`` observations is ranked exactly over its own vectors (``search_memory_exact``); on 2026.x
the filtered indexes find its own inside the index.  Either way: its own answers, the same as alone."""

from __future__ import annotations

from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from support.kg import ent
from support.servers import Neo4jInfo

ENTITIES = [
    ent("Ana Ivanova", "person", ["runs the Dublin warehouse", "plays the cello on Sundays"]),
    ent("Tariq Aziz", "person", ["maintains the Kubernetes cluster", "commutes by bicycle"]),
    ent("Dublin warehouse", "place", ["stores spare server racks", "opens at seven every morning"]),
    ent("Orion Project", "project", ["migrates billing to the new ledger", "ships in March"]),
]
QUESTIONS = ["who plays the cello", "which place stores server racks", "what moves billing to a ledger"]
#: copies enough to fill the first vector fetch (500) with others' hits however empty the database
COPIES = 64


async def answers(store: GraphStore) -> list[list[tuple[str, str | None]]]:
    out = []
    for q in QUESTIONS:
        searched = await store.search_memory_traced(q, limit=10)
        out.append([(h.name, h.observation) for h in searched.result.hits])
    return out


async def test_own_answers_beside_copies_the_same_as_alone(
    semantic_store: GraphStore, driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, embedder: Any
) -> None:
    await semantic_store.create_entities([EntityIn(**e) for e in ENTITIES])
    alone = await answers(semantic_store)
    assert [a[0][0] for a in alone] == ["Ana Ivanova", "Dublin warehouse", "Orion Project"]
    others = [f"{namespace}-copy{i:02d}" for i in range(COPIES)]
    try:
        for other in others:
            copy = GraphStore(driver, database=neo4j_info.database, namespace=other, embedder=embedder)
            await copy.create_entities([EntityIn(**e) for e in ENTITIES])
        assert await answers(semantic_store) == alone
        searched = await semantic_store.search_memory_traced(QUESTIONS[0], limit=10)
        if not searched.diagnostics.filtered:  # 5.26: ranked exactly at once, the index never asked
            assert searched.diagnostics.exact == ["entity", "vector"]
            assert searched.diagnostics.starved == []
    finally:
        await driver.execute_query(
            "MATCH (n:KgNode|Observation) WHERE n.namespace IN $others DETACH DELETE n",
            others=others,
            database_=neo4j_info.database,
        )
