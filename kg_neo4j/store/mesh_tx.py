"""MemoryMesh's operations inside one open transaction (MemoryMesh's ``withTransaction``: docs/memorymesh.md#transactions): nodes, edges
and metadata on the graph the reference tools use; ``MeshStore`` (store/memorymesh.py) opens the
transaction and fires the after-events once it commits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_neo4j.errors import ConflictError, NotFoundError, ValidationError
from kg_neo4j.events import EventBus
from kg_neo4j.models import (
    MAX_OBSERVATIONS_PER_CALL,
    EntityIn,
    ObservationAdd,
    ObservationDelete,
    Relation,
    RelationIn,
    RelationInvalidate,
    RelationUpdate,
)
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.mesh_inputs import EdgeIn, EdgeKey, EdgeUpdate, NodeIn, NodeUpdate
from kg_neo4j.store.mesh_records import NODE_EXISTS, Edge, Node, NodeState, edge, key_text, rel_in
from kg_neo4j.store.records import dedupe, entity_text
from kg_neo4j.store.type_labels import type_labels


def _each_once(names: Sequence[str], message: str) -> None:
    """A node named twice in one call is an error (``message`` with the name), before anything is read."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValidationError(message.format(name), field="nodes")
        seen.add(name)


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
        names = dedupe(names)
        if not names:
            return {}
        records = await self.g.x.read("mesh_nodes", names=names)
        return {
            r["name"]: NodeState(
                r["name"],
                bool(r["exists"]),
                bool(r["entity"]),
                r["nodeType"],
                list(r["metadata"]),
                bool(r["knowledge"]),
            )
            for r in records
        }

    async def out_edges(self, name: str, edge_types: Sequence[str]) -> list[Edge]:
        records = await self.g.x.read("mesh_out_edges", node=name, types=list(edge_types))
        return [
            Edge.model_validate(
                {
                    "from": name,
                    "to": r["to"],
                    "edgeType": r["edgeType"],
                    "weight": r["weight"] if r["weight"] is not None else 1.0,
                }
            )
            for r in records
        ]

    async def require_node(self, name: str, *, node_type: str | None = None) -> NodeState:
        state = (await self.nodes([name]))[name]
        what = node_type or "node"
        if not state.entity:
            raise NotFoundError(what, name, f"{what.capitalize()} '{name}' not found; nothing was written")
        if node_type is not None and state.node_type != node_type:
            raise ValidationError(
                f"'{name}' is a {state.node_type}, not a {node_type}; nothing was written",
                field=f"{node_type}.name",
                suggestions=(
                    f"'{name}' is a {state.node_type}: use the {state.node_type} tools (update_"
                    f"{state.node_type}, delete_{state.node_type}) or update_nodes / delete_nodes, "
                    "which take any type",
                    f"or give the name of a {node_type}: search_nodes shows names with their types",
                ),
            )
        return state

    # -- nodes -----------------------------------------------------------------------------
    async def add_nodes(self, nodes: Sequence[NodeIn]) -> list[Node]:
        """Create nodes; a name that exists as a node (entity) fails the call
        (docs/memorymesh.md#static-tools)."""
        if not nodes:
            return []
        _each_once([n.name for n in nodes], "Node '{}' appears twice in one call; nothing was written")
        if sum(len(n.metadata) for n in nodes) > MAX_OBSERVATIONS_PER_CALL:
            raise ValidationError(
                f"more than {MAX_OBSERVATIONS_PER_CALL} metadata entries in one call; nothing was written",
                field="nodes",
            )
        state = await self.nodes([n.name for n in nodes])
        for n in nodes:
            if state[n.name].entity:
                raise ConflictError(
                    f"Node '{n.name}' already exists; nothing was written",
                    field="nodes",
                    suggestions=NODE_EXISTS,
                )
        out = [Node(name=n.name, nodeType=n.nodeType, metadata=dedupe(n.metadata)) for n in nodes]
        self._before("beforeAddNodes", {"nodes": [n.model_dump() for n in out]})
        created = await self.g.create_entities(
            [EntityIn(name=n.name, entityType=n.nodeType, observations=n.metadata) for n in out]
        )
        if len(created) != len(out):  # another writer created one since the check: the lock decided
            lost = sorted({n.name for n in out} - {c.name for c in created})
            raise ConflictError(
                f"Node '{lost[0]}' already exists; nothing was written",
                field="nodes",
                suggestions=NODE_EXISTS,
            )
        self._after("afterAddNodes", {"nodes": [n.model_dump() for n in out]})
        return out

    async def update_nodes(self, updates: Sequence[NodeUpdate]) -> list[Node]:
        """Replace metadata and/or nodeType of existing nodes (docs/memorymesh.md#static-tools)."""
        if not updates:
            return []
        _each_once([u.name for u in updates], "Node '{}' appears twice in one update; send it once")
        state = await self.nodes([u.name for u in updates])
        for u in updates:
            if not state[u.name].entity:
                raise NotFoundError("node", u.name, f"Node '{u.name}' not found; nothing was written")
        changes = [(state[u.name], u.nodeType, u.metadata) for u in updates]
        return await self.replace_nodes(changes)

    async def replace_nodes(
        self, changes: Sequence[tuple[NodeState, str | None, list[str] | None]]
    ) -> list[Node]:
        rows: list[dict[str, Any]] = []
        out: list[Node] = []
        texts: list[str] = []
        for st, _, _ in changes:
            if st.knowledge:  # its type and content observation are the knowledge layer's
                raise ValidationError(
                    f"'{st.name}' is knowledge: change its type or content with update_knowledge; "
                    "nothing was written",
                    field="name",
                )
        for st, node_type, metadata in changes:
            new_type = node_type if node_type is not None and node_type != st.node_type else None
            meta = dedupe(metadata) if metadata is not None else None
            row: dict[str, Any] = {
                "name": st.name,
                "nodeType": new_type,
                "type_lower": new_type.lower() if new_type is not None else None,
                "type_labels": type_labels(new_type),
                "entity_vector": None,
                "metadata": meta,
                "metadata_lower": [m.lower() for m in meta] if meta is not None else None,
                "vectors": None,
                "_fresh": [],
                "_type_text": None,
            }
            if meta is not None:
                have = set(st.metadata)
                row["_fresh"] = [i for i, m in enumerate(meta) if m not in have]
                texts.extend(meta[i] for i in row["_fresh"])
            if new_type is not None:
                row["_type_text"] = entity_text(st.name, new_type)
                texts.append(row["_type_text"])
            rows.append(row)
            out.append(
                Node(
                    name=st.name,
                    nodeType=node_type or st.node_type or "",
                    metadata=meta if meta is not None else st.metadata,
                )
            )
        if sum(len(r["_fresh"]) for r in rows) > MAX_OBSERVATIONS_PER_CALL:
            raise ValidationError(
                f"more than {MAX_OBSERVATIONS_PER_CALL} new metadata entries in one call; "
                "nothing was written",
                field="nodes",
            )
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
        await self.g.x.write("mesh_replace_metadata", rows=rows)
        self._after("afterUpdateNodes", {"nodes": [n.model_dump() for n in out]})
        return out

    async def delete_nodes(self, names: Sequence[str]) -> int:
        """Delete nodes and every edge touching them (unknown names are ignored,
        as MemoryMesh's filter does: docs/memorymesh.md#static-tools)."""
        names = dedupe(names)
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
                raise ValidationError(
                    f"Edge {key_text(e.key)} appears twice in one call; nothing was written", field="edges"
                )
            seen.add(e.key)
        state = await self.nodes([n for e in edges for n in (e.from_, e.to)])
        for e in edges:
            for end in (e.from_, e.to):
                if not state[end].entity:
                    raise NotFoundError(
                        "node",
                        end,
                        f"Node '{end}' not found: both ends of edge "
                        f"{key_text(e.key)} must exist; nothing was written",
                    )
        return await self.create_edges(
            [rel_in(e.from_, e.to, e.edgeType, e.weight) for e in edges], reject_duplicates=True
        )

    async def create_edges(self, rels: Sequence[RelationIn], *, reject_duplicates: bool) -> list[Edge]:
        out = [edge(r, r.weight) for r in rels]
        self._before("beforeAddEdges", {"edges": [e.dump() for e in out]})
        created = await self.g.create_relations(rels)
        made = {(c.from_, c.to, c.relationType) for c in created}
        if reject_duplicates and len(made) != len(out):
            dup = next(e for e in out if (e.from_, e.to, e.edgeType) not in made)
            raise ConflictError(
                f"Edge {key_text((dup.from_, dup.to, dup.edgeType))} already exists (use "
                "update_edges to change its weight); nothing was written",
                field="edges",
                suggestions=(
                    "change its weight with update_edges",
                    "or leave the edge out of this call: the others were not written either",
                ),
            )
        out = [e for e in out if (e.from_, e.to, e.edgeType) in made]
        self._after("afterAddEdges", {"edges": [e.dump() for e in out]})
        return out

    async def update_edges(self, updates: Sequence[EdgeUpdate]) -> list[Edge]:
        """New weight = (current + given) / 2
        (docs/memorymesh.md#edge-weights); an unknown edge fails the call."""
        if not updates:
            return []
        items = [
            RelationUpdate.model_validate(
                {"from": u.from_, "to": u.to, "relationType": u.edgeType, "weight": u.weight}
            )
            for u in updates
        ]
        self._before(
            "beforeUpdateEdges",
            {
                "edges": [
                    {"from": u.from_, "to": u.to, "edgeType": u.edgeType, "weight": u.weight} for u in updates
                ]
            },
        )
        changed = await self.g.update_relations(items)
        out = [edge(r) for r in changed]
        self._after("afterUpdateEdges", {"edges": [e.dump() for e in out]})
        return out

    async def invalidate_edges(self, edges: Sequence[Edge]) -> list[Edge]:
        """Close current edges now (valid_until): reads of now stop showing them, history keeps them."""
        if not edges:
            return []
        items = [
            RelationInvalidate.model_validate({"from": e.from_, "to": e.to, "relationType": e.edgeType})
            for e in edges
        ]
        self._before("beforeInvalidateEdges", {"edges": [e.dump() for e in edges]})
        closed = [edge(r) for r in await self.g.invalidate_relations(items)]
        self._after("afterInvalidateEdges", {"edges": [e.dump() for e in closed]})
        return closed

    async def delete_edges(self, keys: Sequence[EdgeKey]) -> None:
        """Erase edges by exact (from, to, edgeType), history included; unknown ones are ignored."""
        if not keys:
            return
        data = {"edges": [{"from": k.from_, "to": k.to, "edgeType": k.edgeType} for k in keys]}
        self._before("beforeDeleteEdges", data)
        await self.g.delete_relations(
            [Relation.model_validate({"from": k.from_, "to": k.to, "relationType": k.edgeType}) for k in keys]
        )
        self._after("afterDeleteEdges", data)

    # -- metadata --------------------------------------------------------------------------
    async def add_metadata(self, node_name: str, metadata: Sequence[str]) -> list[str]:
        """Append entries not already present (exact match); the node must exist."""
        await self.require_node(node_name)
        data = {"nodeName": node_name, "metadata": list(metadata)}
        self._before("beforeAddMetadata", data)
        results = await self.g.add_observations(
            [ObservationAdd(entityName=node_name, contents=list(metadata))]
        )
        added = results[0].addedObservations if results else []
        self._after("afterAddMetadata", {"nodeName": node_name, "metadata": added})
        return added

    async def delete_metadata(self, node_name: str, metadata: Sequence[str]) -> None:
        """Remove the given entries (exact match); the node must exist."""
        await self.require_node(node_name)
        data = {"nodeName": node_name, "metadata": list(metadata)}
        self._before("beforeDeleteMetadata", data)
        await self.g.delete_observations(
            [ObservationDelete(entityName=node_name, observations=list(metadata))]
        )
        self._after("afterDeleteMetadata", data)

    # -- schema-generated operations (docs/memorymesh.md#what-the-generated-tools-do) ----
