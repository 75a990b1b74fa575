"""search_memory: hybrid recall over three candidate channels fused with the graph
(docs/recall.md#recall-search_memory).

The steps, each its own function: ``mentioned`` (entities named in the question), ``candidates`` (the
channel reads, with the starvation rounds), ``memory_prior`` (knowledge's memory score), then the
fusion phases of ``kg_neo4j.fusion`` (``score_channels``, ``pool``, ``finish``) around one read of
the graph near the pooled entities (``around``), and ``answer`` (the result models).  The diagnostics
(rounds, k, starved channels) come back with the result in :class:`Searched`, never in shared state.
Statements: ``cypher/search.cypher``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

import neo4j

from kg_neo4j.errors import ValidationError
from kg_neo4j.fusion import (
    FusionWeights,
    Hit,
    Hits,
    finish,
    pool,
    rerank_by_context,
    rerank_head,
    score_channels,
    turn_context,
)
from kg_neo4j.knowledge.decay import MEMORY_SCORE_MAX, elapsed_days, memory_score, retention
from kg_neo4j.knowledge.recall import facts_of
from kg_neo4j.models import RelationFull, SearchEntity, SearchHit, SearchResult
from kg_neo4j.store.capabilities import vector_statements
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.executor import concurrently
from kg_neo4j.store.history import memory_prior_at
from kg_neo4j.text import (
    called_name,
    capitalised_words,
    fulltext_query,
    question_grams,
    replace_mention,
    strip_mentions,
)

#: Candidates fetched per channel = OVERFETCH x limit (at least MIN_K; entity vectors:
#: ENTITY_OVERFETCH x limit, at least MIN_K_ENTITIES), grown 4x up to MAX_K while the namespace filter
#: starves a channel.
OVERFETCH = 10
MIN_K = 50
ENTITY_OVERFETCH = 3
MIN_K_ENTITIES = 20
#: A vector channel of a namespace holding at most this many observations (resp. entities) is ranked
#: exactly (cosine over the namespace's own vectors): at once on a server without in-index filters, where
#: the database-wide index would answer with every namespace's vectors, and after a starved index read on
#: one with them.  Past it, k grows.  Chosen by measurement at 1M observations on 5.26: exact 34 / 49 /
#: 78 ms at 2,000 / 3,000 / 4,900 observations against 430 ms through the index
#: (docs/performance.md#bench_scalepy-a-hundred-namespaces-on-one-database).
EXACT_CAP = 5000
EXACT_RECHECK_S = 300.0
MAX_K = 10_000
NEIGHBOUR_CAP = 20
#: How many fulltext hits of a capitalised question word are read to tell whether it names an entity.
CALLED_SCAN = 200
#: The statement of each candidate channel (cypher/search.cypher); the vector ones come from the
#: server's plan (store/capabilities.py).
FULLTEXT_STATEMENT = "search_memory_fulltext"


class SearchOptions(TypedDict, total=False):
    """search_memory's options (see :func:`search_memory`)."""

    limit: int
    entity_types: Sequence[str] | None
    as_of: datetime | None
    prior: dict[str, float] | None


@dataclass
class SearchDiagnostics:
    """How one search went: candidate rounds, the largest k asked, whether the in-index filtered
    statements ran, per extra round the channels fetched again (``name:exact``: ranked exactly after a
    starved read), and the channels ranked exactly."""

    rounds: int = 0
    k: int = 0
    filtered: bool = False
    starved: list[list[str]] = field(default_factory=list)
    exact: list[str] = field(default_factory=list)  # the channels ranked exactly (search_memory_exact)


@dataclass
class Searched:
    result: SearchResult
    diagnostics: SearchDiagnostics


@dataclass
class Candidates:
    found: dict[str, list[Any]]
    vector: list[float] | None


