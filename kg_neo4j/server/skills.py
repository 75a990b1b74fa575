"""crystallize_skill: which knowledge the skill files do not reflect yet
(docs/knowledge-model.md#skill-files).  The work is ``kg_neo4j.skills.crystallize``; skill files
are read only under the configured skills directory (``KG_NEO4J_SKILLS_DIR`` /
``--skills-dir``), never from a path the caller makes up."""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field, StringConstraints

from kg_neo4j.errors import ConfigError
from kg_neo4j.models import MAX_QUERY_CHARS, NotBlank, StrictInput
from kg_neo4j.server.declare import tool
from kg_neo4j.server.examples import SKILL_FILE
from kg_neo4j.server.profiles import A, K
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.skills import (
    DEFAULT_CRYSTALLIZE_LIMIT,
    LEXICAL_THRESHOLD,
    MAX_CRYSTALLIZE_LIMIT,
    MAX_PATH_CHARS,
    MAX_SKILL_PATHS,
    SEMANTIC_THRESHOLD,
    CrystallizeResult,
    crystallize,
)

SkillPath = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_PATH_CHARS)]


class CrystallizeIn(StrictInput):
    topic: Annotated[str, NotBlank] = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="What the knowledge should be about, e.g. 'authentication'",
    )
    skill_paths: list[SkillPath] = Field(
        min_length=1,
        max_length=MAX_SKILL_PATHS,
        validation_alias=AliasChoices("skill_paths", "skillPaths"),
        description="Skill markdown files to check, relative to the server's skills directory, e.g. "
        "'coding/elements/auth/workflow.md' (also accepted as skillPaths); only .md files inside it are read",
    )
    limit: int = Field(
        default=DEFAULT_CRYSTALLIZE_LIMIT,
        ge=1,
        le=MAX_CRYSTALLIZE_LIMIT,
        description=f"At most this many relevant knowledge nodes to check "
        f"(default {DEFAULT_CRYSTALLIZE_LIMIT})",
    )


@tool(
    "crystallize_skill",
    admin=True,
    input=CrystallizeIn,
    output_schema=CrystallizeResult.model_json_schema(),
    read_only=True,
    idempotent=True,
    title="Crystallize knowledge into skill files",
    profiles=(K, A),
    example={"topic": "testing", "skill_paths": [SKILL_FILE], "limit": 5},
    description=(
        "Check KG-to-skill-file sync: find the knowledge relevant to `topic` (as search_memory would) and "
        "report which of it the given skill markdown files do not reflect yet (`unsynced`, most relevant "
        "first, each with the section that comes closest) and which they already do (`reflected`). "
        f"Knowledge counts as reflected when one section of the files holds at least {LEXICAL_THRESHOLD:.0%} "
        f"of its content words, or (with an embedding model) is at least {SEMANTIC_THRESHOLD} cosine-"
        "similar to it. Paths are relative to the server's skills directory (KG_NEO4J_SKILLS_DIR); only "
        ".md files inside it are read. Read-only: update the skill files yourself with what is unsynced."
    ),
)
async def crystallize_skill(rt: Runtime, req: CrystallizeIn) -> ToolOutput:
    root = rt.settings.skills_dir
    if root is None:
        raise ConfigError(
            "crystallize_skill needs a skills directory and this server has none: set "
            "KG_NEO4J_SKILLS_DIR or start it with --skills-dir DIR; skill paths are read only "
            "under that directory"
        )
    result = await crystallize(rt.store, root, req.topic, req.skill_paths, limit=req.limit)
    data = result.model_dump()
    return dump(data), data
