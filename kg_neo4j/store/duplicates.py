"""find_duplicates and ``kg-neo4j dedupe --dry-run``: groups of entities of one namespace that are
probably one (docs/entities.md#finding-duplicates; the rules are kg_neo4j/resolution.py's).

No all-pairs comparison.  Candidate pairs come from two places only:

1. blocking: the namespace's entities are streamed (name and type, pages of ``PAGE`` in name order,
   ``cypher/duplicates.cypher``), each is filed under its blocking keys (``resolution.blocking_keys``)
   and names are compared only within a key, and only when a name rule relates them;
2. with the embedding model on and ``min_score`` at most ``NO_NAME_RULE_CAP`` (above it a pair no name
   rule relates cannot be listed), each entity's ``NEAREST`` nearest name-and-type vectors in its
   namespace at cosine ``VECTOR_MIN_COSINE`` or more.  A namespace of at most ``EXACT_ENTITIES`` entity
   vectors (``EXACT_WHOLE`` for a call on the whole namespace) is compared exactly: its vectors are
   read once and compared in numpy, so other namespaces' data costs nothing (:class:`NamespaceVectors`).
   A larger one asks the entity vector index (batched with UNWIND): on 2026.x the filtered one, inside
   this namespace; on 5.26 the database-wide one, asked again with more when other namespaces' near
   copies took their places.

Then the candidates' context (neighbours, observations, counts, vectors) is read for those entities
only, every pair scored, and pairs at or above ``min_score`` grouped by the star rule
(:func:`star_groups`): a group is a kept entity and the members that score with *it* at or above
``min_score``, so "A~B~C" never becomes one group when A and C are different things.

A call for some ``names`` reads and scores only the entities connected to them by candidate pairs
(:func:`_component`; above ``EXACT_ENTITIES`` the index is asked for the reached names' nearest only):
a group holding a name lies there, and the star rule groups each connected part on its own, so the
answer is the whole namespace's groups that hold those names.  The names are still streamed whole, and
filed under their keys, but only the blocks of reached names are compared (a name of the 50,000-entity
namespace of bench_scale took 51 s when every block was: docs/performance.md).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from kg_neo4j.resolution import (
    CAPPED_RULES,
    DEFAULT_MIN_SCORE,
    HUB,
    NO_NAME_RULE_CAP,
    PEER,
    Reason,
    Scored,
    Side,
    ambiguous_short_forms,
    blocking_keys,
    name_rule,
    parse_name,
    peer_pairs,
    score_pair,
)
from kg_neo4j.store.capabilities import vector_statements
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.executor import concurrently
from kg_neo4j.store.progress import Progress, no_progress

# the paging cursor (store/records.py); decode_offset re-exported: server/duplicates.py checks cursors with it
from kg_neo4j.store.records import decode_offset as decode_offset
from kg_neo4j.store.records import encode_offset

#: Entities per streamed page, names per vector or context batch.
PAGE = 10_000
BATCH = 500
#: The cosine a vector candidate needs, and how many of an entity's nearest in its namespace are kept.
#: The index is asked for ``NEAREST + 1`` (the entity itself is one); when other namespaces' near copies
#: took places (the 5.26 index holds every namespace), four times as many, up to ``MAX_NEAREST_K``
#: (docs/performance.md#find_duplicates: why few).
VECTOR_MIN_COSINE = 0.9
NEAREST = 5
MAX_NEAREST_K = 384
#: A namespace with at most this many entity vectors is compared exactly (read in pages of
#: ``VECTOR_PAGE``, compared ``VECTOR_CELLS`` similarities at a time); above it the index is asked
#: (docs/performance.md#bench_scalepy-a-hundred-namespaces-on-one-database).
EXACT_ENTITIES = 20_000
#: A call for the whole namespace compares exactly up to this many: at 100,000 the index, asked once a
#: name, took 23 minutes, numpy's products about 4 on two busy cores (docs/performance.md#find_duplicates);
#: the vectors take 1.5 KB each in the process's memory while it runs.
EXACT_WHOLE = 100_000
VECTOR_PAGE = 2_000
#: Similarities computed at once (rows x the namespace's vectors): 40 MB of float32 whatever its size.
VECTOR_CELLS = 10_000_000
#: Vector batches read at once: the index answers one query per thread, and two reads use both cores of
#: a small server (docs/performance.md#find_duplicates measures one, two and four).
NEAREST_READS = 2
#: A peer block larger than this is compared only when its key is the exact one (the same words): a block
#: of 500 "J. ... Smith" names would be 125k comparisons for few rules.
MAX_BLOCK = 200
#: A hub key with more hub-spoke pairs than this is skipped ("Dr Smith" beside 10,000 Smiths says nothing).
MAX_HUB_PAIRS = 20_000
#: Observations read per entity for the score.
MAX_OBS = 50
#: find_duplicates' page size: default and most.
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000


class DuplicateReason(BaseModel):
    code: str
    detail: str
    names: list[str]


class DuplicateGroup(BaseModel):
    keep: str
    names: list[str]
    score: float
    reasons: list[DuplicateReason]


class Duplicates(BaseModel):
    groups: list[DuplicateGroup]
    nextCursor: str | None = None


@dataclass
class _Entity:
    name: str
    type: str
    neighbours: set[str] = field(default_factory=set)
    observations: list[str] = field(default_factory=list)
    weight: int = 0  # observations + relations: the suggested survivor has the most
    vector: np.ndarray[Any, np.dtype[np.float32]] | None = None

    def side(self) -> Side:
        return Side(self.name, self.type, self.neighbours, self.observations)


async def find_duplicates(
    store: StoreCore,
    *,
    names: Sequence[str] | None = None,
    min_score: float = DEFAULT_MIN_SCORE,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> Duplicates:
    """One page of the namespace's groups (score, then kept name, order), those holding one of ``names``
    when given; the whole namespace is examined each call (one read transaction per statement)."""
    offset = decode_offset(cursor) if cursor else 0
    model = store.embedder.name if store.embedder is not None else None
    groups = await duplicate_groups(store, model=model, min_score=min_score, names=names or None)
    if names:
        wanted = set(names)
        groups = [g for g in groups if wanted & set(g.names)]
    page = groups[offset : offset + limit]
    more = offset + limit < len(groups)
    return Duplicates(groups=page, nextCursor=encode_offset(offset + limit) if more else None)


async def duplicate_groups(
    store: StoreCore,
    *,
    model: str | None,
    min_score: float = DEFAULT_MIN_SCORE,
    progress: Progress | None = None,
    names: Sequence[str] | None = None,
) -> list[DuplicateGroup]:
    """Every group of the namespace at or above ``min_score``, best first.  ``model``: the embedding
    model whose entity vectors count (None: the model is off, no vector signal).  ``names``: at least
    every group holding one of them (the rest of the namespace is not scored)."""
    progress = progress or no_progress
    entities, with_vectors = await _stream(store, model, progress)
    with paused_gc():
        rules = _blocked_pairs(entities) if names is None else {}
    # pairs that cannot reach min_score are neither read nor scored
    pairs = {p for p, r in rules.items() if min_score <= NO_NAME_RULE_CAP or r.code not in CAPPED_RULES}
    cosines: dict[tuple[str, str], float] = {}
    use_vectors = model is not None and bool(with_vectors)
    # The vectors find pairs no name rule relates; such a pair scores at most NO_NAME_RULE_CAP, so above
    # it they cannot add a group (the cosine of the blocked pairs comes from their own vectors below).
    vectors = use_vectors and min_score <= NO_NAME_RULE_CAP
    touching: Touching | None = None
    if vectors and len(with_vectors) > (EXACT_ENTITIES if names is not None else EXACT_WHOLE):
        if names is None:
            cosines = await _nearest(store, model, with_vectors, progress)
        else:
            touching = _index_touching(store, model, set(with_vectors))
    elif vectors:
        near = await NamespaceVectors.read(store, model, len(with_vectors), progress)
        if names is None:
            cosines = near.pairs(range(len(near.names)), progress)
        else:
            touching = near.pairs_touching
    if names is not None:  # what the names connect to, and nothing else, is blocked, read and scored
        pairs, cosines = await _component(names, _blocked_touching(entities), touching)
    pairs |= set(cosines)
    involved = sorted({n for p in pairs for n in p})
    context = await read_context(store, model, involved, use_vectors, progress)
    with paused_gc():
        scorer = Scorer(context, cosines, ambiguous_short_forms(pairs))
        edges = {p: s for p in pairs if (s := scorer.score(*p)).score >= min_score}
        return star_groups(edges, scorer, min_score)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cycle collector paused while blocking or scoring, which make a million short-lived
    objects and no cycles: its passes over them took a third of blocking's time at 100,000 names
    (docs/performance.md#the-second-cut-the-same-answers-for-less).  Synchronous code only, so no other
    task runs meanwhile; what it would have collected waits until the end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


async def _stream(
    store: StoreCore, model: str | None, progress: Progress
) -> tuple[dict[str, str], list[str]]:
    """name -> type of every entity, and the names with a vector of the configured model."""
    set_total, advance = progress("entities")
    total = (await store.x.read("duplicates_count"))[0]["entities"]
    set_total(int(total))
    entities: dict[str, str] = {}
    with_vectors: list[str] = []
    after = ""
    while True:
        rows = (await store.x.read("duplicates_entities", after=after, limit=PAGE, model=model))[0]["rows"]
        for name, etype, has_vector in rows:
            entities[name] = etype or ""
            if has_vector:
                with_vectors.append(name)
        advance(len(rows))
        if len(rows) < PAGE:
            return entities, with_vectors
        after = rows[-1][0]


def _file(key: str, name: str, first: dict[str, str], more: dict[str, list[str]]) -> None:
    """File ``name`` under ``key``: a key's first name alone in ``first``, a list in ``more`` only from its
    second on (most keys hold one name: 1.1 million keys at 100,000 names)."""
    if (other := first.setdefault(key, name)) != name:
        if key in more:
            more[key].append(name)
        else:
            more[key] = [other, name]


def _blocked_pairs(entities: dict[str, str], only: set[str] | None = None) -> dict[tuple[str, str], Reason]:
    """Pairs sharing a blocking key that a name rule relates, with the rule; with ``only``, just those
    holding one of ``only`` (the other blocks and pairs are not compared)."""
    # peers filed by _file; hubs apart, and a spoke kept only where its key has a hub ("Dr Smith"), so the
    # surname and acronym keys of every other name cost nothing
    first: dict[str, str] = {}
    peers: dict[str, list[str]] = {}
    hubs: dict[str, list[str]] = defaultdict(list)
    spoke_keys: list[tuple[str, str]] = []
    for name in entities:
        for key, role in blocking_keys(name).items():
            if role == PEER:
                _file(key, name, first, peers)
            elif role == HUB:
                hubs[key].append(name)
            else:
                spoke_keys.append((key, name))
    spokes: dict[str, list[str]] = defaultdict(list)
    for key, name in spoke_keys:
        if key in hubs:
            spokes[key].append(name)
    seen: set[tuple[str, str]] = set()
    out: dict[tuple[str, str], Reason] = {}

    def consider(a: str, b: str) -> None:
        p = (a, b) if a < b else (b, a)
        if a == b or p in seen or (only is not None and a not in only and b not in only):
            return
        seen.add(p)
        if (rule := name_rule(a, b)) is not None:
            out[p] = rule

    for key, names in peers.items():
        if len(names) > MAX_BLOCK and not key.startswith("s:"):
            continue
        if only is not None and not any(n in only for n in names):
            continue
        for a, b in peer_pairs(key, names):
            consider(a, b)
    for key, centre in hubs.items():
        others = [*spokes.get(key, ()), *centre]
        if only is not None and not any(n in only for n in others):
            continue
        if len(centre) * len(others) <= MAX_HUB_PAIRS:
            for h in centre:
                for other in others:
                    consider(h, other)
    return out


def _blocked_touching(entities: dict[str, str]) -> Callable[[set[str]], set[tuple[str, str]]]:
    """For a set of names, the pairs of :func:`_blocked_pairs` holding one of them, without relating the
    rest of the namespace: the blocks of their keys, whole among the names sharing a key with them,
    and in those the pairs holding one of them.  The same pairs as the whole namespace's."""
    first: dict[str, str] = {}
    more: dict[str, list[str]] = {}
    with paused_gc():
        for name in entities:
            for key in blocking_keys(name):
                _file(key, name, first, more)

    def holding(key: str) -> Iterable[str]:
        return more[key] if key in more else (first[key],) if key in first else ()

    def touching(names: set[str]) -> set[tuple[str, str]]:
        near = {m for n in names for key in blocking_keys(n) for m in holding(key)}
        return set(_blocked_pairs(dict.fromkeys(near, ""), only=names))

    return touching


