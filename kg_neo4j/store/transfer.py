"""TransferStore: the Neo4j side of ``kg-neo4j import`` / ``kg-neo4j export``.

Writes are batches (``UNWIND $rows``), each batch one managed transaction; reads page
through a namespace in name order (``name > $after ... LIMIT $n``), one statement a page.
Reference-format batches go through :class:`GraphStore`'s own ``create_entities`` /
``create_relations`` (same skip, dedupe and placeholder semantics), both run inside the
batch's single transaction.

Values stored in Neo4j are encoded for JSON losslessly by ``store/value_codec.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neo4j import AsyncManagedTransaction

from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.type_labels import knowledge_labels, type_labels
from kg_neo4j.store.value_codec import encode_value

#: Node properties the full format does not list under "properties": the namespace (the
#: importer's own), the name (a field of its own), values derived from others (recomputed
#: on import) and transient lock/flag values.
DERIVED_NODE_PROPERTIES = (
    "namespace",
    "name",
    "name_lower",
    "type_lower",
    "text_lower",
    "kg_lock",
    "kg_import_new",
    "type_labels",
)
DERIVED_OBSERVATION_PROPERTIES = ("namespace", "text_lower")
#: Properties the full export leaves out on purpose: the vectors (large, and recomputed by the
#: embedder) and the model name that goes with them; an imported node has neither.
SKIPPED_PROPERTIES = ("embedding", "embedding_model")


def _props(pairs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """``[[key, value, named_zone], ...]`` from Cypher into an encoded property map, sorted by key."""
    return {k: encode_value(v, named_zone=bool(named)) for k, v, named in sorted(pairs, key=lambda p: p[0])}


def _imported_type_labels(labels: Sequence[str], entity_type: Any, trust: Any) -> list[str]:
    """The type labels of an imported node: derived from its type (and trust), never taken from the file."""
    if "Entity" not in labels or not isinstance(entity_type, str):
        return []
    if "Knowledge" in labels and isinstance(trust, str):
        return knowledge_labels(entity_type, trust)
    return type_labels(entity_type)


# ---------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------


@dataclass
class Page:
    """One page of an export pass: the last start node's name (None: no more), how many nodes, the items."""

    last: str | None
    nodes: int
    items: list[dict[str, Any]]


@dataclass
class ImportCounts:
    entities_added: int = 0
    relations_added: int = 0


