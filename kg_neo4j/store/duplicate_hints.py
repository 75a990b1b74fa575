"""create_entities' duplicate hint (docs/entities.md#a-hint-at-write-time): which existing entity each new
one probably duplicates, scored as find_duplicates scores that pair.  Nothing is merged.

Every entity carries its name's first and last normalised words (``dup_first``, ``dup_last``,
:func:`kg_neo4j.resolution.hint_words`), each behind a range index with the namespace.  Every name rule
but the acronym relates two names sharing one of those words in place or swapped (a typo rule needs
the other word intact), so a new entity's candidates are read by index seeks, at most ``MAX_CANDIDATES``
a word; only those a name rule relates are scored, with the same context read and the same score as
find_duplicates (``store/duplicates.py``), in the write's transaction.  The vector index is not asked:
a pair it alone finds has no name rule and scores at most 0.6.

:func:`backfill` gives the words to entities written before them, at bootstrap: per namespace in name
order, ``BATCH`` per transaction, each batch marking what it did (resumable), recorded done once on
``(:KgMeta {key: 'dup_keys'})``.  Progress on stderr.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from neo4j import AsyncDriver, AsyncManagedTransaction
from pydantic import BaseModel

from kg_neo4j.resolution import DEFAULT_MIN_SCORE, ambiguous_short_forms, hint_words, name_rule
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.duplicates import DuplicateReason, Scorer, duplicate_reason, read_context
from kg_neo4j.store.progress import no_progress
from kg_neo4j.store.type_labels import Sweep

#: Candidates read per word of a new name (a namespace of 10,000 Smiths still costs two bounded seeks).
MAX_CANDIDATES = 200
BATCH = 10_000
_META_KEY = "dup_keys"
T = TypeVar("T")
S = TypeVar("S", bound=StoreCore)


class DuplicateHint(BaseModel):
    """A new entity and the existing one it probably duplicates."""

    name: str
    duplicateOf: str
    score: float
    reasons: list[DuplicateReason]


async def probable_duplicates(store: StoreCore, names: Sequence[str]) -> list[DuplicateHint]:
    """For each of ``names`` (just written), the existing entity of the namespace scoring best with it
    at ``DEFAULT_MIN_SCORE`` or more, if any; runs inside ``store``'s transaction when it is a view."""
    if not names:
        return []
    rows = [{"name": n, "words": sorted(set(hint_words(n).values()) - {""})} for n in names]
    records = await store.x.read(
        "duplicates_hint_candidates", rows=rows, batch=list(names), limit=MAX_CANDIDATES
    )
    pairs = {(r["name"], c) for r in records for c in r["candidates"] if name_rule(r["name"], c) is not None}
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
    return [best[n] for n in names if n in best]


async def with_hints(
    store: S, write: Callable[[S], Awaitable[T]], created: Callable[[T], Sequence[str]]
) -> tuple[T, list[DuplicateHint]]:
    """``write`` on ``store`` and the hints for the names it ``created``, in one transaction."""

    async def work(tx: AsyncManagedTransaction) -> tuple[T, list[DuplicateHint]]:
        view = store.within(tx)
        out = await write(view)
        return out, await probable_duplicates(view, created(out))

    return await store.x.transaction(work)


async def backfill(
    driver: AsyncDriver,
    database: str,
    namespace: str | None = None,
    batch: int = BATCH,
    max_batches: int | None = None,
) -> int:
    """Give the entities without the hint's words their words; returns how many.  With ``namespace`` None
    (the bootstrap) the whole database, recorded done once (later calls return 0); ``max_batches`` stops
    early (tests of the resume)."""

    def rows(chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"name": r["name"], **hint_words(r["name"])} for r in chunk if r["pending"]]

    sweep = Sweep(
        _META_KEY,
        ("dup_keys_pending_namespaces", "dup_keys_chunk", "dup_keys_apply"),
        rows,
        "duplicate hint words for",
        "duplicate hint words",
    )
    return await sweep.run(driver, database, namespace, batch, max_batches)
