"""``kg-neo4j import`` and ``kg-neo4j export``: a memory file into or out of one namespace
(docs/moving-over.md; the formats: :mod:`kg_neo4j.transfer`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.errors import ConfigError, ValidationError
from kg_neo4j.formats import EXPORT_FORMATS, IMPORT_FORMATS
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import acting_as, default_actor
from kg_neo4j.transfer.detect import detect_format

log = logging.getLogger("kg_neo4j.transfer")


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "export":
        report = asyncio.run(run_export(settings, args.path, fmt=args.fmt, progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0
    if args.source_system is None and args.path is None:
        raise ConfigError(
            "the following arguments are required: path (the file to import), unless --from names a "
            "peer whose graph is in Neo4j"
        )
    if args.source_system is not None:
        from kg_neo4j.commands import peers  # docs/moving-over.md: a peer's graph in Neo4j

        return peers.run(args, settings)
    if args.dry_run or args.source_uri or args.source_database:
        raise ConfigError("--dry-run, --source-uri and --source-database go with --from")
    report = asyncio.run(
        run_import(settings, args.path, fmt=args.fmt, batch_size=args.batch_size, progress=args.progress)
    )
    print(json.dumps(report, indent=2))
    return 0 if not report.get("rejected") else 1


async def run_import(
    settings: Settings,
    path: str | Path,
    *,
    fmt: str = "auto",
    batch_size: int = 1000,
    progress: bool = True,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Import ``path`` into ``settings.namespace``; returns the report the CLI prints.  Opens Neo4j
    with the full bootstrap and the configured embedder (imported text is embedded as it is written)."""
    from kg_neo4j.store.embeddings import embed_missing
    from kg_neo4j.transfer.importer import ImportReport, import_file

    started = time.monotonic()
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"{p}: no such file", field="path")
    if fmt != "auto" and fmt not in IMPORT_FORMATS:
        raise ValidationError(
            f"unknown import format {fmt!r}; choose auto or one of {', '.join(IMPORT_FORMATS)}",
            field="format",
        )
    if not 1 <= batch_size <= settings.max_batch_items:
        raise ValidationError(
            f"batch size must be between 1 and {settings.max_batch_items}", field="batch_size"
        )
    detected = detect_format(p) if fmt == "auto" else fmt
    report = ImportReport(detected, settings.namespace, str(p))
    # what the import writes is attributed to this actor (a full export's own attribution is kept)
    with acting_as(default_actor(settings.actor)):
        async with open_resources(
            settings, bootstrap="full", embedder=True, clock=clock or SystemClock()
        ) as rt:
            await import_file(rt.transfer_store(), p, report, batch_size=batch_size, progress=progress)
            if rt.embedder is not None and detected == "full":
                # A full export carries no vectors: embed what is missing in this namespace (idempotent).
                await embed_missing(rt.driver, rt.database, rt.embedder, settings.namespace)
    out = report.as_dict(time.monotonic() - started)
    log.info(
        "import %s: entities %s, relations %s, %d rejected",
        detected,
        out["entities"],
        out["relations"],
        out["rejected"],
    )
    return out


async def run_export(
    settings: Settings,
    path: str | Path,
    *,
    fmt: str = "jsonl",
    progress: bool = True,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Export ``settings.namespace`` to ``path`` (written to a temporary file, then renamed).  Opens
    Neo4j with the schema bootstrap only and no embedder (an export carries no vectors)."""
    from kg_neo4j.transfer.export import EXPORTERS

    started = time.monotonic()
    if fmt not in EXPORTERS:
        raise ValidationError(
            f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}", field="format"
        )
    target = Path(path)
    if target.is_dir():
        raise ValidationError(f"{target} is a directory; give a file path", field="path")
    if not target.parent.is_dir():
        raise ValidationError(f"{target.parent}: no such directory", field="path")
    clock = clock or SystemClock()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    async with open_resources(settings, bootstrap="schema", clock=clock) as rt:
        try:
            with tmp.open("w", encoding="utf-8", newline="\n") as out:
                counts = await EXPORTERS[fmt](rt.transfer_store(), out, progress, clock)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return {
        "format": fmt,
        "path": str(target),
        "namespace": settings.namespace,
        **counts,
        "seconds": round(time.monotonic() - started, 3),
    }
