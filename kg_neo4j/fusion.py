"""Pure ranking for search_memory: relative-score fusion plus graph signals.

Channels: cosine similarity of observation embeddings (``vector``), BM25 over
observations, names and types (``fulltext``), and cosine similarity of entity
name/type embeddings (``entity``).  Each channel's scores are normalised over its own
candidates (cosine: min-max; BM25: divided by the best) and summed with weights.

Why not plain reciprocal-rank fusion?  RRF keeps only ranks, so a BM25 list whose best
match shares one common word with the question weighs as much as a near-paraphrase
found by the embedding.  Relative-score fusion keeps how much better the best
candidate is than the rest.  On the project's frozen evaluation set
(benchmarks/recall_eval) relative-score fusion of vector and BM25 ranked clearly better than RRF
with the same inputs (the figures: docs/recall.md#recall-search_memory, #measured-recall).

Graph signals on top:
- mention: entities named in the question (found by the store, and removed from the
  text that is embedded and keyword-searched) lend a share of the top score to their
  own observations ("what did Alice say about ..." prefers Alice's observations).  0.3: in
  long conversations both speakers talk about the same topics, and the question's person is the
  strongest clue (it raised hit@10 and MRR on the dev split of benchmarks/recall_eval/v2: benchmarks/recall_eval/README.md);
- asking: an observation that only asks questions ("What about you?", "Did you go skiing?")
  loses a share (``asking``, 0.5) of the top score: it states nothing a question could be answered
  with, yet it resembles the question more than any answer does.  On real chats (REALTALK) a message
  that only asks is evidence a quarter as often as the others, and the penalty raised the dev split's
  hit@10 and MRR most of every lever tried (docs/recall.md#measured-recall);
- turn context (a re-rank): the best ``rerank_depth`` (50) candidates get a share (``turn_context``,
  0.3 of the top score, times the min-max over those observations) of the question's cosine with the
  candidate's vector averaged with the vector of the turn written just before it in the namespace, whoever
  wrote it (``store/hybrid_search.py`` reads those cosines; the order is the write order add_observations
  numbers, docs/recall.md#recall-search_memory): it reads the other speaker's question the answer
  replies to.  It raised hit@10 and MRR on the dev split of benchmarks/recall_eval/v2
  (git show 140ea90:benchmarks/results/recall_experiments_dev.md); REALTALK's dev split took it down
  from 0.5 to 0.3, and the older same-entity ``context`` share (0.2) out, both by the numbers;
- proximity: neighbours of the strongest entities get a share, times relation weight,
  and neighbours no channel found become entity hits;
- prior: an optional per-entity score in [0, 1] (the knowledge layer's memory score,
  docs/knowledge-model.md#search-score: memoryScore = R x 0.1 + levelBonus, divided by its
  maximum).  It is ADDITIVE:
  ``score += weights.prior x top x prior[name]``, with ``top`` the best relevance score of
  the question.  A choice: the source adds memoryScore (at most 0.2) to relevance (at most
  0.9); here the prior is a share of the top score (default 0.1), so it lifts relevant,
  well-remembered knowledge over a near-equal match but cannot outrank a clearly better
  one, and it does not depend on how large this question's raw scores happen to be.

The store (store/hybrid_search.py) calls the phases separately (``score_channels``, ``pool``,
``finish``) so that it reads the graph around the few entities the answer can hold instead of
every candidate.

Deterministic and database-free, so it is tested directly.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FusionWeights:
    vector: float = 1.0
    fulltext: float = 0.5
    entity: float = 0.5
    mention: float = 0.3  # share of the top score added to observations of entities named in the question
    proximity: float = (
        0.05  # share of the top score, times relation weight, for neighbours of strong entities
    )
    prior: float = 0.1  # share of the top score, times the [0, 1] prior (memory score), added
    strong_entities: int = 3
    turn_context: float = 0.3  # share of the top score, times the min-max turn-context cosine (re-rank)
    rerank_depth: int = 50  # how many of the best candidates the turn-context re-rank re-scores
    asking: float = 0.5  # share of the top score an observation that only asks questions loses
    called: bool = True  # read names people call each other as mentions (store/hybrid_search.py)


@dataclass
class Hit:
    name: str
    entityType: str
    observation: str | None
    seq: int | None
    score: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)  # channel -> normalised score
    oid: str | None = None  # the observation's element id (the turn-context re-rank reads by it)

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.name, self.seq)


def _best_per_key(hits: Sequence[Mapping[str, Any]]) -> dict[tuple[str, Any], Mapping[str, Any]]:
    best: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for h in hits:
        key = (h["name"], h.get("seq"))
        if key not in best or float(h["score"]) > float(best[key]["score"]):
            best[key] = h
    return best


def _normalise(scores: Iterable[float], *, minmax: bool) -> tuple[float, float]:
    values = list(scores)
    if not values:
        return 0.0, 1.0
    hi = max(values)
    lo = min(values) if minmax and len(values) > 1 else 0.0
    span = hi - lo
    return lo, span if span > 0 else (hi if hi > 0 else 1.0)


Hits = dict[tuple[str, int | None], Hit]


def score_channels(
    *,
    vector: Sequence[Mapping[str, Any]] = (),
    fulltext: Sequence[Mapping[str, Any]] = (),
    entity_vector: Sequence[Mapping[str, Any]] = (),
    mentions: Sequence[str] = (),
    weights: FusionWeights = FusionWeights(),
) -> tuple[Hits, float]:
    """Phase 1: relative-score fusion of the channels plus the mention bonus; returns the hits by
    key and ``top``, the best channel score (the unit of every bonus)."""
    hits: Hits = {}

    def add(channel: str, found: Sequence[Mapping[str, Any]], w: float, *, minmax: bool) -> None:
        if not w:
            return
        best = _best_per_key(found)
        lo, span = _normalise((float(h["score"]) for h in best.values()), minmax=minmax)
        for key, h in best.items():
            norm = (float(h["score"]) - lo) / span
            hit = hits.get(key)
            if hit is None:
                hit = hits[key] = Hit(
                    h["name"], h["entityType"], h.get("observation"), h.get("seq"), oid=h.get("oid")
                )
            hit.channels[channel] = round(norm, 6)
            hit.score += w * norm

    add("vector", vector, weights.vector, minmax=True)
    add("fulltext", fulltext, weights.fulltext, minmax=False)
    add("entity", entity_vector, weights.entity, minmax=True)
    if not hits:
        return hits, 0.0
    top = max(h.score for h in hits.values()) or 1.0

    if weights.asking:
        for hit in hits.values():
            if hit.observation is not None and only_asks(hit.observation):
                hit.score -= weights.asking * top
                hit.channels["asking"] = 1.0
    named = set(mentions)
    if weights.mention and named:
        for hit in hits.values():
            if hit.name in named and hit.observation is not None:
                hit.score += weights.mention * top
                hit.channels["mention"] = 1.0
    return hits, top


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def only_asks(text: str) -> bool:
    """Whether every sentence of the text is a question ("How was the trip? Did you ski?"): such an
    observation states nothing a question could be answered with."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    return bool(sentences) and all(s.rstrip().endswith("?") for s in sentences)


