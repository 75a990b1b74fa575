"""The reference's behavioural tests (docs/reference-server.md#behavioural-tests)
through a real MCP client session (stdio and HTTP) on a real Neo4j.

One server per test function (a start costs about a second); inside a function each spec
case is a labelled block that starts from an empty namespace (``reset``).  Every call goes
through ``ok``/``err`` (tests/kg_helpers.py), which also checks on every answer that the text is
exactly ``json.dumps(x, indent=2, ensure_ascii=False)`` (or the delete confirmation), that
structuredContent is present and agrees with the text, and that no object carries a "type" key.
"""

from __future__ import annotations

import pytest
from kg_helpers import by_name, dumps, ent, err, names, ok, rel, rel_keys, reset, session, text_of

# --------------------------------------------------------------------------- 8.1


async def test_8_1_entity_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        # -- 8.1 Create basic entities: returns array with one entity; graph contains one entity.
        created = await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
        assert created == [ent("Alice", "person", ["Is a student"])]
        graph = await ok(s, "read_graph")
        assert graph == {"entities": [ent("Alice", "person", ["Is a student"])], "relations": []}

        # -- 8.1 Skip existing entity: same name again (different type/observations) returns [], one Alice.
        again = await ok(s, "create_entities", {"entities": [ent("Alice", "robot", ["Other"])]})
        assert again == []
        graph = await ok(s, "read_graph")
        assert graph["entities"] == [ent("Alice", "person", ["Is a student"])], "existing Alice must be untouched"

        # -- 8.1 Partial duplicate: create [Alice, Bob] returns only Bob; both exist.
        partial = await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})
        assert partial == [ent("Bob", "person")]
        assert names(await ok(s, "read_graph")) == ["Alice", "Bob"]

        # -- 8.1 Case-sensitive names: with "alice" existing, creating "Alice" returns ["Alice"]; both exist.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("alice", "person")]})
        cs = await ok(s, "create_entities", {"entities": [ent("Alice", "person")]})
        assert cs == [ent("Alice", "person")]
        assert names(await ok(s, "read_graph")) == ["Alice", "alice"]

        # -- extra: duplicates inside one create_entities call are stored and returned once.
        await reset(s)
        dup = await ok(s, "create_entities", {"entities": [ent("X", "t", ["one"]), ent("X", "t", ["one"]),
                                                             ent("Y", "t")]})
        assert dup == [ent("X", "t", ["one"]), ent("Y", "t")]
        graph = await ok(s, "read_graph")
        assert [e["name"] for e in graph["entities"]] == ["X", "Y"], "X must be stored once"

        # -- extra: observations keep insertion order (create, then add).
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Ordered", "t", ["zeta", "alpha", "mu"])]})
        await ok(s, "add_observations", {"observations": [{"entityName": "Ordered", "contents": ["beta", "omega"]}]})
        graph = await ok(s, "open_nodes", {"names": ["Ordered"]})
        assert graph["entities"][0]["observations"] == ["zeta", "alpha", "mu", "beta", "omega"]
        # ... and every read path returns that same order
        assert by_name(await ok(s, "read_graph"))["Ordered"]["observations"] == ["zeta", "alpha", "mu", "beta", "omega"]
        searched = await ok(s, "search_nodes", {"query": "ordered"})
        assert searched["entities"][0]["observations"] == ["zeta", "alpha", "mu", "beta", "omega"]


# --------------------------------------------------------------------------- 8.2


