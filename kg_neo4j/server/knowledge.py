"""The knowledge layer's tools (spec 004): store, connect, update, forget and list
knowledge; record and recall experiences; memory statistics.

``search_memory`` and ``traverse_graph`` are the same tools as in the default profile
(kg_neo4j.server.search / temporal); maintain_graph and crystallize_skill live in
kg_neo4j.server.maintenance and kg_neo4j.server.skills.
"""

from __future__ import annotations

from typing import Any, Literal

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
    _In,
)
from kg_neo4j.server.registry import Runtime, ToolOutput, ToolSpec, dump, parse_model, schema_of, session_id
from kg_neo4j.store.knowledge import KnowledgeStore

#: The knowledge profile, and ``all`` (which holds every tool).
KNOWLEDGE_PROFILES = ("knowledge", "all")


def knowledge(rt: Runtime) -> KnowledgeStore:
    return KnowledgeStore(rt.store)


def _answer(model: BaseModel) -> ToolOutput:
    data = model.model_dump(by_alias=True, mode="json")
    return dump(data), data


# --- shapes that exist only at the tool boundary ------------------------------------------
class _Connected(BaseModel):
    relations: list[RelationFull] = Field(description="Edges created (an edge already open is not repeated)")


class _ForgetIn(_In):
    names: list[Name] = Field(min_length=1, max_length=MAX_ITEMS_PER_CALL, description="Knowledge to forget")
    reason: Quote | None = Field(default=None, description="Why (kept with the history)")


class _Forgotten(BaseModel):
    class Item(BaseModel):
        name: str
        closedRelations: int

    forgotten: list[Item]


class _ListIn(_In):
    names: list[Name] | None = Field(default=None, max_length=MAX_KNOWLEDGE_LIST,
                                     description="Only these knowledge names (exact)")
    element: str | None = Field(default=None, min_length=1, max_length=255, pattern=r"^[^/]+$",
                                description="Only knowledge imported from this skill element (a skills "
                                            "directory's elements/<element>/ files)")
    trust: Trust | None = None
    type: KnowledgeType | None = None
    category: Category | None = None
    source: Source | None = None
    includeExpired: bool = Field(default=False, description="Also list forgotten or expired knowledge")
    sortBy: Literal["time", "access", "strength"] = Field(
        default="time", description="time (newest first), access (most used first), strength (retention now)")
    limit: int = Field(default=50, ge=1, le=MAX_KNOWLEDGE_LIST)


class _Listed(BaseModel):
    knowledge: list[KnowledgeItem]


class _RecallIn(_In):
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


class _NoArgs(_In):
    pass


# --- handlers ----------------------------------------------------------------------------
async def store_knowledge(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    item = parse_model(args, KnowledgeIn)
    stored = await knowledge(rt).store([item], session=session_id(rt))
    return _answer(stored[0])


async def connect_knowledge(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    edge = parse_model(args, ConnectIn)
    return _answer(_Connected(relations=await knowledge(rt).connect([edge])))


async def update_knowledge(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    change = parse_model(args, KnowledgeUpdate)
    return _answer(await knowledge(rt).update(change, session=session_id(rt)))


async def forget_knowledge(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    req = parse_model(args, _ForgetIn)
    done = await knowledge(rt).forget(req.names, reason=req.reason)
    return _answer(_Forgotten.model_validate({"forgotten": done}))


async def list_knowledge(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    req = parse_model(args, _ListIn)
    items = await knowledge(rt).list(trust=req.trust, type=req.type, category=req.category, source=req.source,
                                     names=req.names, element=req.element,
                                     include_expired=req.includeExpired, sort=req.sortBy, limit=req.limit)
    return _answer(_Listed(knowledge=items))


async def record_experience(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    exp = parse_model(args, ExperienceIn)
    return _answer(await knowledge(rt).record_experience(exp, session=session_id(rt)))


async def recall_experience(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    req = parse_model(args, _RecallIn)
    return _answer(_Recalled(experiences=await knowledge(rt).recall_experience(req.context, limit=req.limit)))


async def memory_stats(rt: Runtime, args: dict[str, Any]) -> ToolOutput:
    parse_model(args, _NoArgs)
    return _answer(_Stats.model_validate(await knowledge(rt).stats()))


def _spec(name: str, description: str, handler: Any, inp: type[BaseModel], out: type[BaseModel], *,
          read_only: bool = False, destructive: bool = False, idempotent: bool = False) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema=schema_of(inp), handler=handler,
                    read_only=read_only, destructive=destructive, idempotent=idempotent,
                    output_schema=schema_of(out), profiles=KNOWLEDGE_PROFILES)


KNOWLEDGE_TOOLS: list[ToolSpec] = [
    _spec("store_knowledge",
          "Store one piece of knowledge: {name, content, type (rule/procedure/observation/insight/core/preference), "
          "trust (principle = taught by the expert, needs their exact words in quote; pattern = observed; "
          "inference = your own idea), category (fundamental never decays; creative decays unless used), quote?, "
          "source?, sessionId?}. It is embedded and indexed, its decay starts, and similar knowledge already "
          "stored is suggested (connect it with connect_knowledge, or update instead of duplicating). "
          "Never invent a quote: without the expert's words, store a pattern or an inference.",
          store_knowledge, KnowledgeIn, StoredKnowledge),
    _spec("connect_knowledge",
          "Connect knowledge to knowledge (or to any entity) with a semantic edge: must_precede, requires_reading, "
          "refines, contradicts, reason_for, causes, implies, aligns_to, tends_to, observed_in; with reasoning "
          "(why) and weight (0-1). An inference cannot be the source of must_precede or reason_for.",
          connect_knowledge, ConnectIn, _Connected, idempotent=True),
    _spec("update_knowledge",
          "Change knowledge in place (its name, edges and history stay): content (re-embedded), type, category, "
          "quote, source, and trust (raising it needs expertConfirmed, and a quote for principle: trust never "
          "upgrades by itself). feedback 'applied' (used without correction) or 'corrected' (the expert corrected "
          "it) records an access of that grade.",
          update_knowledge, KnowledgeUpdate, KnowledgeItem),
    _spec("forget_knowledge",
          "Forget knowledge: it leaves every read, search and traversal, and its edges are closed; nothing is "
          "erased (list_knowledge with includeExpired shows it). All or nothing.",
          forget_knowledge, _ForgetIn, _Forgotten, destructive=True, idempotent=False),
    _spec("list_knowledge",
          "List knowledge by trust, type, category or source, sorted by time (newest first), access (most used) "
          "or strength (retention now); with stability, memory level, access count and retention.",
          list_knowledge, _ListIn, _Listed, read_only=True, idempotent=True),
    _spec("record_experience",
          "Record a workflow trace: the context, the steps taken, the decisions made, the outcome and whether it "
          "succeeded, so a similar situation later can recall it.",
          record_experience, ExperienceIn, Experience),
    _spec("recall_experience",
          "Find past experiences similar to the situation described in context (best first, with steps, "
          "decisions and outcome).",
          recall_experience, _RecallIn, _Recalled, read_only=True, idempotent=True),
    _spec("memory_stats",
          "Statistics of the knowledge memory: counts by trust, type, category and memory level, fading "
          "knowledge, expired knowledge by reason, semantic edges by type, experiences.",
          memory_stats, _NoArgs, _Stats, read_only=True, idempotent=True),
]
