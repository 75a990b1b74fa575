"""``kg-neo4j import --from mcp-neo4j-memory|graphiti|memento``: a peer's graph in Neo4j into one namespace
(docs/moving-over.md; the mapping: :mod:`kg_neo4j.peers`).

The source is read with its own driver: ``--source-uri`` (default: kg-neo4j's own Neo4j), ``--source-database``
(default: kg-neo4j's database), credentials from ``SOURCE_NEO4J_USERNAME`` / ``SOURCE_NEO4J_PASSWORD``, else
kg-neo4j's own.  The report (JSON) goes to stdout, the progress bar to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from typing import Any

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.errors import ConfigError, ValidationError
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import acting_as, default_actor

log = logging.getLogger("kg_neo4j.peers")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``kg-neo4j import --from PEER``: called by commands/transfer.py only when ``--from`` is given."""
    if args.path is not None:
        raise ConfigError(
            f"--from {args.source_system} reads a Neo4j database, not a file: leave out {args.path}"
        )
    if args.fmt != "auto":
        raise ConfigError("--format is for files; --from names the peer")
    report = asyncio.run(
        run_peer_import(
            settings,
            args.source_system,
            source_uri=args.source_uri,
            source_database=args.source_database,
            dry_run=args.dry_run,
            batch_size=args.batch_size,
            progress=args.progress,
        )
    )
    print(json.dumps(report, indent=2))
    rejected = sum(report[g]["rejected"] for g in ("entities", "relations"))
    return 0 if not rejected else 1


def source_settings(settings: Settings, uri: str | None, database: str | None) -> Settings:
    """The settings the source is opened with: its URI, database and credentials (see the module docstring)."""
    update: dict[str, Any] = {"neo4j_database": database or settings.neo4j_database}
    if uri:
        update["neo4j_uri"] = uri
    if settings.source_neo4j_username is not None:
        update["neo4j_username"] = settings.source_neo4j_username
    if settings.source_neo4j_password is not None:
        update["neo4j_password"] = settings.source_neo4j_password
    return settings.model_copy(update=update)


async def run_peer_import(
    settings: Settings,
    system: str,
    *,
    source_uri: str | None = None,
    source_database: str | None = None,
    dry_run: bool = False,
    batch_size: int = 1000,
    progress: bool = True,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Import the peer's graph into ``settings.namespace``; returns the report the CLI prints."""
    from kg_neo4j.peers import PEERS, PeerReport, PeerWriter, import_peer
    from kg_neo4j.store.connection import connect, resolve_connection
    from kg_neo4j.store.executor import Executor

    started = time.monotonic()
    if system not in PEERS:
        raise ValidationError(f"unknown peer {system!r}; choose one of {', '.join(PEERS)}", field="from")
    if not 1 <= batch_size <= settings.max_batch_items:
        raise ValidationError(
            f"batch size must be between 1 and {settings.max_batch_items}", field="batch_size"
        )
    src_settings = source_settings(settings, source_uri, source_database)
    where = f"{resolve_connection(src_settings).uri} database {src_settings.neo4j_database}"
    report = PeerReport(system, settings.namespace, where, dry_run)
    src_driver, src_conn = await connect(src_settings)
    try:
        source = Executor(src_driver, src_conn.database)
        if dry_run:
            await import_peer(PEERS[system], source, None, report, batch_size=batch_size, progress=progress)
        else:
            clock = clock or SystemClock()
            # what the import writes is attributed to this actor (created_by), as a file import's is
            with acting_as(default_actor(settings.actor)):
                async with open_resources(settings, bootstrap="full", embedder=True, clock=clock) as rt:
                    writer = PeerWriter(rt.graph_store())
                    await import_peer(
                        PEERS[system], source, writer, report, batch_size=batch_size, progress=progress
                    )
    finally:
        await src_driver.close()
    out = report.as_dict(time.monotonic() - started)
    log.info(
        "import --from %s: entities %s, observations %s, relations %s",
        system,
        out["entities"],
        out["observations"],
        out["relations"],
    )
    return out