async def test_8_2_relation_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})

        # -- 8.2 Create basic relation: returns array with one relation.
        created = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
        assert created == [rel("Alice", "Bob", "knows")]
        assert (await ok(s, "read_graph"))["relations"] == [rel("Alice", "Bob", "knows")]

        # -- 8.2 Skip duplicate relation: same relation again returns []; only one in graph.
        again = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
        assert again == []
        assert rel_keys(await ok(s, "read_graph")) == [("Alice", "Bob", "knows")]

        # -- 8.2 Different relation types are distinct: A->B "likes" is new; both exist.
        likes = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "likes")]})
        assert likes == [rel("Alice", "Bob", "likes")]
        assert rel_keys(await ok(s, "read_graph")) == [("Alice", "Bob", "knows"), ("Alice", "Bob", "likes")]

        # -- 8.2 Reverse direction is distinct: B->A "knows" is new; both directions exist.
        reverse = await ok(s, "create_relations", {"relations": [rel("Bob", "Alice", "knows")]})
        assert reverse == [rel("Bob", "Alice", "knows")]
        assert rel_keys(await ok(s, "read_graph")) == [
            ("Alice", "Bob", "knows"), ("Alice", "Bob", "likes"), ("Bob", "Alice", "knows")]

        # -- extra: duplicates inside one create_relations call are created and returned once;
        #    a batch mixing existing and new returns only the new ones.
        mixed = await ok(s, "create_relations", {"relations": [
            rel("Alice", "Bob", "knows"), rel("Bob", "Alice", "admires"), rel("Bob", "Alice", "admires")]})
        assert mixed == [rel("Bob", "Alice", "admires")]
        assert rel_keys(await ok(s, "read_graph")).count(("Bob", "Alice", "admires")) == 1


# --------------------------------------------------------------------------- 8.3


async def test_8_3_observation_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        # -- 8.3 Add observations to existing entity.
        await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
        added = await ok(s, "add_observations", {"observations": [{"entityName": "Alice", "contents": ["Likes pizza"]}]})
        assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
        graph = await ok(s, "open_nodes", {"names": ["Alice"]})
        assert graph["entities"][0]["observations"] == ["Is a student", "Likes pizza"]

        # -- 8.3 Duplicate observations are skipped: only the new, non-duplicate one is added.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
        added = await ok(s, "add_observations", {"observations": [
            {"entityName": "Alice", "contents": ["Is a student", "Likes pizza"]}]})
        assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
        graph = await ok(s, "open_nodes", {"names": ["Alice"]})
        assert graph["entities"][0]["observations"] == ["Is a student", "Likes pizza"]

        # -- 8.3 Add to non-existent entity: isError with exactly the reference message.
        message = await err(s, "add_observations", {"observations": [{"entityName": "Nonexistent",
                                                                       "contents": ["anything"]}]})
        assert message == "Entity with name Nonexistent not found"

        # -- ... and NOTHING of that call is written: a valid first item is not added either.
        message = await err(s, "add_observations", {"observations": [
            {"entityName": "Alice", "contents": ["Valid but must not land"]},
            {"entityName": "Nonexistent", "contents": ["anything"]}]})
        assert message == "Entity with name Nonexistent not found"
        graph = await ok(s, "read_graph")
        assert graph == {"entities": [ent("Alice", "person", ["Is a student", "Likes pizza"])], "relations": []}
        assert (await ok(s, "search_nodes", {"query": "must not land"}))["entities"] == []

        # -- 8.3 Delete specific observations.
        await ok(s, "delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["Likes pizza"]}]})
        graph = await ok(s, "open_nodes", {"names": ["Alice"]})
        assert graph["entities"][0]["observations"] == ["Is a student"]

        # -- 8.3 Delete observations from a non-existent entity: no error, silent no-op.
        await ok(s, "delete_observations", {"deletions": [{"entityName": "Nonexistent", "observations": ["anything"]}]})
        assert await ok(s, "read_graph") == {"entities": [ent("Alice", "person", ["Is a student"])], "relations": []}
        # (an unknown observation on a known entity is silent too)
        await ok(s, "delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["never said"]}]})
        assert (await ok(s, "open_nodes", {"names": ["Alice"]}))["entities"][0]["observations"] == ["Is a student"]


# --------------------------------------------------------------------------- 8.4


async def test_8_4_delete_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        # -- 8.4 Delete entity cascades to relations (entity is the 'from' end).
        await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})
        await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
        await ok(s, "delete_entities", {"entityNames": ["Alice"]})
        graph = await ok(s, "read_graph")
        assert names(graph) == ["Bob"]
        assert graph["relations"] == [], "the 'knows' relation must be removed with Alice"

        # -- 8.4 Delete cascades when the entity is the 'to' end.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})
        await ok(s, "create_relations", {"relations": [rel("Bob", "Alice", "reports_to")]})
        await ok(s, "delete_entities", {"entityNames": ["Alice"]})
        graph = await ok(s, "read_graph")
        assert names(graph) == ["Bob"]
        assert graph["relations"] == [], "the 'reports_to' relation must be removed with Alice"

        # -- 8.4 Delete preserves unrelated relations: A->B removed, B->C kept.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("A"), ent("B"), ent("C")]})
        await ok(s, "create_relations", {"relations": [rel("A", "B"), rel("B", "C")]})
        await ok(s, "delete_entities", {"entityNames": ["A"]})
        graph = await ok(s, "read_graph")
        assert names(graph) == ["B", "C"]
        assert rel_keys(graph) == [("B", "C", "knows")]

        # -- 8.4 Delete a relation of one type keeps the other type between the same ends.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("A"), ent("B")]})
        await ok(s, "create_relations", {"relations": [rel("A", "B", "knows"), rel("A", "B", "likes")]})
        await ok(s, "delete_relations", {"relations": [rel("A", "B", "knows")]})
        graph = await ok(s, "read_graph")
        assert rel_keys(graph) == [("A", "B", "likes")]
        assert names(graph) == ["A", "B"], "deleting a relation must not delete its entities"

        # -- extra: deleting unknown entities / relations is silent and changes nothing.
        await ok(s, "delete_entities", {"entityNames": ["Nobody"]})
        await ok(s, "delete_relations", {"relations": [rel("A", "B", "hates"), rel("Nobody", "A", "likes")]})
        graph = await ok(s, "read_graph")
        assert names(graph) == ["A", "B"]
        assert rel_keys(graph) == [("A", "B", "likes")]


