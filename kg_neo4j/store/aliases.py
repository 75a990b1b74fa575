"""Names merged into another entity (merge_entities, docs/entities.md) name the entity they were merged into.

One rule, ``alias_entities`` in cypher/read.cypher, for every read by name (open_nodes and MemoryMesh's
open_nodes_graph, traverse_graph's start, list_knowledge's and find_duplicates' names) and for the writes
that resolve (:class:`ResolvingWrites`, the resolve_writes setting, docs/entities.md#writes-that-resolve).
A read ``asOf`` a moment before the merge still finds the merged entity itself, as it was then."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import neo4j
from pydantic import BaseModel, Field

from kg_neo4j.models import Entity, EntityIn, ObservationAdd, ObservationResult
from kg_neo4j.store.entities import EntityWrites
from kg_neo4j.store.executor import Executor


async def alias_entities(
    x: Executor, names: Sequence[str], at: datetime | None = None
) -> dict[str, list[str]]:
    """Each of ``names`` that was an alias at ``at`` (default now), with the entities it named then (one,
    unless the name was taken and merged again into another entity).  Names that are entities, or
    nothing, are left out."""
    return {name: entities for name, (entities, _) in (await _aliases(x, names, at)).items()}


async def alias_targets(x: Executor, names: Sequence[str]) -> dict[str, str]:
    """The entity each of ``names`` is an alias of now, where a write to it goes: of the entities it names
    (alias_entities), the one it was merged into last.  Names that are entities, or nothing, are left out."""
    return {name: latest for name, (_, latest) in (await _aliases(x, names, None)).items()}


async def _aliases(
    x: Executor, names: Sequence[str], at: datetime | None
) -> dict[str, tuple[list[str], str]]:
    if not names:
        return {}
    rows = await x.read("alias_entities", names=list(dict.fromkeys(names)), at=at)
    return {r["name"]: (list(r["entities"]), str(r["latest"])) for r in rows if r["entities"]}


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


# --- writes that resolve (the resolve_writes setting; docs/entities.md#writes-that-resolve) ---------------
class ResolvedWrite(BaseModel):
    name: str = Field(description="The name the call wrote to: an alias")
    entity: str = Field(description="The entity the alias names, which the write went to")
    addedObservations: list[str]


class ResolvingWrites(EntityWrites):
    """create_entities and add_observations where a name that is an alias writes to the entity it names:
    a part of GraphStore (store/graph.py)."""

    async def create_entities_resolving(
        self, entities: Sequence[EntityIn], hint_candidates: dict[str, list[str]] | None = None
    ) -> tuple[list[Entity], list[ResolvedWrite]]:
        """create_entities where a name that is an alias adds its observations to the entity it names instead
        of creating an entity (one transaction).  Returns what was created and what was resolved;
        ``hint_candidates`` as create_entities'."""

        async def work(tx: neo4j.AsyncManagedTransaction) -> tuple[list[Entity], list[ResolvedWrite]]:
            view = self.within(tx)
            targets = await alias_targets(view.x, list(dict.fromkeys(e.name for e in entities)))
            first: dict[str, EntityIn] = {}
            for e in entities:
                first.setdefault(e.name, e)
            plain = [e for e in entities if e.name not in targets]
            created = await view.create_entities(plain, hint_candidates) if plain else []
            aliased = [e for e in first.values() if e.name in targets]
            adds = [
                ObservationAdd(entityName=targets[e.name], contents=list(e.observations)) for e in aliased
            ]
            added = await view.add_observations(adds) if adds else []
            resolved = [
                ResolvedWrite(name=e.name, entity=targets[e.name], addedObservations=r.addedObservations)
                for e, r in zip(aliased, added, strict=True)
            ]
            return created, resolved

        return await self.x.transaction(work)

    async def add_observations_resolving(
        self, additions: Sequence[ObservationAdd]
    ) -> tuple[list[ObservationResult], dict[str, str]]:
        """add_observations where an entityName that is an alias adds to the entity it names (one
        transaction).  Returns the results (under the names given) and each alias given with the entity
        it named."""

        async def work(tx: neo4j.AsyncManagedTransaction) -> tuple[list[ObservationResult], dict[str, str]]:
            view = self.within(tx)
            targets = await alias_targets(view.x, list(dict.fromkeys(a.entityName for a in additions)))
            mapped = [
                ObservationAdd(entityName=targets.get(a.entityName, a.entityName), contents=list(a.contents))
                for a in additions
            ]
            results = await view.add_observations(mapped)
            named = [
                ObservationResult(entityName=a.entityName, addedObservations=r.addedObservations)
                for a, r in zip(additions, results, strict=True)
            ]
            return named, targets

        return await self.x.transaction(work)
