"""``kg-neo4j reembed``, ``rebuild-fulltext`` and ``maintain``: the long sweeps, committed per batch, with a
progress bar on stderr (docs/recall.md#embeddings, #languages;
docs/knowledge.md#maintenance-maintain_graph-and-kg-neo4j-maintain).  Each opens Neo4j with the schema
bootstrap only: a model or analyzer change is what reembed and rebuild-fulltext are there to fix."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from kg_neo4j.clock import Clock
from kg_neo4j.commands import ACTIONS
from kg_neo4j.errors import ConfigError
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import acting_as, default_actor
from kg_neo4j.store.progress import stderr_bars


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "reembed":
        report = asyncio.run(run_reembed(settings, batch_size=args.batch_size, progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0
    if args.command == "rebuild-fulltext":
        report = asyncio.run(run_rebuild_fulltext(settings, progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0
    report = asyncio.run(
        run_maintain(
            settings,
            actions=args.actions or list(ACTIONS),
            apply=args.apply,
            batch_size=args.batch_size,
            progress=args.progress,
            min_similarity=args.min_similarity,
        )
    )
    print(json.dumps(report, indent=2, ensure_ascii=False))
    print(report["summary"], file=sys.stderr)
    return 0


async def run_reembed(settings: Settings, *, batch_size: int = 256, progress: bool = True) -> dict[str, Any]:
    from kg_neo4j.embeddings import resolve_model
    from kg_neo4j.store.embeddings import reembed

    if resolve_model(settings.embedding_model) is None:  # before connecting: nothing to do without a model
        raise ConfigError(
            "reembed needs an embedding model (--embedding-model NAME or a local path), not 'none'"
        )
    async with open_resources(settings, bootstrap="schema", embedder=True) as rt:
        assert rt.embedder is not None
        with tqdm(total=0, unit="node", desc="reembed", file=sys.stderr, disable=not progress) as bar:

            def total(n: int) -> None:
                bar.total = n
                bar.refresh()

            return await reembed(
                rt.driver,
                rt.database,
                rt.embedder,
                batch_size=batch_size,
                on_total=total,
                on_progress=bar.update,
            )


async def run_rebuild_fulltext(settings: Settings, *, progress: bool = True) -> dict[str, Any]:
    """``kg-neo4j rebuild-fulltext``: the fulltext index again, with ``settings.fulltext_analyzer``."""
    from kg_neo4j.store.fulltext import rebuild_fulltext

    async with open_resources(settings, bootstrap="schema") as rt:
        with tqdm(total=100, unit="%", desc="rebuild-fulltext", file=sys.stderr, disable=not progress) as bar:

            def shown(percent: float) -> None:
                bar.n = round(percent, 1)
                bar.refresh()

            return await rebuild_fulltext(
                rt.driver, rt.database, settings.fulltext_analyzer, on_progress=shown
            )


async def run_maintain(
    settings: Settings,
    *,
    actions: Sequence[str] = ACTIONS,
    apply: bool = False,
    batch_size: int | None = None,
    progress: bool = True,
    min_similarity: float | None = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """``kg-neo4j maintain``: maintain_graph's actions on ``settings.namespace``, a dry run unless
    ``apply``; one progress bar per step on stderr.  Returns the report (``summary`` in words)."""
    from kg_neo4j.store.maintenance import DEFAULT_BATCH_SIZE, MERGE_COSINE

    # what --apply changes (levels, expiries, merges, closed edges) is attributed to this actor
    with stderr_bars(progress, "node") as bars, acting_as(default_actor(settings.actor)):
        async with open_resources(settings, bootstrap="schema", clock=clock) as rt:
            return await rt.maintenance_store().maintain(
                actions,
                apply=apply,
                batch_size=DEFAULT_BATCH_SIZE if batch_size is None else batch_size,
                progress=bars,
                min_similarity=MERGE_COSINE if min_similarity is None else min_similarity,
            )
