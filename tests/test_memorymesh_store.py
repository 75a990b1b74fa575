"""MeshStore (the MemoryMesh dialect, docs/memorymesh.md) on a real Neo4j: neighbour expansion,
transactions, weights (#behavioural-tests), relationship replacement with history, events.

Every check reads the database back, through MeshStore and through the reference GraphStore
(one graph underneath)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.events import EVENTS, EventBus
from kg_neo4j.schemas import default_schemas_dir, load_schema, process_args
from kg_neo4j.store import GraphStore
from kg_neo4j.store.memorymesh import EdgeIn, EdgeKey, EdgeUpdate, MeshStore, MeshTx, NodeIn, NodeUpdate

NPC = load_schema(default_schemas_dir() / "npc.schema.json")


def node(name: str, node_type: str = "thing", metadata: list[str] | None = None) -> NodeIn:
    return NodeIn(name=name, nodeType=node_type, metadata=metadata or [])


def edge(a: str, b: str, t: str = "knows", weight: float | None = None) -> EdgeIn:
    data: dict[str, Any] = {"from": a, "to": b, "edgeType": t}
    if weight is not None:
        data["weight"] = weight
    return EdgeIn.model_validate(data)


def key(a: str, b: str, t: str = "knows") -> EdgeKey:
    return EdgeKey.model_validate({"from": a, "to": b, "edgeType": t})


def edge_keys(graph: Any) -> list[tuple[str, str, str]]:
    return sorted((e.from_, e.to, e.edgeType) for e in graph.edges)


def node_names(graph: Any) -> list[str]:
    return [n.name for n in graph.nodes]


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def mesh(store: GraphStore, bus: EventBus) -> MeshStore:
    return MeshStore(store, bus)


# --- 14.3 neighbour expansion -----------------------------------------------------------------


async def test_search_returns_matches_and_their_neighbours(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A", "person", ["Likes tea"]), node("B", "person"), node("C", "person")])
    await mesh.add_edges([edge("A", "B")])
    graph = await mesh.search_nodes("tea")
    assert node_names(graph) == ["A", "B"]
    assert edge_keys(graph) == [("A", "B", "knows")]
    assert graph.nodes[0].metadata == ["Likes tea"]


async def test_search_matches_name_type_and_metadata_case_insensitively(mesh: MeshStore) -> None:
    await mesh.add_nodes(
        [node("Gandalf", "npc"), node("Shire", "LOCATION"), node("X", "thing", ["Colour: GREY"])]
    )
    assert node_names(await mesh.search_nodes("GANDALF")) == ["Gandalf"]
    assert node_names(await mesh.search_nodes("location")) == ["Shire"]
    assert node_names(await mesh.search_nodes("grey")) == ["X"]


async def test_open_nodes_returns_neighbours_but_not_their_edges(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A"), node("B"), node("C")])
    await mesh.add_edges([edge("A", "B"), edge("B", "C")])
    graph = await mesh.open_nodes(["A"])
    assert node_names(graph) == ["A", "B"]
    assert edge_keys(graph) == [("A", "B", "knows")]
    # incoming edges count too: opening C brings B
    graph = await mesh.open_nodes(["C"])
    assert node_names(graph) == ["C", "B"]
    assert edge_keys(graph) == [("B", "C", "knows")]


async def test_read_graph_is_the_whole_graph_in_nodes_edges_shape(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A", "t", ["k: v"]), node("B")])
    await mesh.add_edges([edge("A", "B", "likes", 0.5)])
    graph = await mesh.read_graph()
    assert graph.dump() == {
        "nodes": [
            {"name": "A", "nodeType": "t", "metadata": ["k: v"]},
            {"name": "B", "nodeType": "thing", "metadata": []},
        ],
        "edges": [{"from": "A", "to": "B", "edgeType": "likes", "weight": 0.5}],
    }


# --- 14.4 transactions ----------------------------------------------------------------------------


async def test_successful_transaction_commits_node_and_edge(mesh: MeshStore) -> None:
    async def work(t: MeshTx) -> None:
        await t.add_nodes([node("A"), node("B")])
        await t.add_edges([edge("A", "B")])

    await mesh.transaction(work)
    graph = await mesh.read_graph()
    assert node_names(graph) == ["A", "B"]
    assert edge_keys(graph) == [("A", "B", "knows")]


async def test_failed_edge_rolls_back_the_node(mesh: MeshStore, store: GraphStore) -> None:
    async def work(t: MeshTx) -> None:
        await t.add_nodes([node("A")])
        await t.add_edges([edge("A", "Nobody")])  # bad reference

    with pytest.raises(NotFoundError, match="Nobody"):
        await mesh.transaction(work)
    assert (await mesh.read_graph()).nodes == []
    assert (await store.read_graph()).entities == []


async def test_with_transaction_rolls_back_on_any_error(mesh: MeshStore) -> None:
    async def work(t: MeshTx) -> None:
        await t.add_nodes([node("A")])
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await mesh.transaction(work)
    assert (await mesh.read_graph()).nodes == []


async def test_one_call_is_all_or_nothing(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("Existing")])
    # the third of five nodes exists: nothing of the call is written
    with pytest.raises(ValidationError, match="Node 'Existing' already exists"):
        await mesh.add_nodes([node("N1"), node("N2"), node("Existing"), node("N4"), node("N5")])
    assert node_names(await mesh.read_graph()) == ["Existing"]
    # one missing endpoint among three edges: none of them lands
    await mesh.add_nodes([node("A"), node("B")])
    with pytest.raises(NotFoundError, match="Ghost"):
        await mesh.add_edges([edge("A", "B"), edge("B", "A"), edge("A", "Ghost")])
    assert (await mesh.read_graph()).edges == []
    # an unknown edge among updates: no weight changes
    await mesh.add_edges([edge("A", "B", weight=0.8)])
    with pytest.raises(NotFoundError):
        await mesh.update_edges(
            [
                EdgeUpdate.model_validate({"from": "A", "to": "B", "edgeType": "knows", "weight": 0.2}),
                EdgeUpdate.model_validate({"from": "B", "to": "A", "edgeType": "knows", "weight": 0.2}),
            ]
        )
    assert [e.weight for e in (await mesh.read_graph()).edges] == [0.8]


async def test_enum_violation_in_generated_add_writes_nothing(mesh: MeshStore) -> None:
    with pytest.raises(ValidationError, match="Dragon"):
        await mesh.add_typed(
            NPC,
            process_args(
                NPC,
                {"name": "Smaug", "role": "Dragon", "status": "Active", "currentLocation": "Erebor"},
                partial=False,
            ),
        )
    graph = await mesh.read_graph()
    assert graph.nodes == [] and graph.edges == []


# --- 14.5 weights ---------------------------------------------------------------------------------


async def test_default_weight_is_one(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A"), node("B")])
    added = await mesh.add_edges([edge("A", "B")])
    assert added[0].weight == 1.0
    assert (await mesh.read_graph()).edges[0].weight == 1.0


async def test_weight_averaging_on_update(mesh: MeshStore, store: GraphStore) -> None:
    await mesh.add_nodes([node("A"), node("B")])
    await mesh.add_edges([edge("A", "B", weight=0.8)])
    updated = await mesh.update_edges(
        [EdgeUpdate.model_validate({"from": "A", "to": "B", "edgeType": "knows", "weight": 0.6})]
    )
    assert updated[0].weight == pytest.approx(0.7)
    # docs/memorymesh.md#edge-weights: evolution from 1.0: 0.6 -> 0.8, 0.4 -> 0.6, 1.0 -> 0.8
    await mesh.add_edges([edge("B", "A")])
    for given, expected in ((0.6, 0.8), (0.4, 0.6), (1.0, 0.8)):
        out = await mesh.update_edges(
            [EdgeUpdate.model_validate({"from": "B", "to": "A", "edgeType": "knows", "weight": given})]
        )
        assert out[0].weight == pytest.approx(expected)
    rels = {(r.from_, r.to): r.weight for r in (await store.read_graph()).relations}
    assert rels == {("A", "B"): pytest.approx(0.7), ("B", "A"): pytest.approx(0.8)}


@pytest.mark.unit
@pytest.mark.parametrize("bad", [1.5, -0.1])
def test_weight_out_of_range_rejected(bad: float) -> None:
    with pytest.raises(Exception, match="weight"):
        edge("A", "B", weight=bad)


async def test_duplicate_edge_rejected(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A"), node("B")])
    await mesh.add_edges([edge("A", "B")])
    with pytest.raises(ValidationError, match="already exists"):
        await mesh.add_edges([edge("A", "B", weight=0.3)])
    with pytest.raises(ValidationError, match="twice"):
        await mesh.add_edges([edge("B", "A"), edge("B", "A")])
    assert edge_keys(await mesh.read_graph()) == [("A", "B", "knows")]


async def test_edge_endpoints_must_be_nodes_not_placeholders(mesh: MeshStore, store: GraphStore) -> None:
    # a placeholder (a name only referenced by a relation) is not a node
    await mesh.add_nodes([node("A")])
    await mesh.add_typed(
        NPC,
        process_args(
            NPC,
            {"name": "G", "role": "Wizard", "status": "Active", "currentLocation": "Nowhere"},
            partial=False,
        ),
    )
    with pytest.raises(NotFoundError, match="Nowhere"):
        await mesh.add_edges([edge("A", "Nowhere")])


# --- nodes and metadata ------------------------------------------------------------------------------


async def test_update_nodes_replaces_metadata_and_type(mesh: MeshStore, store: GraphStore) -> None:
    await mesh.add_nodes([node("A", "t", ["one", "two", "three"])])
    await mesh.update_nodes([NodeUpdate(name="A", metadata=["three", "four", "one"])])
    graph = await store.open_nodes(["A"])
    assert graph.entities[0].observations == ["three", "four", "one"]
    assert graph.entities[0].entityType == "t"
    await mesh.update_nodes([NodeUpdate(name="A", nodeType="u")])
    assert (await mesh.open_nodes(["A"])).nodes[0].model_dump() == {
        "name": "A",
        "nodeType": "u",
        "metadata": ["three", "four", "one"],
    }
    assert [e.name for e in (await store.search_nodes("u")).entities] == ["A"]  # type_lower follows
    with pytest.raises(NotFoundError, match="Node 'Nope' not found"):
        await mesh.update_nodes([NodeUpdate(name="A", metadata=[]), NodeUpdate(name="Nope", metadata=["x"])])
    assert (await mesh.open_nodes(["A"])).nodes[0].metadata == ["three", "four", "one"]


async def test_delete_nodes_cascades(mesh: MeshStore, store: GraphStore) -> None:
    await mesh.add_nodes([node("A", "t", ["m"]), node("B"), node("C")])
    await mesh.add_edges([edge("A", "B"), edge("C", "A"), edge("B", "C")])
    await mesh.delete_nodes(["A", "Unknown"])
    graph = await mesh.read_graph()
    assert node_names(graph) == ["B", "C"]
    assert edge_keys(graph) == [("B", "C", "knows")]


async def test_metadata_add_dedupes_and_delete_removes(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A", "t", ["Role: Wizard"])])
    added = await mesh.add_metadata("A", ["Role: Wizard", "Status: Active"])
    assert added == ["Status: Active"]
    await mesh.delete_metadata("A", ["Role: Wizard", "not there"])
    assert (await mesh.open_nodes(["A"])).nodes[0].metadata == ["Status: Active"]
    with pytest.raises(NotFoundError, match="Node 'B' not found"):
        await mesh.add_metadata("B", ["x"])
    with pytest.raises(NotFoundError, match="Node 'B' not found"):
        await mesh.delete_metadata("B", ["x"])


async def test_delete_edges_by_exact_triple(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("A"), node("B")])
    await mesh.add_edges([edge("A", "B", "knows"), edge("A", "B", "likes"), edge("B", "A", "knows")])
    await mesh.delete_edges([key("A", "B", "knows"), key("A", "B", "nope")])
    assert edge_keys(await mesh.read_graph()) == [("A", "B", "likes"), ("B", "A", "knows")]


# --- generated operations: relationship create / replace with history ------------------------------------


async def test_relationship_replaced_with_history(mesh: MeshStore, store: GraphStore, clock: Any) -> None:
    t0 = clock.now()
    made = await mesh.add_typed(
        NPC,
        process_args(
            NPC,
            {
                "name": "Gandalf",
                "role": "Wizard",
                "status": "Active",
                "currentLocation": "Rivendell",
                "traits": ["wise", "old"],
            },
            partial=False,
        ),
    )
    assert made.node.metadata == [
        "Role: Wizard",
        "Status: Active",
        "Current Location: Rivendell",
        "Traits: wise, old",
    ]
    assert [(e.to, e.edgeType, e.weight) for e in made.edges] == [("Rivendell", "located_in", 1.0)]
    clock.advance(hours=1)
    t1 = clock.now()
    upd = await mesh.update_typed(
        NPC, process_args(NPC, {"name": "Gandalf", "currentLocation": "Mordor"}, partial=True)
    )
    assert [e.to for e in upd.edges] == ["Mordor"]
    assert [e.to for e in upd.closed] == ["Rivendell"]
    # metadata key replaced in place
    assert upd.node.metadata == [
        "Role: Wizard",
        "Status: Active",
        "Current Location: Mordor",
        "Traits: wise, old",
    ]
    now = await store.open_nodes(["Gandalf"])
    assert now.entities[0].observations == upd.node.metadata
    assert [(r.to, r.relationType) for r in now.relations] == [("Mordor", "located_in")]
    # history: as of before the update, the old edge
    before = await store.open_nodes(["Gandalf"], as_of=t0 + timedelta(minutes=30))
    assert [(r.to, r.relationType) for r in before.relations] == [("Rivendell", "located_in")]
    assert [r.to for r in (await store.open_nodes(["Gandalf"], as_of=t1)).relations] == ["Mordor"]
    # unchanged relationship: nothing closed, nothing new
    clock.advance(hours=1)
    same = await mesh.update_typed(
        NPC,
        process_args(
            NPC, {"name": "Gandalf", "currentLocation": "Mordor", "status": "Missing"}, partial=True
        ),
    )
    assert same.closed == [] and [e.to for e in same.edges] == ["Mordor"]
    assert same.node.metadata[1] == "Status: Missing"
    # null removes the property and closes its edge
    gone = await mesh.update_typed(
        NPC, process_args(NPC, {"name": "Gandalf", "currentLocation": None}, partial=True)
    )
    assert gone.edges == [] and [e.to for e in gone.closed] == ["Mordor"]
    assert gone.node.metadata == ["Role: Wizard", "Status: Missing", "Traits: wise, old"]


async def test_typed_update_and_delete_check_the_type(mesh: MeshStore) -> None:
    await mesh.add_nodes([node("Rivendell", "location")])
    with pytest.raises(ValidationError, match="'Rivendell' is a location, not a npc"):
        await mesh.update_typed(
            NPC, process_args(NPC, {"name": "Rivendell", "status": "Active"}, partial=True)
        )
    with pytest.raises(ValidationError, match="not a npc"):
        await mesh.delete_typed(NPC, "Rivendell")
    with pytest.raises(NotFoundError, match="Npc 'Nobody' not found"):
        await mesh.delete_typed(NPC, "Nobody")
    assert node_names(await mesh.read_graph()) == ["Rivendell"]


# --- events (docs/memorymesh.md#events) ----------------------------------------------------------


async def test_events_before_and_after_commit(
    mesh: MeshStore, bus: EventBus, sync_driver: Any, store: GraphStore
) -> None:
    seen: list[tuple[str, Any]] = []

    def committed(name: str) -> bool:
        # a separate session: sees only committed data
        records, _, _ = sync_driver.execute_query(
            "MATCH (n:Entity {namespace: $ns, name: $name}) RETURN count(n) AS c",
            ns=store.namespace,
            name=name,
        )
        return bool(records[0]["c"])

    for event in EVENTS:
        bus.subscribe(event, lambda data, event=event: seen.append((event, data)))
    bus.subscribe("beforeAddNodes", lambda data: seen.append(("committed?", committed("A"))))
    bus.subscribe("afterAddNodes", lambda data: seen.append(("committed?", committed("A"))))

    await mesh.add_nodes([node("A", "t", ["m"])])
    assert [e for e, _ in seen] == [
        "beforeBeginTransaction",
        "beforeAddNodes",
        "committed?",
        "afterCommit",
        "afterAddNodes",
        "committed?",
    ]
    assert seen[1][1] == {"nodes": [{"name": "A", "nodeType": "t", "metadata": ["m"]}]}
    assert seen[2][1] is False and seen[5][1] is True

    # a failed call: before events, then rollback events, and no after* event
    seen.clear()
    with pytest.raises(NotFoundError):

        async def work(t: MeshTx) -> None:
            await t.add_nodes([node("B")])
            await t.add_edges([edge("B", "Ghost")])

        await mesh.transaction(work)
    names = [e for e, _ in seen]
    assert names == [
        "beforeBeginTransaction",
        "beforeAddNodes",
        "committed?",
        "beforeRollback",
        "afterRollback",
    ]

    # search events
    seen.clear()
    await mesh.search_nodes("a")
    assert [e for e, _ in seen] == ["beforeSearch", "afterSearch"]
    assert seen[0][1] == {"query": "a"}
    assert seen[1][1]["results"]["nodes"][0]["name"] == "A"


async def test_before_listener_can_veto_and_after_listener_cannot_fail_the_call(
    mesh: MeshStore, bus: EventBus
) -> None:
    def veto(data: dict[str, Any]) -> None:
        raise PermissionError("no edges today")

    off = bus.subscribe("beforeAddEdges", veto)
    await mesh.add_nodes([node("A"), node("B")])
    with pytest.raises(PermissionError):
        await mesh.add_edges([edge("A", "B")])
    assert (await mesh.read_graph()).edges == []
    off()
    assert bus.listener_count("beforeAddEdges") == 0

    def broken(data: dict[str, Any]) -> None:
        raise RuntimeError("listener bug")

    bus.subscribe("afterAddEdges", broken)
    await mesh.add_edges([edge("A", "B")])  # the write landed; the listener's failure is only logged
    assert edge_keys(await mesh.read_graph()) == [("A", "B", "knows")]


@pytest.mark.unit
def test_bus_api(bus: EventBus) -> None:
    calls: list[str] = []
    bus.once("afterCommit", lambda d: calls.append("once"))
    assert bus.emit("afterCommit") is True
    assert bus.emit("afterCommit") is False
    assert calls == ["once"]
    with pytest.raises(ValueError, match="unknown event"):
        bus.subscribe("afterAddNode", lambda d: None)
    bus.on("beforeSearch", calls.append)
    bus.remove_all_listeners("beforeSearch")
    assert bus.listener_count("beforeSearch") == 0


async def test_mesh_writes_keep_embeddings(
    semantic_store: GraphStore, bus: EventBus, sync_driver: Any
) -> None:
    """Writes through MeshStore embed like the reference's: new metadata gets a vector, kept
    metadata keeps its own, a changed type re-embeds the node."""
    mesh = MeshStore(semantic_store, bus)
    await mesh.add_nodes([node("Alice", "person", ["Likes tea", "Works at Acme"])])

    def vectors() -> dict[str, Any]:
        records, _, _ = sync_driver.execute_query(
            "MATCH (e:Entity {namespace: $ns, name: 'Alice'}) "
            "OPTIONAL MATCH (e)-[:HAS_OBSERVATION]->(o) "
            "RETURN e.embedding AS entity, collect([o.text, o.embedding]) AS obs",
            ns=semantic_store.namespace,
        )
        return {"entity": records[0]["entity"], **{t: v for t, v in records[0]["obs"]}}

    before = vectors()
    assert before["entity"] is not None and before["Likes tea"] is not None
    await mesh.update_nodes(
        [NodeUpdate(name="Alice", metadata=["Likes tea", "Plays chess"], nodeType="robot")]
    )
    after = vectors()
    assert set(after) == {"entity", "Likes tea", "Plays chess"}
    assert after["Likes tea"] == before["Likes tea"]
    assert after["Plays chess"] is not None and len(after["Plays chess"]) == 384
    assert after["entity"] != before["entity"]
    hits = await semantic_store.search_memory("board games", limit=3)
    assert any(h.observation == "Plays chess" for h in hits.hits)