# --------------------------------------------------------------------------- 8.5


async def test_8_5_search_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        # -- 8.5 Search by entity name (case-insensitive substring).
        await ok(s, "create_entities", {"entities": [ent("John_Smith", "human"), ent("Mary", "human")]})
        for query in ("john", "JOHN", "n_sm"):
            result = await ok(s, "search_nodes", {"query": query})
            assert names(result) == ["John_Smith"], query

        # -- 8.5 Search by entity type (case-insensitive).
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Ada", "Person"), ent("Acme", "company")]})
        result = await ok(s, "search_nodes", {"query": "person"})
        assert result["entities"] == [ent("Ada", "Person")]

        # -- 8.5 Search by observation content (case-insensitive).
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Larry", "human", ["Works at Google"]),
                                                     ent("Tim", "human", ["Works at Apple"])]})
        result = await ok(s, "search_nodes", {"query": "google"})
        assert result["entities"] == [ent("Larry", "human", ["Works at Google"])]

        # -- 8.5 Relations are included when one endpoint matches.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Alpha", "node"), ent("Beta", "node")]})
        await ok(s, "create_relations", {"relations": [rel("Alpha", "Beta", "points_to")]})
        result = await ok(s, "search_nodes", {"query": "alpha"})
        assert names(result) == ["Alpha"]
        assert rel_keys(result) == [("Alpha", "Beta", "points_to")]

        # -- 8.5 Relations where the match is either endpoint: matching only B gives A->B and B->C.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Alpha", "node"), ent("Beta", "node"),
                                                     ent("Gamma", "node")]})
        await ok(s, "create_relations", {"relations": [rel("Alpha", "Beta", "points_to"),
                                                       rel("Beta", "Gamma", "points_to")]})
        result = await ok(s, "search_nodes", {"query": "beta"})
        assert names(result) == ["Beta"]
        assert rel_keys(result) == [("Alpha", "Beta", "points_to"), ("Beta", "Gamma", "points_to")]

        # -- 8.5 No match: empty graph.
        result = await ok(s, "search_nodes", {"query": "xyznonexistent"})
        assert result == {"entities": [], "relations": []}


# --------------------------------------------------------------------------- 8.6


