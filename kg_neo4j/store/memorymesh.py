"""The MemoryMesh dialect (spec 002) on the graph the reference tools use.

A MemoryMesh node is an entity (``nodeType`` = ``entityType``, ``metadata`` = its observations
in order) and an edge is a relation (``edgeType`` = ``relationType``, with its ``weight``).
Writes reuse :class:`GraphStore`'s statements (so embeddings keep working) and run, each tool
call, as ONE Neo4j transaction: :meth:`MeshStore.transaction` hands a :class:`MeshTx` whose
operations all run inside it; any failure rolls everything back.  Events (``kg_neo4j.events``)
fire around the writes; ``after*`` events only once the transaction has committed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from neo4j import AsyncManagedTransaction
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kg_neo4j.errors import ConflictError, NotFoundError, ValidationError
from kg_neo4j.events import EventBus
from kg_neo4j.events import bus as default_bus
from kg_neo4j.models import (
    MAX_OBSERVATIONS_PER_CALL,
    MAX_OBSERVATIONS_PER_ITEM,
    EntityIn,
    EntityType,
    KnowledgeGraph,
    Name,
    ObservationAdd,
    ObservationDelete,
    ObservationText,
    Relation,
    RelationFull,
    RelationIn,
    RelationInvalidate,
    RelationType,
    RelationUpdate,
    _In,
    not_null,
)
from kg_neo4j.schemas import NodeSchema, Processed, format_entry, replace_entries
from kg_neo4j.store.graph import GraphStore, entity_text
from kg_neo4j.store.type_labels import type_labels

T = TypeVar("T")

#: What to do about a node name that is taken (names are unique across node types).
_NODE_EXISTS = ("change the existing node with update_nodes (or the update_<type> tool of its type)",
                "or choose another name: a name is unique across all node types")


# --- shapes ---------------------------------------------------------------------------------


def _not_blank(v: str, what: str) -> str:
    if not v.strip():
        raise ValueError(f"{what} must not be empty or only whitespace")
    return v


# Input shapes of the static tools (advertised by the hand-written schemas of server/memorymesh.py,
# whose optional fields do not allow null: hence ``not_null``).
class NodeIn(_In):
    name: Name
    nodeType: EntityType
    metadata: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)

    _check_type = field_validator("nodeType")(lambda v: _not_blank(v, "nodeType"))


class NodeUpdate(_In):
    name: Name
    metadata: list[ObservationText] | None = Field(default=None, max_length=MAX_OBSERVATIONS_PER_ITEM)
    nodeType: EntityType | None = None

    _nn = not_null("metadata", "nodeType")

    @field_validator("nodeType")
    @classmethod
    def _check_type(cls, v: str | None) -> str | None:
        return None if v is None else _not_blank(v, "nodeType")


class EdgeKey(_In):
    from_: Name = Field(alias="from")
    to: Name
    edgeType: RelationType

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.from_, self.to, self.edgeType)


class EdgeIn(EdgeKey):
    weight: float = Field(default=1.0, ge=0.0, le=1.0, strict=True)


class EdgeUpdate(EdgeKey):
    weight: float | None = Field(default=None, ge=0.0, le=1.0, strict=True)
    #: spec 002 section 4.3's name for the new evidence; the same as ``weight`` (never both)
    newWeight: float | None = Field(default=None, ge=0.0, le=1.0, strict=True)

    _nn = not_null("weight", "newWeight")

    @model_validator(mode="after")
    def _one_weight(self) -> EdgeUpdate:
        if self.newWeight is not None:
            if self.weight is not None:
                raise ValueError("give the new weight as weight or as newWeight, not both")
            self.weight, self.newWeight = self.newWeight, None
        return self


class Node(BaseModel):
    name: str
    nodeType: str
    metadata: list[str]


class Edge(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    edgeType: str
    weight: float = 1.0

    def dump(self) -> dict[str, Any]:
        return {"from": self.from_, "to": self.to, "edgeType": self.edgeType, "weight": self.weight}


class MeshGraph(BaseModel):
    nodes: list[Node]
    edges: list[Edge]
    nextCursor: str | None = None

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nodes": [n.model_dump() for n in self.nodes], "edges": [e.dump() for e in self.edges]}
        if self.nextCursor is not None:
            out["nextCursor"] = self.nextCursor
        return out


@dataclass
class NodeState:
    name: str
    exists: bool
    entity: bool
    node_type: str | None
    metadata: list[str]
    knowledge: bool = False


@dataclass
class TypedResult:
    """What a generated tool did: the node, the edges it holds now, the edges it closed."""

    node: Node
    edges: list[Edge] = field(default_factory=list)
    closed: list[Edge] = field(default_factory=list)


def _edge(r: RelationFull | Relation | RelationIn, weight: float | None = None) -> Edge:
    w = weight if weight is not None else getattr(r, "weight", 1.0)
    return Edge.model_validate({"from": r.from_, "to": r.to, "edgeType": r.relationType, "weight": w})


def _rel_in(from_: str, to: str, edge_type: str, weight: float = 1.0) -> RelationIn:
    return RelationIn.model_validate({"from": from_, "to": to, "relationType": edge_type, "weight": weight})


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _mesh_graph(kg: KnowledgeGraph) -> MeshGraph:
    return MeshGraph(
        nodes=[Node(name=e.name, nodeType=e.entityType, metadata=e.observations) for e in kg.entities],
        edges=[_edge(r) for r in kg.relations],
        nextCursor=kg.nextCursor,
    )


def _key_text(key: tuple[str, str, str]) -> str:
    return f"{key[0]} -[{key[2]}]-> {key[1]}"


# --- one transaction ---------------------------------------------------------------------------


class MeshTx:
    """The MemoryMesh operations inside one open transaction (see :meth:`MeshStore.transaction`)."""

    def __init__(self, g: GraphStore, bus: EventBus) -> None:
        self.g = g
        self.bus = bus
        #: after* events, fired by MeshStore.transaction once the transaction has committed
        self.after: list[tuple[str, dict[str, Any]]] = []

    def _before(self, event: str, data: dict[str, Any]) -> None:
        self.bus.emit(event, data)

    def _after(self, event: str, data: dict[str, Any]) -> None:
        self.after.append((event, data))

    # -- reads inside the transaction ----------------------------------------------------
    async def nodes(self, names: Sequence[str]) -> dict[str, NodeState]:
        names = _dedupe(names)
        if not names:
            return {}
        records = await self.g.run("mesh_nodes", names=names)
        return {r["name"]: NodeState(r["name"], bool(r["exists"]), bool(r["entity"]), r["nodeType"],
                                     list(r["metadata"]), bool(r["knowledge"])) for r in records}

    async def out_edges(self, name: str, edge_types: Sequence[str]) -> list[Edge]:
        records = await self.g.run("mesh_out_edges", node=name, types=list(edge_types))
        return [Edge.model_validate({"from": name, "to": r["to"], "edgeType": r["edgeType"],
                                     "weight": r["weight"] if r["weight"] is not None else 1.0}) for r in records]

    async def require_node(self, name: str, *, node_type: str | None = None) -> NodeState:
        state = (await self.nodes([name]))[name]
        what = node_type or "node"
        if not state.entity:
            raise NotFoundError(what, name, f"{what.capitalize()} '{name}' not found; nothing was written")
        if node_type is not None and state.node_type != node_type:
            raise ValidationError(
                f"'{name}' is a {state.node_type}, not a {node_type}; nothing was written", field=f"{node_type}.name",
                suggestions=(f"'{name}' is a {state.node_type}: use the {state.node_type} tools (update_"
                             f"{state.node_type}, delete_{state.node_type}) or update_nodes / delete_nodes, "
                             "which take any type",
                             f"or give the name of a {node_type}: search_nodes shows names with their types"))
        return state

    # -- nodes -----------------------------------------------------------------------------
    async def add_nodes(self, nodes: Sequence[NodeIn]) -> list[Node]:
        """Create nodes; a name that exists as a node (entity) fails the call (spec 002 section 4.2)."""
        if not nodes:
            return []
        seen: set[str] = set()
        for n in nodes:
            if n.name in seen:
                raise ValidationError(f"Node '{n.name}' appears twice in one call; nothing was written", field="nodes")
            seen.add(n.name)
        if sum(len(n.metadata) for n in nodes) > MAX_OBSERVATIONS_PER_CALL:
            raise ValidationError(f"more than {MAX_OBSERVATIONS_PER_CALL} metadata entries in one call; "
                                  "nothing was written", field="nodes")
        state = await self.nodes([n.name for n in nodes])
        for n in nodes:
            if state[n.name].entity:
                raise ConflictError(f"Node '{n.name}' already exists; nothing was written", field="nodes",
                                    suggestions=_NODE_EXISTS)
        out = [Node(name=n.name, nodeType=n.nodeType, metadata=_dedupe(n.metadata)) for n in nodes]
        self._before("beforeAddNodes", {"nodes": [n.model_dump() for n in out]})
        created = await self.g.create_entities(
            [EntityIn(name=n.name, entityType=n.nodeType, observations=n.metadata) for n in out])
        if len(created) != len(out):  # another writer created one since the check: the lock decided
            lost = sorted({n.name for n in out} - {c.name for c in created})
            raise ConflictError(f"Node '{lost[0]}' already exists; nothing was written", field="nodes",
                                suggestions=_NODE_EXISTS)
        self._after("afterAddNodes", {"nodes": [n.model_dump() for n in out]})
        return out

    async def update_nodes(self, updates: Sequence[NodeUpdate]) -> list[Node]:
        """Replace metadata and/or nodeType of existing nodes (spec 002 section 4.2)."""
        if not updates:
            return []
        seen: set[str] = set()
        for u in updates:
            if u.name in seen:
                raise ValidationError(f"Node '{u.name}' appears twice in one update; send it once", field="nodes")
            seen.add(u.name)
        state = await self.nodes([u.name for u in updates])
        for u in updates:
            if not state[u.name].entity:
                raise NotFoundError("node", u.name, f"Node '{u.name}' not found; nothing was written")
        changes = [(state[u.name], u.nodeType, u.metadata) for u in updates]
        return await self._replace(changes)

    async def _replace(self, changes: Sequence[tuple[NodeState, str | None, list[str] | None]]) -> list[Node]:
        rows: list[dict[str, Any]] = []
        out: list[Node] = []
        texts: list[str] = []
        for st, _, _ in changes:
            if st.knowledge:  # its type and content observation are the knowledge layer's (spec 004)
                raise ValidationError(f"'{st.name}' is knowledge: change its type or content with update_knowledge; "
                                      "nothing was written", field="name")
        for st, node_type, metadata in changes:
            new_type = node_type if node_type is not None and node_type != st.node_type else None
            meta = _dedupe(metadata) if metadata is not None else None
            row: dict[str, Any] = {"name": st.name, "nodeType": new_type,
                                   "type_lower": new_type.lower() if new_type is not None else None,
                                   "type_labels": type_labels(new_type),
                                   "entity_vector": None, "metadata": meta,
                                   "metadata_lower": [m.lower() for m in meta] if meta is not None else None,
                                   "vectors": None, "_fresh": [], "_type_text": None}
            if meta is not None:
                have = set(st.metadata)
                row["_fresh"] = [i for i, m in enumerate(meta) if m not in have]
                texts.extend(meta[i] for i in row["_fresh"])
            if new_type is not None:
                row["_type_text"] = entity_text(st.name, new_type)
                texts.append(row["_type_text"])
            rows.append(row)
            out.append(Node(name=st.name, nodeType=node_type or st.node_type or "",
                            metadata=meta if meta is not None else st.metadata))
        if sum(len(r["_fresh"]) for r in rows) > MAX_OBSERVATIONS_PER_CALL:
            raise ValidationError(f"more than {MAX_OBSERVATIONS_PER_CALL} new metadata entries in one call; "
                                  "nothing was written", field="nodes")
        vectors = await self.g.embed(texts)
        if vectors is not None:
            it = iter(vectors)
            for row in rows:
                if row["metadata"] is not None:
                    vec: list[Any] = [None] * len(row["metadata"])
                    for i in row["_fresh"]:
                        vec[i] = next(it)
                    row["vectors"] = vec
                if row["_type_text"] is not None:
                    row["entity_vector"] = next(it)
        for row in rows:
            del row["_fresh"], row["_type_text"]
        self._before("beforeUpdateNodes", {"nodes": [n.model_dump() for n in out]})
        await self.g.run("mesh_replace_metadata", rows=rows)
        self._after("afterUpdateNodes", {"nodes": [n.model_dump() for n in out]})
        return out

    async def delete_nodes(self, names: Sequence[str]) -> int:
        """Delete nodes and every edge touching them (unknown names are ignored, as spec 002 filters)."""
        names = _dedupe(names)
        if not names:
            return 0
        self._before("beforeDeleteNodes", {"names": list(names)})
        deleted = await self.g.delete_entities(names)
        self._after("afterDeleteNodes", {"names": list(names)})
        return deleted

    # -- edges -----------------------------------------------------------------------------
    async def add_edges(self, edges: Sequence[EdgeIn]) -> list[Edge]:
        """Create edges between existing nodes; a duplicate (from, to, edgeType) fails the call."""
        if not edges:
            return []
        seen: set[tuple[str, str, str]] = set()
        for e in edges:
            if e.key in seen:
                raise ValidationError(f"Edge {_key_text(e.key)} appears twice in one call; nothing was written",
                                      field="edges")
            seen.add(e.key)
        state = await self.nodes([n for e in edges for n in (e.from_, e.to)])
        for e in edges:
            for end in (e.from_, e.to):
                if not state[end].entity:
                    raise NotFoundError("node", end, f"Node '{end}' not found: both ends of edge "
                                                     f"{_key_text(e.key)} must exist; nothing was written")
        return await self._create_edges([_rel_in(e.from_, e.to, e.edgeType, e.weight) for e in edges],
                                        reject_duplicates=True)

    async def _create_edges(self, rels: Sequence[RelationIn], *, reject_duplicates: bool) -> list[Edge]:
        out = [_edge(r, r.weight) for r in rels]
        self._before("beforeAddEdges", {"edges": [e.dump() for e in out]})
        created = await self.g.create_relations(rels)
        made = {(c.from_, c.to, c.relationType) for c in created}
        if reject_duplicates and len(made) != len(out):
            dup = next(e for e in out if (e.from_, e.to, e.edgeType) not in made)
            raise ConflictError(f"Edge {_key_text((dup.from_, dup.to, dup.edgeType))} already exists (use "
                                "update_edges to change its weight); nothing was written", field="edges",
                                suggestions=("change its weight with update_edges",
                                             "or leave the edge out of this call: the others were not written either"))
        out = [e for e in out if (e.from_, e.to, e.edgeType) in made]
        self._after("afterAddEdges", {"edges": [e.dump() for e in out]})
        return out

    async def update_edges(self, updates: Sequence[EdgeUpdate]) -> list[Edge]:
        """New weight = (current + given) / 2 (spec 002 section 10); an unknown edge fails the call."""
        if not updates:
            return []
        items = [RelationUpdate.model_validate({"from": u.from_, "to": u.to, "relationType": u.edgeType,
                                                "weight": u.weight}) for u in updates]
        self._before("beforeUpdateEdges", {"edges": [{"from": u.from_, "to": u.to, "edgeType": u.edgeType,
                                                      "weight": u.weight} for u in updates]})
        changed = await self.g.update_relations(items)
        out = [_edge(r) for r in changed]
        self._after("afterUpdateEdges", {"edges": [e.dump() for e in out]})
        return out

    async def invalidate_edges(self, edges: Sequence[Edge]) -> list[Edge]:
        """Close current edges now (valid_until): reads of now stop showing them, history keeps them."""
        if not edges:
            return []
        items = [RelationInvalidate.model_validate({"from": e.from_, "to": e.to, "relationType": e.edgeType})
                 for e in edges]
        self._before("beforeInvalidateEdges", {"edges": [e.dump() for e in edges]})
        closed = [_edge(r) for r in await self.g.invalidate_relations(items)]
        self._after("afterInvalidateEdges", {"edges": [e.dump() for e in closed]})
        return closed

    async def delete_edges(self, keys: Sequence[EdgeKey]) -> None:
        """Erase edges by exact (from, to, edgeType), history included; unknown ones are ignored."""
        if not keys:
            return
        data = {"edges": [{"from": k.from_, "to": k.to, "edgeType": k.edgeType} for k in keys]}
        self._before("beforeDeleteEdges", data)
        await self.g.delete_relations([Relation.model_validate({"from": k.from_, "to": k.to,
                                                                 "relationType": k.edgeType}) for k in keys])
        self._after("afterDeleteEdges", data)

    # -- metadata --------------------------------------------------------------------------
    async def add_metadata(self, node_name: str, metadata: Sequence[str]) -> list[str]:
        """Append entries not already present (exact match); the node must exist."""
        await self.require_node(node_name)
        data = {"nodeName": node_name, "metadata": list(metadata)}
        self._before("beforeAddMetadata", data)
        results = await self.g.add_observations([ObservationAdd(entityName=node_name, contents=list(metadata))])
        added = results[0].addedObservations if results else []
        self._after("afterAddMetadata", {"nodeName": node_name, "metadata": added})
        return added

    async def delete_metadata(self, node_name: str, metadata: Sequence[str]) -> None:
        """Remove the given entries (exact match); the node must exist."""
        await self.require_node(node_name)
        data = {"nodeName": node_name, "metadata": list(metadata)}
        self._before("beforeDeleteMetadata", data)
        await self.g.delete_observations([ObservationDelete(entityName=node_name, observations=list(metadata))])
        self._after("afterDeleteMetadata", data)

    # -- schema-generated operations (spec 002 sections 3.7 and 5.3) -------------------------
    async def add_typed(self, schema: NodeSchema, p: Processed) -> TypedResult:
        metadata = [format_entry(k, v) for k, v in p.metadata.items() if v is not None]
        node = (await self.add_nodes([NodeIn(name=p.name, nodeType=schema.node_type, metadata=metadata)]))[0]
        rels = [_rel_in(p.name, target, schema.properties[prop].relationship.edge_type)  # type: ignore[union-attr]
                for prop, targets in p.targets.items() for target in targets]
        edges = await self._create_edges(rels, reject_duplicates=False) if rels else []
        return TypedResult(node=node, edges=edges)

    async def update_typed(self, schema: NodeSchema, p: Processed) -> TypedResult:
        state = await self.require_node(p.name, node_type=schema.node_type)
        closed: list[Edge] = []
        opened: list[RelationIn] = []
        edge_types: list[str] = []
        for prop, targets in p.targets.items():
            rel = schema.properties[prop].relationship
            assert rel is not None
            edge_types.append(rel.edge_type)
            current = await self.out_edges(p.name, [rel.edge_type])
            closed.extend(e for e in current if e.to not in targets)
            have = {e.to for e in current}
            opened.extend(_rel_in(p.name, t, rel.edge_type) for t in targets if t not in have)
        closed_now = await self.invalidate_edges(closed) if closed else []
        if opened:
            await self._create_edges(opened, reject_duplicates=False)
        metadata = replace_entries(state.metadata, p.metadata)
        if metadata != state.metadata:
            node = (await self._replace([(state, None, metadata)]))[0]
        else:
            node = Node(name=p.name, nodeType=schema.node_type, metadata=state.metadata)
        all_types = [r.edge_type for r in schema.relationships.values()]
        edges = await self.out_edges(p.name, _dedupe(all_types)) if all_types else []
        return TypedResult(node=node, edges=edges, closed=closed_now)

    async def delete_typed(self, schema: NodeSchema, name: str) -> None:
        await self.require_node(name, node_type=schema.node_type)
        await self.delete_nodes([name])


# --- the store ---------------------------------------------------------------------------------


class MeshStore:
    """MemoryMesh operations over a :class:`GraphStore`; each public write is one transaction."""

    def __init__(self, store: GraphStore, bus: EventBus | None = None) -> None:
        self.store = store
        self.bus = bus if bus is not None else default_bus

    async def transaction(self, work: Callable[[MeshTx], Awaitable[T]]) -> T:
        """Run ``work`` in one write transaction (spec 002's ``withTransaction``): it commits when
        ``work`` returns and rolls back, writing nothing, when it raises (the error propagates)."""
        holder: dict[str, MeshTx] = {}

        async def unit(tx: AsyncManagedTransaction) -> T:
            mtx = MeshTx(self.store.within(tx), self.bus)
            holder["tx"] = mtx  # a retried attempt replaces the pending after-events of the failed one
            try:
                return await work(mtx)
            except BaseException:
                self.bus.emit_safely("beforeRollback", {})
                raise

        self.bus.emit("beforeBeginTransaction", {})
        try:
            async with self.store.driver.session(database=self.store.database) as session:
                result = await session.execute_write(unit)
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
        return await self.transaction(lambda t: t.add_typed(schema, p))

    async def update_typed(self, schema: NodeSchema, p: Processed) -> TypedResult:
        return await self.transaction(lambda t: t.update_typed(schema, p))

    async def delete_typed(self, schema: NodeSchema, name: str) -> None:
        await self.transaction(lambda t: t.delete_typed(schema, name))

    # -- reads (spec 002 section 4.5) ---------------------------------------------------------
    async def read_graph(self, *, limit: int | None = None, cursor: str | None = None) -> MeshGraph:
        return _mesh_graph(await self.store.read_graph(limit=limit, cursor=cursor))

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
            g = self.store.within(tx)
            kg = await first(g)
            matched = {e.name for e in kg.entities}
            around = _dedupe(n for r in kg.relations for n in (r.from_, r.to) if n not in matched)
            neighbours = (await g.open_nodes(around)).entities if around else []
            return _mesh_graph(KnowledgeGraph(entities=[*kg.entities, *neighbours], relations=kg.relations))

        async with self.store.driver.session(database=self.store.database) as session:
            graph: MeshGraph = await session.execute_read(unit)
        return graph
