"""search_memory: hybrid recall (vector + fulltext + graph), fused by rank."""

from __future__ import annotations

import asyncio

from kg_neo4j.models import SearchMemoryIn, SearchResult
from kg_neo4j.server.declare import tool
from kg_neo4j.server.profiles import A, D, K
from kg_neo4j.server.registry import Runtime, ToolOutput, dump, session_id
from kg_neo4j.store.knowledge import KnowledgeStore

#: Profiles with the knowledge tools: there, what search_memory and open_nodes return counts as an access.
ACCESS_PROFILES = frozenset({"knowledge", "all"})


def record_access(rt: Runtime, names: list[str], answer: str) -> None:
    """Record an access (grade 3, docs/knowledge-model.md#access-grades) of the knowledge among
    ``names``, as a separate write started once the read has its answer, so reads stay reads.
    An answer over the size cap is
    refused, so it records nothing."""
    if rt.profile not in ACCESS_PROFILES or not names or len(answer.encode()) > rt.max_answer_bytes:
        return
    rt.after_answer(
        KnowledgeStore(rt.store).record_access(list(dict.fromkeys(names)), session=session_id(rt)),
        "recording access",
    )


def mark_search(rt: Runtime) -> None:
    """Leave the search-enforcer hook its marker (a memory search happened, in this MCP session),
    once the answer has gone: a small file under the hooks' state directory (docs/hooks.md, "State")."""
    from kg_neo4j.hooks.config import hook_config
    from kg_neo4j.hooks.state import HookState

    session = session_id(rt)

    async def write() -> None:
        state = HookState(hook_config(rt.settings).hook_state_dir, rt.store.namespace)
        await asyncio.to_thread(state.mark_search, session, rt.settings.session_id)

    rt.after_answer(write(), "marking the search for the hooks")


@tool(
    "search_memory",
    input=SearchMemoryIn,
    output=SearchResult,
    read_only=True,
    idempotent=True,
    profiles=(D, K, A),
    example={"query": "who wrote the first program", "limit": 5},
    description=(
        "Recall what the memory knows about a question asked in your own words. Combines semantic "
        "(embedding) similarity, keyword (BM25) matches and the graph (entities named in the question, "
        "neighbours of strong hits, relation weights) into one ranking. Returns `hits` best first (one "
        "observation each, or an entity matched by name/type with observation null), then the hits' "
        "entities and the relations among them; a knowledge entity carries `knowledge` (trust, level, quote, "
        "retention, fading: check fading or inference knowledge before relying on it). Optional: limit "
        "(default 10), entityTypes, asOf."
    ),
)
async def search_memory(rt: Runtime, req: SearchMemoryIn) -> ToolOutput:
    result = await rt.store.search_memory(
        req.query, limit=req.limit, entity_types=req.entityTypes, as_of=req.asOf
    )
    data = result.model_dump(by_alias=True)
    text = dump(data)
    if req.asOf is None:
        record_access(rt, [h.name for h in result.hits], text)
    mark_search(rt)
    return text, data
