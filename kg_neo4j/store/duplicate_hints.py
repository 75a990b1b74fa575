"""create_entities' duplicate hint (docs/entities.md#a-hint-at-write-time): which existing entity each new
one probably duplicates, scored as find_duplicates scores that pair.  Nothing is merged.

Every entity carries the hint's keys (:func:`kg_neo4j.resolution.hint_keys`: its name's last word, the
typing-error keys of that word, the words' Metaphone codes), each behind a range index with the namespace.
A new entity's candidates are the entities holding one of the values :func:`~kg_neo4j.resolution.hint_seeks`
gives (every name a name rule but the acronym relates to it and find_duplicates compares with it), read by
index seeks in create_entities' own statement before its writes (``store/entities.py``), at most
``HINT_CANDIDATES`` a key; only those a name rule relates are scored, with the same context read and the
same score as find_duplicates (``store/duplicates.py``), in the write's transaction.
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

from kg_neo4j.resolution import DEFAULT_MIN_SCORE, ambiguous_short_forms, hint_keys, name_rule
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.duplicates import DuplicateReason, Scorer, duplicate_reason, read_context
from kg_neo4j.store.progress import no_progress
from kg_neo4j.store.type_labels import Sweep

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
    store: S,
    write: Callable[[S, dict[str, list[str]]], Awaitable[T]],
    created: Callable[[T], Sequence[str]],
) -> tuple[T, list[DuplicateHint]]:
    """``write`` (of entities, on ``store`` with a dict its create_entities fills with the candidates of the
    entities it creates) and the hints for the names it ``created``, in one transaction, in the order of
    ``created``."""

    async def work(tx: AsyncManagedTransaction) -> tuple[T, list[DuplicateHint]]:
        view = store.within(tx)
        found: dict[str, list[str]] = {}
        out = await write(view, found)
        made = created(out)
        pairs = {(n, c) for n in made for c in found.get(n, ()) if name_rule(n, c) is not None}
        hints = {h.name: h for h in await probable_duplicates(view, pairs)}
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
