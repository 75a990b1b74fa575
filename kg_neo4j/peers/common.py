"""What every peer import shares: the items a peer's reader yields, the shape check, the batched writes into
the namespace, the report (see :mod:`kg_neo4j.peers`).

Writes go through :class:`~kg_neo4j.store.graph.GraphStore`'s own ``create_entities`` and ``add_observations``
inside the batch's one transaction (type labels, ``:KgText``, embeddings and the write order come with them),
then ``peers_mark_sources`` sets the provenance; relations go through ``peers_import_relations``, which keeps
the peer's validity times (``create_relations`` refuses a relation that has already ended, which is history
here).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pydantic
from neo4j import AsyncManagedTransaction
from tqdm import tqdm

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import EntityIn, ObservationAdd, RelationIn
from kg_neo4j.peers.dates import not_after
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.graph import GraphStore

#: Foreign nodes sampled by the shape check (each label).
SHAPE_SAMPLE = 1000
MAX_REPORTED_ITEMS = 20


class PeerShapeError(ValidationError):
    """The source does not hold the peer's graph as expected: the message says what is missing.  Peers
    record no version in the graph, so nothing is guessed; nothing was written."""


@dataclass
class PeerEntity:
    name: str
    entity_type: str
    source: str  # "<system>:<element id>"
    observations: list[tuple[str, str]] = field(default_factory=list)  # (text, source)
    error: str | None = None  # what makes the source's node unreadable (the item is rejected)
    # when the peer recorded the entity, and each observation (by text; default: the entity's time);
    # None: the peer records no time, the import's moment is used
    created_at: datetime | None = None
    observed_at: dict[str, datetime] = field(default_factory=dict)


@dataclass
class PeerRelation:
    from_: str
    to: str
    type: str
    source: str
    weight: float = 1.0
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    closed_at: datetime | None = None
    created_at: datetime | None = None
    reasoning: str | None = None


@dataclass(frozen=True)
class Shape:
    """What a peer's graph must hold: foreign nodes labelled ``label``, those of the peer told apart by
    ``signature`` (properties every one of its nodes carries), each also carrying ``required``; and, when the
    source has any, ``relationship`` edges between them carrying ``relationship_props``."""

    label: str
    signature: tuple[str, ...]
    required: tuple[str, ...] = ()
    relationship: str | None = None
    relationship_props: tuple[str, ...] = ()


@dataclass
class Peer:
    """One peer system: its shape, its pages of entities and relations, and what it holds that is not carried."""

    system: str
    shape: Shape
    entities: Callable[[Executor, int], AsyncIterator[list[PeerEntity]]]
    relations: Callable[[Executor, int], AsyncIterator[list[PeerRelation]]]
    relation_total: Callable[[Executor], Awaitable[int]]
    not_carried: Callable[[Executor], Awaitable[dict[str, int]]]


def source_of(system: str, element_id: str) -> str:
    return f"{system}:{element_id}"


def relation_type(name: Any) -> str:
    """A peer's relation name as a relation type by our rules: the name as written, surrounding whitespace
    dropped (a name past MAX_RELATION_TYPE_CHARS is refused with its item); a blank or missing one is the
    peers' own edge type, RELATES_TO."""
    text = name.strip() if isinstance(name, str) else ""
    return text or "RELATES_TO"


async def pages(
    x: Executor, statement: str, limit: int, **params: Any
) -> AsyncIterator[list[dict[str, Any]]]:
    """The records of a paged read statement (``elementId > $after`` order), one list a page."""
    after = ""
    while True:
        records = [r.data() for r in await x.read(statement, after=after, limit=limit, **params)]
        if not records:
            return
        yield records
        after = records[-1]["id"]


# ---------------------------------------------------------------------------
# the shape check
# ---------------------------------------------------------------------------


