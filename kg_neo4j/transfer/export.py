"""``kg-neo4j export``: one namespace out to a file, in four formats (docs/moving-over.md).

``jsonl``
    The reference memory server's file, byte for byte the way it writes one: entity lines
    (name order), then relation lines, joined by newlines.
``memorymesh``
    MemoryMesh's JSONL: ``{"type":"node","name","nodeType","metadata"}`` lines, then
    ``{"type":"edge","from","to","edgeType","weight"}`` lines (weights written as JavaScript
    writes numbers: ``1``, not ``1.0``).  Observations become metadata as they are.
``simple-memory``
    Simple Memory's single JSON object ``{"entities": [...], "relations": [...]}``, pretty-printed
    with two spaces as ``JSON.stringify(graph, null, 2)`` writes it.
``full``
    kg-neo4j's own lossless format (every label and stored property, observations with their
    own properties, every relationship with its properties, temporal values tagged; see
    :mod:`kg_neo4j.store.transfer`).

All but ``full`` hold what a read of now shows: current relations only.  A relation may end at a
name that is not an entity (the reference allows it); it is exported too, and ``kg-neo4j import``
takes it back as such (MemoryMesh itself would refuse that edge).  Every format reads back with
``kg-neo4j import``.  The file is written to a temporary name and renamed when complete.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import IO, Any

from tqdm import tqdm

from kg_neo4j import __version__
from kg_neo4j.clock import Clock
from kg_neo4j.formats import FULL_FORMAT, FULL_VERSION
from kg_neo4j.store.connection import SCHEMA_VERSION
from kg_neo4j.store.transfer import (
    DERIVED_NODE_PROPERTIES,
    DERIVED_OBSERVATION_PROPERTIES,
    SKIPPED_PROPERTIES,
    TransferStore,
)
from kg_neo4j.store.value_codec import encode_value

log = logging.getLogger(__name__)

EXPORT_PAGE = 1000


def js_dumps(obj: Any) -> str:
    """Compact JSON as JavaScript's ``JSON.stringify`` writes it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def js_number(x: float) -> int | float:
    """A number as JavaScript prints it: integral values without ``.0``."""
    return int(x) if float(x).is_integer() else x


def progress_bar(progress: bool, total: int, desc: str, unit: str) -> tqdm[Any]:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not progress, dynamic_ncols=True)


async def _entities(store: TransferStore, progress: bool) -> AsyncIterator[dict[str, Any]]:
    """Every entity of the namespace in name order, a page at a time."""
    with progress_bar(progress, await store.count_entities(), "export entities", "entity") as bar:
        after = ""
        while True:
            page = await store.entity_page(after, EXPORT_PAGE)
            if not page:
                return
            for e in page:
                yield e
            bar.update(len(page))
            after = page[-1]["name"]


async def _relations(store: TransferStore, progress: bool, clock: Clock) -> AsyncIterator[dict[str, Any]]:
    """Every relation holding now, by start name, a page of start nodes at a time."""
    now = clock.now()
    with progress_bar(progress, await store.count_nodes(), "export relations", "node") as bar:
        after = ""
        while True:
            page = await store.relation_page(after, EXPORT_PAGE, now=now)
            if page.last is None:
                return
            for r in page.items:
                yield r
            bar.update(page.nodes)
            after = page.last


async def _export_jsonl(store: TransferStore, out: IO[str], progress: bool, clock: Clock) -> dict[str, Any]:
    counts = {"entities": 0, "relations": 0}
    sep = ""
    async for e in _entities(store, progress):
        out.write(
            sep
            + js_dumps(
                {
                    "type": "entity",
                    "name": e["name"],
                    "entityType": e["entityType"],
                    "observations": e["observations"],
                }
            )
        )
        sep = "\n"
        counts["entities"] += 1
    async for r in _relations(store, progress, clock):
        out.write(
            sep
            + js_dumps(
                {"type": "relation", "from": r["from"], "to": r["to"], "relationType": r["relationType"]}
            )
        )
        sep = "\n"
        counts["relations"] += 1
    return counts


