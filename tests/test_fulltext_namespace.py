"""The fulltext index serves every namespace and indexes each node's namespace: search asks it for its own
namespace's best (kg_neo4j/text.py fulltext_query), so a namespace beside another that holds hundreds of
better matches finds its own at the first read, whatever characters its name holds, and a question's words
never match a namespace's name."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock
from kg_neo4j.models import EntityIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.hybrid_search import first_vector_k
from kg_neo4j.text import fulltext_query
from tests.support.servers import Neo4jInfo

QUESTION = "zebra quokka"
OWN = "the zebra and the quokka were moved to the north field in the long wet spring of that year"


@pytest_asyncio.fixture(scope="module")
async def crowd(driver: AsyncDriver, neo4j_info: Neo4jInfo) -> AsyncIterator[str]:
    """A namespace of this module's own holding more better matches than search's first fulltext read."""
    ns = f"crowd-{uuid.uuid4().hex}"
    store = GraphStore(driver, database=neo4j_info.database, namespace=ns, clock=ManualClock())
    many = first_vector_k(5, store.fusion) + 100
    for start in range(0, many, 100):
        await store.create_entities(
            [
                EntityIn(
                    name=f"Crowd {i}", entityType="note", observations=[f"zebra quokka zebra quokka {i}"]
                )
                for i in range(start, min(start + 100, many))
            ]
        )
    yield ns
    await driver.execute_query(
        "MATCH (n {namespace: $ns}) DETACH DELETE n", ns=ns, database_=neo4j_info.database
    )


@pytest.mark.parametrize(
    "name",
    [
        "plain {id}",
        'a "quoted" name {id}',
        "back\\slash {id}",
        "o'brien {id}",
        "Zoë café {id}",
        "日本語チーム {id}",
        "a:b (c) AND d* {id}",
        "{id}",
        "the",  # only a stop word: the analyzer leaves no word of it, and the clause is dropped
        "!!!",  # no word at all: likewise
    ],
)
async def test_a_namespace_finds_its_own_beside_a_crowd_at_the_first_read(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, crowd: str, name: str
) -> None:
    ns = name.format(id=uuid.uuid4().hex[:8])
    wipe = "MATCH (n {namespace: $ns}) DETACH DELETE n"
    await driver.execute_query(wipe, ns=ns, database_=neo4j_info.database)  # an exact name of an earlier run
    store = GraphStore(driver, database=neo4j_info.database, namespace=ns, clock=ManualClock())
    try:
        await store.create_entities([EntityIn(name="Farm log", entityType="note", observations=[OWN])])
        traced = await store.search_memory_traced(QUESTION, limit=5)
        assert [(h.name, h.observation) for h in traced.result.hits] == [("Farm log", OWN)]
        if "{id}" in name:  # its own best at once; a name with no word reads the crowd's page first
            assert traced.diagnostics.rounds == 1 and traced.diagnostics.starved == []
    finally:
        await driver.execute_query(wipe, ns=ns, database_=neo4j_info.database)


async def test_a_question_never_matches_a_namespace_name(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    ns = f"{namespace} walrus"
    store = GraphStore(driver, database=neo4j_info.database, namespace=ns, clock=ManualClock())
    await store.create_entities([EntityIn(name="Farm log", entityType="note", observations=[OWN])])
    assert (await store.search_memory("walrus", limit=5)).hits == []
    assert [h.name for h in (await store.search_memory("quokka walrus", limit=5)).hits] == ["Farm log"]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "namespace", "query"),
    [
        (
            "Zebra AND quokka?",
            "farm",
            '+namespace:"farm"^0 +(name:(zebra and quokka) entityType:(zebra and quokka) text:(zebra and quokka))',
        ),
        ("x", 'a "b" \\c', '+namespace:"a \\"b\\" \\\\c"^0 +(name:(x) entityType:(x) text:(x))'),
        ("?!", "farm", ""),
    ],
)
def test_fulltext_query(text: str, namespace: str, query: str) -> None:
    assert fulltext_query(text, namespace) == query
