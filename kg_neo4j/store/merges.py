"""Merging entities into one, and undoing it (docs/entities.md#merging-and-undoing).

One merge is one transaction: ``merge_begin`` records it, then ``merge_one`` merges each name in the order
given (cypher/merges.cypher says what each leaves in the graph), then ``merge_finish``.  The merged nodes stay
as retired nodes that reads of a moment before the merge treat as live, so those reads stay exact, and
``unmerge`` can put every node, observation and relation back as it was.  Only the last merge still standing
into an entity can be undone: a later one may have re-pointed what an earlier one moved.
"""

from __future__ import annotations

import uuid
from typing import Any

import neo4j
from pydantic import BaseModel, Field, field_validator

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.knowledge.trust import CAUSAL_EDGE_TYPES
from kg_neo4j.models import MAX_ITEMS_PER_CALL, Name, StrictInput, not_null
from kg_neo4j.store.actor import actor
from kg_neo4j.store.core import StoreCore

#: knowledge trust, weakest first: a merge keeps the weakest trust of the knowledge it merges
TRUST_ORDER = ("inference", "pattern", "principle")
#: the edge types an inference holds none of (kg_neo4j/knowledge/trust.py)
CAUSAL = sorted(t.value for t in CAUSAL_EDGE_TYPES)


class MergeIn(StrictInput):
    into: Name = Field(description="The entity to keep: the others' observations and relations move to it")
    names: list[Name] = Field(
        min_length=1,
        max_length=MAX_ITEMS_PER_CALL,
        description="The entities merged into it (in this order); their names become its aliases",
    )
    force: bool = Field(
        default=False,
        description="Merge entities whose entityType differs from the kept one's (refused without it)",
    )
    reason: str | None = Field(default=None, max_length=1000, description="Optional: why (kept on the merge)")

    _nn = not_null("force", "reason")

    @field_validator("names")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for n in v:
            if n in seen:
                raise ValueError(f"{n!r} is named twice; name each entity to merge once")
            seen.add(n)
        return v


class UnmergeIn(StrictInput):
    name: Name = Field(description="The entity merged into")
    merge: str | None = Field(
        default=None,
        max_length=100,
        description="Optional: the id of the merge to undo (merge_entities answered it); default the last one "
        "still standing. Only the last one standing can be undone.",
    )

    _nn = not_null("merge")


class MergeCounts(BaseModel):
    observationsMoved: int = Field(description="Observations copied to the kept entity")
    observationsDropped: int = Field(description="Observations whose text the kept entity already had")
    relationsMoved: int = Field(description="Relations re-pointed to the kept entity")
    relationsCollided: int = Field(
        description="Relations the kept entity already had open: kept as they were, the merged copy closed"
    )
    selfLoops: int = Field(description="Relations between the merged entities: closed, not re-pointed")
    causalDropped: int = Field(
        default=0,
        description="Knowledge kept as an inference: causal relations (must_precede, reason_for) not moved",
    )


class Merged(BaseModel):
    merge: str = Field(description="The merge's id (unmerge_entities takes it)")
    into: str
    names: list[str]
    aliases: list[str] = Field(description="The kept entity's aliases now")
    at: str
    by: str
    counts: MergeCounts
    trust: str | None = Field(default=None, description="Knowledge: the kept entity's trust after the merge")


class Unmerged(BaseModel):
    merge: str
    into: str
    restored: list[str] = Field(description="The entities put back as they were")
    at: str
    by: str


