"""The decay sweep (store/maintenance.py says how it runs): the namespace's knowledge in name order, one
chunk per statement, every change written in committed batches; resumable from its ``:KgMeta`` cursor."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import datetime
from typing import Any

import neo4j

from kg_neo4j.store.maintenance_base import (
    CHUNK_BATCHES,
    DEFAULT_BATCH_SIZE,
    SAMPLE,
    MaintenanceBase,
    SweepReport,
)
from kg_neo4j.store.progress import Count


class DecaySweep(MaintenanceBase):
    # -- the decay sweep ----------------------------------------------------------------------
    async def count_knowledge(self) -> int:
        return int((await self.x.read("decay_count"))[0]["knowledge"])

    async def decay_sweep(
        self,
        *,
        apply: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        chunk_size: int | None = None,
        resume: bool = False,
        deadline: float | None = None,
        max_chunks: int | None = None,
        on_total: Count | None = None,
        on_progress: Count | None = None,
        sample: int = SAMPLE,
    ) -> SweepReport:
        """Re-level every knowledge node to the level it has earned by now and expire those with
        R < 0.02 below level 3 (``decay.expiry_due``), one chunk of names at a time.

        ``deadline`` (a ``time.monotonic()`` value) or ``max_chunks`` stops the sweep between chunks; with
        ``resume`` it starts after the name where the last stopped sweep ended.  ``now`` is
        read from the clock once, so every chunk decides at the same moment.
        """
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        chunk = chunk_size or batch_size * CHUNK_BATCHES
        started = time.monotonic()
        now = self.graph.clock.now()
        report = SweepReport(applied=apply, now=now.isoformat())
        after = ""
        if resume:
            meta = await self.x.read("decay_progress_read", key=self._meta_key)
            if meta and meta[0]["cursor"]:
                after = str(meta[0]["cursor"])
        if on_total:
            on_total(await self.count_knowledge())

        async def scan(after: str) -> tuple[int, str, neo4j.Record | None]:
            """The chunk after ``after``: its size in entities, its last name, what the scan found."""
            bounds = (await self.x.read("decay_chunk_bounds", after=after, chunk=chunk))[0]
            if int(bounds["entities"]) == 0:
                return 0, after, None
            upto = str(bounds["upto"])
            rec = (await self.x.read("decay_scan_chunk", after=after, upto=upto, now=now, sample=sample))[0]
            return int(bounds["entities"]), upto, rec

        # The next chunk is read while this one is written (the scan is read-only and covers other
        # names, and every write re-checks the node it writes): two server threads, not one.
        chunks = 0
        ahead: asyncio.Task[tuple[int, str, neo4j.Record | None]] | None = None
        try:
            while True:
                if (deadline is not None and time.monotonic() >= deadline) or (
                    max_chunks is not None and chunks >= max_chunks
                ):
                    report.complete = False
                    break
                chunks += 1
                entities, upto, rec = await (ahead if ahead is not None else scan(after))
                ahead = None
                if rec is None:
                    break
                last = entities < chunk
                if not last:
                    ahead = asyncio.ensure_future(scan(upto))
                written = None
                ids = list(rec["ids"])
                if apply and ids:
                    written = (await self.x.auto("decay_apply", ids=ids, now=now, batch=batch_size))[0]
                self._add_chunk(report, rec, written, sample)
                after = upto
                if apply:  # where a stopped sweep resumes
                    await self.x.write(
                        "decay_progress_write", key=self._meta_key, cursor=after, report=None, now=now
                    )
                if on_progress:
                    on_progress(int(rec["scanned"]))
                if last:
                    break
        finally:
            if ahead is not None:  # read ahead, not needed (stopped): drop it
                ahead.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ahead
        report.cursor = None if report.complete else after
        report.seconds = round(time.monotonic() - started, 3)
        if apply:
            await self.x.write(
                "decay_progress_write",
                key=self._meta_key,
                cursor=report.cursor,
                report=_meta_report(report),
                now=now,
            )
        return report

    async def progress(self) -> dict[str, Any]:
        """The sweep's record for this namespace: cursor (None when the last run completed) and the
        figures of the last run."""
        rec = (await self.x.read("decay_progress_read", key=self._meta_key))[0]
        return {k: _iso(v) for k, v in dict(rec).items()}

    @staticmethod
    def _add_chunk(report: SweepReport, rec: neo4j.Record, written: neo4j.Record | None, sample: int) -> None:
        report.scanned += int(rec["scanned"])
        report.fading += int(rec["fading"])
        if report.applied:
            if written is not None:
                report.expired += int(written["expired"] or 0)
                report.promoted += int(written["promoted"] or 0)
                report.demoted += int(written["demoted"] or 0)
                report.written += int(written["written"] or 0)
        else:
            report.expired += int(rec["expire"])
            report.promoted += int(rec["promote"])
            report.demoted += int(rec["demote"])
        report.expire_names = (report.expire_names + list(rec["expire_names"]))[:sample]
        report.level_changes = (report.level_changes + [dict(x) for x in rec["level_names"]])[:sample]
        fading = report.fading_names + [
            {"name": x["name"], "retention": float(x["retention"])} for x in rec["fading_names"]
        ]
        report.fading_names = sorted(fading, key=lambda x: (x["retention"], x["name"]))[:sample]


def _iso(value: Any) -> Any:
    if hasattr(value, "to_native"):
        value = value.to_native()
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _meta_report(report: SweepReport) -> dict[str, Any]:
    """The figures a sweep records on its :KgMeta node (read back by benchmarks and stats)."""
    return {
        "scanned": report.scanned,
        "expired": report.expired,
        "promoted": report.promoted,
        "demoted": report.demoted,
        "written": report.written,
        "complete": report.complete,
        "seconds": report.seconds,
    }