class TransferStore:
    """Batched import and paged export of one namespace (the namespace, clock and executor of ``graph``)."""

    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph
        # no ``at`` default: the pages are read of now, or of the ``now`` the caller gives
        self.x: Executor = graph.x.with_shared(reads_at=False)

    # -- import ----------------------------------------------------------------
    async def import_reference(
        self, entities: Sequence[EntityIn], relations: Sequence[RelationIn]
    ) -> ImportCounts:
        """Create one batch's entities, then its relations, in one transaction (reference semantics)."""
        now = self.graph.clock.now()

        async def work(tx: AsyncManagedTransaction) -> ImportCounts:
            store = self.graph.at_moment(now).within(tx)
            created_entities = await store.create_entities(entities) if entities else []
            created_relations = await store.create_relations(relations) if relations else []
            return ImportCounts(len(created_entities), len(created_relations))

        counts: ImportCounts = await self.x.transaction(work)
        return counts

    async def import_full(
        self, nodes: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]]
    ) -> ImportCounts:
        """Write one batch of a full export as stored: nodes (with observations) first, then relationships.

        ``nodes``: ``{name, labels, props, observations: [{labels, props, link}]}`` with decoded
        values; ``relationships``: ``{from, to, relationType, props}``.  A node whose name exists
        is skipped (with its observations); a relationship equal to an existing one (same ends,
        type and properties) is skipped.
        """
        now = self.graph.clock.now()
        node_rows = []
        for n in nodes:
            is_entity = "Entity" in n["labels"]
            etype = n["props"].get("entityType")
            node_rows.append(
                {
                    "name": n["name"],
                    "labels": list(n["labels"]),
                    "props": n["props"],
                    "name_lower": n["name"].lower() if is_entity else None,
                    "type_lower": etype.lower() if is_entity and isinstance(etype, str) else None,
                    "type_labels": _imported_type_labels(n["labels"], etype, n["props"].get("trust")),
                    "observations": [
                        {
                            "labels": list(o["labels"]),
                            "props": o["props"],
                            "link": o.get("link") or {},
                            "retired": bool(o.get("retired")),
                            "text_lower": o["props"]["text"].lower()
                            if isinstance(o["props"].get("text"), str)
                            else None,
                        }
                        for o in n["observations"]
                    ],
                }
            )
        # the write order (turn) travels with the observations; the counter must then pass the largest
        turns = [
            t
            for n in nodes
            for o in n["observations"]
            if isinstance(t := o["props"].get("turn"), int) and not isinstance(t, bool)
        ]
        rel_rows = [
            {"i": i, "from": r["from"], "to": r["to"], "relationType": r["relationType"], "props": r["props"]}
            for i, r in enumerate(relationships)
        ]

        async def work(tx: AsyncManagedTransaction) -> ImportCounts:
            counts = ImportCounts()
            x = self.x.bound(tx)
            if node_rows:
                created = [
                    r["name"] for r in await x.write("transfer_full_import_nodes", rows=node_rows, now=now)
                ]
                counts.entities_added = len(created)
                # the aliases of the entities it created resolve again (docs/graph-model.md#merged-entities-and-aliases)
                await x.write("transfer_full_import_aliases", names=created, now=now)
                if turns:
                    await x.write("transfer_full_import_turns", next=max(turns) + 1)
            if rel_rows:
                counts.relations_added = len(
                    await x.write("transfer_full_import_relationships", rows=rel_rows, now=now)
                )
            return counts

        counts: ImportCounts = await self.x.transaction(work)
        return counts

    # -- export ----------------------------------------------------------------
    async def count_entities(self) -> int:
        return int((await self.x.read("transfer_count_entities"))[0]["n"])

    async def count_nodes(self) -> int:
        return int((await self.x.read("transfer_count_nodes"))[0]["n"])

    async def entity_page(self, after: str, limit: int) -> list[dict[str, Any]]:
        """Entities after ``after`` (name order) as reference dicts ``{name, entityType, observations}``."""
        records = await self.x.read("transfer_entity_page", after=after, limit=limit)
        return [
            {"name": r["name"], "entityType": r["entityType"], "observations": list(r["observations"])}
            for r in records
        ]

    async def relation_page(self, after: str, limit: int, *, now: datetime | None = None) -> Page:
        """Relations holding ``now`` that start at the (up to ``limit``) named nodes after ``after``."""
        records = await self.x.read(
            "transfer_relation_page", after=after, limit=limit, now=now or self.graph.clock.now()
        )
        rels = [
            {"from": r["name"], "to": rel["to"], "relationType": rel["relationType"], "weight": rel["weight"]}
            for r in records
            for rel in r["relations"]
        ]
        return Page(records[-1]["name"] if records else None, len(records), rels)

    async def full_node_page(self, after: str, limit: int) -> tuple[list[dict[str, Any]], int]:
        """Named nodes after ``after`` as full-format dicts; also how many ``embedding`` values were left out."""
        records = await self.x.read(
            "transfer_full_node_page",
            after=after,
            limit=limit,
            skip_node=[*DERIVED_NODE_PROPERTIES, *SKIPPED_PROPERTIES],
            skip_obs=[*DERIVED_OBSERVATION_PROPERTIES, *SKIPPED_PROPERTIES],
        )
        nodes = []
        skipped = 0
        for r in records:
            skipped += int(r["embedding"])
            observations = []
            for o in r["observations"]:
                skipped += int(o["embedding"])
                item: dict[str, Any] = {"labels": sorted(o["labels"]), "properties": _props(o["props"])}
                if o["link"]:
                    item["link"] = _props(o["link"])
                if o["retired"]:  # written only when true: files without history stay as they were
                    item["retired"] = True
                observations.append(item)
            nodes.append(
                {
                    "name": r["name"],
                    "labels": sorted(r["labels"]),
                    "properties": _props(r["props"]),
                    "observations": observations,
                }
            )
        return nodes, skipped

    async def full_relationship_page(self, after: str, limit: int) -> Page:
        """Every relationship (expired ones too) starting at the named nodes after ``after``, full-format dicts."""
        records = await self.x.read("transfer_full_relationship_page", after=after, limit=limit)
        rels = [
            {
                "from": r["name"],
                "to": rel["to"],
                "relationType": rel["relationType"],
                "properties": _props(rel["props"]),
            }
            for r in records
            for rel in r["relationships"]
        ]
        return Page(records[-1]["name"] if records else None, len(records), rels)