class NamespaceVectors:
    """The namespace's entity vectors (unit length), compared exactly: an entity's ``NEAREST`` nearest at
    ``VECTOR_MIN_COSINE`` or more, ties in name order, whatever other namespaces hold."""

    def __init__(self, names: list[str], matrix: np.ndarray[Any, np.dtype[np.float32]]) -> None:
        self.names = names
        self.index = {n: i for i, n in enumerate(names)}
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = matrix / np.where(norms > 0, norms, 1.0)

    @classmethod
    async def read(
        cls, store: StoreCore, model: str | None, total: int, progress: Progress
    ) -> NamespaceVectors:
        set_total, advance = progress("vectors")
        set_total(total)
        names: list[str] = []
        vectors: list[np.ndarray[Any, np.dtype[np.float32]]] = []
        after = ""
        while True:
            rows = (await store.x.read("duplicates_vectors", after=after, limit=VECTOR_PAGE, model=model))[0][
                "rows"
            ]
            if rows:
                names += [r[0] for r in rows]
                vectors.append(np.asarray([r[1] for r in rows], dtype=np.float32))
            advance(len(rows))
            if len(rows) < VECTOR_PAGE:
                break
            after = rows[-1][0]
        return cls(names, np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32))

    def nearest(self, rows: Sequence[int]) -> dict[int, list[tuple[int, float]]]:
        """Each row's nearest: [(row, cosine)], best first."""
        out: dict[int, list[tuple[int, float]]] = {}
        step = max(1, VECTOR_CELLS // max(1, len(self.names)))
        for i in range(0, len(rows), step):
            block = np.asarray(rows[i : i + step], dtype=np.int64)
            sims = self.matrix[block] @ self.matrix.T
            sims[np.arange(len(block)), block] = -1.0  # not itself
            r, c = np.nonzero(sims >= VECTOR_MIN_COSINE)
            # rounded, so that a row computed alone or in a block keeps the same ties (then name order)
            score = np.round(sims[r, c], 6)
            for k in np.lexsort((c, -score, r)):
                hits = out.setdefault(int(block[r[k]]), [])
                if len(hits) < NEAREST:
                    hits.append((int(c[k]), float(score[k])))
        return out

    def pairs(self, rows: Iterable[int], progress: Progress = no_progress) -> dict[tuple[str, str], float]:
        """The pairs of ``rows``' nearest, with their cosine."""
        rows = list(rows)
        set_total, advance = progress("nearest")
        set_total(len(rows))
        out: dict[tuple[str, str], float] = {}
        for i in range(0, len(rows), BATCH):
            for a, hits in self.nearest(rows[i : i + BATCH]).items():
                for b, cos in hits:
                    x, y = self.names[a], self.names[b]
                    out[(x, y) if x < y else (y, x)] = cos
            advance(len(rows[i : i + BATCH]))
        return out

    async def pairs_touching(self, names: set[str]) -> dict[tuple[str, str], float]:
        """Every vector pair holding one of ``names``: their own nearest, and the entities that have one
        of them among theirs (those lie at ``VECTOR_MIN_COSINE`` of it, so only they are compared).  A
        :data:`Touching` (async like the index's, though it reads nothing)."""
        rows = [self.index[n] for n in names if n in self.index]
        if not rows:
            return {}
        within = self.matrix[np.asarray(rows)] @ self.matrix.T >= VECTOR_MIN_COSINE
        around = sorted(set(np.nonzero(within.any(axis=0))[0].tolist()) | set(rows))
        mine = {self.names[r] for r in rows}
        return {p: c for p, c in self.pairs(around).items() if p[0] in mine or p[1] in mine}


#: The vector pairs holding one of a set of names, with their cosine.
Touching = Callable[[set[str]], Awaitable[dict[tuple[str, str], float]]]


def _index_touching(store: StoreCore, model: str | None, indexed: set[str]) -> Touching:
    """:data:`Touching` through the entity vector index: the names' own nearest (a name with no vector of
    the model has none)."""

    async def touching(frontier: set[str]) -> dict[tuple[str, str], float]:
        return await _nearest(store, model, sorted(frontier & indexed), no_progress)

    return touching


async def _component(
    names: Sequence[str], blocked: Callable[[set[str]], set[tuple[str, str]]], touching: Touching | None
) -> tuple[set[tuple[str, str]], dict[tuple[str, str], float]]:
    """The candidate pairs (name-blocked, and vector pairs with their cosine) connected to ``names``:
    from them, then from every name reached, until nothing new is.  ``blocked`` gives a set of names'
    blocked pairs (:func:`_blocked_touching`).  Through the index (``touching`` asks only the reached
    names' own nearest) an entity that has a reached name among its nearest but is not among that
    name's is not followed: the index answers nearest, not "nearest of whom"."""
    pairs: set[tuple[str, str]] = set()
    cosines: dict[tuple[str, str], float] = {}
    seen = set(names)
    frontier = set(names)
    while frontier:
        found = await touching(frontier) if touching is not None else {}
        cosines.update(found)
        linked = blocked(frontier)
        pairs |= linked
        reached = {n for p in (*found, *linked) for n in p}
        frontier = reached - seen
        seen |= frontier
    return pairs, cosines


async def _nearest(
    store: StoreCore, model: str | None, names: list[str], progress: Progress
) -> dict[tuple[str, str], float]:
    """Pairs of near name-and-type vectors (the entity vector index), with their cosine."""
    set_total, advance = progress("nearest")
    set_total(len(names))
    out: dict[tuple[str, str], float] = {}
    min_score = (1.0 + VECTOR_MIN_COSINE) / 2.0  # Neo4j's cosine score is (1 + cos) / 2
    # 2026.x with its filtered indexes ONLINE: this namespace's nearest inside the index, never crowded
    filtered = (await vector_statements(store.driver, store.database)).filtered
    statement = "duplicates_nearest_filtered" if filtered else "duplicates_nearest"

    async def batch(chunk: list[str], k: int) -> list[str]:
        """Reads ``chunk`` with ``k`` nearest each; the names to ask again with a larger ``k``."""
        rows = (
            await store.x.read(statement, names=chunk, k=k, want=NEAREST, min_score=min_score, model=model)
        )[0]["rows"]
        for name, near, _ in rows:
            for other, score in near:
                p = (name, other) if name < other else (other, name)
                out[p] = 2.0 * float(score) - 1.0
        return [name for name, _, crowded in rows if crowded]

    async def level(names: list[str], k: int, shown: bool) -> list[str]:
        chunks = [names[i : i + BATCH] for i in range(0, len(names), BATCH)]
        again: list[str] = []
        for i in range(0, len(chunks), NEAREST_READS):
            group = chunks[i : i + NEAREST_READS]
            for crowded in await concurrently([batch(c, k) for c in group]):
                again += crowded
            if shown:
                advance(sum(len(c) for c in group))
        return again

    k, todo, shown = NEAREST + 1, names, True
    while todo:
        todo = await level(todo, k, shown)
        k, shown = k * 4, False
        if k > MAX_NEAREST_K:
            break  # other namespaces hold a crowd of near copies: what the largest ask found is kept
    return out


async def read_context(
    store: StoreCore, model: str | None, names: list[str], vectors: bool, progress: Progress
) -> dict[str, _Entity]:
    set_total, advance = progress("candidates")
    set_total(len(names))
    out: dict[str, _Entity] = {}
    for i in range(0, len(names), BATCH):
        chunk = names[i : i + BATCH]
        rows = (
            await store.x.read(
                "duplicates_context", names=chunk, max_obs=MAX_OBS, vectors=vectors, model=model
            )
        )[0]["rows"]
        for r in rows:
            vec = np.asarray(r["embedding"], dtype=np.float32) if r["embedding"] is not None else None
            out[r["name"]] = _Entity(
                r["name"],
                r["type"] or "",
                set(r["neighbours"]),
                list(r["observations"]),
                int(r["observation_count"]) + int(r["relations"]),
                vec,
            )
        advance(len(chunk))
    return out


class Scorer:
    """Scores pairs of the candidates' entities, each pair once."""

    def __init__(
        self,
        context: dict[str, _Entity],
        cosines: dict[tuple[str, str], float],
        ambiguous: dict[str, set[str]] | None = None,
    ) -> None:
        self.context = context
        self.cosines = cosines
        self.ambiguous = ambiguous or {}
        self.cache: dict[tuple[str, str], Scored] = {}
        # a short form's raw score with each of its longer forms, computed once: every pair of the form
        # compares them all (a form fitting 30 people would otherwise cost 30 x 30 scores)
        self.raw: dict[str, dict[str, float]] = {}

    def score(self, a: str, b: str) -> Scored:
        p = (a, b) if a < b else (b, a)
        if p not in self.cache:
            ea, eb = self.context.get(p[0]), self.context.get(p[1])
            if ea is None or eb is None:  # deleted between the reads
                self.cache[p] = Scored(0.0, ())
            else:
                cos = self.cosines.get(p)
                if cos is None and ea.vector is not None and eb.vector is not None:
                    na, nb = float(np.linalg.norm(ea.vector)), float(np.linalg.norm(eb.vector))
                    cos = float(ea.vector @ eb.vector) / (na * nb) if na and nb else None
                self.cache[p] = score_pair(ea.side(), eb.side(), cos=cos, **self._ambiguity(*p))
        return self.cache[p]

    def _ambiguity(self, a: str, b: str) -> dict[str, bool]:
        """``score_pair``'s ambiguity flags: is one of the names a short form fitting other entities too,
        and does it score higher with one of those (by the raw score, the flags aside)."""
        short, full = (a, b) if b in self.ambiguous.get(a, ()) else (b, a)
        if full not in self.ambiguous.get(short, ()):
            return {}
        if short not in self.raw:
            self.raw[short] = {f: self._raw(short, f) for f in self.ambiguous[short]}
        raw = self.raw[short]
        return {"ambiguous": True, "outranked": raw[full] < max(raw.values())}

    def _raw(self, a: str, b: str) -> float:
        ea, eb = self.context.get(a), self.context.get(b)
        return score_pair(ea.side(), eb.side()).score if ea is not None and eb is not None else 0.0

    def rank(self, name: str) -> tuple[int, int, str]:
        """The suggested survivor first: most observations and relations, then the fuller name."""
        e = self.context.get(name)
        return (-(e.weight if e else 0), -len(parse_name(name).canonical), name)


def star_groups(
    edges: dict[tuple[str, str], Scored], scorer: Scorer, min_score: float
) -> list[DuplicateGroup]:
    """Groups of the pairs at or above ``min_score`` (``edges``), by the star rule.

    Connected components first; in each, the member with the most observations and relations that
    has an edge is kept, and the group is it and every member scoring with it at ``min_score`` or more
    (scored now when the pair was not a candidate); the rest of the component is grouped again the same
    way.  A group's score is its weakest member's score with the kept one."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    components: dict[str, list[str]] = defaultdict(list)
    for n in parent:
        components[find(n)].append(n)
    linked: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        linked[a].add(b)
        linked[b].add(a)
    groups: list[DuplicateGroup] = []
    for members in components.values():
        remaining = set(members)
        while len(remaining) > 1:
            candidates = [n for n in remaining if linked[n] & remaining]
            if not candidates:
                break
            keep = min(candidates, key=scorer.rank)
            scored = [(m, scorer.score(keep, m)) for m in sorted(remaining - {keep}, key=scorer.rank)]
            joined = [(m, s) for m, s in scored if s.score >= min_score]
            if not joined:
                linked[keep] = set()
                remaining.discard(keep)
                continue
            groups.append(_group(keep, joined))
            remaining -= {keep, *(m for m, _ in joined)}
    groups.sort(key=lambda g: (-g.score, g.keep))
    return groups


def _group(keep: str, joined: Iterable[tuple[str, Scored]]) -> DuplicateGroup:
    names = [keep]
    reasons: list[DuplicateReason] = []
    worst = 1.0
    for m, s in joined:
        names.append(m)
        worst = min(worst, s.score)
        reasons.extend(duplicate_reason(keep, m, r) for r in s.reasons)
    return DuplicateGroup(keep=keep, names=names, score=worst, reasons=reasons)


def duplicate_reason(keep: str, member: str, r: Reason) -> DuplicateReason:
    return DuplicateReason(code=r.code, detail=r.detail, names=[keep, member])
