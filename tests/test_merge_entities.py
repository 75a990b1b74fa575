"""Issue 31, items 2 and 4: merge_entities and unmerge_entities through real MCP sessions
(docs/entities.md#merging-and-undoing): observations moved, deduplicated and in order; relations re-pointed
with every property; colliding relations and self-loops; aliases shown and found; the reference profile's
shape; entity_history; asOf reads before the merge; unmerge restoring every read; errors naming the field;
knowledge trust never raised; writes that resolve an alias, on and off."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from support.kg import by_name, ent, err, ok, rel_keys, session
from support.servers import Neo4jInfo

SERVE = ("--tools", "all")


async def call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, f"{tool}({args}) failed: {text}"
    return json.loads(text)


async def moment() -> str:
    """A moment strictly between the calls before and after it (the server's clock is the system clock)."""
    await asyncio.sleep(0.003)
    at = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.003)
    return at


READS: list[tuple[str, dict[str, Any]]] = [
    ("read_graph", {}),
    ("open_nodes", {"names": ["Alice Smith", "A. Smith", "alice smith", "Bob", "Acme", "Placeholder Pat"]}),
    ("search_nodes", {"query": "smith"}),
    ("search_nodes", {"query": "engineer"}),
    ("traverse_graph", {"start": ["Alice Smith", "A. Smith", "alice smith", "Bob"], "maxDepth": 2}),
]


async def reads(s: Any, at: str | None = None) -> list[Any]:
    return [await call(s, t, {**a, **({"asOf": at} if at else {})}) for t, a in READS]


async def seed(s: Any) -> None:
    await call(
        s,
        "create_entities",
        {
            "entities": [
                ent("Alice Smith", "person", ["engineer", "lives in Leeds"]),
                ent("A. Smith", "person", ["plays chess", "engineer", "likes tea"]),
                ent("alice smith", "person", ["likes tea", "has a cat"]),
                ent("Bob", "person", ["Alice's colleague"]),
                ent("Acme", "company", ["makes anvils"]),
            ]
        },
    )
    await call(
        s,
        "create_relations",
        {
            "relations": [
                {"from": "Alice Smith", "to": "Acme", "relationType": "works_at", "weight": 0.9},
                {
                    "from": "A. Smith",
                    "to": "Acme",
                    "relationType": "works_at",
                    "weight": 0.4,
                    "reasoning": "badge seen",
                },
                {
                    "from": "A. Smith",
                    "to": "Bob",
                    "relationType": "knows",
                    "weight": 0.7,
                    "reasoning": "met at work",
                    "source": "notes",
                    "validFrom": "2020-01-01T00:00:00Z",
                    "validUntil": "2099-01-01T00:00:00Z",
                },
                {"from": "Bob", "to": "alice smith", "relationType": "emails"},
                {"from": "alice smith", "to": "Placeholder Pat", "relationType": "mentors"},
                {"from": "A. Smith", "to": "alice smith", "relationType": "same_as"},
                {"from": "Alice Smith", "to": "A. Smith", "relationType": "knows"},
            ]
        },
    )


