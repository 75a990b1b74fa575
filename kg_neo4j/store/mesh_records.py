"""The MemoryMesh answer shapes (docs/memorymesh.md; docs on the dialect in store/memorymesh.py) and the
conversions from the reference graph's entities and relations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kg_neo4j.models import KnowledgeGraph, Relation, RelationFull, RelationIn

#: What to do about a node name that is taken (names are unique across node types).
NODE_EXISTS = (
    "change the existing node with update_nodes (or the update_<type> tool of its type)",
    "or choose another name: a name is unique across all node types",
)


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
        out: dict[str, Any] = {
            "nodes": [n.model_dump() for n in self.nodes],
            "edges": [e.dump() for e in self.edges],
        }
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


def edge(r: RelationFull | Relation | RelationIn, weight: float | None = None) -> Edge:
    w = weight if weight is not None else getattr(r, "weight", 1.0)
    return Edge.model_validate({"from": r.from_, "to": r.to, "edgeType": r.relationType, "weight": w})


def rel_in(from_: str, to: str, edge_type: str, weight: float = 1.0) -> RelationIn:
    return RelationIn.model_validate({"from": from_, "to": to, "relationType": edge_type, "weight": weight})


def mesh_graph(kg: KnowledgeGraph) -> MeshGraph:
    return MeshGraph(
        nodes=[Node(name=e.name, nodeType=e.entityType, metadata=e.observations) for e in kg.entities],
        edges=[edge(r) for r in kg.relations],
        nextCursor=kg.nextCursor,
    )


def key_text(key: tuple[str, str, str]) -> str:
    return f"{key[0]} -[{key[2]}]-> {key[1]}"