async def search_memory(
    store: StoreCore,
    query: str,
    *,
    limit: int = 10,
    entity_types: Sequence[str] | None = None,
    as_of: datetime | None = None,
    prior: dict[str, float] | None = None,
) -> Searched:
    """Hybrid recall: candidates of three channels (observation vectors, entity vectors, fulltext; one
    read each, run concurrently), fused in Python, then the graph around the few entities the answer
    can hold (one more small read).

    Knowledge entities (``:Knowledge``) get their memory score
        (docs/knowledge-model.md#search-score) as the fusion prior;
    ``prior`` (entity name -> [0, 1]) given by the caller overrides it per name.
    """
    diagnostics = SearchDiagnostics()
    read_at = as_of or store.clock.now()  # one moment for every read of this search
    mentions, content = await mentioned(store, query, read_at)
    types = list(entity_types) if entity_types else None
    cands = await candidates(
        store, content, limit=limit, types=types, read_at=read_at, diagnostics=diagnostics
    )
    found = cands.found
    merged_prior = memory_prior((*found["vector"], *found["entity"], *found["fulltext"]), read_at)
    if as_of is not None and merged_prior:
        # as of a past moment: the decay state each had then, not today's (docs/history.md)
        merged_prior = await memory_prior_at(store, merged_prior, read_at)
    if prior:
        merged_prior.update(prior)
    hits, top = score_channels(
        vector=found["vector"],
        fulltext=found["fulltext"],
        entity_vector=found["entity"],
        mentions=mentions,
        weights=store.fusion,
    )
    if cands.vector is not None:
        await rerank(store, hits, cands.vector, read_at)
    near: dict[str, Any] = {}
    if hits:
        names = pool(hits, top, mentions=mentions, prior=merged_prior, weights=store.fusion, limit=limit)
        near = await around(store, names, as_of)
    fused = finish(
        hits,
        top,
        around=list(near.values()),
        mentions=mentions,
        prior=merged_prior,
        weights=store.fusion,
        limit=limit,
        entity_types=types,
    )
    final = list(dict.fromkeys(h.name for h in fused))
    missing = [n for n in final if n not in near]
    if missing:  # entities the graph or the prior lifted into the answer
        near.update(await around(store, missing, as_of))
    result = answer(fused, final, near, read_at, hybrid=cands.vector is not None)
    return Searched(result, diagnostics)


def fetch_size(limit: int, weights: FusionWeights) -> int:
    """How many results the channels' first fetch is sized for.  The turn-context re-rank works on
    the best ``rerank_depth`` candidates, so the channels fetch as for that many (fusion's min-max then
    sees the spread of scores the re-rank was chosen with, which ranked better on the dev split than k
    for ``limit``: benchmarks/recall_eval/README.md)."""
    return max(limit, weights.rerank_depth) if weights.turn_context else limit


def first_vector_k(limit: int, weights: FusionWeights) -> int:
    """The observation vectors' first k for a search of ``limit`` (benchmarks compare the bare vector
    query at this k)."""
    return max(fetch_size(limit, weights) * OVERFETCH, MIN_K)


async def mentioned(store: StoreCore, query: str, read_at: datetime) -> tuple[list[str], str]:
    """The entities named in the question, and the question without their names.

    Entities named in the question are the graph's business: found by name, they lend weight to their
    own observations, and their names are removed from the text that is embedded and keyword-searched
    (a name in an embedded question drags it towards every mention of the name)."""
    grams = question_grams(query)
    rows = await store.x.read("search_mentions", grams=grams, at=read_at) if grams else []
    # an alias (a name merged into an entity: docs/entities.md) reads as the entity's own name
    text = query
    for r in rows:
        if r["alias"]:
            text = replace_mention(text, r["name_lower"], r["name"])
    names = list(dict.fromkeys(r["name"] for r in rows))
    stripped = [r["name"].lower() if r["alias"] else r["name_lower"] for r in rows]
    # a name the others call an entity by ("Kate" for the speaker labelled "Emi") reads as that entity's
    words = capitalised_words(query, [r["name_lower"] for r in rows])
    if words and store.fusion.called:
        asked = [{"word": w, "query": fulltext_query(w, store.namespace)} for w in words]
        for r in await store.x.read("search_called", words=asked, scan=CALLED_SCAN, at=read_at):
            entity = called_name(r["word"], [(u["writer"], u["replier"], u["text"]) for u in r["uses"]])
            if entity is not None:
                text = replace_mention(text, r["word"].lower(), entity)
                names = list(dict.fromkeys([*names, entity]))
                stripped.append(entity.lower())
    return names, strip_mentions(text, stripped)