class Merges(StoreCore):
    """merge_entities and unmerge_entities: a part of GraphStore (store/graph.py)."""

    async def merge_entities(self, req: MergeIn) -> Merged:
        if req.into in req.names:
            raise ValidationError(
                f"{req.into!r} is both 'into' and in 'names': an entity cannot be merged into itself; nothing was written",
                field="names",
            )
        merge_id = "m-" + uuid.uuid4().hex[:16]
        now = self.clock.now()
        by = actor()

        async def work(tx: neo4j.AsyncManagedTransaction) -> tuple[dict[str, int], list[str], str | None]:
            x = self.x.bound(tx)
            await x.write("merge_lock", names=[req.into, *req.names])
            rows = {r["name"]: r for r in await x.read("merge_check", names=[req.into, *req.names])}
            trust = _check(req, rows)
            await x.write(
                "merge_begin",
                id=merge_id,
                into=req.into,
                names=list(req.names),
                actor=by,
                reason=req.reason,
                now=now,
            )
            totals = {
                "observations": 0,
                "copied": 0,
                "moved": 0,
                "collided": 0,
                "self_loops": 0,
                "dropped": 0,
            }
            aliases: list[str] = []
            for name in req.names:
                rec = (
                    await x.write(
                        "merge_one",
                        id=merge_id,
                        into=req.into,
                        dup=name,
                        names=list(req.names),
                        trust=trust,
                        causal=CAUSAL,
                        now=now,
                    )
                )[0]
                for key in totals:
                    totals[key] += int(rec[key] or 0)
                aliases += list(rec["added"])
            await x.write("merge_finish", id=merge_id, into=req.into, trust=trust, now=now, **totals)
            return totals, aliases, trust

        totals, _, trust = await self.x.transaction(work)
        alias_rows = await self.x.read("merge_aliases", name=req.into)
        return Merged(
            merge=merge_id,
            into=req.into,
            names=list(req.names),
            aliases=list(alias_rows[0]["aliases"]) if alias_rows else [],
            at=now.isoformat(),
            by=by,
            counts=MergeCounts(
                observationsMoved=totals["copied"],
                observationsDropped=totals["observations"] - totals["copied"],
                relationsMoved=totals["moved"],
                relationsCollided=totals["collided"],
                selfLoops=totals["self_loops"],
                causalDropped=totals["dropped"],
            ),
            trust=trust,
        )

    async def unmerge_entities(self, req: UnmergeIn) -> Unmerged:
        now = self.clock.now()
        by = actor()

        async def work(tx: neo4j.AsyncManagedTransaction) -> dict[str, Any]:
            x = self.x.bound(tx)
            await x.write("merge_lock", names=[req.name])  # two undos of one merge: the second sees it undone
            records = await x.read("merge_records", into=req.name, id=None)
            standing = [r for r in records if r["undone_at"] is None]
            if not records:
                raise NotFoundError(
                    "merge", req.name, f"name: no merge into {req.name!r} was recorded; nothing was written"
                )
            if not standing:
                raise ValidationError(
                    f"name: every merge into {req.name!r} was undone already; nothing was written",
                    field="name",
                )
            last = standing[0]
            if req.merge is not None and req.merge != last["id"]:
                known = {r["id"]: r for r in records}
                if req.merge not in known:
                    raise ValidationError(
                        f"merge: {req.merge!r} is no merge into {req.name!r} (its merges: "
                        f"{', '.join(r['id'] for r in records)}); nothing was written",
                        field="merge",
                    )
                if known[req.merge]["undone_at"] is not None:
                    raise ValidationError(
                        f"merge: {req.merge!r} was undone already; nothing was written", field="merge"
                    )
                raise ValidationError(
                    f"merge: {req.merge!r} is not the last merge into {req.name!r} still standing; undo "
                    f"{last['id']!r} (of {', '.join(last['names'])}) first; nothing was written",
                    field="merge",
                )
            check = (await x.read("unmerge_check", id=last["id"]))[0]
            if not check["kept"]:
                raise ValidationError(
                    f"name: {req.name!r} is no entity now (merged into another or deleted since); undo that "
                    "first; nothing was written",
                    field="name",
                )
            if check["taken"]:
                raise ValidationError(
                    f"name: {', '.join(repr(n) for n in check['taken'])} names an entity made after the merge; rename "
                    "or delete it before undoing the merge; nothing was written",
                    field="name",
                )
            await x.write("unmerge_apply", id=last["id"], actor=by, now=now)
            return dict(last)

        last = await self.x.transaction(work)
        return Unmerged(
            merge=last["id"], into=req.name, restored=list(last["names"]), at=now.isoformat(), by=by
        )


def _check(req: MergeIn, rows: dict[str, Any]) -> str | None:
    """Refuse what cannot be merged (naming the field); the trust a knowledge merge keeps."""
    for field, name in [("into", req.into), *(("names", n) for n in req.names)]:
        r = rows[name]
        if not r["found"]:
            if r["alias_of"] is not None:
                raise ValidationError(
                    f"{field}: {name!r} was merged into {r['alias_of']!r} already (it is an alias of it); "
                    "nothing was written",
                    field=field,
                )
            raise NotFoundError("entity", name, f"{field}: no entity named {name!r}; nothing was written")
    keep = rows[req.into]
    for name in req.names:
        r = rows[name]
        if "experience" in (r["kind"], keep["kind"]):
            raise ValidationError(
                f"names: {name!r} or {req.into!r} is a recorded experience, which is not merged; nothing was written",
                field="names",
            )
        if r["kind"] != keep["kind"]:
            raise ValidationError(
                f"names: {name!r} is {_kind(r['kind'])} and {req.into!r} is {_kind(keep['kind'])}: knowledge "
                "merges only with knowledge (its trust rules), plain entities only with plain entities; "
                "nothing was written",
                field="names",
            )
        if r["type"] != keep["type"] and not req.force:
            raise ValidationError(
                f"names: {name!r} has entityType {r['type']!r} and {req.into!r} has {keep['type']!r}; merge "
                'entities of another type only with "force": true (the kept type stays); nothing was written',
                field="force",
            )
    if keep["kind"] != "knowledge":
        return None
    trusts = [str(rows[n]["trust"]) for n in [req.into, *req.names]]
    return min(trusts, key=lambda t: TRUST_ORDER.index(t) if t in TRUST_ORDER else -1)


def _kind(kind: str) -> str:
    return "knowledge" if kind == "knowledge" else "a plain entity"
