"""The MemoryMesh dialect (docs/memorymesh.md) on the graph the reference tools use.

A MemoryMesh node is an entity (``nodeType`` = ``entityType``, ``metadata`` = its observations
in order) and an edge is a relation (``edgeType`` = ``relationType``, with its ``weight``).
Writes reuse :class:`GraphStore`'s statements (so embeddings keep working) and run, each tool
call, as ONE Neo4j transaction: :meth:`MeshStore.transaction` hands a :class:`MeshTx` whose
operations all run inside it; any failure rolls everything back.  Events (``kg_neo4j.events``)
fire around the writes; ``after*`` events only once the transaction has committed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from neo4j import AsyncManagedTransaction

from kg_neo4j.events import EventBus
from kg_neo4j.events import bus as default_bus
from kg_neo4j.models import (
    KnowledgeGraph,
    RelationIn,
)
from kg_neo4j.schemas import NodeSchema, Processed, format_entry, replace_entries
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.mesh_inputs import EdgeIn, EdgeKey, EdgeUpdate, NodeIn, NodeUpdate
from kg_neo4j.store.mesh_records import Edge, MeshGraph, Node, NodeState, TypedResult, mesh_graph, rel_in
from kg_neo4j.store.mesh_tx import MeshTx
from kg_neo4j.store.records import dedupe

__all__ = [
    "Edge",
    "EdgeIn",
    "EdgeKey",
    "EdgeUpdate",
    "MeshGraph",
    "MeshStore",
    "MeshTx",
    "Node",
    "NodeIn",
    "NodeState",
    "NodeUpdate",
    "TypedResult",
]

T = TypeVar("T")


# --- schema-generated operations (docs/memorymesh.md#generated-tools), inside one transaction ----------


async def add_typed(mtx: MeshTx, schema: NodeSchema, p: Processed) -> TypedResult:
    metadata = [format_entry(k, v) for k, v in p.metadata.items() if v is not None]
    node = (await mtx.add_nodes([NodeIn(name=p.name, nodeType=schema.node_type, metadata=metadata)]))[0]
    rels = [
        rel_in(p.name, target, schema.properties[prop].relationship.edge_type)  # type: ignore[union-attr]
        for prop, targets in p.targets.items()
        for target in targets
    ]
    edges = await mtx.create_edges(rels, reject_duplicates=False) if rels else []
    return TypedResult(node=node, edges=edges)


async def update_typed(mtx: MeshTx, schema: NodeSchema, p: Processed) -> TypedResult:
    state = await mtx.require_node(p.name, node_type=schema.node_type)
    closed: list[Edge] = []
    opened: list[RelationIn] = []
    edge_types: list[str] = []
    for prop, targets in p.targets.items():
        rel = schema.properties[prop].relationship
        assert rel is not None
        edge_types.append(rel.edge_type)
        current = await mtx.out_edges(p.name, [rel.edge_type])
        closed.extend(e for e in current if e.to not in targets)
        have = {e.to for e in current}
        opened.extend(rel_in(p.name, t, rel.edge_type) for t in targets if t not in have)
    closed_now = await mtx.invalidate_edges(closed) if closed else []
    if opened:
        await mtx.create_edges(opened, reject_duplicates=False)
    metadata = replace_entries(state.metadata, p.metadata)
    if metadata != state.metadata:
        node = (await mtx.replace_nodes([(state, None, metadata)]))[0]
    else:
        node = Node(name=p.name, nodeType=schema.node_type, metadata=state.metadata)
    all_types = [r.edge_type for r in schema.relationships.values()]
    edges = await mtx.out_edges(p.name, dedupe(all_types)) if all_types else []
    return TypedResult(node=node, edges=edges, closed=closed_now)


async def delete_typed(mtx: MeshTx, schema: NodeSchema, name: str) -> None:
    await mtx.require_node(name, node_type=schema.node_type)
    await mtx.delete_nodes([name])


# --- the store ---------------------------------------------------------------------------------


class MeshStore:
    """MemoryMesh operations over a :class:`GraphStore`; each public write is one transaction."""

    def __init__(self, graph: GraphStore, bus: EventBus | None = None) -> None:
        self.graph = graph
        self.bus = bus if bus is not None else default_bus

    async def transaction(self, work: Callable[[MeshTx], Awaitable[T]]) -> T:
        """Run ``work`` in one write transaction (``withTransaction``,
        docs/memorymesh.md#transactions): it commits when ``work`` returns and rolls back,
        writing nothing, when it raises (the error propagates)."""
        holder: dict[str, MeshTx] = {}

        async def unit(tx: AsyncManagedTransaction) -> T:
            mtx = MeshTx(self.graph.within(tx), self.bus)
            holder["tx"] = mtx  # a retried attempt replaces the pending after-events of the failed one
            try:
                return await work(mtx)
            except BaseException:
                self.bus.emit_safely("beforeRollback", {})
                raise

        self.bus.emit("beforeBeginTransaction", {})
        try:
            result = await self.graph.x.transaction(unit)
        except BaseException:
            self.bus.emit_safely("afterRollback", {})
            raise
        self.bus.emit_safely("afterCommit", {})
        for event, data in holder["tx"].after:
            self.bus.emit_safely(event, data)
        return result

    # -- one-call writes ---------------------------------------------------------------------
    async def add_nodes(self, nodes: Sequence[NodeIn]) -> list[Node]:
        return await self.transaction(lambda t: t.add_nodes(nodes))

    async def update_nodes(self, updates: Sequence[NodeUpdate]) -> list[Node]:
        return await self.transaction(lambda t: t.update_nodes(updates))

    async def delete_nodes(self, names: Sequence[str]) -> int:
        return await self.transaction(lambda t: t.delete_nodes(names))

    async def add_edges(self, edges: Sequence[EdgeIn]) -> list[Edge]:
        return await self.transaction(lambda t: t.add_edges(edges))

    async def update_edges(self, updates: Sequence[EdgeUpdate]) -> list[Edge]:
        return await self.transaction(lambda t: t.update_edges(updates))

    async def delete_edges(self, keys: Sequence[EdgeKey]) -> None:
        await self.transaction(lambda t: t.delete_edges(keys))

    async def add_metadata(self, node_name: str, metadata: Sequence[str]) -> list[str]:
        return await self.transaction(lambda t: t.add_metadata(node_name, metadata))

    async def delete_metadata(self, node_name: str, metadata: Sequence[str]) -> None:
        await self.transaction(lambda t: t.delete_metadata(node_name, metadata))

    async def add_typed(self, schema: NodeSchema, p: Processed) -> TypedResult:
        return await self.transaction(lambda t: add_typed(t, schema, p))

    async def update_typed(self, schema: NodeSchema, p: Processed) -> TypedResult:
        return await self.transaction(lambda t: update_typed(t, schema, p))

    async def delete_typed(self, schema: NodeSchema, name: str) -> None:
        await self.transaction(lambda t: delete_typed(t, schema, name))

    # -- reads (docs/memorymesh.md#neighbour-inclusive-reads) ------------------------------
    async def read_graph(self, *, limit: int | None = None, cursor: str | None = None) -> MeshGraph:
        return mesh_graph(await self.graph.read_graph(limit=limit, cursor=cursor))

    async def search_nodes(self, query: str) -> MeshGraph:
        """Nodes whose name, type or metadata contain ``query`` (any case), their neighbours, and the
        edges touching the matches."""
        self.bus.emit("beforeSearch", {"query": query})
        graph = await self._with_neighbours(lambda g: g.search_nodes(query))
        self.bus.emit_safely("afterSearch", {"results": graph.dump()})
        return graph

    async def open_nodes(self, names: Sequence[str]) -> MeshGraph:
        """Nodes by exact name, their neighbours, and the edges touching the requested nodes."""
        return await self._with_neighbours(lambda g: g.open_nodes(names))

    async def _with_neighbours(self, first: Callable[[GraphStore], Awaitable[KnowledgeGraph]]) -> MeshGraph:
        async def unit(tx: AsyncManagedTransaction) -> MeshGraph:
            g = self.graph.within(tx)
            kg = await first(g)
            matched = {e.name for e in kg.entities}
            around = dedupe(n for r in kg.relations for n in (r.from_, r.to) if n not in matched)
            neighbours = (await g.open_nodes(around)).entities if around else []
            return mesh_graph(KnowledgeGraph(entities=[*kg.entities, *neighbours], relations=kg.relations))

        return await self.graph.x.transaction(unit, read=True)
