"""An import run: items read in batches, each batch validated then written as one transaction, and
the report the CLI prints (see :mod:`kg_neo4j.transfer`).  Neo4j is opened by the caller
(:mod:`kg_neo4j.commands.transfer`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j
from tqdm import tqdm

from kg_neo4j.store.transfer import ImportCounts, TransferStore
from kg_neo4j.transfer.full import full_items
from kg_neo4j.transfer.readers import Item, memorymesh_items, reference_items, simple_memory_items

log = logging.getLogger(__name__)

MAX_REPORTED_LINES = 20

READERS: dict[str, Callable[[Path], Iterator[Item]]] = {
    "jsonl": reference_items,
    "memory-json": reference_items,
    "simple-memory": simple_memory_items,
    "memorymesh": memorymesh_items,
    "full": full_items,
}

_KIND_GROUP = {"entity": "entities", "node": "entities", "relation": "relations", "relationship": "relations"}


@dataclass
class ImportReport:
    fmt: str
    namespace: str
    path: str
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {
            "entities": {"added": 0, "skipped": 0, "rejected": 0},
            "relations": {"added": 0, "skipped": 0, "rejected": 0},
        }
    )
    rejected_lines: list[dict[str, Any]] = field(default_factory=list)
    malformed: int = 0
    rejected: int = 0
    batches_written: int = 0
    batches_rejected: int = 0

    def reject_line(self, line: int, error: str) -> None:
        self.malformed += 1
        if len(self.rejected_lines) < MAX_REPORTED_LINES:
            self.rejected_lines.append({"line": line, "error": error})

    def as_dict(self, seconds: float) -> dict[str, Any]:
        return {
            "format": self.fmt,
            "path": self.path,
            "namespace": self.namespace,
            "entities": self.counts["entities"],
            "relations": self.counts["relations"],
            "rejected_lines": self.rejected_lines,
            "rejected": self.rejected,
            "malformed_lines": self.malformed,
            "batches": {"written": self.batches_written, "rejected": self.batches_rejected},
            "seconds": round(seconds, 3),
        }


Writer = Callable[[list[Item]], Awaitable[ImportCounts]]


async def _flush(batch: list[Item], write: Writer, report: ImportReport) -> None:
    items = [it for it in batch if it.kind != "header"]
    if not items:
        return
    bad = [it for it in items if it.error]
    error: str | None = None
    if bad:
        for it in bad:
            report.reject_line(it.line, str(it.error))
        error = "malformed"
    else:
        try:
            counts = await write(items)
        except neo4j.exceptions.ClientError as exc:
            # Validation passed but Neo4j refused the batch (e.g. mixed-type list property).
            report.reject_line(
                items[0].line,
                f"lines {items[0].line}-{items[-1].line} not written: Neo4j said: {exc.message or exc}",
            )
            error = "neo4j"
        else:
            report.batches_written += 1
            n = {"entities": 0, "relations": 0}
            for it in items:
                n[_KIND_GROUP[str(it.kind)]] += 1
            report.counts["entities"]["added"] += counts.entities_added
            report.counts["entities"]["skipped"] += n["entities"] - counts.entities_added
            report.counts["relations"]["added"] += counts.relations_added
            report.counts["relations"]["skipped"] += n["relations"] - counts.relations_added
            return
    report.batches_rejected += 1
    for it in items:
        group = _KIND_GROUP.get(str(it.kind))
        if group:
            report.counts[group]["rejected"] += 1
        report.rejected += 1
    log.warning(
        "import: lines %d-%d rejected (%s); nothing of that batch was written",
        items[0].line,
        items[-1].line,
        error,
    )


def _writer(store: TransferStore, fmt: str) -> Writer:
    if fmt == "full":

        async def write_full(items: list[Item]) -> ImportCounts:
            return await store.import_full(
                [it.value for it in items if it.kind == "node"],
                [it.value for it in items if it.kind == "relationship"],
            )

        return write_full

    async def write_reference(items: list[Item]) -> ImportCounts:
        return await store.import_reference(
            [it.value for it in items if it.kind == "entity"],
            [it.value for it in items if it.kind == "relation"],
        )

    return write_reference


async def import_file(
    store: TransferStore, path: Path, report: ImportReport, *, batch_size: int, progress: bool
) -> None:
    """Read ``path`` (in ``report.fmt``) in batches of ``batch_size`` items and write them into ``store``,
    counting into ``report``; progress in bytes on stderr (characters for Simple Memory's single document)."""
    write = _writer(store, report.fmt)
    with tqdm(
        total=path.stat().st_size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=f"import {report.fmt}",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        batch: list[Item] = []
        done = 0
        for item in READERS[report.fmt](path):
            batch.append(item)
            if len(batch) >= batch_size:
                await _flush(batch, write, report)
                bar.update(item.pos - done)
                done = item.pos
                batch = []
        if batch:
            await _flush(batch, write, report)
            bar.update(batch[-1].pos - done)