async def _export_memorymesh(
    store: TransferStore, out: IO[str], progress: bool, clock: Clock
) -> dict[str, Any]:
    counts = {"entities": 0, "relations": 0}
    async for e in _entities(store, progress):
        out.write(
            js_dumps(
                {
                    "type": "node",
                    "name": e["name"],
                    "nodeType": e["entityType"],
                    "metadata": e["observations"],
                }
            )
            + "\n"
        )
        counts["entities"] += 1
    async for r in _relations(store, progress, clock):
        weight = r.get("weight")
        out.write(
            js_dumps(
                {
                    "type": "edge",
                    "from": r["from"],
                    "to": r["to"],
                    "edgeType": r["relationType"],
                    "weight": js_number(1.0 if weight is None else weight),
                }
            )
            + "\n"
        )
        counts["relations"] += 1
    return counts


def _indented(obj: Any, prefix: str) -> str:
    return "\n".join(prefix + line for line in json.dumps(obj, ensure_ascii=False, indent=2).splitlines())


async def _export_simple_memory(
    store: TransferStore, out: IO[str], progress: bool, clock: Clock
) -> dict[str, Any]:
    """``{"entities": [...], "relations": [...]}`` streamed, byte-equal to ``JSON.stringify(g, null, 2)``."""
    counts = {"entities": 0, "relations": 0}
    out.write('{\n  "entities": [')
    sep = "\n"
    async for e in _entities(store, progress):
        out.write(
            sep
            + _indented(
                {"name": e["name"], "entityType": e["entityType"], "observations": e["observations"]}, "    "
            )
        )
        sep = ",\n"
        counts["entities"] += 1
    out.write("\n  ],\n" if counts["entities"] else "],\n")
    out.write('  "relations": [')
    sep = "\n"
    async for r in _relations(store, progress, clock):
        out.write(
            sep + _indented({"from": r["from"], "to": r["to"], "relationType": r["relationType"]}, "    ")
        )
        sep = ",\n"
        counts["relations"] += 1
    out.write("\n  ]\n}" if counts["relations"] else "]\n}")
    return counts


async def _export_full(store: TransferStore, out: IO[str], progress: bool, clock: Clock) -> dict[str, Any]:
    """Header, every named node (name order, observations inside), then every relationship."""
    header = {
        "type": "header",
        "format": FULL_FORMAT,
        "version": FULL_VERSION,
        "namespace": store.graph.namespace,
        "exported_at": encode_value(clock.now()),
        "kg_neo4j_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "derived_properties": {
            "node": [p for p in DERIVED_NODE_PROPERTIES if p != "name"],
            "observation": list(DERIVED_OBSERVATION_PROPERTIES),
        },
        "skipped_properties": list(SKIPPED_PROPERTIES),
    }
    out.write(js_dumps(header) + "\n")
    counts = {"entities": 0, "placeholders": 0, "observations": 0, "relations": 0}
    skipped = 0
    total = await store.count_nodes()
    with progress_bar(progress, total, "export nodes", "node") as bar:
        after = ""
        while True:
            nodes, skipped_here = await store.full_node_page(after, EXPORT_PAGE)
            if not nodes:
                break
            skipped += skipped_here
            for n in nodes:
                out.write(js_dumps({"type": "node", **n}) + "\n")
                counts["entities" if "Entity" in n["labels"] else "placeholders"] += 1
                counts["observations"] += len(n["observations"])
            bar.update(len(nodes))
            after = nodes[-1]["name"]
    with progress_bar(progress, total, "export relationships", "node") as bar:
        after = ""
        while True:
            page = await store.full_relationship_page(after, EXPORT_PAGE)
            if page.last is None:
                break
            for r in page.items:
                out.write(js_dumps({"type": "relationship", **r}) + "\n")
            counts["relations"] += len(page.items)
            bar.update(page.nodes)
            after = page.last
    if skipped:
        log.warning(
            "export: %d embedding vector(s) left out (%s); the embedder recomputes them after import",
            skipped,
            ", ".join(SKIPPED_PROPERTIES),
        )
    return {**counts, "skipped_properties": list(SKIPPED_PROPERTIES), "embeddings_skipped": skipped}


#: The writer of each export format (the command opens Neo4j and the file: kg_neo4j.commands.transfer).
Exporter = Callable[[TransferStore, IO[str], bool, Clock], Awaitable[dict[str, Any]]]
EXPORTERS: dict[str, Exporter] = {
    "jsonl": _export_jsonl,
    "memorymesh": _export_memorymesh,
    "simple-memory": _export_simple_memory,
    "full": _export_full,
}
