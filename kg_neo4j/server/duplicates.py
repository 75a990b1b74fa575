"""find_duplicates: groups of entities that are probably one, with a score and the reasons
(docs/entities.md#finding-duplicates; store/duplicates.py finds them, kg_neo4j/resolution.py scores)."""

from __future__ import annotations

from pydantic import Field, field_validator

from kg_neo4j.models import MAX_ITEMS_PER_CALL, Name, StrictInput
from kg_neo4j.resolution import DEFAULT_MIN_SCORE
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, D
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.store import duplicates
from kg_neo4j.store.aliases import resolve_names
from kg_neo4j.store.duplicates import DEFAULT_LIMIT, MAX_LIMIT, Duplicates, decode_offset


class FindDuplicatesIn(StrictInput):
    names: list[Name] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ITEMS_PER_CALL,
        description="Only the groups holding one of these entity names (default: every group of the namespace).",
    )
    minScore: float = Field(
        default=DEFAULT_MIN_SCORE,
        ge=0.0,
        le=1.0,
        description=f"The score a group needs, 0 to 1 (default {DEFAULT_MIN_SCORE}; "
        "kg-neo4j dedupe --apply merges from its own threshold).",
    )
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Groups per page (default {DEFAULT_LIMIT})."
    )
    cursor: str | None = Field(default=None, description="The nextCursor of the previous page.")

    @field_validator("cursor")
    @classmethod
    def _cursor(cls, v: str | None) -> str | None:
        if v is not None:
            decode_offset(v)
        return v


@tool(
    "find_duplicates",
    input=FindDuplicatesIn,
    output=Duplicates,
    read_only=True,
    idempotent=True,
    profiles=(D, A),
    example={"minScore": 0.5, "limit": 10},
    more_examples=({"names": ["Ada Lovelace"]},),
    description=(
        'Groups of entities that are probably one thing ("Alice Smith", "alice smith", "A. Smith", '
        '"Dr Smith"), best first: each with the suggested entity to keep (most observations and '
        "relations), its names, a score from 0 to 1 and the reasons (codes and words: same name once "
        "normalised, initials or nickname with the same surname, name embedding cosine, shared neighbours, "
        "overlapping observations; different types count against). Changes nothing: merge with "
        "merge_entities. Optional: names (only groups holding them), minScore, limit and the nextCursor "
        "returned. Never uses an LLM."
    ),
)
async def find_duplicates(rt: Runtime, req: FindDuplicatesIn) -> ToolOutput:
    # a name merged into another entity asks for the groups of the entity it names (store/aliases.py)
    names = await resolve_names(rt.store.x, req.names) if req.names is not None else None
    found = await duplicates.find_duplicates(
        rt.store, names=names, min_score=req.minScore, limit=req.limit, cursor=req.cursor
    )
    data = found.model_dump()
    return dump(data), data  # its size is checked with every read's (server/registry.py's call)
