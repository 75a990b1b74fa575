"""Bad input through a real MCP session: an isError whose message names the field, and nothing
written (checked with read_graph and with a raw count of the namespace's nodes and relationships).

The cases are tables (one row: label, tool, arguments, words the message must contain), run as one
test per row with the row's label as its id (``-k too-many`` or ``-k entity-without-name`` picks
rows).  The rows of one transport share one MCP session on a namespace holding two entities and two
relations; a row that wrote something restores that state, so no row hides another's outcome.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import pytest_asyncio

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import ObservationDelete
from kg_neo4j.store import GraphStore
from support.kg import ent, names, ok, rel, rel_keys, reset, session
from support.shared_session import SharedSession

LONG_NAME = "n" * 1025
MAX_NAME = "m" * 1024
LONG_OBS = "o" * 8001
MAX_OBS = "p" * 8000

# (label, tool, arguments, words the message must contain)
MISSING_FIELDS: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("create_entities without entities", "create_entities", {}, ["entities"]),
    (
        "entity without entityType",
        "create_entities",
        {"entities": [{"name": "N1", "observations": []}]},
        ["entityType"],
    ),
    (
        "entity without observations",
        "create_entities",
        {"entities": [{"name": "N1", "entityType": "t"}]},
        ["observations"],
    ),
    (
        "entity without name",
        "create_entities",
        {"entities": [{"entityType": "t", "observations": []}]},
        ["name"],
    ),
    ("create_relations without relations", "create_relations", {}, ["relations"]),
    (
        "relation without relationType",
        "create_relations",
        {"relations": [{"from": "Existing", "to": "Other"}]},
        ["relationType"],
    ),
    (
        "relation without from",
        "create_relations",
        {"relations": [{"to": "Other", "relationType": "r"}]},
        ["from"],
    ),
    (
        "relation without to",
        "create_relations",
        {"relations": [{"from": "Existing", "relationType": "r"}]},
        ["to"],
    ),
    ("add_observations without observations", "add_observations", {}, ["observations"]),
    (
        "addition without contents",
        "add_observations",
        {"observations": [{"entityName": "Existing"}]},
        ["contents"],
    ),
    (
        "addition without entityName",
        "add_observations",
        {"observations": [{"contents": ["x"]}]},
        ["entityName"],
    ),
    ("delete_entities without entityNames", "delete_entities", {}, ["entityNames"]),
    ("delete_observations without deletions", "delete_observations", {}, ["deletions"]),
    (
        "deletion without observations",
        "delete_observations",
        {"deletions": [{"entityName": "Existing"}]},
        ["observations"],
    ),
    ("delete_relations without relations", "delete_relations", {}, ["relations"]),
    (
        "relation to delete without to",
        "delete_relations",
        {"relations": [{"from": "Existing", "relationType": "links"}]},
        ["to"],
    ),
    ("search_nodes without query", "search_nodes", {}, ["query"]),
    ("open_nodes without names", "open_nodes", {}, ["names"]),
]

WRONG_TYPES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "name: 1",
        "create_entities",
        {"entities": [{"name": 1, "entityType": "t", "observations": []}]},
        ["name"],
    ),
    (
        "entityType: 5",
        "create_entities",
        {"entities": [{"name": "N1", "entityType": 5, "observations": []}]},
        ["entityType"],
    ),
    (
        "observations: a string",
        "create_entities",
        {"entities": [{"name": "N1", "entityType": "t", "observations": "just one"}]},
        ["observations"],
    ),
    (
        "observations: [1]",
        "create_entities",
        {"entities": [{"name": "N1", "entityType": "t", "observations": [1]}]},
        ["observations"],
    ),
    ("entities: an object", "create_entities", {"entities": {"name": "N1"}}, ["entities"]),
    ("entities: a string", "create_entities", {"entities": "N1"}, ["entities"]),
    (
        "from: 1",
        "create_relations",
        {"relations": [{"from": 1, "to": "Other", "relationType": "r"}]},
        ["from"],
    ),
    (
        "relationType: true",
        "create_relations",
        {"relations": [{"from": "Existing", "to": "Other", "relationType": True}]},
        ["relationType"],
    ),
    (
        "contents: a string",
        "add_observations",
        {"observations": [{"entityName": "Existing", "contents": "x"}]},
        ["contents"],
    ),
    (
        "entityName: 7",
        "add_observations",
        {"observations": [{"entityName": 7, "contents": ["x"]}]},
        ["entityName"],
    ),
    # a bare string must not be taken as a list of characters (nor as one name): Existing must survive
    ("entityNames: a string", "delete_entities", {"entityNames": "Existing"}, ["entityNames"]),
    ("entityNames: [1]", "delete_entities", {"entityNames": [1]}, ["entityNames"]),
    (
        "deletion observations: a string",
        "delete_observations",
        {"deletions": [{"entityName": "Existing", "observations": "o1"}]},
        ["observations"],
    ),
    (
        "delete relation from: 1",
        "delete_relations",
        {"relations": [{"from": 1, "to": "Other", "relationType": "links"}]},
        ["from"],
    ),
    ("query: 5", "search_nodes", {"query": 5}, ["query"]),
    ("names: a string", "open_nodes", {"names": "Existing"}, ["names"]),
    ("names: [null]", "open_nodes", {"names": [None]}, ["names"]),
]

EMPTY_NAMES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("name ''", "create_entities", {"entities": [ent("")]}, ["name"]),
    ("name of spaces", "create_entities", {"entities": [ent("   ")]}, ["name"]),
    ("name of tab/newline", "create_entities", {"entities": [ent("\t\n")]}, ["name"]),
    ("from ''", "create_relations", {"relations": [rel("", "Other")]}, ["from"]),
    ("to of spaces", "create_relations", {"relations": [rel("Existing", "  ")]}, ["to"]),
    ("relationType ''", "create_relations", {"relations": [rel("Existing", "Other", "")]}, ["relationType"]),
    (
        "relationType of spaces",
        "create_relations",
        {"relations": [rel("Existing", "Other", "   ")]},
        ["relationType"],
    ),
    (
        "entityName ''",
        "add_observations",
        {"observations": [{"entityName": "", "contents": ["x"]}]},
        ["entityName"],
    ),
    (
        "entityName of spaces",
        "add_observations",
        {"observations": [{"entityName": "  ", "contents": ["x"]}]},
        ["entityName"],
    ),
    (
        "deletion entityName ''",
        "delete_observations",
        {"deletions": [{"entityName": "", "observations": ["o1"]}]},
        ["entityName"],
    ),
    (
        "deletion entityName of spaces",
        "delete_observations",
        {"deletions": [{"entityName": "   ", "observations": ["o1"]}]},
        ["entityName"],
    ),
    ("delete relation from ''", "delete_relations", {"relations": [rel("", "Other", "links")]}, ["from"]),
    ("entityNames ['']", "delete_entities", {"entityNames": [""]}, ["entityNames"]),
    ("entityNames ['  ']", "delete_entities", {"entityNames": ["  "]}, ["entityNames"]),
]

TOO_LONG: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("name of 1025 chars", "create_entities", {"entities": [ent(LONG_NAME)]}, ["name", "1024"]),
    ("from of 1025 chars", "create_relations", {"relations": [rel(LONG_NAME, "Other")]}, ["from", "1024"]),
    ("to of 1025 chars", "create_relations", {"relations": [rel("Existing", LONG_NAME)]}, ["to", "1024"]),
    (
        "entityName of 1025 chars",
        "add_observations",
        {"observations": [{"entityName": LONG_NAME, "contents": ["x"]}]},
        ["entityName", "1024"],
    ),
    (
        "entityNames item of 1025 chars",
        "delete_entities",
        {"entityNames": [LONG_NAME]},
        ["entityNames", "1024"],
    ),
    (
        "observation of 8001 chars at create",
        "create_entities",
        {"entities": [ent("N1", "t", ["short", LONG_OBS])]},
        ["observations", "8000"],
    ),
    (
        "observation of 8001 chars at add",
        "add_observations",
        {"observations": [{"entityName": "Existing", "contents": [LONG_OBS]}]},
        ["contents", "8000"],
    ),
]

TOO_MANY: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "10,001 entities",
        "create_entities",
        {"entities": [ent(f"E{i}") for i in range(10_001)]},
        ["entities", "10000"],
    ),
    (
        "10,001 relations",
        "create_relations",
        {"relations": [rel("Existing", f"T{i}") for i in range(10_001)]},
        ["relations", "10000"],
    ),
    (
        "10,001 additions",
        "add_observations",
        {"observations": [{"entityName": "Existing", "contents": [f"c{i}"]} for i in range(10_001)]},
        ["observations", "10000"],
    ),
    # Existing is first in the list and must survive the rejected call
    (
        "10,001 entityNames",
        "delete_entities",
        {"entityNames": ["Existing", *[f"E{i}" for i in range(10_000)]]},
        ["entityNames", "10000"],
    ),
    (
        "10,001 deletions",
        "delete_observations",
        {"deletions": [{"entityName": "Existing", "observations": ["o1"]}] * 10_001},
        ["deletions", "10000"],
    ),
    (
        "10,001 relations to delete",
        "delete_relations",
        {"relations": [rel("Existing", "Other", "links")] * 10_001},
        ["relations", "10000"],
    ),
    ("10,001 names to open", "open_nodes", {"names": ["Existing"] * 10_001}, ["names", "10000"]),
]

# A bad item third in a batch of five: none of the five lands.
THIRD_OF_FIVE: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "create_entities",
        "create_entities",
        {
            "entities": [
                ent("B1"),
                ent("B2"),
                {"name": 3, "entityType": "t", "observations": []},
                ent("B4"),
                ent("B5"),
            ]
        },
        ["entities[2]", "name"],
    ),
    (
        "create_relations",
        "create_relations",
        {
            "relations": [
                rel("Existing", "B1"),
                rel("B2", "Other"),
                rel("Existing", "Other", ""),
                rel("B4", "B5"),
                rel("Other", "Existing", "x"),
            ]
        },
        ["relations[2]", "relationType"],
    ),
    (
        "add_observations",
        "add_observations",
        {
            "observations": [
                {"entityName": "Existing", "contents": ["new1"]},
                {"entityName": "Other", "contents": ["new2"]},
                {"entityName": "Existing", "contents": [LONG_OBS]},
                {"entityName": "Other", "contents": ["new4"]},
                {"entityName": "Existing", "contents": ["new5"]},
            ]
        },
        ["observations[2]", "contents"],
    ),
    (
        "delete_observations",
        "delete_observations",
        {
            "deletions": [
                {"entityName": "Existing", "observations": ["o1"]},
                {"entityName": "Other", "observations": ["o2"]},
                {"entityName": "Existing", "observations": [5]},
                {"entityName": "Other", "observations": ["o2"]},
                {"entityName": "Existing", "observations": ["o1"]},
            ]
        },
        ["deletions[2]", "observations"],
    ),
    (
        "delete_relations",
        "delete_relations",
        {
            "relations": [
                rel("Existing", "Other", "links"),
                rel("Other", "Existing", "follows"),
                {"from": "Existing", "relationType": "links"},
                rel("Existing", "Other", "links"),
                rel("Other", "Existing", "follows"),
            ]
        },
        ["relations[2]", "to"],
    ),
]

BAD_WEIGHTS: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "weight 1.5",
        "create_relations",
        {"relations": [{**rel("Existing", "Other", "w"), "weight": 1.5}]},
        ["weight"],
    ),
    (
        "weight -0.1",
        "create_relations",
        {"relations": [{**rel("Existing", "Other", "w"), "weight": -0.1}]},
        ["weight"],
    ),
    (
        "weight 2 (third of five)",
        "create_relations",
        {
            "relations": [
                rel("Existing", "Other", "w1"),
                rel("Existing", "Other", "w2"),
                {**rel("Existing", "Other", "w3"), "weight": 2},
                rel("Existing", "Other", "w4"),
                rel("Existing", "Other", "w5"),
            ]
        },
        ["relations[2]", "weight"],
    ),
    (
        "weight 'heavy'",
        "create_relations",
        {"relations": [{**rel("Existing", "Other", "w"), "weight": "heavy"}]},
        ["weight"],
    ),
]


def _raw_counts(sync_driver: Any, database: str, namespace: str) -> tuple[int, int]:
    records, _, _ = sync_driver.execute_query(
        # index-backed (the (namespace, name) key); observations are counted through their HAS_OBSERVATION edges
        "MATCH (n:KgNode {namespace: $ns}) WHERE n.name IS NOT NULL "
        "OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r",
        ns=namespace,
        database_=database,
    )
    return int(records[0]["n"]), int(records[0]["r"])


async def _setup(s: Any) -> dict[str, Any]:
    await ok(s, "create_entities", {"entities": [ent("Existing", "t", ["o1"]), ent("Other", "t", ["o2"])]})
    await ok(
        s,
        "create_relations",
        {"relations": [rel("Existing", "Other", "links"), rel("Other", "Existing", "follows")]},
    )
    return await ok(s, "read_graph")


def _cases(group: str, table: list[tuple[str, str, dict[str, Any], list[str]]]) -> list[Any]:
    return [
        pytest.param(tool, args, words, id=f"{group}:{re.sub(r'[^A-Za-z0-9]+', '-', label).strip('-')}")
        for label, tool, args, words in table
    ]


REJECTED = [
    *_cases("missing", MISSING_FIELDS),
    *_cases("wrong-type", WRONG_TYPES),
    *_cases("empty-name", EMPTY_NAMES),
    *_cases("too-long", TOO_LONG),
    *_cases("too-many", TOO_MANY),
    *_cases("bad-third-of-five", THIRD_OF_FIVE),
    *_cases("bad-weight", BAD_WEIGHTS),
]


@pytest.fixture(scope="module", params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """Module-scoped here (conftest's is per test), so the rows of a transport share one session."""
    return str(request.param)


class _Namespace:
    """The shared session and the state its namespace holds between rows."""

    def __init__(self, held: SharedSession, sync_driver: Any) -> None:
        self.held, self.sync_driver = held, sync_driver
        self.s = held.session
        self.baseline: dict[str, Any] = {}
        self.counts = (0, 0)

    def raw_counts(self) -> tuple[int, int]:
        return _raw_counts(self.sync_driver, self.held.info.database, self.held.namespace)

    async def restore(self) -> None:
        await reset(self.s)
        self.baseline = await _setup(self.s)
        self.counts = self.raw_counts()


@pytest_asyncio.fixture(scope="module")
async def shared(transport: str, neo4j_info: Any, sync_driver: Any) -> Any:
    held = SharedSession(transport, neo4j_info, "validation")
    await held.open()
    ns = _Namespace(held, sync_driver)
    try:
        await ns.restore()
        yield ns
    finally:
        await held.close()


@pytest.mark.parametrize(("tool", "args", "words"), REJECTED)
async def test_bad_input_is_an_error_naming_the_field_and_writes_nothing(shared, tool, args, words):
    s = shared.s
    result = await s.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    problems = []
    if not result.is_error:
        problems.append(f"accepted, answered {text[:200]!r}")
    else:
        missing = [w for w in words if w not in text]
        if missing:
            problems.append(f"message {text[:300]!r} does not name {missing}")
    graph = await ok(s, "read_graph")
    raw = shared.raw_counts()
    if graph != shared.baseline:
        problems.append(f"the graph changed: {graph}")
    if raw != shared.counts:
        problems.append(f"(nodes, relationships) in the namespace went {shared.counts} -> {raw}")
    if graph != shared.baseline or raw != shared.counts:
        await shared.restore()  # so the next row starts from the same state
    assert not problems, "\n".join(problems)


async def test_names_and_observations_at_their_limits_are_accepted(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        await _setup(s)
        # a 1024-char name, an 8000-char observation, a 255-char relation type
        created = await ok(s, "create_entities", {"entities": [ent(MAX_NAME, "t", [MAX_OBS])]})
        assert created == [ent(MAX_NAME, "t", [MAX_OBS])]
        await ok(s, "create_relations", {"relations": [rel(MAX_NAME, "Existing", "r" * 255)]})
        opened = await ok(s, "open_nodes", {"names": [MAX_NAME]})
        assert opened["entities"] == [ent(MAX_NAME, "t", [MAX_OBS])]
        assert rel_keys(opened) == [(MAX_NAME, "Existing", "r" * 255)]


async def test_exactly_10000_items_are_accepted(shared):
    s = shared.s
    graph = await ok(s, "read_graph")
    assert names(graph) == ["Existing", "Other"]
    assert {e["name"]: e["observations"] for e in graph["entities"]} == {"Existing": ["o1"], "Other": ["o2"]}
    await ok(s, "delete_entities", {"entityNames": [f"Ghost{i}" for i in range(10_000)]})
    assert names(await ok(s, "open_nodes", {"names": ["Existing"] * 10_000})) == ["Existing"]


async def test_relation_weights_0_and_1_are_accepted(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        await _setup(s)
        created = await ok(
            s,
            "create_relations",
            {
                "relations": [
                    {**rel("Existing", "Other", "w0"), "weight": 0},
                    {**rel("Existing", "Other", "w1"), "weight": 1.0},
                ]
            },
        )
        assert rel_keys(created) == [("Existing", "Other", "w0"), ("Existing", "Other", "w1")]


async def test_delete_observations_of_more_than_100000_in_total_is_refused(store: GraphStore) -> None:
    # store level: the total over all deletions of one call is capped, not only each list
    many = [
        ObservationDelete(entityName=f"E{i}", observations=[str(j) for j in range(60_000)]) for i in range(2)
    ]
    with pytest.raises(ValidationError, match="at most 100000"):
        await store.delete_observations(many)
