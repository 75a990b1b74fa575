"""Typed shapes of what goes in and out of the store.

Names follow the reference memory server (camelCase fields).  The limits and the input rules
(docs/input-validation.md) are ``kg_neo4j.input_rules``'s, re-exported here; input
over a limit is rejected before anything is written.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from kg_neo4j.input_rules import MAX_ITEMS_PER_CALL as MAX_ITEMS_PER_CALL
from kg_neo4j.input_rules import MAX_NAME_CHARS as MAX_NAME_CHARS
from kg_neo4j.input_rules import MAX_OBSERVATION_CHARS as MAX_OBSERVATION_CHARS
from kg_neo4j.input_rules import MAX_OBSERVATIONS_PER_CALL as MAX_OBSERVATIONS_PER_CALL
from kg_neo4j.input_rules import MAX_OBSERVATIONS_PER_ITEM as MAX_OBSERVATIONS_PER_ITEM
from kg_neo4j.input_rules import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from kg_neo4j.input_rules import MAX_RELATION_TYPE_CHARS as MAX_RELATION_TYPE_CHARS
from kg_neo4j.input_rules import MAX_TYPE_CHARS as MAX_TYPE_CHARS
from kg_neo4j.input_rules import EntityType as EntityType
from kg_neo4j.input_rules import Name as Name
from kg_neo4j.input_rules import NotBlank as NotBlank
from kg_neo4j.input_rules import ObservationText as ObservationText
from kg_neo4j.input_rules import RelationType as RelationType
from kg_neo4j.input_rules import StrictInput as StrictInput
from kg_neo4j.input_rules import not_null as not_null
from kg_neo4j.knowledge.vocabulary import Category, EdgeType, KnowledgeType, Trust


class EntityIn(StrictInput):
    name: Name
    entityType: EntityType
    observations: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)


class RelationIn(StrictInput):
    from_: Name = Field(alias="from")
    to: Name
    relationType: RelationType
    weight: float = Field(default=1.0, ge=0.0, le=1.0, strict=True)
    validFrom: AwareDatetime | None = None
    validUntil: AwareDatetime | None = None
    reasoning: str | None = Field(default=None, max_length=MAX_OBSERVATION_CHARS)
    source: str | None = Field(default=None, max_length=MAX_NAME_CHARS)

    # create_relations advertises these (hand-written schema, server/reference.py) without null
    _nn = not_null("validFrom", "validUntil", "reasoning", "source")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.from_, self.to, self.relationType)

    @model_validator(mode="after")
    def _check_validity(self) -> RelationIn:
        if self.validFrom and self.validUntil and self.validUntil <= self.validFrom:
            raise ValueError("validUntil must be later than validFrom")
        return self


class RelationKey(StrictInput):
    """Names one relation: (from, to, relationType)."""

    from_: Name = Field(alias="from")
    to: Name
    relationType: RelationType

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.from_, self.to, self.relationType)


class RelationInvalidate(RelationKey):
    validUntil: AwareDatetime | None = None


class RelationUpdate(RelationKey):
    weight: float | None = Field(default=None, ge=0.0, le=1.0, strict=True)
    reasoning: str | None = Field(default=None, max_length=MAX_OBSERVATION_CHARS)
    source: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    validFrom: AwareDatetime | None = None
    validUntil: AwareDatetime | None = None
    clearValidUntil: bool = False


MAX_TRAVERSE_DEPTH = 4
MAX_TRAVERSE_LIMIT = 500
MAX_TRAVERSE_FANOUT = 200


class TraverseIn(StrictInput):
    start: list[Name] = Field(min_length=1, max_length=100)
    direction: str = Field(default="both", pattern="^(out|in|both)$")
    maxDepth: int = Field(default=2, ge=1, le=MAX_TRAVERSE_DEPTH)
    relationTypes: list[RelationType] | None = Field(default=None, max_length=100)
    minWeight: float = Field(default=0.0, ge=0.0, le=1.0)
    asOf: AwareDatetime | None = None
    limit: int = Field(default=100, ge=1, le=MAX_TRAVERSE_LIMIT)
    fanout: int = Field(default=50, ge=1, le=MAX_TRAVERSE_FANOUT)


class ObservationAdd(StrictInput):
    entityName: Name
    contents: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)


class ObservationDelete(StrictInput):
    entityName: Name
    observations: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)


# --- outputs ------------------------------------------------------------------


class Entity(BaseModel):
    name: str
    entityType: str
    observations: list[str]


class Relation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    relationType: str

    def reference(self) -> dict[str, Any]:
        return {"from": self.from_, "to": self.to, "relationType": self.relationType}


class RelationFull(Relation):
    """A relation with the properties kg-neo4j keeps on every relationship."""

    weight: float = 1.0
    validFrom: str | None = None
    validUntil: str | None = None
    createdAt: str | None = None
    reasoning: str | None = None
    source: str | None = None


class KnowledgeFacts(BaseModel):
    """What a knowledge entity is, shown where search_memory and traverse_graph return it (spec 004:
    trust stays visible when knowledge is used).  docs/knowledge.md#trust-at-recall."""

    trust: str = Field(
        description="principle (the expert's), pattern (observed) or inference (the agent's own idea)"
    )
    level: int = Field(description="memory level: 1 new, 2 verifying, 3 consolidated, 4 core")
    quote: str | None = Field(default=None, description="the expert's exact words, if any")
    retention: float = Field(description="R in [0, 1] at the read's moment (asOf when given)")
    fading: bool = Field(description="retention below 0.3: actively decaying, confirm before relying on it")


