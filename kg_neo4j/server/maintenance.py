"""maintain_graph: the "Memory Enzyme" of docs/knowledge-model.md#maintenance
(prune / merge / validate / orphans).

A dry run by default: it changes nothing and says exactly what it would change (counts and
the first names).  Applied, each action commits per batch (the statements of
``cypher/maintenance.cypher``, run by ``kg_neo4j.store.maintenance.MaintenanceStore``), and
is idempotent and resumable: running it again changes only what is still left to change.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kg_neo4j.models import StrictInput
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, K
from kg_neo4j.server.registry import Runtime, ToolOutput, dump
from kg_neo4j.store.maintenance import ACTIONS, MERGE_COSINE, SAMPLE, WEAK_EDGE_WEIGHT, MaintenanceStore

Action = Literal["prune", "merge", "validate", "orphans"]


def _all_actions() -> list[Action]:
    return ["prune", "merge", "validate", "orphans"]


class MaintainGraphIn(StrictInput):
    actions: list[Action] = Field(
        default_factory=_all_actions,
        min_length=1,
        max_length=len(ACTIONS),
        description="What to do (default: all four). prune: expire knowledge whose retention fell below 0.02 "
        f"(level < 3), re-level nodes to the level they have earned, close semantic edges between knowledge "
        f"weaker than {WEAK_EDGE_WEIGHT}. merge: merge near-duplicate knowledge (by stored content embeddings) "
        "into the stronger node. validate: close must_precede/reason_for edges from inferences and open edges "
        "of expired knowledge; report principles without a quote. orphans: report knowledge without an open "
        "relationship.",
    )
    dryRun: bool = Field(
        default=True,
        description="Default true: change nothing, only say what would change. "
        "false: apply (committed per batch).",
    )
    minSimilarity: float = Field(
        default=MERGE_COSINE,
        ge=0.5,
        le=1.0,
        description=f"merge: the cosine similarity a pair needs (default {MERGE_COSINE})",
    )
    batchSize: int = Field(default=1000, ge=1, le=50_000, description="Rows per committed transaction")


class MaintainGraphOut(BaseModel):
    dryRun: bool
    namespace: str
    now: str = Field(description="The moment decay was computed at")
    actions: dict[str, Any] = Field(
        description="Per action: counts, the first names, and (applied) what was changed: prune {expire, levels, "
        "fading, weakEdges}, merge {count, pairs: [{keep, duplicate, similarity}], merged}, validate "
        "{unquotedPrinciples, inferenceCausalEdges, danglingEdges}, orphans {count, names}"
    )
    seconds: float
    summary: str = Field(description="One line per action, in words")


@tool(
    "maintain_graph",
    admin=True,
    input=MaintainGraphIn,
    output=MaintainGraphOut,
    destructive=True,
    idempotent=True,
    title="Maintain the knowledge graph",
    profiles=(K, A),
    example={"actions": ["orphans"], "dryRun": True, "minSimilarity": 0.9, "batchSize": 100},
    description=(
        "Memory maintenance (spec 004's Memory Enzyme). DRY RUN BY DEFAULT: with dryRun omitted or true it "
        "changes nothing and says exactly what it would change (counts and the first names). Actions: "
        "prune (expire decayed knowledge: retention < 0.02 below level 3; re-level; close weak semantic "
        "edges), merge (near-duplicate knowledge merged into the stronger node, the duplicate's content kept "
        "as an observation and the duplicate expired as 'merged'), validate (close causal edges from "
        "inferences and open edges of expired knowledge; report principles without a quote), orphans "
        "(report knowledge with no open relationship). Expired knowledge and closed edges stay as history. "
        "With dryRun false the changes are committed per batch; running it again only does what is left."
    ),
)
async def maintain_graph(rt: Runtime, req: MaintainGraphIn) -> ToolOutput:
    report = await MaintenanceStore(rt.store).maintain(
        list(dict.fromkeys(req.actions)),
        apply=not req.dryRun,
        batch_size=req.batchSize,
        sample=SAMPLE,
        min_similarity=req.minSimilarity,
    )
    data = MaintainGraphOut.model_validate(report).model_dump(mode="json")
    return dump(data), data
