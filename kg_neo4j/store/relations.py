"""Relation writes and temporal updates: create_relations, delete_relations, invalidate_relations,
update_relations (docs/history.md); each one transaction (``cypher/relations.cypher``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.models import Relation, RelationFull, RelationIn, RelationInvalidate, RelationUpdate
from kg_neo4j.store.core import StoreCore
from kg_neo4j.store.records import dedupe_rel_rows, relation


class RelationWrites(StoreCore):
    async def create_relations(self, relations: Sequence[RelationIn]) -> list[RelationFull]:
        now = self.clock.now()
        unique: dict[tuple[str, str, str], RelationIn] = {}
        for r in relations:
            if r.validUntil is not None and r.validUntil <= now:
                raise ValidationError(
                    f"relation {r.from_} -[{r.relationType}]-> {r.to}: validUntil {r.validUntil.isoformat()} is not in "
                    "the future; a relation that has already ended cannot be created (history is recorded by "
                    "invalidate_relations); nothing was written",
                    field="validUntil",
                )
            unique.setdefault(r.key, r)
        rows: list[dict[str, Any]] = [
            {
                "from": r.from_,
                "to": r.to,
                "relationType": r.relationType,
                "weight": float(r.weight),
                "valid_from": r.validFrom,
                "valid_until": r.validUntil,
                "reasoning": r.reasoning,
                "source": r.source,
            }
            for r in unique.values()
        ]
        if not rows:
            return []
        records = await self.x.write("create_relations", rows=rows, now=now)
        created = {tuple(c) for c in records[0]["created"]} if records else set()
        return [
            RelationFull(
                **{"from": row["from"]}, to=row["to"], relationType=row["relationType"], weight=row["weight"]
            )
            for row in rows
            if (row["from"], row["to"], row["relationType"]) in created
        ]

    async def delete_relations(self, relations: Sequence[RelationIn | Relation]) -> None:
        rows = dedupe_rel_rows(relations)
        if rows:
            await self.x.write("delete_relations", rows=rows)

    async def invalidate_relations(self, items: Sequence[RelationInvalidate]) -> list[RelationFull]:
        """Close currently valid relations (``valid_until``); all or nothing."""
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        for it in items:
            rows.setdefault(
                it.key,
                {
                    "from": it.from_,
                    "to": it.to,
                    "relationType": it.relationType,
                    "valid_until": it.validUntil,
                },
            )
        if not rows:
            return []
        records = await self.x.write("invalidate_relations", rows=list(rows.values()))
        self._raise_missing_relation(records[0]["missing"], records[0]["invalid"])
        return [relation(r) for r in records[0]["changed"]]

    async def update_relations(self, items: Sequence[RelationUpdate]) -> list[RelationFull]:
        """Update currently valid relations; new weight = mean of current and given
        (docs/memorymesh.md#edge-weights)."""
        rows = []
        seen: set[tuple[str, str, str]] = set()
        for it in items:
            if it.key in seen:
                raise ValidationError(
                    f"relation {it.key} appears twice in one update; send it once", field="relations"
                )
            seen.add(it.key)
            rows.append(
                {
                    "from": it.from_,
                    "to": it.to,
                    "relationType": it.relationType,
                    "weight": it.weight,
                    "reasoning": it.reasoning,
                    "source": it.source,
                    "valid_from": it.validFrom,
                    "valid_until": it.validUntil,
                    "clear_valid_until": it.clearValidUntil,
                }
            )
        if not rows:
            return []
        records = await self.x.write("update_relations", rows=rows)
        self._raise_missing_relation(records[0]["missing"], records[0]["invalid"])
        return [relation(r) for r in records[0]["changed"]]

    @staticmethod
    def _raise_missing_relation(missing: list[dict[str, Any]], invalid: list[dict[str, Any]]) -> None:
        if missing:
            m = missing[0]
            key = f"{m['from']} -[{m['relationType']}]-> {m['to']}"
            raise NotFoundError(
                "relation", key, f"No open (not yet invalidated) relation {key}; nothing was changed"
            )
        if invalid:
            m = invalid[0]
            key = f"{m['from']} -[{m['relationType']}]-> {m['to']}"
            raise ValidationError(
                f"relation {key}: validUntil would be earlier than validFrom; nothing was changed",
                field="validUntil",
            )