async def candidates(
    store: StoreCore,
    content: str,
    *,
    limit: int,
    types: list[str] | None,
    read_at: datetime,
    diagnostics: SearchDiagnostics,
) -> Candidates:
    """The candidates of each channel, own namespace only, with the question's vector.

    The first k of each channel is sized for ``fetch_size`` results (at least the re-rank's depth);
    starvation is judged against ``limit``.

    The indexes are database-wide, so each channel over-fetches and filters by namespace.  A channel
    is *starved* when a full raw page leaves fewer than ``limit`` own hits.  The vector channels
    (observations, entities) of a namespace with at most ``EXACT_CAP`` of them are ranked exactly over
    the namespace's own vectors (one statement): first, on a server without in-index filters; after a
    starved read, on one with them.  Otherwise only the starved channel is fetched again with k x4 (up
    to ``MAX_K``): the observation vectors (the main signal) until they fill, the entity and fulltext
    channels only while the fused candidates are fewer than ``limit`` and their own hits still grow (a
    channel that found some and then no more stops)."""
    ftq = fulltext_query(content, store.namespace)
    # On a server whose filtered vector indexes are ONLINE (2026.x) the vector channels find the top k
    # of this namespace inside the index; elsewhere they over-fetch and filter
    # (docs/neo4j-versions.md#neo4j-versions).
    plan = await vector_statements(store.driver, store.database)
    statements = {
        "vector": plan.observation,
        "entity": plan.entity_for(types),
        "fulltext": FULLTEXT_STATEMENT,
    }
    diagnostics.filtered = plan.filtered

    def fetch_channel(name: str, k: int, vector: list[float] | None) -> Awaitable[list[neo4j.Record]]:
        return store.x.read(statements[name], k=k, vector=vector, fulltext=ftq, types=types, at=read_at)

    # The channels are separate reads run concurrently: the fulltext one while the question is embedded
    # (it needs no vector), the two vector ones together once the vector is there.
    sized = fetch_size(limit, store.fusion)
    k_first = first_vector_k(limit, store.fusion)
    in_tx = store.in_transaction
    early = asyncio.ensure_future(fetch_channel("fulltext", k_first, None)) if ftq and not in_tx else None
    try:
        vectors = await store.embed([content])
    except BaseException:
        if early is not None:
            early.cancel()
            await asyncio.gather(early, return_exceptions=True)  # its error (if any) is read, not lost
        raise
    vector = vectors[0] if vectors else None

    ks = {
        "vector": k_first if vector is not None else 0,
        "entity": max(sized * ENTITY_OVERFETCH, MIN_K_ENTITIES) if vector is not None else 0,
        "fulltext": k_first if ftq else 0,
    }
    found: dict[str, list[Any]] = {"vector": [], "entity": [], "fulltext": []}
    raw: dict[str, int] = {c: 0 for c in ks}
    fetch = {c: k for c, k in ks.items() if k > 0}

    def exact_wanted(channels: set[str]) -> set[str]:
        """The vector channels of ``channels`` not found past EXACT_CAP in the last EXACT_RECHECK_S."""
        since = time.monotonic() - EXACT_RECHECK_S
        return {
            c for c in channels & {"vector", "entity"} if store._exact_big.get(c, -EXACT_RECHECK_S) < since
        }

    async def rank_exactly(want: set[str]) -> set[str]:
        """Rank ``want``'s channels over the namespace's own vectors (one statement); the channels it
        could rank (a namespace found too large is not asked again for EXACT_RECHECK_S seconds)."""
        diagnostics.rounds += 1
        ex = (
            await store.x.read(
                "search_memory_exact",
                vector=vector,
                types=types,
                at=read_at,
                cap=EXACT_CAP,
                obs_scan=EXACT_CAP + 1 if "vector" in want else 0,
                entity_scan=EXACT_CAP + 1 if "entity" in want else 0,
                k_vector=ks["vector"],
                k_entities=ks["entity"],
            )
        )[0]
        ranked: set[str] = set()
        for name, small_key, hits_key in (
            ("vector", "obs_small", "vhits"),
            ("entity", "entities_small", "ventities"),
        ):
            if name in want and ex[small_key]:
                found[name] = list(ex[hits_key])
                ranked.add(name)
            elif name in want:
                store._exact_big[name] = time.monotonic()
        diagnostics.exact.extend(sorted(ranked))
        return ranked

    exact_tried = False
    if not plan.filtered and vector is not None and (want := exact_wanted(set(fetch))):
        # The index would answer with every namespace's vectors and be read again with a larger k while
        # they crowd out this one's: a small namespace is ranked exactly at once.
        exact_tried = True
        try:
            ranked = await rank_exactly(want)
        except BaseException:
            if early is not None:
                early.cancel()
                await asyncio.gather(early, return_exceptions=True)
            raise
        for c in ranked:
            del fetch[c]
    first = True
    while fetch:
        diagnostics.rounds += 1
        names = list(fetch)
        runs = [
            early if c == "fulltext" and early is not None else fetch_channel(c, fetch[c], vector)
            for c in names
        ]
        early = None
        answers = await concurrently(runs, sequential=in_tx)
        grew: dict[str, bool] = {}
        for name, records in zip(names, answers, strict=True):
            rec = records[0]
            # "still finding more": its first fetch, nothing own found yet, or more than last time
            grew[name] = first or not found[name] or len(rec["hits"]) > len(found[name])
            found[name] = list(rec["hits"])
            raw[name] = int(rec["raw_count"])
        first = False
        starved = {c for c, k in fetch.items() if raw[c] >= k and len(found[c]) < limit}
        if not exact_tried and (want := exact_wanted(starved)):
            # A namespace small next to the index: rank its own vectors exactly (one cheap statement)
            # instead of growing k over everybody else's.
            exact_tried = True
            diagnostics.starved.append(sorted(f"{c}:exact" for c in want))
            starved -= await rank_exactly(want)
        n_candidates = len({(h["name"], h["seq"]) for c in found.values() for h in c})
        nxt: dict[str, int] = {}
        for channel in starved:
            k = fetch[channel]
            # The observation vectors are the main signal: they grow until they fill (a namespace past
            # EXACT_CAP has enough).  The others only while the answer is short of candidates, and only
            # while they still find more.
            if k < MAX_K and (channel == "vector" or (n_candidates < limit and grew[channel])):
                nxt[channel] = min(k * 4, MAX_K)
        if nxt:
            diagnostics.starved.append(sorted(nxt))
            ks.update(nxt)
        fetch = nxt
    diagnostics.k = max(ks.values())
    return Candidates(found, vector)


