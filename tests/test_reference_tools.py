"""The reference's behavioural tests (docs/reference-server.md#behavioural-tests)
through a real MCP client session (stdio and HTTP) on a real Neo4j.

One test per case of the reference's list (and a few extra cases, marked so), named by the
behaviour.  The tests of one transport share one server and session (a start costs about a
second); each starts from an empty namespace (``reset``).  Every call goes through ``ok``/``err``
(tests/support/kg.py), which also checks on every answer that the text is exactly
``json.dumps(x, indent=2, ensure_ascii=False)`` (or the delete confirmation), that
structuredContent is present and agrees with the text, and that no object carries a "type" key.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio

from support.kg import by_name, dumps, ent, err, names, ok, rel, rel_keys, reset, session, text_of
from support.shared_session import SharedSession


@pytest.fixture(scope="module", params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """Module-scoped here (conftest's is per test), so the tests of a transport share one session."""
    return str(request.param)


@pytest_asyncio.fixture(scope="module")
async def shared(transport: str, neo4j_info: Any) -> Any:
    held = SharedSession(transport, neo4j_info, "reference-tools")
    await held.open()
    try:
        yield held.session
    finally:
        await held.close()


@pytest_asyncio.fixture
async def s(shared: Any) -> Any:
    """The shared session on an empty namespace."""
    await reset(shared)
    return shared


# --------------------------------------------------------------------------- entity operations


async def test_create_entities_returns_the_new_entity_and_stores_it(s):
    created = await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    assert created == [ent("Alice", "person", ["Is a student"])]
    graph = await ok(s, "read_graph")
    assert graph == {"entities": [ent("Alice", "person", ["Is a student"])], "relations": []}


async def test_create_entities_skips_an_existing_name_and_leaves_it_untouched(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    # same name again (different type/observations) returns [], one Alice
    again = await ok(s, "create_entities", {"entities": [ent("Alice", "robot", ["Other"])]})
    assert again == []
    graph = await ok(s, "read_graph")
    assert graph["entities"] == [ent("Alice", "person", ["Is a student"])], "existing Alice must be untouched"


async def test_create_entities_with_one_existing_name_returns_only_the_new_one(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    partial = await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})
    assert partial == [ent("Bob", "person")]
    assert names(await ok(s, "read_graph")) == ["Alice", "Bob"]


async def test_entity_names_are_case_sensitive(s):
    await ok(s, "create_entities", {"entities": [ent("alice", "person")]})
    cs = await ok(s, "create_entities", {"entities": [ent("Alice", "person")]})
    assert cs == [ent("Alice", "person")]
    assert names(await ok(s, "read_graph")) == ["Alice", "alice"]


async def test_duplicates_inside_one_create_entities_call_are_stored_and_returned_once(s):  # extra
    dup = await ok(
        s, "create_entities", {"entities": [ent("X", "t", ["one"]), ent("X", "t", ["one"]), ent("Y", "t")]}
    )
    assert dup == [ent("X", "t", ["one"]), ent("Y", "t")]
    graph = await ok(s, "read_graph")
    assert [e["name"] for e in graph["entities"]] == ["X", "Y"], "X must be stored once"


async def test_observations_keep_insertion_order_in_every_read(s):  # extra
    await ok(s, "create_entities", {"entities": [ent("Ordered", "t", ["zeta", "alpha", "mu"])]})
    await ok(
        s, "add_observations", {"observations": [{"entityName": "Ordered", "contents": ["beta", "omega"]}]}
    )
    graph = await ok(s, "open_nodes", {"names": ["Ordered"]})
    assert graph["entities"][0]["observations"] == ["zeta", "alpha", "mu", "beta", "omega"]
    assert by_name(await ok(s, "read_graph"))["Ordered"]["observations"] == [
        "zeta",
        "alpha",
        "mu",
        "beta",
        "omega",
    ]
    searched = await ok(s, "search_nodes", {"query": "ordered"})
    assert searched["entities"][0]["observations"] == ["zeta", "alpha", "mu", "beta", "omega"]


# --------------------------------------------------------------------------- relation operations


async def _alice_and_bob(s: Any, *relations: dict[str, str]) -> None:
    await ok(s, "create_entities", {"entities": [ent("Alice", "person"), ent("Bob", "person")]})
    if relations:
        await ok(s, "create_relations", {"relations": list(relations)})


async def test_create_relations_returns_the_new_relation(s):
    await _alice_and_bob(s)
    created = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
    assert created == [rel("Alice", "Bob", "knows")]
    assert (await ok(s, "read_graph"))["relations"] == [rel("Alice", "Bob", "knows")]


async def test_create_relations_skips_an_existing_relation(s):
    await _alice_and_bob(s, rel("Alice", "Bob", "knows"))
    again = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
    assert again == []
    assert rel_keys(await ok(s, "read_graph")) == [("Alice", "Bob", "knows")]


async def test_relations_of_different_types_between_the_same_ends_are_distinct(s):
    await _alice_and_bob(s, rel("Alice", "Bob", "knows"))
    likes = await ok(s, "create_relations", {"relations": [rel("Alice", "Bob", "likes")]})
    assert likes == [rel("Alice", "Bob", "likes")]
    assert rel_keys(await ok(s, "read_graph")) == [("Alice", "Bob", "knows"), ("Alice", "Bob", "likes")]


async def test_the_reverse_direction_is_a_distinct_relation(s):
    await _alice_and_bob(s, rel("Alice", "Bob", "knows"), rel("Alice", "Bob", "likes"))
    reverse = await ok(s, "create_relations", {"relations": [rel("Bob", "Alice", "knows")]})
    assert reverse == [rel("Bob", "Alice", "knows")]
    assert rel_keys(await ok(s, "read_graph")) == [
        ("Alice", "Bob", "knows"),
        ("Alice", "Bob", "likes"),
        ("Bob", "Alice", "knows"),
    ]


async def test_a_batch_of_existing_and_repeated_relations_returns_each_new_one_once(s):  # extra
    await _alice_and_bob(
        s, rel("Alice", "Bob", "knows"), rel("Alice", "Bob", "likes"), rel("Bob", "Alice", "knows")
    )
    mixed = await ok(
        s,
        "create_relations",
        {
            "relations": [
                rel("Alice", "Bob", "knows"),
                rel("Bob", "Alice", "admires"),
                rel("Bob", "Alice", "admires"),
            ]
        },
    )
    assert mixed == [rel("Bob", "Alice", "admires")]
    assert rel_keys(await ok(s, "read_graph")).count(("Bob", "Alice", "admires")) == 1


# --------------------------------------------------------------------------- observation operations


async def test_add_observations_appends_to_an_existing_entity(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    added = await ok(
        s, "add_observations", {"observations": [{"entityName": "Alice", "contents": ["Likes pizza"]}]}
    )
    assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
    graph = await ok(s, "open_nodes", {"names": ["Alice"]})
    assert graph["entities"][0]["observations"] == ["Is a student", "Likes pizza"]


async def test_add_observations_skips_the_ones_the_entity_has(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    added = await ok(
        s,
        "add_observations",
        {"observations": [{"entityName": "Alice", "contents": ["Is a student", "Likes pizza"]}]},
    )
    assert added == [{"entityName": "Alice", "addedObservations": ["Likes pizza"]}]
    graph = await ok(s, "open_nodes", {"names": ["Alice"]})
    assert graph["entities"][0]["observations"] == ["Is a student", "Likes pizza"]


async def test_add_observations_to_an_unknown_entity_fails_with_the_reference_message(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student", "Likes pizza"])]})
    message = await err(
        s, "add_observations", {"observations": [{"entityName": "Nonexistent", "contents": ["anything"]}]}
    )
    assert message == "Entity with name Nonexistent not found"


async def test_add_observations_with_an_unknown_entity_writes_nothing_of_the_call(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student", "Likes pizza"])]})
    # a valid first item is not added either
    message = await err(
        s,
        "add_observations",
        {
            "observations": [
                {"entityName": "Alice", "contents": ["Valid but must not land"]},
                {"entityName": "Nonexistent", "contents": ["anything"]},
            ]
        },
    )
    assert message == "Entity with name Nonexistent not found"
    graph = await ok(s, "read_graph")
    assert graph == {"entities": [ent("Alice", "person", ["Is a student", "Likes pizza"])], "relations": []}
    assert (await ok(s, "search_nodes", {"query": "must not land"}))["entities"] == []


async def test_delete_observations_removes_exactly_those(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student", "Likes pizza"])]})
    await ok(
        s, "delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["Likes pizza"]}]}
    )
    graph = await ok(s, "open_nodes", {"names": ["Alice"]})
    assert graph["entities"][0]["observations"] == ["Is a student"]


async def test_delete_observations_of_an_unknown_entity_or_observation_is_a_silent_no_op(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["Is a student"])]})
    await ok(
        s, "delete_observations", {"deletions": [{"entityName": "Nonexistent", "observations": ["anything"]}]}
    )
    assert await ok(s, "read_graph") == {
        "entities": [ent("Alice", "person", ["Is a student"])],
        "relations": [],
    }
    # an unknown observation on a known entity is silent too
    await ok(
        s, "delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["never said"]}]}
    )
    assert (await ok(s, "open_nodes", {"names": ["Alice"]}))["entities"][0]["observations"] == [
        "Is a student"
    ]


# --------------------------------------------------------------------------- delete operations


async def test_deleting_an_entity_removes_relations_it_starts(s):
    await _alice_and_bob(s, rel("Alice", "Bob", "knows"))
    await ok(s, "delete_entities", {"entityNames": ["Alice"]})
    graph = await ok(s, "read_graph")
    assert names(graph) == ["Bob"]
    assert graph["relations"] == [], "the 'knows' relation must be removed with Alice"


async def test_deleting_an_entity_removes_relations_it_ends(s):
    await _alice_and_bob(s, rel("Bob", "Alice", "reports_to"))
    await ok(s, "delete_entities", {"entityNames": ["Alice"]})
    graph = await ok(s, "read_graph")
    assert names(graph) == ["Bob"]
    assert graph["relations"] == [], "the 'reports_to' relation must be removed with Alice"


async def test_deleting_an_entity_keeps_relations_between_others(s):
    await ok(s, "create_entities", {"entities": [ent("A"), ent("B"), ent("C")]})
    await ok(s, "create_relations", {"relations": [rel("A", "B"), rel("B", "C")]})
    await ok(s, "delete_entities", {"entityNames": ["A"]})
    graph = await ok(s, "read_graph")
    assert names(graph) == ["B", "C"]
    assert rel_keys(graph) == [("B", "C", "knows")]


async def _a_likes_b(s: Any) -> None:
    await ok(s, "create_entities", {"entities": [ent("A"), ent("B")]})
    await ok(s, "create_relations", {"relations": [rel("A", "B", "knows"), rel("A", "B", "likes")]})
    await ok(s, "delete_relations", {"relations": [rel("A", "B", "knows")]})


async def test_deleting_a_relation_keeps_another_type_between_the_same_ends(s):
    await _a_likes_b(s)
    graph = await ok(s, "read_graph")
    assert rel_keys(graph) == [("A", "B", "likes")]
    assert names(graph) == ["A", "B"], "deleting a relation must not delete its entities"


async def test_deleting_unknown_entities_or_relations_is_silent_and_changes_nothing(s):  # extra
    await _a_likes_b(s)
    await ok(s, "delete_entities", {"entityNames": ["Nobody"]})
    await ok(s, "delete_relations", {"relations": [rel("A", "B", "hates"), rel("Nobody", "A", "likes")]})
    graph = await ok(s, "read_graph")
    assert names(graph) == ["A", "B"]
    assert rel_keys(graph) == [("A", "B", "likes")]


# --------------------------------------------------------------------------- search operations


async def test_search_matches_a_name_case_insensitively_as_a_substring(s):
    await ok(s, "create_entities", {"entities": [ent("John_Smith", "human"), ent("Mary", "human")]})
    for query in ("john", "JOHN", "n_sm"):
        result = await ok(s, "search_nodes", {"query": query})
        assert names(result) == ["John_Smith"], query


async def test_search_matches_an_entity_type_case_insensitively(s):
    await ok(s, "create_entities", {"entities": [ent("Ada", "Person"), ent("Acme", "company")]})
    result = await ok(s, "search_nodes", {"query": "person"})
    assert result["entities"] == [ent("Ada", "Person")]


async def test_search_matches_observation_text_case_insensitively(s):
    await ok(
        s,
        "create_entities",
        {"entities": [ent("Larry", "human", ["Works at Google"]), ent("Tim", "human", ["Works at Apple"])]},
    )
    result = await ok(s, "search_nodes", {"query": "google"})
    assert result["entities"] == [ent("Larry", "human", ["Works at Google"])]


async def test_search_returns_the_relations_of_a_matching_start(s):
    await ok(s, "create_entities", {"entities": [ent("Alpha", "node"), ent("Beta", "node")]})
    await ok(s, "create_relations", {"relations": [rel("Alpha", "Beta", "points_to")]})
    result = await ok(s, "search_nodes", {"query": "alpha"})
    assert names(result) == ["Alpha"]
    assert rel_keys(result) == [("Alpha", "Beta", "points_to")]


async def _alpha_beta_gamma(s: Any) -> None:
    await ok(
        s, "create_entities", {"entities": [ent("Alpha", "node"), ent("Beta", "node"), ent("Gamma", "node")]}
    )
    await ok(
        s,
        "create_relations",
        {"relations": [rel("Alpha", "Beta", "points_to"), rel("Beta", "Gamma", "points_to")]},
    )


async def test_search_returns_relations_with_the_match_at_either_end(s):
    await _alpha_beta_gamma(s)
    result = await ok(s, "search_nodes", {"query": "beta"})
    assert names(result) == ["Beta"]
    assert rel_keys(result) == [("Alpha", "Beta", "points_to"), ("Beta", "Gamma", "points_to")]


async def test_search_without_a_match_returns_the_empty_graph(s):
    await _alpha_beta_gamma(s)
    result = await ok(s, "search_nodes", {"query": "xyznonexistent"})
    assert result == {"entities": [], "relations": []}


# --------------------------------------------------------------------------- open nodes operations


async def test_open_nodes_returns_only_the_named_entities(s):
    await ok(s, "create_entities", {"entities": [ent("A", "node", ["first"]), ent("B", "node")]})
    result = await ok(s, "open_nodes", {"names": ["A"]})
    assert result == {"entities": [ent("A", "node", ["first"])], "relations": []}


async def test_open_nodes_includes_their_relations(s):
    await ok(s, "create_entities", {"entities": [ent("A", "node", ["first"]), ent("B", "node")]})
    await ok(s, "create_relations", {"relations": [rel("A", "B", "links")]})
    result = await ok(s, "open_nodes", {"names": ["A"]})
    assert names(result) == ["A"]
    assert rel_keys(result) == [("A", "B", "links")]


async def test_open_nodes_matches_names_case_sensitively(s):
    await ok(s, "create_entities", {"entities": [ent("Alice", "person")]})
    result = await ok(s, "open_nodes", {"names": ["alice"]})
    assert result == {"entities": [], "relations": []}


async def _a_b_c_linked(s: Any) -> None:
    await ok(s, "create_entities", {"entities": [ent("A"), ent("B"), ent("C")]})
    await ok(s, "create_relations", {"relations": [rel("A", "B"), rel("B", "C"), rel("A", "C")]})


async def test_open_nodes_returns_relations_with_either_end_opened(s):
    await _a_b_c_linked(s)
    result = await ok(s, "open_nodes", {"names": ["A", "C"]})
    assert names(result) == ["A", "C"]
    assert rel_keys(result) == [("A", "B", "knows"), ("A", "C", "knows"), ("B", "C", "knows")]


async def test_open_nodes_skips_unknown_names_and_an_empty_list_gives_the_empty_graph(s):  # extra
    await _a_b_c_linked(s)
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
        assert await text(
            "add_observations",
            {"observations": [{"entityName": "Alice", "contents": ["Likes pizza", "Is a student"]}]},
        ) == dumps([{"entityName": "Alice", "addedObservations": ["Likes pizza"]}])
        alice3 = ent("Alice", "person", ["Is a student", "Zoë visited 東京", "Likes pizza"])
        full = {"entities": [alice3, bob], "relations": [knows]}
        assert await text("read_graph", {}) == dumps(full)
        assert await text("search_nodes", {"query": "PIZZA"}) == dumps(
            {"entities": [alice3], "relations": [knows]}
        )
        assert await text("search_nodes", {"query": "東京"}) == dumps(
            {"entities": [alice3], "relations": [knows]}
        )
        assert await text("open_nodes", {"names": ["Bob"]}) == dumps(
            {"entities": [bob], "relations": [knows]}
        )
        assert (
            await text(
                "delete_observations",
                {"deletions": [{"entityName": "Alice", "observations": ["Likes pizza"]}]},
            )
            == "Observations deleted successfully"
        )
        assert await text("delete_relations", {"relations": [knows]}) == "Relations deleted successfully"
        assert (
            await text("delete_entities", {"entityNames": ["Alice", "Bob"]})
            == "Entities deleted successfully"
        )
        assert await text("read_graph", {}) == dumps({"entities": [], "relations": []})
        assert await text("search_nodes", {"query": "x"}) == '{\n  "entities": [],\n  "relations": []\n}'
