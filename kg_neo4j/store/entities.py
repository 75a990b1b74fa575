"""Entity and observation writes: create_entities (embedded, pipelined when large), add_observations,
delete_entities, delete_observations; each one transaction (``cypher/entities.cypher``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from neo4j import AsyncManagedTransaction

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.models import Entity, EntityIn, ObservationAdd, ObservationDelete, ObservationResult
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.records import check_observation_total, dedupe, entity_text
from kg_neo4j.store.type_labels import type_labels

#: A create_entities batch with at least this many texts to embed (observations plus one per entity)
#: is written in PIPELINE_CHUNKS chunks inside its one transaction, each chunk's statement running
#: while the next chunk is embedded.
PIPELINE_MIN_TEXTS = 256
PIPELINE_CHUNKS = 4


def _chunks_by_texts(rows: list[dict[str, Any]], n: int) -> list[list[dict[str, Any]]]:
    """``rows`` in at most ``n`` consecutive chunks of about the same number of texts to embed."""
    total = sum(_texts_to_embed(r) for r in rows)
    chunks: list[list[dict[str, Any]]] = [[]]
    done = 0
    for row in rows:
        # chunk j closes once the texts so far reach j/n of the total
        if chunks[-1] and len(chunks) < n and done >= len(chunks) * total / n:
            chunks.append([])
        chunks[-1].append(row)
        done += _texts_to_embed(row)
    return chunks


def _texts_to_embed(row: dict[str, Any]) -> int:
    """Texts create_entities embeds for one row: its observations and the entity's name/type."""
    return len(row["observations"]) + 1


class EntityWrites(StoreCore):
    async def create_entities(self, entities: Sequence[EntityIn]) -> list[Entity]:
        check_observation_total(sum(len(e.observations) for e in entities))
        unique: dict[str, EntityIn] = {}
        for e in entities:
            unique.setdefault(e.name, e)
        rows: list[dict[str, Any]] = []
        for e in unique.values():
            obs = dedupe(e.observations)
            rows.append({
                "name": e.name,
                "entityType": e.entityType,
                "name_lower": e.name.lower(),
                "type_lower": e.entityType.lower(),
                "type_labels": type_labels(e.entityType),
                "observations": obs,
                "observations_lower": [o.lower() for o in obs],
            })
        if not rows:
            return []
        n_texts = sum(_texts_to_embed(r) for r in rows)
        if self.embedder is None or self.in_transaction or n_texts < PIPELINE_MIN_TEXTS:
            await self._attach_vectors(rows, "observations")
            records = await self.x.write("create_entities", rows=rows)
            created = set(records[0]["created"]) if records else set()
        else:
            created = await self._create_entities_pipelined(rows)
        return [
            Entity(name=row["name"], entityType=row["entityType"], observations=row["observations"])
            for row in rows
            if row["name"] in created
        ]

    async def _create_entities_pipelined(self, rows: list[dict[str, Any]]) -> set[str]:
        """One transaction, written in chunks: each chunk's statement runs while the next chunk is
        embedded, so Neo4j's share of the write overlaps the encoding (the commit cannot).  All chunks
        share one ``now``; a retried transaction reuses the vectors already made."""
        now = self.clock.now()
        chunks = _chunks_by_texts(rows, PIPELINE_CHUNKS)
        await self._attach_vectors(chunks[0], "observations")  # before the transaction opens: none sits idle

        async def work(tx: AsyncManagedTransaction) -> list[str]:
            x = self.x.bound(tx)
            created: list[str] = []
            pending: asyncio.Future[None] | None = None  # the next chunk's encode
            try:
                for i, chunk in enumerate(chunks):
                    if pending is not None:
                        await pending
                    pending = (asyncio.ensure_future(self._attach_vectors(chunks[i + 1], "observations"))
                               if i + 1 < len(chunks) else None)
                    records = await x.write("create_entities", rows=chunk, now=now)
                    created.extend(records[0]["created"] if records else [])
            finally:
                if pending is not None:
                    await asyncio.gather(pending, return_exceptions=True)  # never leave an encode behind
            return created

        return set(await self.x.transaction(work))

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
        # One row per entity (the same entity may appear in several items of one call).
        merged: dict[str, list[str]] = {}
        for a in additions:
            merged.setdefault(a.entityName, []).extend(a.contents)
        rows = []
        for name, contents in merged.items():
            uniq = dedupe(contents)
            rows.append({"entityName": name, "contents": uniq, "contents_lower": [c.lower() for c in uniq]})
        if not rows:
            return []
        await self._attach_vectors(rows, "contents")
        records = await self.x.write("add_observations", rows=rows)
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
                "or expire it with forget_knowledge; nothing was deleted", field="observations")
        return int(records[0]["deleted"]) if records else 0
