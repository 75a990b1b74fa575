"""Input shapes of MemoryMesh's static tools (docs/memorymesh.md), validated strictly at the tool
boundary; the operations that take them live in ``store/mesh_tx.py`` and ``store/memorymesh.py``."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from kg_neo4j.models import (
    MAX_OBSERVATIONS_PER_ITEM,
    EntityType,
    Name,
    ObservationText,
    RelationType,
    StrictInput,
    not_null,
)


def _not_blank(v: str, what: str) -> str:
    if not v.strip():
        raise ValueError(f"{what} must not be empty or only whitespace")
    return v


# Input shapes of the static tools (advertised by the hand-written schemas of server/memorymesh.py,
# whose optional fields do not allow null: hence ``not_null``).
class NodeIn(StrictInput):
    name: Name
    nodeType: EntityType
    metadata: list[ObservationText] = Field(max_length=MAX_OBSERVATIONS_PER_ITEM)

    _check_type = field_validator("nodeType")(lambda v: _not_blank(v, "nodeType"))


class NodeUpdate(StrictInput):
    name: Name
    metadata: list[ObservationText] | None = Field(default=None, max_length=MAX_OBSERVATIONS_PER_ITEM)
    nodeType: EntityType | None = None

    _nn = not_null("metadata", "nodeType")

    @field_validator("nodeType")
    @classmethod
    def _check_type(cls, v: str | None) -> str | None:
        return None if v is None else _not_blank(v, "nodeType")


class EdgeKey(StrictInput):
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
    #: docs/memorymesh.md#static-tools's name for the new evidence; the same as ``weight`` (never both)
    newWeight: float | None = Field(default=None, ge=0.0, le=1.0, strict=True)

    _nn = not_null("weight", "newWeight")

    @model_validator(mode="after")
    def _one_weight(self) -> EdgeUpdate:
        if self.newWeight is not None:
            if self.weight is not None:
                raise ValueError("give the new weight as weight or as newWeight, not both")
            self.weight, self.newWeight = self.newWeight, None
        return self
