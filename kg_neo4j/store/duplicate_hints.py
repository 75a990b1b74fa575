"""create_entities' duplicate hint (docs/entities.md#a-hint-at-write-time): which existing entity each new
one probably duplicates, scored as find_duplicates scores that pair.  Nothing is merged.

Every entity carries the hint's keys (:func:`kg_neo4j.resolution.hint_keys`: its name's last word, the
typing-error keys of that word, the words' Metaphone codes), each behind a range index with the namespace.
A new entity's candidates are the entities holding one of the values :func:`~kg_neo4j.resolution.hint_seeks`
gives (every name a name rule but the acronym relates to it and find_duplicates compares with it), read by
index seeks, at most ``MAX_CANDIDATES`` a key; only those a name rule relates are scored, with the same
context read and the same score as find_duplicates (``store/duplicates.py``), in the write's transaction.
The vector index is not asked: a pair it alone finds has no name rule and scores at most 0.6.

:func:`backfill` gives the keys to entities written before them, at bootstrap: per namespace in name
order, ``BATCH`` per transaction, each batch marking what it did (resumable), recorded done once on
``(:KgMeta {key: 'dup_keys_2'})``.  Progress on stderr.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from neo4j import AsyncDriver, AsyncManagedTransaction
from pydantic import BaseModel

from kg_neo4j.resolution import DEFAULT_MIN_SCORE, ambiguous_short_forms, hint_keys, hint_seeks, name_rule
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.duplicates import DuplicateReason, Scorer, duplicate_reason, read_context
from kg_neo4j.store.progress import no_progress
from kg_neo4j.store.type_labels import Sweep

#: Candidates read per key of a new name (a namespace of 10,000 Smiths still costs bounded seeks).
MAX_CANDIDATES = 200
BATCH = 10_000
_META_KEY = "dup_keys_2"  # 2: the keys of issue 38's second round (dup_first was the first's)
T = TypeVar("T")
S = TypeVar("S", bound=StoreCore)


class DuplicateHint(BaseModel):
    """A new entity and the existing one it probably duplicates."""

    name: str
    duplicateOf: str
    score: float
    reasons: list[DuplicateReason]


async def candidates(store: StoreCore, names: Sequence[str]) -> set[tuple[str, str]]:
    """The pairs (one of ``names``, an entity of the namespace) a name rule relates, among the entities
    holding one of the name's :func:`hint_seeks` values.  Read before the write, in its transaction: the
    names it creates are not entities yet, and the index seeks see no uncommitted changes (read after
    the write, the same statement took several times as long: docs/performance.md#the-duplicate-hint)."""
    if not names:
        return set()
    rows = [{"name": n, **hint_seeks(n)} for n in dict.fromkeys(names)]
    records = await store.x.read("duplicates_hint_candidates", rows=rows, limit=MAX_CANDIDATES)
    return {
        (r["name"], c)
        for r in records
        for c in r["candidates"]
        if c != r["name"] and name_rule(r["name"], c) is not None  # a name in ``names`` written before
    }


async def probable_duplicates(store: StoreCore, pairs: set[tuple[str, str]]) -> list[DuplicateHint]:
    """For each new name of ``pairs`` (just written; each with an existing entity a name rule relates to
    it), the entity scoring best with it at ``DEFAULT_MIN_SCORE`` or more, if any, in the order of the
    names; runs inside ``store``'s transaction when it is a view."""
    if not pairs:
        return []
    model = store.embedder.name if store.embedder is not None else None
    involved = sorted({n for p in pairs for n in p})
    context = await read_context(store, model, involved, model is not None, no_progress)
    scorer = Scorer(context, {}, ambiguous_short_forms(pairs))
    best: dict[str, DuplicateHint] = {}
    for new, old in sorted(pairs):
        s = scorer.score(new, old)
        if s.score >= DEFAULT_MIN_SCORE and (new not in best or s.score > best[new].score):
            reasons = [duplicate_reason(old, new, r) for r in s.reasons]
            best[new] = DuplicateHint(name=new, duplicateOf=old, score=s.score, reasons=reasons)
    return list(best.values())


async def with_hints(
    store: S, names: Sequence[str], write: Callable[[S], Awaitable[T]], created: Callable[[T], Sequence[str]]
) -> tuple[T, list[DuplicateHint]]:
    """``write`` (of entities named ``names``) on ``store`` and the hints for the names it ``created``, in
    one transaction, in the order of ``created``."""

    async def work(tx: AsyncManagedTransaction) -> tuple[T, list[DuplicateHint]]:
        view = store.within(tx)
        pairs = await candidates(view, names)
        out = await write(view)
        made = created(out)
        new = set(made)
        hints = {h.name: h for h in await probable_duplicates(view, {p for p in pairs if p[0] in new})}
        return out, [hints[n] for n in made if n in hints]

    return await store.x.transaction(work)


async def backfill(
    driver: AsyncDriver,
    database: str,
    namespace: str | None = None,
    batch: int = BATCH,
    max_batches: int | None = None,
) -> int:
    """Give the entities without the hint's keys their keys; returns how many.  With ``namespace`` None
    (the bootstrap) the whole database, recorded done once (later calls return 0); ``max_batches`` stops
    early (tests of the resume)."""

    def rows(chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"name": r["name"], **hint_keys(r["name"])} for r in chunk if r["pending"]]

    sweep = Sweep(
        _META_KEY,
        ("dup_keys_pending_namespaces", "dup_keys_chunk", "dup_keys_apply"),
        rows,
        "duplicate hint keys for",
        "duplicate hint keys",
    )
    return await sweep.run(driver, database, namespace, batch, max_batches)
