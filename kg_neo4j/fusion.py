"""Pure ranking for search_memory: weighted reciprocal-rank fusion plus graph signals.

Why RRF: the channels score on incomparable scales (cosine in [0, 1], BM25 unbounded
and query-dependent), and RRF needs only ranks, so it fuses them without calibration and
is robust when one channel is missing (model ``none``) or empty.  On top of it:

- entity evidence: an entity matched by name or type (fulltext or its name embedding)
  lends part of its score to its own observations ("what did Alice say about ..."
  should prefer Alice's observations);
- graph proximity: entities related to the strongest entities get part of their score,
  scaled by the relation's weight; neighbours that no channel found become entity hits;
- an optional per-entity prior (the knowledge layer's memory score) is one more signal.

Everything here is deterministic and database-free, so it is tested directly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RRF_K = 60.0


@dataclass(frozen=True)
class FusionWeights:
    vector: float = 1.0
    fulltext: float = 1.0
    entity_vector: float = 0.5
    entity_evidence: float = 0.5  # share of an entity's own score given to its observations
    proximity: float = 0.3  # share of a strong neighbour's score, times relation weight
    prior: float = 0.0  # weight of an external per-entity prior in [0, 1]
    strong_entities: int = 5


@dataclass
class Hit:
    name: str
    entityType: str
    observation: str | None
    seq: int | None
    score: float = 0.0
    channels: dict[str, int] = field(default_factory=dict)  # channel -> 1-based rank

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.name, self.seq)


def _rank(hits: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Best first, one entry per (entity, observation)."""
    seen: set[tuple[str, Any]] = set()
    out = []
    for h in sorted(hits, key=lambda h: -float(h["score"])):
        key = (h["name"], h.get("seq"))
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def fuse(
    *,
    vector: Sequence[Mapping[str, Any]] = (),
    fulltext: Sequence[Mapping[str, Any]] = (),
    entity_vector: Sequence[Mapping[str, Any]] = (),
    around: Sequence[Mapping[str, Any]] = (),
    prior: Mapping[str, float] | None = None,
    weights: FusionWeights = FusionWeights(),
    limit: int = 10,
) -> list[Hit]:
    hits: dict[tuple[str, int | None], Hit] = {}

    def add(channel: str, ranked: Sequence[Mapping[str, Any]], w: float) -> None:
        for rank, h in enumerate(_rank(ranked), 1):
            key = (h["name"], h.get("seq"))
            hit = hits.get(key)
            if hit is None:
                hit = hits[key] = Hit(h["name"], h["entityType"], h.get("observation"), h.get("seq"))
            hit.channels[channel] = rank
            hit.score += w / (RRF_K + rank)

    add("vector", vector, weights.vector)
    add("fulltext", fulltext, weights.fulltext)
    add("entity_vector", entity_vector, weights.entity_vector)

    # Entity evidence: what an entity scored by its own name/type.
    entity_score: dict[str, float] = defaultdict(float)
    for hit in hits.values():
        if hit.observation is None:
            entity_score[hit.name] += hit.score
    if weights.entity_evidence:
        for hit in hits.values():
            if hit.observation is not None and hit.name in entity_score:
                hit.score += weights.entity_evidence * entity_score[hit.name]

    # Graph proximity: strongest entities by their best hit, spread over weighted relations.
    best: dict[str, float] = defaultdict(float)
    for hit in hits.values():
        best[hit.name] = max(best[hit.name], hit.score)
    strong = sorted(best.items(), key=lambda kv: -kv[1])[: weights.strong_entities]
    strong_names = {n for n, _ in strong}
    types: dict[str, str] = {h.name: h.entityType for h in hits.values()}
    bonus: dict[str, float] = defaultdict(float)
    if weights.proximity:
        for ent in around:
            src = ent["name"]
            if src not in strong_names:
                continue
            for rel in ent.get("rels", []):
                other = rel["other"]
                if other == src:
                    continue
                types.setdefault(other, rel.get("otherType", ""))
                bonus[other] += weights.proximity * float(rel.get("weight", 1.0)) * best[src]
        for hit in hits.values():
            hit.score += bonus.get(hit.name, 0.0) * (0.5 if hit.observation is not None else 1.0)
        for other, b in bonus.items():
            key = (other, None)
            if key not in hits:
                hits[key] = Hit(other, types.get(other, ""), None, None, score=b, channels={"graph": 1})

    if prior and weights.prior:
        for hit in hits.values():
            hit.score *= 1.0 + weights.prior * float(prior.get(hit.name, 0.0))

    ordered = sorted(hits.values(), key=lambda h: (-h.score, h.name, h.seq if h.seq is not None else -1))
    return ordered[:limit]
