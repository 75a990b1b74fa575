"""Agent lifecycle hooks (spec 004, "Hooks (Automation)"): ``kg-neo4j hook NAME``.

Each reads the hook's JSON on stdin (Claude Code's hook input: ``session_id``,
``hook_event_name``, ``prompt`` for UserPromptSubmit, ``source`` for SessionStart, ...) and
prints plain text for the agent's context on stdout:

- ``session-start``: repairs dangling edges (open edges of expired knowledge), runs the
  decay sweep under a time budget (it resumes where the last one stopped), and reports
  fading knowledge (R < 0.3) and duplicate candidates among the newest knowledge;
- ``recall``: the knowledge (then other entities) most relevant to the user's prompt,
  by fulltext (BM25) and boosted for knowledge, within ``hook_budget_chars``;
- ``post-compact``: core knowledge (type ``core``, fundamentals, level 4) again, within the budget.

A hook must never block the user: it answers within about a second (no embedding model, so
no torch on this path: ``kg_neo4j.embeddings``' encoder is never imported), and on any
failure (Neo4j down, bad JSON, a timeout) it prints nothing and exits 0.  Logs go to stderr,
only with ``--log-level DEBUG``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.settings import Settings

log = logging.getLogger(__name__)

HOOKS = ("session-start", "recall", "post-compact")

#: Seconds a hook may spend once started (Python's start and imports, about 0.5 s, come on top;
#: past TIME_BUDGET + 0.2 s it gives up and prints nothing).
TIME_BUDGET = 1.0
#: Of which the session-start decay sweep may take (it stops between chunks and resumes next time).
SWEEP_BUDGET = 0.4
#: Seconds to wait for Neo4j to accept the connection.
CONNECT_TIMEOUT = 1.0
#: Chunk and batch of the session-start sweep (small: the budget is checked between chunks).
SWEEP_CHUNK = 5000
SWEEP_BATCH = 1000
#: session-start: how many of the newest knowledge nodes are checked for duplicates, and lines per finding.
DUPLICATE_CHECK = 20
REPORT_LINES = 5
#: recall: fulltext candidates fetched (the index is database-wide; the namespace filter comes after),
#: entities printed at most, observations shown per plain entity, weight of a knowledge hit.
RECALL_K = 500
RECALL_LIMIT = 12
RECALL_OBSERVATIONS = 3
KNOWLEDGE_BOOST = 1.5
#: A printed item is cut at this many characters (so one long item cannot use up the whole budget).
LINE_CHARS = 500
CORE_LIMIT = 200


def parse_payload(text: str) -> dict[str, Any]:
    """The hook input: empty input is ``{}``; anything but a JSON object raises ValueError."""
    if not text.strip():
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: max(0, n - 1)] + "…"


def _line(rec: dict[str, Any], width: int) -> str:
    """One recalled item: ``- [type · trust · level N] name: content (expert: "quote")``."""
    if rec.get("knowledge"):
        tags = [t for t in (rec.get("type"), rec.get("trust"),
                            "fundamental" if rec.get("category") == "fundamental" else None,
                            f"level {rec['level']}" if rec.get("level") is not None else None) if t]
        text = f"- [{' · '.join(str(t) for t in tags)}] {rec['name']}: {rec.get('content') or ''}"
        if rec.get("quote"):
            text += f' (expert: "{rec["quote"]}")'
    else:
        text = f"- [{rec.get('type') or 'entity'}] {rec['name']}: " + "; ".join(rec.get("observations") or [])
    return _clip(text, width)


def fit(header: str, lines: Sequence[str], budget: int) -> str:
    """``header`` and as many whole ``lines`` as fit in ``budget`` characters ('' if none fits)."""
    out = [header]
    size = len(header)
    for line in lines:
        if size + 1 + len(line) > budget:
            break
        out.append(line)
        size += 1 + len(line)
    return "\n".join(out) if len(out) > 1 else ""


class Hooks:
    """The three hooks on one namespace (a driver, database, namespace and clock)."""

    def __init__(self, driver: Any, *, database: str, namespace: str, budget: int, clock: Clock | None = None,
                 deadline: float | None = None, sweep_budget: float = SWEEP_BUDGET) -> None:
        from kg_neo4j.store.maintenance import MaintenanceStore

        self.driver = driver
        self.database = database
        self.namespace = namespace
        self.budget = budget
        self.clock = clock or SystemClock()
        self.deadline = deadline if deadline is not None else time.monotonic() + TIME_BUDGET
        self.sweep_budget = sweep_budget
        self.ms = MaintenanceStore(driver, database=database, namespace=namespace, clock=self.clock)

    def _left(self) -> float:
        return self.deadline - time.monotonic()

    async def run(self, name: str, payload: dict[str, Any]) -> str:
        if name == "session-start":
            return await self.session_start(payload)
        if name == "recall":
            return await self.recall(str(payload.get("prompt") or ""))
        if name == "post-compact":
            return await self.post_compact()
        raise ValueError(f"unknown hook {name!r}; one of {', '.join(HOOKS)}")

    async def _read(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.ms._read(statement, **params)]

    # -- session-start ------------------------------------------------------------------------
    async def session_start(self, payload: dict[str, Any]) -> str:
        ms = self.ms
        lines: list[str] = []
        dangling = await ms.close_edges("dangling", apply=True, batch_size=SWEEP_BATCH, sample=REPORT_LINES)
        log.debug("session-start: dangling edges done, %.3f s left", self._left())
        if dangling.get("closed"):
            lines.append(f"- repaired {dangling['closed']} open edges of expired knowledge")
        sweep = await ms.decay_sweep(resume=True, batch_size=SWEEP_BATCH, chunk_size=SWEEP_CHUNK,
                                     sample=REPORT_LINES,
                                     deadline=time.monotonic() + min(self.sweep_budget, max(0.0, self._left() - 0.3)))
        log.debug("session-start: sweep scanned %d (complete %s), %.3f s left", sweep.scanned, sweep.complete,
                  self._left())
        if sweep.expired:
            lines.append(f"- decay: {sweep.expired} knowledge nodes expired (unused too long): "
                         + ", ".join(sweep.expire_names))
        if sweep.promoted:
            lines.append(f"- consolidated: {sweep.promoted} knowledge nodes reached a higher level: "
                         + ", ".join(f"{c['name']} (level {c['to']})" for c in sweep.level_changes))
        if sweep.fading:
            lines.append(f"- fading (retention < {0.3:g}; use or confirm them, or let them go): "
                         + ", ".join(f"{f['name']} (R {f['retention']:.2f})" for f in sweep.fading_names)
                         + (f" and {sweep.fading - len(sweep.fading_names)} more"
                            if sweep.fading > len(sweep.fading_names) else ""))
        if not sweep.complete:
            lines.append("- the decay sweep stopped at its time budget; the next session continues it "
                         "(or run `kg-neo4j maintain --actions prune --apply`)")
        if self._left() > 0.3:
            from kg_neo4j.store.maintenance import DUPLICATE_REPORT_COSINE

            recent = await ms.recent_names(DUPLICATE_CHECK)
            pairs = await ms.duplicate_pairs(min_cosine=DUPLICATE_REPORT_COSINE, names=recent) if recent else []
            if pairs:
                lines.append("- possible duplicates (merge with maintain_graph action merge, or connect them): "
                             + ", ".join(f"{p['duplicate']} ~ {p['keep']} ({p['similarity']:.2f})"
                                         for p in pairs[:REPORT_LINES]))
            log.debug("session-start: duplicates done, %.3f s left", self._left())
        count = await ms.count_knowledge()
        if not count and not lines:
            return ""
        header = (f"Knowledge graph memory (kg-neo4j, namespace '{self.namespace}'): {count} knowledge nodes."
                  + (" Session-start maintenance:" if lines else ""))
        return fit(header, [_clip(line, LINE_CHARS) for line in lines], self.budget) or _clip(header, self.budget)

    # -- recall ------------------------------------------------------------------------------
    async def recall(self, prompt: str) -> str:
        from kg_neo4j.text import fulltext_query

        query = fulltext_query(prompt)
        if not query:
            return ""
        rows = await self._read("hook_recall", fulltext=query, k=RECALL_K, limit=RECALL_LIMIT,
                                knowledge_boost=KNOWLEDGE_BOOST, observations=RECALL_OBSERVATIONS)
        header = "Relevant knowledge from memory (kg-neo4j; trust: principle = the expert's, pattern = observed, " \
                 "inference = your own idea):"
        return fit(header, [_line(r, LINE_CHARS) for r in rows], self.budget)

    # -- post-compact ----------------------------------------------------------------------------
    async def post_compact(self) -> str:
        rows = await self._read("hook_core", limit=CORE_LIMIT)
        header = "Core knowledge (kg-neo4j memory, restored after compaction):"
        return fit(header, [_line(r, LINE_CHARS) for r in rows], self.budget)


async def run_hook(name: str, payload: dict[str, Any], settings: Settings, *, clock: Clock | None = None,
                   driver: Any = None, time_budget: float = TIME_BUDGET, sweep_budget: float = SWEEP_BUDGET) -> str:
    """The text hook ``name`` prints for ``payload`` (opens and closes its own driver unless given one);
    past ``time_budget`` (+ 0.2 s) it raises TimeoutError."""
    if name not in HOOKS:
        raise ValueError(f"unknown hook {name!r}; one of {', '.join(HOOKS)}")
    deadline = time.monotonic() + time_budget
    own = driver is None
    database = settings.neo4j_database
    if own:
        from neo4j import AsyncGraphDatabase

        from kg_neo4j.store.connection import resolve_connection

        conn = resolve_connection(settings)
        database = conn.database
        driver = AsyncGraphDatabase.driver(conn.uri, auth=(conn.username, conn.password),
                                           connection_timeout=CONNECT_TIMEOUT, connection_acquisition_timeout=CONNECT_TIMEOUT,
                                           max_transaction_retry_time=0.0, notifications_min_severity="OFF")
    try:
        hooks = Hooks(driver, database=database, namespace=settings.namespace, budget=settings.hook_budget_chars,
                      clock=clock, deadline=deadline, sweep_budget=sweep_budget)
        return await asyncio.wait_for(hooks.run(name, payload), timeout=time_budget + 0.2)
    finally:
        if own:
            await driver.close()


def main(name: str, settings: Settings, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """``kg-neo4j hook NAME``: always exits 0; prints the text to inject, or nothing on any failure."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        payload = parse_payload(stdin.read())
        text = asyncio.run(run_hook(name, payload, settings))
    except BaseException as exc:  # noqa: BLE001 - a hook never blocks the user
        log.debug("hook %s failed: %s: %s", name, type(exc).__name__, exc)
        return 0
    if text:
        try:
            stdout.write(text + "\n")
            stdout.flush()
        except Exception:  # noqa: BLE001 - a closed pipe is not the user's problem
            pass
    return 0