def _rank_key(h: Hit) -> tuple[float, str, int]:
    """Best first; ties by name, then observation order (entity hits before observations)."""
    return (-h.score, h.name, h.seq if h.seq is not None else -1)


def rerank_head(hits: Hits, weights: FusionWeights) -> list[Hit]:
    """The observation hits among the best ``rerank_depth`` candidates: those the turn-context
    re-rank re-scores (entity hits in that head keep their score)."""
    if not weights.turn_context or weights.rerank_depth <= 0:
        return []
    head = sorted(hits.values(), key=_rank_key)
    return [h for h in head[: weights.rerank_depth] if h.oid is not None]


def turn_context(own: float, prev: float | None, pair: float | None) -> float:
    """The cosine of the question with the candidate's vector averaged with the previous turn's.

    ``own``, ``prev``: the question's cosine with the candidate and with the previous turn; ``pair``:
    the two vectors' cosine.  For unit vectors v, p and question q, cos(q, v + p) =
    (q.v + q.p) / |v + p| and |v + p| = sqrt(2 + 2 v.p); without a previous turn it is ``own``."""
    if prev is None or pair is None:
        return own
    norm = (2.0 + 2.0 * pair) ** 0.5
    return (own + prev) / norm if norm > 1e-6 else own


def rerank_by_context(
    hits: Hits, head: Sequence[Hit], context: Mapping[str, float], weights: FusionWeights
) -> None:
    """Phase 1b: add to each hit of ``head`` (``rerank_head``) ``turn_context`` x the best score so
    far (mention and context bonuses included) x its turn-context cosine min-maxed over the head
    (``context``: element id -> cosine; a hit without one gets nothing).  Changes the hits."""
    values = [context[h.oid] for h in head if h.oid is not None and h.oid in context]
    if len(values) < 2 or not hits:
        return
    top = max(h.score for h in hits.values())
    lo, span = _normalise(values, minmax=True)
    for h in head:
        c = context.get(h.oid) if h.oid is not None else None
        if c is None:
            continue
        norm = (c - lo) / span
        h.score += weights.turn_context * top * norm
        h.channels["turn"] = round(norm, 6)


