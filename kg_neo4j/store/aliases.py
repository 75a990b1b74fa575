"""Reads by name accept an alias: a name merged into another entity (merge_entities, docs/entities.md)
names the entity it was merged into.  One rule for every read (``alias_entities`` in cypher/read.cypher):
open_nodes (and MemoryMesh's open_nodes_graph), traverse_graph's start, list_knowledge's and
find_duplicates' names.  A read ``asOf`` a moment before the merge still finds the merged entity itself,
as it was then.  Writes keep their own rule (store/merges.py, docs/entities.md#writes-that-resolve)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kg_neo4j.store.executor import Executor


async def alias_entities(
    x: Executor, names: Sequence[str], at: datetime | None = None
) -> dict[str, list[str]]:
    """Each of ``names`` that was an alias at ``at`` (default now), with the entities it named then (one,
    unless the name was taken and merged again into another entity).  Names that are entities, or
    nothing, are left out."""
    if not names:
        return {}
    rows = await x.read("alias_entities", names=list(dict.fromkeys(names)), at=at)
    return {r["name"]: list(r["entities"]) for r in rows if r["entities"]}


def resolved(names: Sequence[str], aliases: dict[str, list[str]]) -> list[str]:
    """``names`` in order with each alias replaced by the entities it names, without repeats."""
    out: dict[str, None] = {}
    for n in names:
        for m in aliases.get(n, [n]):
            out.setdefault(m)
    return list(out)


async def resolve_names(x: Executor, names: Sequence[str], at: datetime | None = None) -> list[str]:
    """``names`` with each alias (at ``at``, default now) replaced by the entities it names."""
    return resolved(names, await alias_entities(x, names, at))
