"""``kg-neo4j dedupe --apply``: merge each group (kg_neo4j/commands/dedupe.py reads the groups: a reviewed
file, or find_duplicates' groups at or above the threshold) with merge_entities' merge
(kg_neo4j/store/merges.py), one group per transaction, committed as it goes.

Idempotent and resumable: a name of a group that is already an alias of the group's kept entity was merged
by an earlier run and is left out, and a group with nothing left is skipped, so a run stopped half-way is
finished by the next.  A group that cannot be merged (a name gone, another type) is reported with the reason
and the run goes on; nothing of that group was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kg_neo4j.errors import KgError
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.actor import acting_as, default_actor
from kg_neo4j.store.aliases import alias_targets
from kg_neo4j.store.merges import MergeIn
from kg_neo4j.store.progress import Progress

if TYPE_CHECKING:
    from kg_neo4j.store.graph import GraphStore


async def apply_groups(
    settings: Settings, groups: Sequence[dict[str, Any]], bars: Progress
) -> dict[str, Any]:
    """Merge every group into its ``keep``; the report lists each group's outcome and the totals."""
    set_total, advance = bars("merge")
    set_total(len(groups))
    results: list[dict[str, Any]] = []
    # the merges record who ran the command (--actor / KG_NEO4J_ACTOR, else the OS user)
    with acting_as(default_actor(settings.actor)):
        async with open_resources(settings, bootstrap="schema") as rt:
            store = rt.graph_store()
            for group in groups:
                results.append(await _apply_one(store, group))
                advance(1)
    counts = {k: sum(1 for r in results if r["outcome"] == k) for k in ("merged", "skipped", "failed")}
    return {"namespace": settings.namespace, "groups": len(results), **counts, "results": results}


async def _apply_one(store: GraphStore, group: dict[str, Any]) -> dict[str, Any]:
    keep = str(group["keep"])
    names = [str(n) for n in group["names"] if n != keep]
    done = await alias_targets(store.x, names)
    todo = [n for n in names if done.get(n) != keep]
    base = {"keep": keep, "names": names}
    if not todo:
        return {**base, "outcome": "skipped", "reason": "merged already" if names else "nothing to merge"}
    try:
        merged = await store.merge_entities(MergeIn(into=keep, names=todo))
    except KgError as exc:
        return {**base, "outcome": "failed", "reason": str(exc)}
    return {
        **base,
        "outcome": "merged",
        "merge": merged.merge,
        "merged": todo,
        "counts": merged.counts.model_dump(),
    }