async def test_merge_moves_dedupes_repoints_and_unmerge_restores_every_read(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await seed(s)
        before = await reads(s)
        t_before = await moment()
        merged = await call(
            s, "merge_entities", {"into": "Alice Smith", "names": ["A. Smith", "alice smith"]}
        )
        assert merged["into"] == "Alice Smith" and merged["names"] == ["A. Smith", "alice smith"]
        assert merged["aliases"] == ["A. Smith", "alice smith"]
        # engineer (A. Smith) and likes tea (alice smith, after A. Smith's) are exact duplicates
        assert merged["counts"] == {
            "observationsMoved": 3,
            "observationsDropped": 2,
            "relationsMoved": 3,
            "relationsCollided": 1,
            "selfLoops": 2,
            "causalDropped": 0,
        }
        t_after = await moment()

        graph = await call(s, "read_graph", {})
        ents = by_name(graph)
        assert "A. Smith" not in ents and "alice smith" not in ents
        assert ents["Alice Smith"]["observations"] == [
            "engineer",
            "lives in Leeds",
            "plays chess",
            "likes tea",
            "has a cat",
        ]
        assert rel_keys(graph) == sorted(
            [
                ("Alice Smith", "Acme", "works_at"),
                ("Alice Smith", "Bob", "knows"),
                ("Bob", "Alice Smith", "emails"),
                ("Alice Smith", "Placeholder Pat", "mentors"),
            ]
        )
        # re-pointed with every property; the collision keeps the kept entity's relation as it was
        trav = await call(s, "traverse_graph", {"start": ["Alice Smith"], "maxDepth": 1})
        rels = {(r["from"], r["to"], r["relationType"]): r for r in trav["relations"]}
        knows = rels[("Alice Smith", "Bob", "knows")]
        assert (knows["weight"], knows["reasoning"], knows["source"]) == (0.7, "met at work", "notes")
        assert knows["validFrom"].startswith("2020-01-01") and knows["validUntil"].startswith("2099-01-01")
        assert rels[("Alice Smith", "Acme", "works_at")]["weight"] == 0.9

        # aliases: open_nodes shows them and answers the kept entity for an alias name
        opened = await call(s, "open_nodes", {"names": ["A. Smith"]})
        assert [e["name"] for e in opened["entities"]] == ["Alice Smith"]
        assert opened["entities"][0]["aliases"] == ["A. Smith", "alice smith"]
        found = await call(s, "search_nodes", {"query": "a. smi"})
        assert [e["name"] for e in found["entities"]] == ["Alice Smith"]

        # asOf before the merge: every read as it was
        assert await reads(s, t_before) == before

        history = await call(s, "entity_history", {"name": "Alice Smith"})
        merges = [e for e in history["events"] if e["event"] == "merged"]
        assert len(merges) == 1 and merges[0]["detail"]["names"] == ["A. Smith", "alice smith"]
        assert merges[0]["detail"]["merge"] == merged["merge"] and merges[0]["detail"]["by"] == merged["by"]
        assert t_before < merges[0]["at"] < t_after
        alias_history = await call(s, "entity_history", {"name": "A. Smith"})
        assert alias_history["events"][-1]["event"] == "merged_into"
        assert alias_history["events"][-1]["detail"]["mergedInto"] == "Alice Smith"

        undone = await call(s, "unmerge_entities", {"name": "Alice Smith"})
        assert undone["merge"] == merged["merge"] and undone["restored"] == ["A. Smith", "alice smith"]
        assert await reads(s) == before
        assert await reads(s, t_before) == before
        history = await call(s, "entity_history", {"name": "Alice Smith"})
        assert [e["event"] for e in history["events"] if e["event"] in ("merged", "unmerged")] == [
            "merged",
            "unmerged",
        ]
        message = await err(s, "unmerge_entities", {"name": "Alice Smith"})
        assert "undone already" in message and "name" in message


ERRORS: list[tuple[dict[str, Any], list[str]]] = [
    ({"into": "Nobody", "names": ["Bob"]}, ["into", "Nobody"]),
    ({"into": "Bob", "names": ["Ghost"]}, ["names", "Ghost"]),
    ({"into": "Bob", "names": ["Bob"]}, ["names", "itself"]),
    ({"into": "Bob", "names": ["Acme"]}, ["force", "company"]),
    ({"into": "Bob", "names": ["Rule one"]}, ["names", "knowledge"]),
    ({"into": "Bob", "names": ["Carol", "Carol"]}, ["names", "twice"]),
    ({"into": "Bob", "names": []}, ["names"]),
    ({"into": "Bob", "names": ["Carol"], "force": None}, ["force"]),
    ({"name": "Bob"}, ["into"]),
]


async def test_merge_errors_name_the_field_and_write_nothing(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await call(
            s,
            "create_entities",
            {"entities": [ent("Bob", "person", ["x"]), ent("Carol", "person"), ent("Acme", "company")]},
        )
        await call(
            s,
            "store_knowledge",
            {"name": "Rule one", "content": "test first", "type": "rule", "trust": "pattern"},
        )
        before = await call(s, "read_graph", {})
        for args, words in ERRORS:
            message = await err(s, "merge_entities", args)
            for w in words:
                assert w in message, (args, message)
        assert await call(s, "read_graph", {}) == before
        for args, words in [
            ({"name": "Bob"}, ["name", "no merge"]),
            ({"name": "Ghost"}, ["name", "no merge"]),
            ({"merge": "m-1"}, ["name"]),
        ]:
            message = await err(s, "unmerge_entities", args)
            for w in words:
                assert w in message, (args, message)
        first = await call(s, "merge_entities", {"into": "Bob", "names": ["Carol"]})
        await call(s, "create_entities", {"entities": [ent("Dan", "person")]})
        await call(s, "merge_entities", {"into": "Bob", "names": ["Dan"]})
        message = await err(s, "unmerge_entities", {"name": "Bob", "merge": first["merge"]})
        assert "merge" in message and "not the last" in message, message
        message = await err(s, "unmerge_entities", {"name": "Bob", "merge": "m-unknown"})
        assert "merge" in message and first["merge"] in message, message


async def test_force_merges_other_types_and_alias_errors(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await call(
            s, "create_entities", {"entities": [ent("Bob", "person", ["x"]), ent("Bobby", "robot", ["y"])]}
        )
        merged = await call(s, "merge_entities", {"into": "Bob", "names": ["Bobby"], "force": True})
        assert merged["aliases"] == ["Bobby"]
        assert by_name(await call(s, "read_graph", {}))["Bob"] == {
            "name": "Bob",
            "entityType": "person",
            "observations": ["x", "y"],
        }
        message = await err(s, "merge_entities", {"into": "Bob", "names": ["Bobby"]})
        assert "names" in message and "alias" in message


async def test_reference_profile_keeps_the_shape(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await call(
            s, "create_entities", {"entities": [ent("Bob", "person", ["x"]), ent("Bobby", "person", ["y"])]}
        )
        await call(s, "merge_entities", {"into": "Bob", "names": ["Bobby"]})
        assert (await call(s, "open_nodes", {"names": ["Bob"]}))["entities"][0]["aliases"] == ["Bobby"]
    async with session("stdio", neo4j_info, namespace, "--tools", "reference") as s:
        opened = await ok(s, "open_nodes", {"names": ["Bobby"]})
        assert opened == {
            "entities": [{"name": "Bob", "entityType": "person", "observations": ["x", "y"]}],
            "relations": [],
        }


async def test_knowledge_merge_never_raises_trust(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        for name, trust in [("Strong", "principle"), ("Weak", "inference")]:
            await call(
                s,
                "store_knowledge",
                {"name": name, "content": f"{name} content", "type": "rule", "trust": trust, "quote": "q"},
            )

        async def state() -> list[dict[str, Any]]:
            """The knowledge as stored (retention, computed at the read's moment, left out)."""
            items = await call(s, "list_knowledge", {"names": ["Strong", "Weak"], "includeExpired": True})
            return [{k: v for k, v in i.items() if k != "retention"} for i in items["knowledge"]]

        before = await state()
        merged = await call(s, "merge_entities", {"into": "Strong", "names": ["Weak"]})
        assert merged["trust"] == "inference"
        item = (await call(s, "list_knowledge", {"names": ["Strong"]}))["knowledge"][0]
        assert item["trust"] == "inference"
        await call(s, "unmerge_entities", {"name": "Strong", "merge": merged["merge"]})
        assert await state() == before


async def test_aliases_found_after_a_chain_and_by_search_memory(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await call(
            s,
            "create_entities",
            {
                "entities": [
                    ent("Robert Jones", "person", ["drives a tram"]),
                    ent("Bob Jones", "person", ["collects stamps"]),
                    ent("R. Jones", "person", ["lives in York"]),
                ]
            },
        )
        at_first = await moment()
        await call(s, "merge_entities", {"into": "Bob Jones", "names": ["R. Jones"]})
        at_between = await moment()
        await call(s, "merge_entities", {"into": "Robert Jones", "names": ["Bob Jones"]})
        # the alias of an alias follows the chain; each read asOf answers the entity of that moment
        for at, name, aliases in [
            (None, "Robert Jones", ["Bob Jones", "R. Jones"]),
            (at_between, "Bob Jones", ["R. Jones"]),
        ]:
            opened = await call(s, "open_nodes", {"names": ["R. Jones"], **({"asOf": at} if at else {})})
            assert [(e["name"], e.get("aliases")) for e in opened["entities"]] == [(name, aliases)]
        opened = await call(s, "open_nodes", {"names": ["R. Jones"], "asOf": at_first})
        assert [(e["name"], e.get("aliases")) for e in opened["entities"]] == [("R. Jones", None)]
        found = await call(s, "search_nodes", {"query": "r. jones"})
        assert [e["name"] for e in found["entities"]] == ["Robert Jones"]
        recalled = await call(s, "search_memory", {"query": "where does R. Jones live?"})
        assert recalled["entities"][0]["name"] == "Robert Jones", recalled
        # a name merged away is free: an entity made under it is its own, and then undoing the merge is refused
        await call(s, "create_entities", {"entities": [ent("Bob Jones", "person", ["a namesake"])]})
        message = await err(s, "unmerge_entities", {"name": "Robert Jones"})
        assert "name" in message and "Bob Jones" in message and "made after the merge" in message
        # an alias no name, type or observation holds: found only as a mention of the alias
        await call(s, "create_entities", {"entities": [ent("Bertie", "person", [])]})
        await call(s, "merge_entities", {"into": "Robert Jones", "names": ["Bertie"]})
        recalled = await call(s, "search_memory", {"query": "Bertie"})
        assert [e["name"] for e in recalled["entities"]][:1] == ["Robert Jones"], recalled


@pytest.mark.parametrize("resolve", [True, False])
async def test_writes_resolve_aliases_when_set(neo4j_info: Neo4jInfo, namespace: str, resolve: bool) -> None:
    flags = (*SERVE, "--resolve-writes") if resolve else SERVE
    async with session("stdio", neo4j_info, namespace, *flags) as s:
        await call(
            s, "create_entities", {"entities": [ent("Ann Lee", "person", ["x"]), ent("ann lee", "person")]}
        )
        await call(s, "merge_entities", {"into": "Ann Lee", "names": ["ann lee"]})
        created = await call(
            s, "create_entities", {"entities": [ent("ann lee", "person", ["y"]), ent("Zed", "person")]}
        )
        added = await call(
            s, "add_observations", {"observations": [{"entityName": "ann lee", "contents": ["z"]}]}
        )
        graph = by_name(await call(s, "read_graph", {}))
        if resolve:
            assert created == {
                "entities": [{"name": "Zed", "entityType": "person", "observations": []}],
                "resolved": [{"name": "ann lee", "entity": "Ann Lee", "addedObservations": ["y"]}],
            }
            assert added == [{"entityName": "ann lee", "addedObservations": ["z"], "resolvedTo": "Ann Lee"}]
            assert graph["Ann Lee"]["observations"] == ["x", "y", "z"] and "ann lee" not in graph
        else:
            assert [e["name"] for e in created] == ["ann lee", "Zed"]
            assert added == [{"entityName": "ann lee", "addedObservations": ["z"]}]
            assert graph["Ann Lee"]["observations"] == ["x"] and graph["ann lee"]["observations"] == [
                "y",
                "z",
            ]
    if resolve:
        # the reference profile never resolves, even with the setting
        async with session("stdio", neo4j_info, namespace, "--tools", "reference", "--resolve-writes") as s:
            message = await err(
                s, "add_observations", {"observations": [{"entityName": "ann lee", "contents": ["w"]}]}
            )
            assert "ann lee not found" in message
            assert "w" not in by_name(await ok(s, "read_graph", {}))["Ann Lee"]["observations"]


async def test_concurrent_merges_of_one_name(neo4j_info: Neo4jInfo, namespace: str) -> None:
    """Two sessions merge the same name into two entities at once: one merge wins, the other is refused
    naming the alias, and an undo at once with a merge stays consistent."""
    async with (
        session("stdio", neo4j_info, namespace, *SERVE) as a,
        session("stdio", neo4j_info, namespace, *SERVE) as b,
    ):
        await call(
            a,
            "create_entities",
            {
                "entities": [
                    ent("Keep A", "person", ["a"]),
                    ent("Keep B", "person", ["b"]),
                    ent("Dup", "person", ["d"]),
                ]
            },
        )
        results = await asyncio.gather(
            a.call_tool("merge_entities", {"into": "Keep A", "names": ["Dup"]}),
            b.call_tool("merge_entities", {"into": "Keep B", "names": ["Dup"]}),
        )
        assert sorted(r.is_error for r in results) == [False, True], [r.content[0].text for r in results]
        won = 0 if not results[0].is_error else 1
        loser = results[1 - won].content[0].text
        assert "names" in loser and "Dup" in loser and "alias" in loser, loser
        kept = ["Keep A", "Keep B"][won]
        graph = by_name(await call(a, "read_graph", {}))
        assert graph[kept]["observations"] == [kept[-1].lower(), "d"] and "Dup" not in graph
        undone = await asyncio.gather(
            a.call_tool("unmerge_entities", {"name": kept}), b.call_tool("unmerge_entities", {"name": kept})
        )
        assert sorted(r.is_error for r in undone) == [False, True], [r.content[0].text for r in undone]
        graph = by_name(await call(a, "read_graph", {}))
        assert graph["Dup"]["observations"] == ["d"] and graph[kept]["observations"] == [kept[-1].lower()]


async def test_a_write_to_a_name_merged_twice_goes_to_the_entity_it_was_merged_into_last(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """One alias rule for reads and writes (store/aliases.py): a name merged into Ann Lee, taken again and
    merged into Zed names both for a read, and a write that resolves goes to Zed, the later merge."""
    async with session("stdio", neo4j_info, namespace, *SERVE) as s:
        await call(
            s, "create_entities", {"entities": [ent("Ann Lee", "person", ["x"]), ent("ann lee", "person")]}
        )
        await call(s, "merge_entities", {"into": "Ann Lee", "names": ["ann lee"]})
        await call(
            s, "create_entities", {"entities": [ent("ann lee", "person"), ent("Zed", "person", ["z"])]}
        )
        await call(s, "merge_entities", {"into": "Zed", "names": ["ann lee"]})
        opened = await call(s, "open_nodes", {"names": ["ann lee"]})
        assert sorted(e["name"] for e in opened["entities"]) == ["Ann Lee", "Zed"]
    async with session("stdio", neo4j_info, namespace, *SERVE, "--resolve-writes") as s:
        added = await call(
            s, "add_observations", {"observations": [{"entityName": "ann lee", "contents": ["w"]}]}
        )
        assert added == [{"entityName": "ann lee", "addedObservations": ["w"], "resolvedTo": "Zed"}]
        graph = by_name(await call(s, "read_graph", {}))
        assert graph["Zed"]["observations"] == ["z", "w"] and graph["Ann Lee"]["observations"] == ["x"]