async def check_shape(peer: Peer, x: Executor) -> int:
    """Raise :class:`PeerShapeError` naming what is missing; return how many foreign nodes of the label are
    not the peer's (ignored)."""
    s = peer.shape
    props = [*s.signature, *s.required]
    rec = (await x.read("peers_shape_nodes", label=s.label, props=props, sample=SHAPE_SAMPLE))[0]
    if rec["n"] == 0:
        raise PeerShapeError(
            f"the source holds no :{s.label} nodes (other than kg-neo4j's): it is not a {peer.system} graph; "
            "nothing was written"
        )
    total = int((await x.read("peers_count_nodes", label=s.label, props=[]))[0]["n"])
    mine = int((await x.read("peers_count_nodes", label=s.label, props=list(s.signature)))[0]["n"])
    if mine == 0:
        missing = ", ".join(f"{p} on {m} of {rec['n']}" for p, m in rec["missing"] if p in s.signature and m)
        raise PeerShapeError(
            f"none of the {total} :{s.label} nodes is {peer.system}'s: missing {missing}; nothing was written"
        )
    complete = int((await x.read("peers_count_nodes", label=s.label, props=props))[0]["n"])
    if complete < mine:
        rec = (
            await x.read("peers_count_nodes_missing", label=s.label, signature=list(s.signature), props=props)
        )[0]
        missing = ", ".join(f"{p} on {m}" for p, m in rec["missing"] if m)
        raise PeerShapeError(
            f"{mine - complete} of the {mine} {peer.system} :{s.label} nodes lack properties it always writes "
            f"(missing {missing}); nothing was written"
        )
    if s.relationship:
        rel = (
            await x.read(
                "peers_shape_relationships",
                label=s.label,
                type=s.relationship,
                signature=list(s.signature),
                props=list(s.relationship_props),
                sample=SHAPE_SAMPLE,
            )
        )[0]
        missing = ", ".join(f"{p} on {m} of {rel['n']}" for p, m in rel["missing"] if m)
        if missing:
            raise PeerShapeError(
                f"the {s.relationship} relationships between :{s.label} nodes lack properties {peer.system} "
                f"always writes (missing {missing}); nothing was written"
            )
    return total - mine


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------


def _group() -> dict[str, int]:
    return {"read": 0, "added": 0, "skipped": 0, "rejected": 0}


@dataclass
class PeerReport:
    system: str
    namespace: str
    source: str
    dry_run: bool
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {"entities": _group(), "observations": _group(), "relations": _group()}
    )
    rejected_items: list[dict[str, str]] = field(default_factory=list)
    not_carried: dict[str, int] = field(default_factory=dict)
    ignored_nodes: int = 0

    def reject(self, group: str, source: str, error: str, observations: int = 0) -> None:
        self.counts[group]["rejected"] += 1
        self.counts["observations"]["rejected"] += observations
        if len(self.rejected_items) < MAX_REPORTED_ITEMS:
            self.rejected_items.append({"source": source, "error": error})

    def as_dict(self, seconds: float) -> dict[str, Any]:
        return {
            "from": self.system,
            "source": self.source,
            "namespace": self.namespace,
            "dry_run": self.dry_run,
            **self.counts,
            "not_carried": self.not_carried,
            "ignored_nodes": self.ignored_nodes,
            "rejected_items": self.rejected_items,
            "seconds": round(seconds, 3),
        }


def _error(exc: pydantic.ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" if err["loc"] else str(err["msg"])
        for err in exc.errors()
    )


# ---------------------------------------------------------------------------
# the writes
# ---------------------------------------------------------------------------


