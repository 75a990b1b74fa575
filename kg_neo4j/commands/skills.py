"""``kg-neo4j import-skills DIR``: skill markdown stored as knowledge
(docs/knowledge.md#skill-files-import-skills-and-crystallize_skill; the rules: :mod:`kg_neo4j.skills`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.errors import ValidationError
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import acting_as, default_actor

log = logging.getLogger("kg_neo4j.skills")


def run(args: argparse.Namespace, settings: Settings) -> int:
    report = asyncio.run(
        run_import_skills(
            settings,
            args.directory,
            knowledge_type=args.knowledge_type,
            trust=args.trust,
            category=args.category,
            batch_size=args.batch_size,
            progress=args.progress,
        )
    )
    print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return 0 if not report.get("rejected") else 1


async def run_import_skills(
    settings: Settings,
    directory: Path | str,
    *,
    knowledge_type: str | None = None,
    trust: str = "pattern",
    category: str = "creative",
    batch_size: int = 200,
    progress: bool = True,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """``kg-neo4j import-skills DIR``: import the skill files under ``directory`` into
    ``settings.namespace`` as knowledge (embedded with the configured model); returns the
    report the CLI prints: ``{directory, namespace, files, sections, stored, skipped,
    rejected, rejected_files, seconds}``.  Opens Neo4j as the server does (full bootstrap, the
    configured embedder, a GraphStore), without the server."""
    from kg_neo4j.skills import check_import_labels, import_skill_tree, skills_root
    from kg_neo4j.store.knowledge import KnowledgeStore

    started = time.monotonic()
    check_import_labels(knowledge_type, trust, category)
    if not 1 <= batch_size <= settings.max_batch_items:
        raise ValidationError(
            f"batch size must be between 1 and {settings.max_batch_items}", field="batch_size"
        )
    skills_root(directory)
    with acting_as(default_actor(settings.actor)):  # the stored knowledge's created_by
        async with open_resources(
            settings, bootstrap="full", embedder=True, clock=clock or SystemClock()
        ) as rt:
            report = await import_skill_tree(
                KnowledgeStore(rt.graph_store()),
                Path(directory),
                knowledge_type=knowledge_type,
                trust=trust,
                category=category,
                batch_size=batch_size,
                progress=progress,
            )
    report["seconds"] = round(time.monotonic() - started, 3)
    log.info(
        "import-skills %s: %d files, %d sections, %d stored, %d skipped, %d files rejected",
        report["directory"],
        report["files"],
        report["sections"],
        report["stored"],
        report["skipped"],
        report["rejected"],
    )
    return report
