"""``kg-neo4j hook session-start``: the session-start maintenance (docs/hooks.md, "session-start").

In order: repair dangling edges; drop vectors left on expired knowledge; close weak edges
(weight < 0.3); report orphans (a warning above :data:`ORPHAN_WARN`); list the edges created in
the last 24 hours for review (these are single reads or small writes); then the decay sweep (expire,
level up, fading report) with what is left of the time budget, up to ``sweep_budget`` (it stops
between chunks and the next session resumes it); then, time allowing, duplicate candidates among
the newest knowledge.  Then it deletes expired hook session state.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from kg_neo4j.hooks.common import LINE_CHARS, clip, fit
from kg_neo4j.hooks.context import Answer, HookContext

log = logging.getLogger(__name__)

#: Chunk and batch of the session-start sweep (small: the budget is checked between chunks).
SWEEP_CHUNK = 5000
SWEEP_BATCH = 1000
#: How many of the newest knowledge nodes are checked for duplicates, and names listed per finding.
DUPLICATE_CHECK = 20
REPORT_LINES = 5
#: Orphans (knowledge with no open relationship) are a warning above this many
#: (docs/knowledge-model.md#maintenance: "> 5").
ORPHAN_WARN = 5
#: Edges created this recently are listed for review.
RECENT_EDGES = timedelta(hours=24)
#: A step is started only with this much of the budget left (seconds).
STEP_RESERVE = 0.3


async def session_start(ctx: HookContext) -> Answer:
    ms = ctx.ms
    lines: list[str] = []
    if ctx.session_id:
        ctx.state.touch(ctx.session_id)
    dangling = await ms.close_edges("dangling", apply=True, batch_size=SWEEP_BATCH, sample=REPORT_LINES)
    if dangling.get("closed"):
        lines.append(f"- repaired {dangling['closed']} open edges of expired knowledge")
    cleaned = int((await ctx.write("hook_expired_vectors_clean"))[0]["cleaned"])
    if cleaned:
        lines.append(f"- cleaned {cleaned} index entries (vectors) left on expired knowledge")
    log.debug("session-start: repairs done, %.3f s left", ctx.left())
    lines += await _edges_and_orphans(ctx)
    sweep = await ms.decay_sweep(
        resume=True,
        batch_size=SWEEP_BATCH,
        chunk_size=SWEEP_CHUNK,
        sample=REPORT_LINES,
        deadline=time.monotonic() + min(ctx.sweep_budget, max(0.0, ctx.left() - STEP_RESERVE)),
    )
    log.debug(
        "session-start: sweep scanned %d (complete %s), %.3f s left",
        sweep.scanned,
        sweep.complete,
        ctx.left(),
    )
    if sweep.expired:
        lines.append(
            f"- decay: {sweep.expired} knowledge nodes expired (unused too long): "
            + ", ".join(sweep.expire_names)
        )
    if sweep.promoted:
        lines.append(
            f"- consolidated: {sweep.promoted} knowledge nodes reached a higher level: "
            + ", ".join(f"{c['name']} (level {c['to']})" for c in sweep.level_changes)
        )
    if sweep.fading:
        lines.append(
            f"- fading (retention < {0.3:g}; use or confirm them, or let them go): "
            + ", ".join(f"{f['name']} (R {f['retention']:.2f})" for f in sweep.fading_names)
            + (
                f" and {sweep.fading - len(sweep.fading_names)} more"
                if sweep.fading > len(sweep.fading_names)
                else ""
            )
        )
    if not sweep.complete:
        lines.append(
            "- the decay sweep stopped at its time budget; the next session continues it "
            "(or run `kg-neo4j maintain --actions prune --apply`)"
        )
    if ctx.left() > STEP_RESERVE:
        lines += await _duplicates(ctx)
    gone = ctx.state.prune()
    log.debug("session-start: %d expired hook sessions deleted, %.3f s left", gone, ctx.left())
    count = await ms.count_knowledge()
    if not count and not lines:
        return Answer()
    header = f"Knowledge graph memory (kg-neo4j, namespace '{ctx.namespace}'): {count} knowledge nodes." + (
        " Session-start maintenance:" if lines else ""
    )
    return Answer(fit(header, [clip(x, LINE_CHARS) for x in lines], ctx.budget) or clip(header, ctx.budget))


def _edge(e: dict[str, Any]) -> str:
    weight = f" {e['weight']:.3g}" if isinstance(e.get("weight"), int | float) else ""
    why = f" ({e['reasoning']})" if e.get("reasoning") else ""
    return f"{e['from']} -[{e['relationType']}{weight}]-> {e['to']}{why}"


async def _edges_and_orphans(ctx: HookContext) -> list[str]:
    from kg_neo4j.store.maintenance import SEMANTIC_TYPES, WEAK_EDGE_WEIGHT

    lines = []
    weak = await ctx.ms.close_edges("weak", apply=True, batch_size=SWEEP_BATCH, sample=REPORT_LINES)
    if weak.get("closed"):
        lines.append(
            f"- closed {weak['closed']} weak edges (weight < {WEAK_EDGE_WEIGHT:g}): "
            + ", ".join(_edge(e) for e in weak["edges"])
        )
    found = await ctx.ms.findings(orphans=True, sample=REPORT_LINES)
    orphans = found["orphans"]
    if orphans["count"] > ORPHAN_WARN:
        lines.append(
            f"- warning: {orphans['count']} knowledge nodes have no relationship (orphans; connect them "
            "with connect_knowledge): "
            + ", ".join(orphans["names"])
            + (
                f" and {orphans['count'] - len(orphans['names'])} more"
                if orphans["count"] > len(orphans["names"])
                else ""
            )
        )
    elif orphans["count"]:
        lines.append(f"- {orphans['count']} orphan knowledge nodes: " + ", ".join(orphans["names"]))
    recent = (
        await ctx.read(
            "hook_recent_edges",
            types=SEMANTIC_TYPES,
            since=ctx.clock.now() - RECENT_EDGES,
            sample=REPORT_LINES,
        )
    )[0]
    if recent["total"]:
        lines.append(
            f"- review the {recent['total']} edges created in the last 24 hours (are they right?): "
            + "; ".join(_edge(e) for e in recent["sample"])
            + (
                f" and {recent['total'] - len(recent['sample'])} more"
                if recent["total"] > len(recent["sample"])
                else ""
            )
        )
    log.debug("session-start: edges and orphans done, %.3f s left", ctx.left())
    return lines


async def _duplicates(ctx: HookContext) -> list[str]:
    from kg_neo4j.store.maintenance import DUPLICATE_REPORT_COSINE

    recent = await ctx.ms.recent_names(DUPLICATE_CHECK)
    pairs = await ctx.ms.duplicate_pairs(min_cosine=DUPLICATE_REPORT_COSINE, names=recent) if recent else []
    log.debug("session-start: duplicates done, %.3f s left", ctx.left())
    if not pairs:
        return []
    return [
        "- possible duplicates (merge with maintain_graph action merge, or connect them): "
        + ", ".join(f"{p['duplicate']} ~ {p['keep']} ({p['similarity']:.2f})" for p in pairs[:REPORT_LINES])
    ]