class PeerWriter:
    """Writes a peer's batches into the namespace of ``graph``, each batch one transaction."""

    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph
        self.x: Executor = graph.x.with_shared(reads_at=False)

    async def entities(self, batch: Sequence[PeerEntity], report: PeerReport) -> None:
        valid: list[tuple[PeerEntity, EntityIn, ObservationAdd | None]] = []
        for e in batch:
            n_obs = len(e.observations)
            if e.error:
                report.reject("entities", e.source, f"entity: {e.error}", n_obs)
                continue
            try:
                entity = EntityIn(name=e.name, entityType=e.entity_type, observations=[])
                texts = [t for t, _ in e.observations]
                add = ObservationAdd(entityName=e.name, contents=texts) if texts else None
            except pydantic.ValidationError as exc:
                report.reject("entities", e.source, f"entity: {_error(exc)}", n_obs)
                continue
            valid.append((e, entity, add))
        if not valid:
            return
        now = self.graph.clock.now()

        async def work(tx: AsyncManagedTransaction) -> tuple[set[str], dict[str, list[str]]]:
            store = self.graph.at_moment(now).within(tx)  # one "now" for the batch and its retries
            created = {c.name for c in await store.create_entities([v[1] for v in valid])}
            adds = [v[2] for v in valid if v[2] is not None]
            added: dict[str, list[str]] = {}
            for result in await store.add_observations(adds) if adds else []:
                added.setdefault(result.entityName, []).extend(result.addedObservations)
            # One row a name: a peer may hold two nodes of one name (Graphiti's exact-name duplicates),
            # which create_entities made one entity (the first's type); it is dated by the earliest of
            # them and carries the first's source, and each added text is dated once.
            rows: dict[str, dict[str, Any]] = {}
            for e, _, _ in valid:
                mine = set(added.get(e.name, []))
                at = not_after(e.created_at, now)
                row = rows.setdefault(
                    e.name,
                    {
                        "name": e.name,
                        "source": e.source,
                        "created": e.name in created,
                        "created_at": at,
                        "observations": [],
                    },
                )
                if at is not None and (row["created_at"] is None or at < row["created_at"]):
                    row["created_at"] = at
                texts = {o["text"] for o in row["observations"]}
                row["observations"] += [
                    {"text": t, "source": s, "created_at": not_after(e.observed_at.get(t, e.created_at), now)}
                    for t, s in e.observations
                    if t in mine and t not in texts
                ]
            await self.x.bound(tx).write("peers_mark_sources", rows=list(rows.values()))
            return created, added

        created, added = await self.x.transaction(work)
        n_added = sum(len(v) for v in added.values())
        n_read = sum(len(e.observations) for e, _, _ in valid)
        report.counts["entities"]["added"] += len(created)
        report.counts["entities"]["skipped"] += len(valid) - len(created)
        report.counts["observations"]["added"] += n_added
        report.counts["observations"]["skipped"] += n_read - n_added

    async def relations(self, batch: Sequence[PeerRelation], report: PeerReport) -> None:
        now = self.graph.clock.now()
        rows: list[dict[str, Any]] = []
        for r in batch:
            try:
                fields = {
                    "from": r.from_,
                    "to": r.to,
                    "relationType": r.type,
                    "weight": float(r.weight),
                    "validFrom": r.valid_from,
                    "validUntil": r.valid_until,
                    "reasoning": r.reasoning,
                    "source": r.source,
                }
                RelationIn.model_validate({k: v for k, v in fields.items() if v is not None})
            except pydantic.ValidationError as exc:
                report.reject("relations", r.source, f"relation: {_error(exc)}")
                continue
            # a relation with no time of its own starts at the import (as create_relations does)
            # (a validity the peer gave may lie ahead; its clock's creation time may not)
            created_at = not_after(r.created_at, now) or now
            props: dict[str, Any] = {
                "weight": float(r.weight),
                "valid_from": r.valid_from or created_at,
                "valid_until": r.valid_until,
                "created_at": created_at,
                "reasoning": r.reasoning,
                "source": r.source,
            }
            if r.closed_at is not None:
                props["closed_at"] = r.closed_at
            rows.append({"i": len(rows), "from": r.from_, "to": r.to, "type": r.type, "props": props})
        if not rows:
            return

        async def work(tx: AsyncManagedTransaction) -> int:
            records = await self.x.bound(tx).write("peers_import_relations", rows=rows, now=now)
            return len(records[0]["created"]) if records else 0

        created: int = await self.x.transaction(work)
        report.counts["relations"]["added"] += created
        report.counts["relations"]["skipped"] += len(rows) - created


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------


async def import_peer(
    peer: Peer,
    source: Executor,
    writer: PeerWriter | None,
    report: PeerReport,
    *,
    batch_size: int,
    progress: bool,
) -> None:
    """Check the source's shape, then read it in pages and write each page as one batch (``writer`` None: a
    dry run, which only counts what would come)."""
    report.ignored_nodes = await check_shape(peer, source)
    s = peer.shape
    entity_total = int(
        (await source.read("peers_count_nodes", label=s.label, props=list(s.signature)))[0]["n"]
    )
    relation_total = await peer.relation_total(source)
    report.not_carried = await peer.not_carried(source)
    with tqdm(
        total=entity_total + relation_total,
        unit="item",
        desc=f"import {peer.system}",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        async for entities in peer.entities(source, batch_size):
            report.counts["entities"]["read"] += len(entities)
            report.counts["observations"]["read"] += sum(len(e.observations) for e in entities)
            if writer is not None:
                await writer.entities(entities, report)
            bar.update(len(entities))
        async for relations in peer.relations(source, batch_size):
            report.counts["relations"]["read"] += len(relations)
            if writer is not None:
                await writer.relations(relations, report)
            bar.update(len(relations))