def _knowledge_field() -> Any:
    # Omitted (not null) for entities that are not knowledge, so answers about a plain graph keep their shape.
    return Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Only for knowledge entities (spec 004): trust, level, quote, retention, fading",
    )


class TraversalEntity(Entity):
    depth: int
    knowledge: KnowledgeFacts | None = _knowledge_field()


class TraversalPath(BaseModel):
    nodes: list[str]
    relationTypes: list[str]


class Traversal(BaseModel):
    start: list[str]
    entities: list[TraversalEntity]
    relations: list[RelationFull]
    paths: list[TraversalPath]
    truncated: bool
    cappedAt: list[str] = Field(description="entities whose fan-out was cut by the per-hop cap")


class KnowledgeGraph(BaseModel):
    entities: list[Entity]
    relations: list[RelationFull]
    nextCursor: str | None = None
    #: open_nodes: each entity's aliases (names merged into it), shown outside the reference profile
    aliases: dict[str, list[str]] = Field(default_factory=dict, exclude=True)

    def reference(self) -> dict[str, Any]:
        """Exactly the reference server's ``{"entities", "relations"}`` shape."""
        return {
            "entities": [e.model_dump() for e in self.entities],
            "relations": [r.reference() for r in self.relations],
        }


def reference_text(obj: Any) -> str:
    """JSON text as the reference server writes it (``JSON.stringify(x, null, 2)``, which is what
    ``json.dumps(x, indent=2, ensure_ascii=False)`` writes) for JSON without floats: strings, integers,
    booleans, null, lists and objects, as every reference answer is.  pydantic-core's encoder writes the same
    bytes much faster than ``json.dumps`` with ``indent``, which runs Python's pure-Python encoder
    (tests/test_answer_text.py; the figure: docs/performance.md#speed-mechanisms); floats are left out because
    the two write some exponents differently."""
    return pydantic_core.to_json(obj, indent=2).decode()


class ObservationResult(BaseModel):
    entityName: str
    addedObservations: list[str]


# --- search_memory ------------------------------------------------------------------
MAX_SEARCH_LIMIT = 100


class SearchMemoryIn(StrictInput):
    query: Annotated[str, NotBlank] = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall, in your own words"
    )
    limit: int = Field(
        default=10, ge=1, le=MAX_SEARCH_LIMIT, description="At most this many hits (default 10)"
    )
    entityTypes: list[EntityType] | None = Field(
        default=None, max_length=100, description="Only hits on entities of these types"
    )
    asOf: AwareDatetime | None = Field(
        default=None, description="Optional ISO 8601 timestamp: search the graph as it was then"
    )


class SearchHit(BaseModel):
    name: str
    entityType: str
    observation: str | None
    score: float


class SearchEntity(BaseModel):
    name: str
    entityType: str
    observationCount: int
    knowledge: KnowledgeFacts | None = _knowledge_field()


class SearchResult(BaseModel):
    hits: list[SearchHit]
    entities: list[SearchEntity]
    relations: list[RelationFull]
    mode: str = Field(
        description="'hybrid' (vector + fulltext + graph) or 'fulltext+graph' (no embedding model)"
    )


# --- the knowledge layer (docs/knowledge-model.md) -------------------------------------------------
# Vocabulary and rules: kg_neo4j.knowledge; the graph layout: docs/knowledge-model.md.

MAX_KNOWLEDGE_LIST = 500
MAX_EXPERIENCE_ITEMS = 100  # steps, decisions
MAX_SESSION_CHARS = 255
SessionId = Annotated[
    str, StringConstraints(strict=True, min_length=1, max_length=MAX_SESSION_CHARS), NotBlank
]
Content = Annotated[
    str, StringConstraints(strict=True, min_length=1, max_length=MAX_OBSERVATION_CHARS), NotBlank
]
Quote = Annotated[str, StringConstraints(strict=True, max_length=MAX_OBSERVATION_CHARS)]
Source = Annotated[str, StringConstraints(strict=True, max_length=MAX_NAME_CHARS)]