async def rerank(store: StoreCore, hits: Hits, vector: list[float], read_at: datetime) -> None:
    """The turn-context re-rank of the best candidates (kg_neo4j/fusion.py, "turn context"): one read
    of the question's cosines with them and with the turns written just before them."""
    head = rerank_head(hits, store.fusion)
    if len(head) < 2:
        return
    records = await store.x.read(
        "search_memory_context", ids=[h.oid for h in head], vector=vector, at=read_at
    )
    # Neo4j's cosine is (1 + cos) / 2; the average of two vectors needs the cosines themselves
    context = {
        r["id"]: turn_context(
            2 * r["own"] - 1,
            None if r["prev"] is None else 2 * r["prev"] - 1,
            None if r["pair"] is None else 2 * r["pair"] - 1,
        )
        for r in records
    }
    rerank_by_context(hits, head, context, store.fusion)


async def around(store: StoreCore, names: Sequence[str], as_of: datetime | None) -> dict[str, Any]:
    """Type, observation count and strongest relations of the named entities (one statement)."""
    records = await store.x.read(
        "search_memory_around", names=list(names), neighbour_cap=NEIGHBOUR_CAP, at=as_of
    )
    return {
        r["name"]: {
            "name": r["name"],
            "entityType": r["entityType"],
            "observationCount": r["observationCount"],
            "rels": r["rels"],
            "knowledge": r["knowledge"],
        }
        for r in records
    }


def answer(
    fused: Sequence[Hit], final: Sequence[str], near: dict[str, Any], read_at: datetime, *, hybrid: bool
) -> SearchResult:
    """The result: the ranked hits, their entities (type, observation count, knowledge facts) and the
    relations among them."""
    names_set = set(final)
    entities = []
    for name in final:
        a = near.get(name)
        etype = (
            a["entityType"]
            if a and a["entityType"] is not None
            else next(h.entityType for h in fused if h.name == name)
        )
        entities.append(
            SearchEntity(
                name=name,
                entityType=etype,
                observationCount=int(a["observationCount"]) if a else 0,
                knowledge=facts_of(a["knowledge"], read_at) if a and a["knowledge"] else None,
            )
        )
    relations: list[RelationFull] = []
    seen: set[tuple[str, str, str]] = set()
    for name in final:
        a = near.get(name)
        for r in a["rels"] if a else ():
            key = (r["from"], r["to"], r["relationType"])
            if r["from"] in names_set and r["to"] in names_set and key not in seen:
                seen.add(key)
                relations.append(
                    RelationFull(
                        **{"from": r["from"]}, to=r["to"], relationType=r["relationType"], weight=r["weight"]
                    )
                )
    return SearchResult(
        hits=[
            SearchHit(
                name=h.name, entityType=h.entityType, observation=h.observation, score=round(h.score, 6)
            )
            for h in fused
        ],
        entities=entities,
        relations=relations,
        mode="hybrid" if hybrid else "fulltext+graph",
    )


def memory_prior(rows: Iterable[Any], at: datetime) -> dict[str, float]:
    """Entity name -> memory score / its maximum, for hits on knowledge entities (``memory`` not null).
    A knowledge entity whose stored state is incomplete or invalid gets no prior (search never fails on it)."""
    out: dict[str, float] = {}
    for h in rows:
        m = h.get("memory")
        if not m or h["name"] in out:
            continue
        try:
            since = m["since"]
            since = since.to_native() if hasattr(since, "to_native") else since
            r = retention(elapsed_days(since, at), float(m["stability"]), category=m["category"])
            out[h["name"]] = memory_score(r, int(m["level"])) / MEMORY_SCORE_MAX
        except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
            continue
    return out
