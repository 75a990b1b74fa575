"""Exact history: retiring observations, the decay state of knowledge at a past moment, timelines.

What the graph keeps for history and how reads use it is described in docs/history.md and in
``cypher/history.cypher``, where the statements live.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import AwareDatetime, BaseModel, Field, field_validator, model_validator

from kg_neo4j.errors import NotFoundError, ValidationError
from kg_neo4j.knowledge.decay import MEMORY_SCORE_MAX, elapsed_days, memory_score, retention
from kg_neo4j.models import MAX_OBSERVATIONS_PER_ITEM, Name, ObservationText, RelationKey, StrictInput
from kg_neo4j.store.records import decode_offset, encode_offset

if TYPE_CHECKING:
    from kg_neo4j.store.core import StoreCore

#: entity_history: events per page by default and at most
DEFAULT_HISTORY_LIMIT = 100
MAX_HISTORY_LIMIT = 1000
#: the key of entity_history's paging cursor (store/records.py): the events the next page skips
CURSOR_KEY = "skip"


class ObservationInvalidate(StrictInput):
    entityName: Name
    observations: list[ObservationText] = Field(min_length=1, max_length=MAX_OBSERVATIONS_PER_ITEM)
    validUntil: AwareDatetime | None = None


class RetiredObservation(BaseModel):
    entityName: str
    observation: str
    createdAt: str | None
    validUntil: str | None


class HistoryIn(StrictInput):
    name: Name | None = None
    relation: RelationKey | None = None
    limit: int = Field(default=DEFAULT_HISTORY_LIMIT, ge=1, le=MAX_HISTORY_LIMIT)
    cursor: str | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> HistoryIn:
        if (self.name is None) == (self.relation is None):
            raise ValueError(
                "give exactly one of 'name' (an entity) or 'relation' ({from, to, relationType})"
            )
        return self

    @field_validator("cursor")
    @classmethod
    def _cursor(cls, v: str | None) -> str | None:
        if v is not None:
            decode_offset(v, key=CURSOR_KEY, returned_by="entity_history")
        return v


class HistoryEvent(BaseModel):
    at: str | None
    event: str
    detail: dict[str, Any]
    #: who made the change (docs/team.md#attribution); null for a change written before attribution
    by: str | None = None


class History(BaseModel):
    events: list[HistoryEvent]
    nextCursor: str | None = None


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if hasattr(value, "to_native"):
        value = value.to_native()
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _plain(value: Any) -> Any:
    """A value of an event's detail as JSON (times as ISO 8601 text)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if hasattr(value, "to_native") or isinstance(value, datetime):
        return _iso(value)
    return value


async def invalidate_observations(
    store: StoreCore, items: Sequence[ObservationInvalidate]
) -> list[RetiredObservation]:
    """Retire observations at ``validUntil`` (default now): kept as history, hidden from reads of now."""
    now = store.clock.now()
    rows: dict[tuple[str, datetime], dict[str, Any]] = {}
    for it in items:
        until = it.validUntil or now
        if until > now:
            raise ValidationError(
                f"{it.entityName}: validUntil {until.isoformat()} is in the future; an observation is retired "
                "when it stops being true (call invalidate_observations then, or leave validUntil out for now); "
                "nothing was written",
                field="validUntil",
            )
        row = rows.setdefault(
            (it.entityName, until), {"entityName": it.entityName, "observations": [], "valid_until": until}
        )
        row["observations"] = list(dict.fromkeys([*row["observations"], *it.observations]))
    if not rows:
        return []
    rec = (await store.x.write("invalidate_observations", rows=list(rows.values()), now=now))[0]
    if rec["content"]:
        raise ValidationError(
            f"'{rec['content'][0]}' is knowledge and one observation named is its content, which cannot be retired "
            "alone: change it with update_knowledge (the old content is kept as history) or expire it with "
            "forget_knowledge; nothing was written",
            field="observations",
        )
    if rec["missing_entities"]:
        raise NotFoundError("entity", rec["missing_entities"][0])
    if rec["missing_observations"]:
        m = rec["missing_observations"][0]
        raise NotFoundError(
            "observation",
            m["entityName"],
            f"Entity '{m['entityName']}' has no current observation {m['observations'][0]!r} "
            "(already retired, deleted or never added); nothing was written",
        )
    if rec["too_early"]:
        m = rec["too_early"][0]
        raise ValidationError(
            f"{m['entityName']}: validUntil is before observation {m['observations'][0]!r} was "
            "added; nothing was written",
            field="validUntil",
        )
    return [
        RetiredObservation(
            entityName=r["entityName"],
            observation=r["observation"],
            createdAt=_iso(r["createdAt"]),
            validUntil=_iso(r["validUntil"]),
        )
        for r in rec["retired"]
    ]


async def memory_prior_at(store: StoreCore, names: Iterable[str], at: datetime) -> dict[str, float]:
    """search_memory's memory prior (memory score / its maximum) of the named knowledge, from the decay
    state each had at ``at`` (cypher/recall.cypher ``knowledge_facts``, the statement traverse_graph's facts
    come from too)."""
    names = list(dict.fromkeys(names))
    if not names:
        return {}
    out: dict[str, float] = {}
    for r in await store.x.read("knowledge_facts", names=names, at=at):
        try:
            since = r["since"].to_native() if hasattr(r["since"], "to_native") else r["since"]
            ret = retention(elapsed_days(since, at), float(r["stability"]), category=r["category"])
            out[r["name"]] = memory_score(ret, int(r["level"])) / MEMORY_SCORE_MAX
        except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
            continue  # an incomplete stored state gets no prior, as today's prior (search never fails on it)
    return out


async def entity_history(store: StoreCore, req: HistoryIn) -> History:
    """The dated changes of one entity, or of one relation, in order of time; one page."""
    skip = decode_offset(req.cursor, key=CURSOR_KEY, returned_by="entity_history") if req.cursor else 0
    rel = req.relation
    records = await store.x.read(
        "history_events",
        entity=req.name,
        skip=skip,
        limit=req.limit + 1,
        rel_from=rel.from_ if rel else None,
        rel_to=rel.to if rel else None,
        rel_type=rel.relationType if rel else "_",
    )
    if not records and skip == 0:
        what = (
            ("entity", req.name)
            if req.name is not None
            else ("relation", f"{rel.from_} -[{rel.relationType}]-> {rel.to}" if rel else "")
        )
        raise NotFoundError(
            what[0], str(what[1]), f"No {what[0]} {what[1]!r} in this memory, now or in its history"
        )
    events = [
        HistoryEvent(at=_iso(r["at"]), event=r["event"], detail=_plain(dict(r["detail"])), by=r["by"])
        for r in records[: req.limit]
    ]
    return History(
        events=events,
        nextCursor=encode_offset(skip + req.limit, key=CURSOR_KEY) if len(records) > req.limit else None,
    )
