"""Entity and observation writes: create_entities (embedded in one encode call), add_observations,
delete_entities, delete_observations; each one transaction (``cypher/entities.cypher``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.models import Entity, EntityIn, ObservationAdd, ObservationDelete, ObservationResult
from kg_neo4j.resolution import hint_keys, hint_seeks
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.records import check_observation_total, dedupe, entity_text
from kg_neo4j.store.type_labels import type_labels

#: Candidates read per key of a new name by the duplicate hint (a namespace of 10,000 Smiths still costs
#: bounded seeks).
HINT_CANDIDATES = 200


class EntityWrites(StoreCore):
    async def create_entities(
        self, entities: Sequence[EntityIn], hint_candidates: dict[str, list[str]] | None = None
    ) -> list[Entity]:
        """The entities created (a name that is an entity already is left as it is).  With
        ``hint_candidates`` (create_entities' duplicate hint, store/duplicate_hints.py), the same statement
        first reads each created entity's candidates, the existing entities holding one of its
        :func:`~kg_neo4j.resolution.hint_seeks` values, into it by name (none listed: no candidate)."""
        check_observation_total(sum(len(e.observations) for e in entities))
        unique: dict[str, EntityIn] = {}
        for e in entities:
            unique.setdefault(e.name, e)
        rows: list[dict[str, Any]] = []
        for e in unique.values():
            obs = dedupe(e.observations)
            rows.append(
                {
                    "name": e.name,
                    "entityType": e.entityType,
                    "name_lower": e.name.lower(),
                    **hint_keys(e.name),
                    "type_lower": e.entityType.lower(),
                    "type_labels": type_labels(e.entityType),
                    "observations": obs,
                    "observations_lower": [o.lower() for o in obs],
                    "seek": hint_seeks(e.name) if hint_candidates is not None else None,
                }
            )
        if not rows:
            return []
        # One encode call for the whole batch, then one statement.  Writing a chunk while the next was
        # encoded gained nothing on two cores (the encoder uses both) and split the encoder's passes
        # unevenly: it kept less of the bare encode throughput than one encode call for the batch
        # (bench_peers; docs/performance.md).
        await self._attach_vectors(rows, "observations")
        records = await self.x.write("create_entities", rows=rows, limit=HINT_CANDIDATES)
        created = set(records[0]["created"]) if records else set()
        if hint_candidates is not None and records:
            hint_candidates.update((c["name"], c["candidates"]) for c in records[0]["candidates"])
        return [
            Entity(name=row["name"], entityType=row["entityType"], observations=row["observations"])
            for row in rows
            if row["name"] in created
        ]

    async def _attach_vectors(self, rows: list[dict[str, Any]], field: str) -> None:
        """Embed every text of the batch in one encode call and hang the vectors on the rows
        (rows that already carry their vectors are left as they are)."""
        if self.embedder is None:
            return
        rows = [row for row in rows if "vectors" not in row]
        if not rows:
            return
        texts: list[str] = []
        for row in rows:
            texts.extend(row[field])
            if "entityType" in row:
                texts.append(entity_text(row["name"], row["entityType"]))
        vectors = await self.embed(texts) or []
        i = 0
        for row in rows:
            n = len(row[field])
            row["vectors"] = vectors[i : i + n]
            i += n
            if "entityType" in row:
                row["entity_vector"] = vectors[i]
                i += 1

    async def add_observations(self, additions: Sequence[ObservationAdd]) -> list[ObservationResult]:
        check_observation_total(sum(len(a.contents) for a in additions))
        # One row per entity (the same entity may appear in several items of one call); each text keeps its
        # place in the call as given, which is the namespace's write order
        # (docs/recall.md#recall-search_memory: a dialogue written A, B, A, B stays in that order though the
        # rows group it by speaker).
        merged: dict[str, dict[str, int]] = {}
        turn = 0
        for a in additions:
            texts = merged.setdefault(a.entityName, {})
            for c in a.contents:
                texts.setdefault(c, turn)
                turn += 1
        rows = []
        for name, texts in merged.items():
            uniq = list(texts)
            rows.append(
                {
                    "entityName": name,
                    "contents": uniq,
                    "contents_lower": [c.lower() for c in uniq],
                    "turns": list(texts.values()),
                }
            )
        if not rows:
            return []
        await self._attach_vectors(rows, "contents")
        records = await self.x.write("add_observations", rows=rows, turns=turn)
        missing = records[0]["missing"]
        if missing:
            raise NotFoundError("entity", missing[0])
        added = {item["entityName"]: list(item["added"]) for item in records[0]["added"]}
        # Hand each input item the observations it added, in order, each text once.
        results = []
        for a in additions:
            pool = added.get(a.entityName, [])
            mine = []
            for c in dedupe(a.contents):
                if c in pool:
                    pool.remove(c)
                    mine.append(c)
            results.append(ObservationResult(entityName=a.entityName, addedObservations=mine))
        return results

    async def delete_entities(self, names: Sequence[str]) -> int:
        names = dedupe(names)
        if not names:
            return 0
        records = await self.x.write("delete_entities", names=names)
        return int(records[0]["deleted"]) if records else 0

    async def delete_observations(self, deletions: Sequence[ObservationDelete]) -> int:
        check_observation_total(sum(len(d.observations) for d in deletions))
        rows = [{"entityName": d.entityName, "observations": dedupe(d.observations)} for d in deletions]
        if not rows:
            return 0
        records = await self.x.write("delete_observations", rows=rows)
        if records and records[0]["blocked"]:
            raise ValidationError(
                f"'{records[0]['blocked'][0]}' is knowledge and the observation named is its content, which "
                "delete_observations cannot remove (knowledge keeps its content): change it with update_knowledge "
                "or expire it with forget_knowledge; nothing was deleted",
                field="observations",
            )
        return int(records[0]["deleted"]) if records else 0
