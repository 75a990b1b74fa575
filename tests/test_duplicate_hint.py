"""Issue 38 item 3: create_entities names the existing entity a new one probably duplicates, with the score
and reasons find_duplicates gives that pair; nothing is merged; the reference profile's answer keeps its
shape; on by default where the embedding model is and off without it, --duplicate-hint and
--no-duplicate-hint deciding otherwise; entities written before the hint's keys get them from a batched,
resumable backfill, run at start only when the hint is on."""

from __future__ import annotations

from typing import Any

import pytest
from test_find_duplicates import found

from kg_neo4j.models import Entity, EntityIn
from kg_neo4j.store import GraphStore, duplicate_hints
from kg_neo4j.store.connection import bootstrap
from support.kg import ent, ok, session
from support.servers import Neo4jInfo, server_env, stdio_session

MARTHA = ent("Martha Okafor", "person", ["born 1984-03-12", "id number 48213377"])
TYPO = ent("Marhta Okafor", "person", ["born 1984-03-12", "lives in Leith"])


async def test_a_probable_duplicate_is_named_and_nothing_merged(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with session("stdio", neo4j_info, namespace, "--duplicate-hint") as s:
        first = await ok(s, "create_entities", {"entities": [MARTHA, ent("Tomas Berg", "person")]})
        assert isinstance(first, list)  # nothing to hint: the answer keeps the reference's shape
        answer = await ok(s, "create_entities", {"entities": [TYPO, ent("Priya Raman", "person")]})
        [hint] = answer["duplicates"]
        assert (hint["name"], hint["duplicateOf"]) == ("Marhta Okafor", "Martha Okafor")
        assert [e["name"] for e in answer["entities"]] == ["Marhta Okafor", "Priya Raman"]
        # as find_duplicates gives that pair
        [group] = (await found(s, {"names": ["Marhta Okafor"]}))["groups"]
        assert set(group["names"]) == {"Martha Okafor", "Marhta Okafor"}
        assert hint["score"] == group["score"]
        assert {r["code"] for r in hint["reasons"]} == {r["code"] for r in group["reasons"]}
        assert {"similar_spelling", "overlapping_observations"} <= {r["code"] for r in hint["reasons"]}
        both = await ok(s, "open_nodes", {"names": ["Martha Okafor", "Marhta Okafor"]})
        assert len(both["entities"]) == 2  # nothing merged


@pytest.mark.parametrize(
    ("model", "flags", "hinted"),
    [
        ("none", (), False),  # without the model: off unless asked
        ("all-MiniLM-L6-v2", (), True),  # with it (the default): on
        ("all-MiniLM-L6-v2", ("--no-duplicate-hint",), False),
    ],
)
async def test_on_by_default_with_the_model(
    neo4j_info: Neo4jInfo, namespace: str, model: str, flags: tuple[str, ...], hinted: bool
) -> None:
    env = server_env(neo4j_info, KG_NEO4J_EMBEDDING_MODEL=model)
    async with stdio_session(neo4j_info, "--namespace", namespace, *flags, env=env) as s:
        await ok(s, "create_entities", {"entities": [MARTHA]})
        answer = await ok(s, "create_entities", {"entities": [TYPO]})
    if hinted:
        assert [(h["name"], h["duplicateOf"]) for h in answer["duplicates"]] == [
            ("Marhta Okafor", "Martha Okafor")
        ]
    else:
        assert isinstance(answer, list) and [e["name"] for e in answer] == ["Marhta Okafor"]


async def test_the_reference_profile_answers_the_list(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "reference", "--duplicate-hint") as s:
        await ok(s, "create_entities", {"entities": [MARTHA]})
        answer = await ok(s, "create_entities", {"entities": [TYPO]})
        assert isinstance(answer, list) and [e["name"] for e in answer] == ["Marhta Okafor"]


async def test_the_backfill_is_batched_and_resumable(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any, driver: Any, capfd: Any
) -> None:
    async with session("stdio", neo4j_info, namespace, "--duplicate-hint") as s:
        await ok(
            s, "create_entities", {"entities": [MARTHA, *(ent(f"Person {i}", "person") for i in range(4))]}
        )
    # entities written before the hint: no words
    sync_driver.execute_query(
        "MATCH (n:Entity) WHERE n.namespace = $ns REMOVE n.dup_last, n.dup_start, n.dup_end, n.dup_sound",
        ns=namespace,
    )
    db = neo4j_info.database
    assert await duplicate_hints.backfill(driver, db, namespace, batch=2, max_batches=1) == 2  # interrupted
    assert await duplicate_hints.backfill(driver, db, namespace, batch=2) == 3  # resumes with the rest
    assert "duplicate hint keys: 3/3" in capfd.readouterr().err  # progress on stderr
    assert await duplicate_hints.backfill(driver, db, namespace) == 0
    async with session("stdio", neo4j_info, namespace, "--duplicate-hint") as s:
        answer = await ok(s, "create_entities", {"entities": [TYPO]})
        assert [h["duplicateOf"] for h in answer["duplicates"]] == ["Martha Okafor"]


async def test_a_start_without_the_hint_does_not_sweep(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any, driver: Any
) -> None:
    """The backfill runs at start only with the hint on: a user who did not ask for it never waits for a
    sweep of every entity after an upgrade (with it on, the sweep is recorded once database-wide, so a
    namespace's entities are checked through ``backfill`` above)."""
    async with session("stdio", neo4j_info, namespace) as s:
        await ok(s, "create_entities", {"entities": [MARTHA]})
    sync_driver.execute_query(
        "MATCH (n:Entity) WHERE n.namespace = $ns REMOVE n.dup_last, n.dup_start, n.dup_end, n.dup_sound",
        ns=namespace,
    )
    await bootstrap(driver, neo4j_info.database, duplicate_hint=False)
    records, _, _ = sync_driver.execute_query(
        "MATCH (n:Entity) WHERE n.namespace = $ns RETURN n.dup_last AS last", ns=namespace
    )
    assert [r["last"] for r in records] == [None]
    assert await duplicate_hints.backfill(driver, neo4j_info.database, namespace) == 1


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("Martha Okafor", "Marhta Okafor"),  # the given name mistyped
        ("Tomas Berg", "Tomas Bregg"),  # the surname mistyped: as it sounds
        ("Daniel Ferreira", "Daniel Fereira"),  # the surname mistyped: a letter dropped
        ("Priya Raman", "Ramen Priya"),  # swapped and mistyped
        ("Helen Okoro", "Okoro Helen"),  # swapped
        ("Robert Sandoval", "Bob Sandoval"),  # a nickname
        ("Project Apollo 1234", "Project Apolo 1234"),  # a middle word mistyped
    ],
)
async def test_each_kind_of_name_rule_is_found(store: GraphStore, existing: str, new: str) -> None:
    facts = ["born 1984-03-12", "id number 48213377", "lives in Leith"]
    await store.create_entities([EntityIn(name=existing, entityType="person", observations=facts)])
    others = [EntityIn(name=n, entityType="person", observations=facts[:1]) for n in DISTRACTORS]
    await store.create_entities(others)

    async def write(st: GraphStore, candidates: dict[str, list[str]]) -> list[Entity]:
        return await st.create_entities(
            [EntityIn(name=new, entityType="person", observations=facts)], candidates
        )

    _, hints = await duplicate_hints.with_hints(store, write, lambda made: [e.name for e in made])
    assert [(h.name, h.duplicateOf) for h in hints] == [(new, existing)]


#: Names beside each pair above that no name rule relates to either (of one surname, first name or letters).
DISTRACTORS = ["Martin Okafor", "Tomas Lindqvist", "Daniel Ferguson", "Priya Ramanathan", "Helen Mirza"]