async def test_8_6_open_nodes_operations(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        # -- 8.6 Open specific nodes: A (not B).
        await ok(s, "create_entities", {"entities": [ent("A", "node", ["first"]), ent("B", "node")]})
        result = await ok(s, "open_nodes", {"names": ["A"]})
        assert result == {"entities": [ent("A", "node", ["first"])], "relations": []}

        # -- 8.6 Open nodes includes relations: A and A->B.
        await ok(s, "create_relations", {"relations": [rel("A", "B", "links")]})
        result = await ok(s, "open_nodes", {"names": ["A"]})
        assert names(result) == ["A"]
        assert rel_keys(result) == [("A", "B", "links")]

        # -- 8.6 Open nodes is case-sensitive: "alice" finds nothing when only "Alice" exists.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("Alice", "person")]})
        result = await ok(s, "open_nodes", {"names": ["alice"]})
        assert result == {"entities": [], "relations": []}

        # -- 8.6 Relations with either endpoint: open [A, C] -> A, C and A->B, B->C, A->C.
        await reset(s)
        await ok(s, "create_entities", {"entities": [ent("A"), ent("B"), ent("C")]})
        await ok(s, "create_relations", {"relations": [rel("A", "B"), rel("B", "C"), rel("A", "C")]})
        result = await ok(s, "open_nodes", {"names": ["A", "C"]})
        assert names(result) == ["A", "C"]
        assert rel_keys(result) == [("A", "B", "knows"), ("A", "C", "knows"), ("B", "C", "knows")]

        # -- extra: unknown names are skipped silently; an empty list gives an empty graph.
        result = await ok(s, "open_nodes", {"names": ["A", "Nobody"]})
        assert names(result) == ["A"]
        assert await ok(s, "open_nodes", {"names": []}) == {"entities": [], "relations": []}


# --------------------------------------------------------------------------- exact text of all 9 tools


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_text_of_every_tool_is_reference_exact(transport, neo4j_info, namespace, profile):
    """Each of the 9 tools answers with exactly the reference's text (compared byte for byte here,
    on top of the checks ``ok`` makes), including non-ASCII kept as is."""
    alice = ent("Alice", "person", ["Is a student", "Zoë visited 東京"])
    bob = ent("Bob", "person", [])
    knows = rel("Alice", "Bob", "knows")

    async def text(tool: str, args: dict) -> str:
        result = await s.call_tool(tool, args)
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None, f"{tool}: structuredContent missing"
        return text_of(result)

    async with session(transport, neo4j_info, namespace, "--tools", profile) as s:
        assert await text("create_entities", {"entities": [alice, bob]}) == dumps([alice, bob])
        assert "東京" in dumps([alice]) and "\\u" not in dumps([alice])
        assert await text("create_entities", {"entities": [alice]}) == "[]"
        assert await text("create_relations", {"relations": [knows]}) == dumps([knows])
        assert await text("create_relations", {"relations": [knows]}) == "[]"
        assert await text("add_observations", {"observations": [
            {"entityName": "Alice", "contents": ["Likes pizza", "Is a student"]}]}) == dumps(
            [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}])
        alice3 = ent("Alice", "person", ["Is a student", "Zoë visited 東京", "Likes pizza"])
        full = {"entities": [alice3, bob], "relations": [knows]}
        assert await text("read_graph", {}) == dumps(full)
        assert await text("search_nodes", {"query": "PIZZA"}) == dumps({"entities": [alice3], "relations": [knows]})
        assert await text("search_nodes", {"query": "東京"}) == dumps({"entities": [alice3], "relations": [knows]})
        assert await text("open_nodes", {"names": ["Bob"]}) == dumps({"entities": [bob], "relations": [knows]})
        assert await text("delete_observations", {"deletions": [
            {"entityName": "Alice", "observations": ["Likes pizza"]}]}) == "Observations deleted successfully"
        assert await text("delete_relations", {"relations": [knows]}) == "Relations deleted successfully"
        assert await text("delete_entities", {"entityNames": ["Alice", "Bob"]}) == "Entities deleted successfully"
        assert await text("read_graph", {}) == dumps({"entities": [], "relations": []})
        assert await text("search_nodes", {"query": "x"}) == '{\n  "entities": [],\n  "relations": []\n}'
