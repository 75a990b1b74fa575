"""The documented limits (docs/input-validation.md#limits) and the rules every tool input follows
(docs/input-validation.md): the scalar types with their limits, non-blank free text, null only where allowed,
and the base of every input model.  ``kg_neo4j.models`` builds the tools' shapes from these."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator

# --- limits -----------------------------------------------------------------
MAX_NAME_CHARS = 1024  # entity names: with a 255-char namespace stays under Neo4j's 8 KB index key limit
MAX_TYPE_CHARS = 1024  # entityType
MAX_RELATION_TYPE_CHARS = 255
MAX_OBSERVATION_CHARS = 8000  # under the text index's 32 KB key limit even at 4 bytes a character
MAX_ITEMS_PER_CALL = 10_000  # entities / relations / names / deletions in one call
MAX_OBSERVATIONS_PER_ITEM = 100_000
MAX_OBSERVATIONS_PER_CALL = 100_000
MAX_QUERY_CHARS = 1024


def _no_blank(v: str, what: str = "the text") -> str:
    if not v.strip():
        raise ValueError(f"{what} must not be empty or only whitespace")
    return v


#: ``minLength: 1`` on free text means "not only whitespace" (docs/input-validation.md).
NotBlank = AfterValidator(_no_blank)

Name = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_NAME_CHARS), NotBlank]
EntityType = Annotated[str, StringConstraints(strict=True, max_length=MAX_TYPE_CHARS)]
RelationType = Annotated[
    str, StringConstraints(strict=True, min_length=1, max_length=MAX_RELATION_TYPE_CHARS), NotBlank
]
ObservationText = Annotated[str, StringConstraints(strict=True, max_length=MAX_OBSERVATION_CHARS)]
#: A name to look up (open_nodes): any string within the name limit; the reference accepts even "".
LookupName = Annotated[str, StringConstraints(strict=True, max_length=MAX_NAME_CHARS)]
#: The field default of a tool's batch: at most MAX_ITEMS_PER_CALL items in one call.
Batch = Field(max_length=MAX_ITEMS_PER_CALL)


def _reject_null(v: object) -> object:
    if v is None:
        raise ValueError("null is not allowed here (omit the field instead)")
    return v


def not_null(*fields: str) -> Any:
    """Optional fields whose advertised schema has no ``null`` (hand-written JSON schemas): given as
    null they are an error, not "absent".  Use as ``_nn = not_null("weight")`` in the model."""
    # "after": runs only on a value given (never on the default), and leaves JSON-mode validation as it is
    return field_validator(*fields, mode="after")(_reject_null)


class StrictInput(BaseModel):
    """Tool input.  At the tool boundary (``server/declare.py``) it is validated strictly from JSON: no
    coercion between JSON types, unknown fields an error outside ``reference`` (docs/input-validation.md).
    Plain ``model_validate`` stays lenient on unknown keys: ``kg-neo4j import`` reads the reference's files,
    whose lines carry ``"type": "entity"``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, allow_inf_nan=False)