class KnowledgeIn(StrictInput):
    name: Name = Field(
        description="Unique name of the knowledge (case-sensitive), e.g. 'Run migrations before deploy'"
    )
    content: Content = Field(description="The knowledge itself, in full")
    type: KnowledgeType = Field(description="rule, procedure, observation, insight, core or preference")
    trust: Trust = Field(
        description="Who says so: principle (taught by the expert; needs quote), pattern "
        "(observed), inference (your own idea)"
    )
    category: Category = Field(
        default=Category.CREATIVE,
        description="fundamental (has a right answer; never "
        "decays) or creative (a choice; decays unless used). Default creative",
    )
    quote: Quote | None = Field(
        default=None, description="The expert's exact words (required for a principle)"
    )
    source: Source | None = Field(
        default=None, description="Where it came from: 'teacher', a session id, a file"
    )
    sessionId: SessionId | None = Field(
        default=None, description="Session to record (default: this MCP session)"
    )


class SimilarKnowledge(BaseModel):
    name: str
    score: float = Field(description="Vector: Neo4j cosine score (1 + cos) / 2; without embeddings: BM25")


class StoredKnowledge(BaseModel):
    name: str
    type: str
    trust: str
    category: str
    stability: float = Field(description="Initial stability S in days")
    memoryLevel: int
    similar: list[SimilarKnowledge] = Field(
        default_factory=list,
        description="Existing knowledge close to this one: candidates for connect_knowledge (or a duplicate)",
    )


class ConnectIn(StrictInput):
    from_: Name = Field(alias="from", description="Knowledge the edge starts from")
    to: Name = Field(description="Knowledge (or any entity) the edge points to")
    relationType: EdgeType = Field(
        description="must_precede, requires_reading, refines, contradicts, reason_for, "
        "causes, implies, aligns_to, tends_to or observed_in"
    )
    reasoning: Quote | None = Field(default=None, description="Why the edge holds")
    weight: float = Field(default=1.0, ge=0.0, le=1.0, description="Strength in [0, 1] (default 1)")
    source: Source | None = None

    @model_validator(mode="after")
    def _not_self(self) -> ConnectIn:
        if self.from_ == self.to:
            raise ValueError("an edge must join two different nodes (from == to)")
        return self


class KnowledgeUpdate(StrictInput):
    name: Name = Field(description="Knowledge to change (identity and edges are kept)")
    content: Content | None = None
    type: KnowledgeType | None = None
    category: Category | None = None
    trust: Trust | None = Field(
        default=None,
        description="A higher trust needs expertConfirmed (and a quote for "
        "principle); trust never upgrades by itself",
    )
    quote: Quote | None = None
    source: Source | None = None
    expertConfirmed: bool = Field(default=False, description="The expert explicitly confirmed this knowledge")
    feedback: Literal["applied", "corrected"] | None = Field(
        default=None,
        description="Record an access of this grade: applied (used without correction, grows "
        "stability most) or corrected (the expert corrected it, shrinks stability)",
    )
    sessionId: SessionId | None = None


class KnowledgeItem(BaseModel):
    name: str
    type: str
    content: str | None
    trust: str
    category: str
    quote: str | None = None
    source: str | None = None
    stability: float
    memoryLevel: int
    accessCount: int
    sessions: int
    retention: float = Field(description="R now, in [0, 1] (0 for expired knowledge)")
    lastAccess: str | None = None
    createdAt: str | None = None
    updatedAt: str | None = None
    expired: bool = False
    expiredAt: str | None = None
    expiredReason: str | None = None


class ExperienceIn(StrictInput):
    name: Name | None = Field(default=None, description="Optional unique name (default: generated)")
    context: Content = Field(description="The situation: what was being done and why")
    steps: list[Content] = Field(default_factory=list, max_length=MAX_EXPERIENCE_ITEMS)
    decisions: list[Content] = Field(default_factory=list, max_length=MAX_EXPERIENCE_ITEMS)
    outcome: Content = Field(description="What came of it")
    success: bool | None = Field(default=None, description="Whether it went well")
    sessionId: SessionId | None = None


class Experience(BaseModel):
    name: str
    context: str
    steps: list[str]
    decisions: list[str]
    outcome: str
    success: bool | None = None
    session: str | None = None
    createdAt: str | None = None
    score: float | None = None
