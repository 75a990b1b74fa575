"""``kg-neo4j hook recall`` (UserPromptSubmit) and ``post-compact`` (SessionStart, compact).

recall prints the knowledge (then other entities) most relevant to the prompt: fulltext (BM25)
hits from Neo4j and, when ``KG_NEO4J_HOOK_SEARCH_URL`` names a running HTTP server, the hits of its
``search_memory`` (recall by meaning; the two lists are fused by reciprocal rank).  After printing
it records an access (grade 3) of the knowledge it showed and remembers, in the session state, what
it showed for this prompt (the correction detector and auto-capture grade it later).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kg_neo4j.hooks.common import LINE_CHARS, fit, line, prompt_key, text_of
from kg_neo4j.hooks.context import Answer, HookContext

log = logging.getLogger(__name__)

#: Fulltext candidates fetched (the query asks for this namespace's: kg_neo4j/text.py fulltext_query), and
#: how far that grows when other namespaces still fill the page (one whose name holds this one's words;
#: x 8 a round, while time is left), entities printed at most, observations shown per plain entity, weight
#: of a knowledge hit.
RECALL_K = 500
RECALL_K_MAX = 32_000
RECALL_GROWTH = 8
#: Time a round with a larger k must leave for the rest of the hook (seconds).
ROUND_RESERVE = 0.3
RECALL_LIMIT = 12
RECALL_OBSERVATIONS = 3
KNOWLEDGE_BOOST = 1.5
#: Hits asked of the server's search_memory (nearest by meaning: it always finds some, so few).
SEMANTIC_LIMIT = 5
#: Reciprocal rank fusion constant (score = sum of 1 / (RRF_K + rank)).
RRF_K = 60
CORE_LIMIT = 200
HEADER = (
    "Relevant knowledge from memory (kg-neo4j; trust: principle = the expert's, pattern = observed, "
    "inference = your own idea):"
)


def fuse(keyword: list[str], meaning: list[str], knowledge: set[str]) -> list[str]:
    """Names of both rankings, fused by reciprocal rank (knowledge weighted by KNOWLEDGE_BOOST)."""
    score: dict[str, float] = {}
    for ranking in (keyword, meaning):
        for rank, name in enumerate(ranking, 1):
            score[name] = score.get(name, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(score, key=lambda n: (-score[n] * (KNOWLEDGE_BOOST if n in knowledge else 1.0), n))


async def _by_meaning(ctx: HookContext, prompt: str) -> tuple[list[str], Any]:
    from kg_neo4j.hooks.semantic import search_by_meaning

    url = ctx.config.hook_search_url
    assert url is not None
    timeout = max(0.05, ctx.left() - 0.1)
    return await asyncio.to_thread(search_by_meaning, url, ctx.auth_token, prompt, SEMANTIC_LIMIT, timeout)


async def _by_keywords(ctx: HookContext, query: str) -> list[dict[str, Any]]:
    """The namespace's fulltext hits by entity, best first.  The index spans every namespace and the
    query asks for this one's, which a namespace whose name holds its words shares: when the best ``k``
    were all read (``raw_count == k``) and too few were this namespace's, the read is made again with a
    larger ``k`` (the same rule as search_memory's starved channels; docs/hooks.md "recall")."""
    k = RECALL_K
    while True:
        rec = (
            await ctx.read(
                "hook_recall",
                fulltext=query,
                k=k,
                limit=RECALL_LIMIT,
                knowledge_boost=KNOWLEDGE_BOOST,
                observations=RECALL_OBSERVATIONS,
            )
        )[0]
        rows: list[dict[str, Any]] = rec["lines"]
        if (
            rec["raw_count"] < k
            or len(rows) >= RECALL_LIMIT
            or k >= RECALL_K_MAX
            or ctx.left() < ROUND_RESERVE
        ):
            return rows
        k = min(k * RECALL_GROWTH, RECALL_K_MAX)
        log.debug("recall: the fulltext page was other namespaces' (%d own); asking for %d", len(rows), k)


async def recall(ctx: HookContext) -> Answer:
    from kg_neo4j.text import fulltext_query

    prompt = text_of(ctx.payload, "prompt")
    query = fulltext_query(prompt, ctx.namespace)
    meaning = (
        asyncio.ensure_future(_by_meaning(ctx, prompt))
        if ctx.config.hook_search_url and prompt.strip()
        else None
    )
    rows = await _by_keywords(ctx, query) if query else []
    found: list[str] = []
    client = None
    if meaning is not None:
        try:
            found, client = await meaning
        except Exception as exc:  # noqa: BLE001 - no server, a timeout: keywords alone
            log.debug("recall by meaning failed: %s: %s", type(exc).__name__, exc)
    log.debug("recall: %d keyword hits, %d by meaning, %.3f s left", len(rows), len(found), ctx.left())
    by_name = {r["name"]: r for r in rows}
    missing = [n for n in found if n not in by_name]
    if missing:
        for r in await ctx.read("hook_lines_by_name", names=missing, observations=RECALL_OBSERVATIONS):
            by_name[r["name"]] = r
    knowledge = {n for n, r in by_name.items() if r.get("knowledge")}
    ranked = [
        by_name[n] for n in fuse([r["name"] for r in rows], [n for n in found if n in by_name], knowledge)
    ]
    text = fit(HEADER, [line(r, LINE_CHARS) for r in ranked[:RECALL_LIMIT]], ctx.budget)
    shown = [r["name"] for r in ranked[: max(0, len(text.splitlines()) - 1)] if r.get("knowledge")]

    async def after() -> None:
        if ctx.session_id:
            ctx.state.add_turn(ctx.session_id, prompt_key(prompt), shown, searched=bool(text))
        # the server's search_memory recorded its own hits' access already (knowledge and all profiles)
        await ctx.record([n for n in shown if n not in found], 3)
        if client is not None:
            await asyncio.to_thread(client.close)

    return Answer(text, [after])


async def post_compact(ctx: HookContext) -> Answer:
    rows = await ctx.read("hook_core", limit=CORE_LIMIT)
    header = "Core knowledge (kg-neo4j memory, restored after compaction):"
    return Answer(fit(header, [line(r, LINE_CHARS) for r in rows], ctx.budget))
