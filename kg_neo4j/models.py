"""Typed shapes of what goes in and out of the store, with the documented limits.

Names follow the reference memory server (camelCase fields).  Every limit below is
listed in the README ("Limits"); input over a limit is rejected before anything is
written.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

# --- limits -----------------------------------------------------------------
MAX_NAME_CHARS = 1024  # entity names: with a 255-char namespace stays under Neo4j's 8 KB index key limit
MAX_TYPE_CHARS = 1024  # entityType
MAX_RELATION_TYPE_CHARS = 255
MAX_OBSERVATION_CHARS = 8000  # under the text index's 32 KB key limit even at 4 bytes a character
MAX_ITEMS_PER_CALL = 10_000  # entities / relations / names / deletions in one call
MAX_OBSERVATIONS_PER_ITEM = 100_000
MAX_OBSERVATIONS_PER_CALL = 100_000
MAX_QUERY_CHARS = 1024

Name = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_NAME_CHARS)]
EntityType = Annotated[str, StringConstraints(strict=True, max_length=MAX_TYPE_CHARS)]
RelationType = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_RELATION_TYPE_CHARS)]
ObservationText = Annotated[str, StringConstraints(strict=True, max_length=MAX_OBSERVATION_CHARS)]


def _no_blank(v: str, what: str) -> str:
    if not v.strip():
        raise ValueError(f"{what} must not be empty or only whitespace")
    return v


class _In(BaseModel):
    # Like the reference (zod), unknown keys are ignored; known ones are strictly typed.
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class EntityIn(_In):
    name: Name
    entityType: EntityType
    observations: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)

    _check_name = field_validator("name")(lambda v: _no_blank(v, "name"))


class RelationIn(_In):
    from_: Name = Field(alias="from")
    to: Name
    relationType: RelationType
    weight: float = Field(default=1.0, ge=0.0, le=1.0, strict=True)
    validFrom: AwareDatetime | None = None
    validUntil: AwareDatetime | None = None
    reasoning: str | None = Field(default=None, max_length=MAX_OBSERVATION_CHARS)
    source: str | None = Field(default=None, max_length=MAX_NAME_CHARS)

    _check_from = field_validator("from_")(lambda v: _no_blank(v, "from"))
    _check_to = field_validator("to")(lambda v: _no_blank(v, "to"))
    _check_type = field_validator("relationType")(lambda v: _no_blank(v, "relationType"))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.from_, self.to, self.relationType)

    @model_validator(mode="after")
    def _check_validity(self) -> RelationIn:
        if self.validFrom and self.validUntil and self.validUntil <= self.validFrom:
            raise ValueError("validUntil must be later than validFrom")
        return self


class RelationKey(_In):
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


class TraverseIn(_In):
    start: list[Name] = Field(min_length=1, max_length=100)
    direction: str = Field(default="both", pattern="^(out|in|both)$")
    maxDepth: int = Field(default=2, ge=1, le=MAX_TRAVERSE_DEPTH)
    relationTypes: list[RelationType] | None = Field(default=None, max_length=100)
    minWeight: float = Field(default=0.0, ge=0.0, le=1.0)
    asOf: AwareDatetime | None = None
    limit: int = Field(default=100, ge=1, le=MAX_TRAVERSE_LIMIT)
    fanout: int = Field(default=50, ge=1, le=MAX_TRAVERSE_FANOUT)

    @field_validator("start", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v


class ObservationAdd(_In):
    entityName: Name
    contents: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)

    _check_name = field_validator("entityName")(lambda v: _no_blank(v, "entityName"))


class ObservationDelete(_In):
    entityName: Name
    observations: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)

    _check_name = field_validator("entityName")(lambda v: _no_blank(v, "entityName"))


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


class TraversalEntity(Entity):
    depth: int


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

    def reference(self) -> dict[str, Any]:
        """Exactly the reference server's ``{"entities", "relations"}`` shape."""
        return {
            "entities": [e.model_dump() for e in self.entities],
            "relations": [r.reference() for r in self.relations],
        }


class ObservationResult(BaseModel):
    entityName: str
    addedObservations: list[str]


# --- search_memory ------------------------------------------------------------------
MAX_SEARCH_LIMIT = 100


class SearchMemoryIn(_In):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall, in your own words")
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT, description="At most this many hits (default 10)")
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


class SearchResult(BaseModel):
    hits: list[SearchHit]
    entities: list[SearchEntity]
    relations: list[RelationFull]
    mode: str = Field(description="'hybrid' (vector + fulltext + graph) or 'fulltext+graph' (no embedding model)")
