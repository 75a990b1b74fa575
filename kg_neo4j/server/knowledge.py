"""The knowledge layer's tools (docs/knowledge-model.md): store, connect, update, forget and list
knowledge; record and recall experiences; memory statistics.

``search_memory`` and ``traverse_graph`` are the same tools as in the default profile
(kg_neo4j.server.search / temporal); maintain_graph and crystallize_skill live in
kg_neo4j.server.maintenance and kg_neo4j.server.skills.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kg_neo4j.knowledge.vocabulary import Category, KnowledgeType, Trust
from kg_neo4j.models import (
    MAX_ITEMS_PER_CALL,
    MAX_KNOWLEDGE_LIST,
    ConnectIn,
    Content,
    Experience,
    ExperienceIn,
    KnowledgeIn,
    KnowledgeItem,
    KnowledgeUpdate,
    Name,
    Quote,
    RelationFull,
    Source,
    StoredKnowledge,
    StrictInput,
)
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, K
from kg_neo4j.server.registry import Runtime, ToolOutput, dump, session_id
from kg_neo4j.store.knowledge import KnowledgeStore


def knowledge(rt: Runtime) -> KnowledgeStore:
    return KnowledgeStore(rt.store)


def _answer(model: BaseModel) -> ToolOutput:
    data = model.model_dump(by_alias=True, mode="json")
    return dump(data), data


# --- shapes that exist only at the tool boundary ------------------------------------------
class _Connected(BaseModel):
    relations: list[RelationFull] = Field(description="Edges created (an edge already open is not repeated)")


class _ForgetIn(StrictInput):
    names: list[Name] = Field(min_length=1, max_length=MAX_ITEMS_PER_CALL, description="Knowledge to forget")
    reason: Quote | None = Field(default=None, description="Why (kept with the history)")


class _Forgotten(BaseModel):
    class Item(BaseModel):
        name: str
        closedRelations: int

    forgotten: list[Item]


class _ListIn(StrictInput):
    names: list[Name] | None = Field(
        default=None, max_length=MAX_KNOWLEDGE_LIST, description="Only these knowledge names (exact)"
    )
    element: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        pattern=r"^[^/]+$",
        description="Only knowledge imported from this skill element (a skills "
        "directory's elements/<element>/ files)",
    )
    trust: Trust | None = None
    type: KnowledgeType | None = None
    category: Category | None = None
    source: Source | None = None
    includeExpired: bool = Field(default=False, description="Also list forgotten or expired knowledge")
    sortBy: Literal["time", "access", "strength"] = Field(
        default="time", description="time (newest first), access (most used first), strength (retention now)"
    )
    limit: int = Field(default=50, ge=1, le=MAX_KNOWLEDGE_LIST)


class _Listed(BaseModel):
    knowledge: list[KnowledgeItem]


class _RecallIn(StrictInput):
    context: Content = Field(description="The situation you are in, in your own words")
    limit: int = Field(default=5, ge=1, le=20)


class _Recalled(BaseModel):
    experiences: list[Experience]


class _Stats(BaseModel):
    knowledge: int
    byTrust: dict[str, int]
    byType: dict[str, int]
    byCategory: dict[str, int]
    byLevel: dict[str, int]
    fading: int = Field(description="Knowledge with retention below 0.3 (actively decaying)")
    averageStabilityDays: float | None
    accesses: int
    expired: int
    expiredByReason: dict[str, int]
    edges: int
    edgesByType: dict[str, int]
    experiences: int


class _NoArgs(StrictInput):
    pass


# --- the tools ----------------------------------------------------------------------------
@tool(
    "store_knowledge",
    input=KnowledgeIn,
    output=StoredKnowledge,
    profiles=(K, A),
    example={
        "name": "Review with a checklist",
        "content": "review pull requests with a checklist",
        "type": "rule",
        "trust": "pattern",
        "category": "creative",
        "source": "code review",
        "sessionId": "example-session",
    },
    description=(
        "Store one piece of knowledge: {name, content, type (rule/procedure/observation/insight/core/preference), "
        "trust (principle = taught by the expert, needs their exact words in quote; pattern = observed; "
        "inference = your own idea), category (fundamental never decays; creative decays unless used), quote?, "
        "source?, sessionId?}. It is embedded and indexed, its decay starts, and similar knowledge already "
        "stored is suggested (connect it with connect_knowledge, or update instead of duplicating). "
        "Never invent a quote: without the expert's words, store a pattern or an inference."
    ),
)
async def store_knowledge(rt: Runtime, item: KnowledgeIn) -> ToolOutput:
    stored = await knowledge(rt).store([item], session=session_id(rt))
    return _answer(stored[0])


@tool(
    "connect_knowledge",
    input=ConnectIn,
    output=_Connected,
    idempotent=True,
    profiles=(K, A),
    example={
        "from": "Test before merging",
        "to": "Small commits",
        "relationType": "refines",
        "reasoning": "small commits keep the tests quick to read",
        "weight": 0.5,
        "source": "code review",
    },
    description=(
        "Connect knowledge to knowledge (or to any entity) with a semantic edge: must_precede, requires_reading, "
        "refines, contradicts, reason_for, causes, implies, aligns_to, tends_to, observed_in; with reasoning "
        "(why) and weight (0-1). An inference cannot be the source of must_precede or reason_for."
    ),
)
async def connect_knowledge(rt: Runtime, edge: ConnectIn) -> ToolOutput:
    return _answer(_Connected(relations=await knowledge(rt).connect([edge])))


@tool(
    "update_knowledge",
    input=KnowledgeUpdate,
    output=KnowledgeItem,
    profiles=(K, A),
    example={
        "name": "Small commits",
        "content": "keep each commit small, focused and green",
        "source": "code review",
        "expertConfirmed": False,
        "sessionId": "example-session",
    },
    description=(
        "Change knowledge in place (its name, edges and history stay): content (re-embedded), type, category, "
        "quote, source, and trust (raising it needs expertConfirmed, and a quote for principle: trust never "
        "upgrades by itself). feedback 'applied' (used without correction) or 'corrected' (the expert corrected "
        "it) records an access of that grade."
    ),
)
async def update_knowledge(rt: Runtime, change: KnowledgeUpdate) -> ToolOutput:
    return _answer(await knowledge(rt).update(change, session=session_id(rt)))


@tool(
    "forget_knowledge",
    input=_ForgetIn,
    output=_Forgotten,
    destructive=True,
    idempotent=False,
    profiles=(K, A),
    example={"names": ["Tabs over spaces"], "reason": "the team chose spaces"},
    description=(
        "Forget knowledge: it leaves every read, search and traversal, and its edges are closed; nothing is "
        "erased (list_knowledge with includeExpired shows it). All or nothing."
    ),
)
async def forget_knowledge(rt: Runtime, req: _ForgetIn) -> ToolOutput:
    done = await knowledge(rt).forget(req.names, reason=req.reason)
    return _answer(_Forgotten.model_validate({"forgotten": done}))


@tool(
    "list_knowledge",
    input=_ListIn,
    output=_Listed,
    read_only=True,
    idempotent=True,
    profiles=(K, A),
    example={
        "names": ["Test before merging"],
        "trust": "pattern",
        "includeExpired": False,
        "sortBy": "time",
        "limit": 10,
    },
    description=(
        "List knowledge by trust, type, category or source, sorted by time (newest first), access (most used) "
        "or strength (retention now); with stability, memory level, access count and retention."
    ),
)
async def list_knowledge(rt: Runtime, req: _ListIn) -> ToolOutput:
    items = await knowledge(rt).list(
        trust=req.trust,
        type=req.type,
        category=req.category,
        source=req.source,
        names=req.names,
        element=req.element,
        include_expired=req.includeExpired,
        sort=req.sortBy,
        limit=req.limit,
    )
    return _answer(_Listed(knowledge=items))


@tool(
    "record_experience",
    input=ExperienceIn,
    output=Experience,
    profiles=(K, A),
    example={
        "name": "Release checklist",
        "context": "preparing a release",
        "steps": ["ran the tests", "tagged the commit"],
        "decisions": ["released on a Tuesday"],
        "outcome": "the release went out",
        "success": True,
        "sessionId": "example-session",
    },
    description=(
        "Record a workflow trace: the context, the steps taken, the decisions made, the outcome and whether it "
        "succeeded, so a similar situation later can recall it."
    ),
)
async def record_experience(rt: Runtime, exp: ExperienceIn) -> ToolOutput:
    return _answer(await knowledge(rt).record_experience(exp, session=session_id(rt)))


@tool(
    "recall_experience",
    input=_RecallIn,
    output=_Recalled,
    read_only=True,
    idempotent=True,
    profiles=(K, A),
    example={"context": "a test fails under load", "limit": 3},
    description=(
        "Find past experiences similar to the situation described in context (best first, with steps, "
        "decisions and outcome)."
    ),
)
async def recall_experience(rt: Runtime, req: _RecallIn) -> ToolOutput:
    return _answer(_Recalled(experiences=await knowledge(rt).recall_experience(req.context, limit=req.limit)))


@tool(
    "memory_stats",
    input=_NoArgs,
    output=_Stats,
    read_only=True,
    idempotent=True,
    profiles=(K, A),
    example={},
    description=(
        "Statistics of the knowledge memory: counts by trust, type, category and memory level, fading "
        "knowledge, expired knowledge by reason, semantic edges by type, experiences."
    ),
)
async def memory_stats(rt: Runtime, req: _NoArgs) -> ToolOutput:
    return _answer(_Stats.model_validate(await knowledge(rt).stats()))