def _best_by_entity(hits: Hits) -> dict[str, float]:
    best: dict[str, float] = defaultdict(float)
    for hit in hits.values():
        best[hit.name] = max(best[hit.name], hit.score)
    return best


def strong_entities(hits: Hits, mentions: Sequence[str], weights: FusionWeights) -> set[str]:
    """The entities whose neighbours get the proximity bonus: the best few, plus those named."""
    best = _best_by_entity(hits)
    return {
        n for n, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: weights.strong_entities]
    } | set(mentions)


def pool(
    hits: Hits,
    top: float,
    *,
    mentions: Sequence[str],
    prior: Mapping[str, float] | None,
    weights: FusionWeights,
    limit: int,
) -> list[str]:
    """The entities whose graph surroundings ``finish`` needs, best first: the strong ones and the
    ``limit`` best by score plus prior (the answer's likely entities), then those named."""
    best = _best_by_entity(hits)
    if prior and weights.prior:
        for name in best:
            best[name] += weights.prior * top * float(prior.get(name, 0.0))
    ranked = [n for n, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: max(limit, 0)]]
    return list(dict.fromkeys([*ranked, *sorted(strong_entities(hits, mentions, weights)), *mentions]))


def finish(
    hits: Hits,
    top: float,
    *,
    around: Sequence[Mapping[str, Any]] = (),
    mentions: Sequence[str] = (),
    prior: Mapping[str, float] | None = None,
    weights: FusionWeights = FusionWeights(),
    limit: int = 10,
    entity_types: Iterable[str] | None = None,
) -> list[Hit]:
    """Phase 2: graph proximity (``around``: the relations of at least the strong entities) and
    the additive prior; the best ``limit`` hits.  Changes ``hits``."""
    if not hits:
        return []
    allowed = set(entity_types) if entity_types else None
    if weights.proximity:
        strong = strong_entities(hits, mentions, weights)
        bonus: dict[str, float] = defaultdict(float)
        types: dict[str, str] = {}
        for ent in around:
            src = ent["name"]
            if src not in strong:
                continue
            for rel in ent.get("rels", []):
                other = rel["other"]
                if other == src:
                    continue
                types.setdefault(other, rel.get("otherType", ""))
                bonus[other] = max(bonus[other], weights.proximity * float(rel.get("weight", 1.0)) * top)
        for hit in hits.values():
            if hit.name in bonus:
                hit.score += bonus[hit.name]
                hit.channels["graph"] = 1.0
        for other, b in bonus.items():
            if allowed is not None and types.get(other, "") not in allowed:
                continue
            if (other, None) not in hits:
                hits[(other, None)] = Hit(
                    other, types.get(other, ""), None, None, score=b, channels={"graph": 1.0}
                )

    if prior and weights.prior:
        for hit in hits.values():
            p = float(prior.get(hit.name, 0.0))
            if p:
                hit.score += weights.prior * top * p
                hit.channels["prior"] = round(p, 6)

    ordered = sorted(hits.values(), key=_rank_key)
    return ordered[:limit]
