"""``kg-neo4j import`` / ``kg-neo4j export``: memory files in and out of one namespace.

Import formats (``--format``, detected from the content when ``auto``):

``jsonl``
    The reference memory server's file: one ``{"type": "entity", "name", "entityType",
    "observations"}`` or ``{"type": "relation", "from", "to", "relationType"}`` per line.
``memory-json``
    The reference's legacy ``memory.json``: the same lines under the old name (its
    migration only renames the file).  Detected as ``jsonl`` content in a ``.json`` file.
``simple-memory``
    Simple Memory's single JSON object ``{"entities": [...], "relations": [...]}``.
``memorymesh``
    MemoryMesh JSONL: ``{"type": "node", "name", "nodeType", "metadata"}`` and ``{"type":
    "edge", "from", "to", "edgeType", "weight"}``; nodeType becomes entityType, metadata
    the observations, edgeType the relation type.
``full``
    kg-neo4j's own lossless format, written by ``kg-neo4j export --format full``::

        {"type":"header","format":"kg-neo4j-full","version":1,"namespace":...,"exported_at":...}
        {"type":"node","name":...,"labels":["Entity"],"properties":{...},
         "observations":[{"labels":[],"properties":{"text":...,"seq":0,"created_at":...}}]}
        {"type":"relationship","from":...,"to":...,"relationType":...,"properties":{...}}

    Nodes (name order) come before relationships.  Labels are those beyond KgNode /
    Observation; properties leave out the namespace and derived values (name_lower,
    type_lower, text_lower, recomputed on import) and the embedding vectors.  Temporal,
    spatial and byte values are tagged: ``{"$datetime": "...+00:00"}`` (plus ``"zone"``
    for a named zone), ``$localdatetime``, ``$date``, ``$time``, ``$localtime``,
    ``$duration``, ``$point``, ``$bytes``.  Imported as stored: into an empty namespace
    it reproduces the exported one; an existing name, or a relationship equal to an
    existing one, is skipped.

Detection reads the first non-empty line: a JSON object whose ``type`` is ``header``
(with ``format: kg-neo4j-full``), ``entity``/``relation`` or ``node``/``edge`` names the
format; an object without ``type`` holding ``entities``/``relations`` is Simple Memory,
as is a file whose first line is not JSON but whose text starts ``{ "entities": ...``
(pretty-printed).  If the first line says nothing, the next lines are tried.

JSONL files are streamed in batches of ``batch_size`` lines: every line of a batch is
validated (``EntityIn`` / ``RelationIn``) before anything is written, and a batch is one
transaction.  A malformed line is reported with its line number and nothing of its
batch is written; the other batches land.  Within a batch entities are written before
relations; relations to names not (yet) known create placeholders that a later entity
of that name turns into the entity (the store's create semantics).

The report counts, per group, lines ``added``, ``skipped`` (the name, or the relation,
already exists: the reference's create semantics) and ``rejected`` (malformed, or in a
batch with a malformed line); ``rejected`` is every line not imported, and
``rejected_lines`` the first 20 malformed lines with their errors.  For ``full``,
"entities" counts node lines (entities and placeholders) and "relations" relationship
lines.

Export lives in :mod:`kg_neo4j.export`.  Progress bars go to stderr.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j
import pydantic
from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.embeddings import SentenceEmbedder, resolve_model
from kg_neo4j.errors import ValidationError
from kg_neo4j.export import FULL_FORMAT, FULL_VERSION
from kg_neo4j.formats import IMPORT_FORMATS
from kg_neo4j.models import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_RELATION_TYPE_CHARS,
    EntityIn,
    RelationIn,
)
from kg_neo4j.settings import Settings
from kg_neo4j.store import connect
from kg_neo4j.store.connection import bootstrap
from kg_neo4j.store.embeddings import embed_missing
from kg_neo4j.store.transfer import (
    DERIVED_NODE_PROPERTIES,
    DERIVED_OBSERVATION_PROPERTIES,
    ImportCounts,
    TransferStore,
    ValueCodecError,
    decode_property,
)

log = logging.getLogger(__name__)

MAX_REPORTED_LINES = 20
_DETECT_LINES = 50


# ---------------------------------------------------------------------------
# format detection
# ---------------------------------------------------------------------------

_SIMPLE_MEMORY_HEAD = re.compile(r'^\s*\{\s*(?:"(?:entities|relations)"\s*:|\})')


def _format_of(obj: Any, suffix: str) -> str | None:
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind == "header" and obj.get("format") == FULL_FORMAT:
        return "full"
    if kind in ("entity", "relation"):
        return "memory-json" if suffix == ".json" else "jsonl"
    if kind in ("node", "edge"):
        return "memorymesh"
    if "type" not in obj and ("entities" in obj or "relations" in obj or not obj):
        return "simple-memory"
    return None


def detect_format(path: str | Path) -> str:
    """The import format of ``path``, from its content (see the module docstring)."""
    p = Path(path)
    suffix = p.suffix.lower()
    head: list[str] = []
    with p.open("r", encoding="utf-8-sig", errors="replace") as f:
        for raw in f:
            if raw.strip():
                head.append(raw)
            if len(head) >= _DETECT_LINES:
                break
    if not head:
        return "jsonl"  # an empty file: nothing to import, in any format
    try:
        found = _format_of(json.loads(head[0]), suffix)
    except ValueError:
        found = None
        if _SIMPLE_MEMORY_HEAD.match("".join(head)):
            return "simple-memory"
    if found:
        return found
    for line in head[1:]:
        try:
            found = _format_of(json.loads(line), suffix)
        except ValueError:
            continue
        if found in ("jsonl", "memory-json", "memorymesh"):
            return found
    raise ValidationError(
        f"cannot tell the format of {p}: its first lines are neither reference JSONL "
        f'({{"type":"entity"|"relation",...}}), MemoryMesh JSONL ({{"type":"node"|"edge",...}}), a Simple '
        f'Memory object ({{"entities": [...], "relations": [...]}}) nor a kg-neo4j full export; '
        f"pass --format ({', '.join(IMPORT_FORMATS)})",
        field="format",
    )


# ---------------------------------------------------------------------------
# parsing: every format becomes a stream of items, one per line / array element
# ---------------------------------------------------------------------------


@dataclass
class _Item:
    line: int
    kind: str | None  # entity | relation | node | relationship | header; None when unknown
    value: Any = None
    error: str | None = None
    pos: int = 0  # bytes (or characters) read up to the end of this item: progress


def _pydantic_error(exc: pydantic.ValidationError, rename: dict[str, str] | None = None) -> str:
    rename = rename or {}
    parts = []
    for err in exc.errors():
        loc = ".".join(rename.get(str(x), str(x)) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else str(err["msg"]))
    return "; ".join(parts)


def _json_lines(path: Path) -> Iterator[tuple[int, Any, str | None, int]]:
    """(line number, parsed JSON, error, bytes read) for every non-empty line, streamed."""
    with path.open("rb") as f:
        pos = 0
        for lineno, raw in enumerate(f, 1):
            pos += len(raw)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield lineno, None, f"not UTF-8 text: {exc}", pos
                continue
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except ValueError as exc:
                yield lineno, None, f"invalid JSON: {exc}", pos
                continue
            if not isinstance(obj, dict):
                yield lineno, None, f"expected a JSON object, got {type(obj).__name__}", pos
                continue
            yield lineno, obj, None, pos


def _entity(obj: dict[str, Any], line: int, pos: int, rename: dict[str, str] | None = None) -> _Item:
    try:
        return _Item(line, "entity", EntityIn.model_validate(obj), pos=pos)
    except pydantic.ValidationError as exc:
        return _Item(line, "entity", error=f"entity: {_pydantic_error(exc, rename)}", pos=pos)


def _relation(obj: dict[str, Any], line: int, pos: int, rename: dict[str, str] | None = None) -> _Item:
    try:
        return _Item(line, "relation", RelationIn.model_validate(obj), pos=pos)
    except pydantic.ValidationError as exc:
        return _Item(line, "relation", error=f"relation: {_pydantic_error(exc, rename)}", pos=pos)


def _reference_items(path: Path) -> Iterator[_Item]:
    for line, obj, error, pos in _json_lines(path):
        if error:
            yield _Item(line, None, error=error, pos=pos)
        elif obj.get("type") == "entity":
            yield _entity(obj, line, pos)
        elif obj.get("type") == "relation":
            yield _relation(obj, line, pos)
        else:
            yield _Item(line, None, error=f"unknown type {obj.get('type')!r}: expected 'entity' or 'relation'",
                        pos=pos)


_MESH_NODE = {"name": "name", "nodeType": "entityType", "metadata": "observations"}
_MESH_EDGE = {"from": "from", "to": "to", "edgeType": "relationType", "weight": "weight"}


def _memorymesh_items(path: Path) -> Iterator[_Item]:
    for line, obj, error, pos in _json_lines(path):
        if error:
            yield _Item(line, None, error=error, pos=pos)
            continue
        kind = obj.get("type")
        if kind == "node":
            mapped = {dst: obj[src] for src, dst in _MESH_NODE.items() if src in obj}
            yield _entity(mapped, line, pos, {v: k for k, v in _MESH_NODE.items()})
        elif kind == "edge":
            mapped = {dst: obj[src] for src, dst in _MESH_EDGE.items() if src in obj}
            yield _relation(mapped, line, pos, {v: k for k, v in _MESH_EDGE.items()})
        else:
            yield _Item(line, None, error=f"unknown type {kind!r}: expected 'node' or 'edge'", pos=pos)


def _simple_memory_items(path: Path) -> Iterator[_Item]:
    """Items of Simple Memory's single JSON object, each with the line its element starts on.

    The document is one JSON value, so it is read whole (and checked whole first: a syntax
    error rejects the file before anything is written).
    """
    text = path.read_text(encoding="utf-8-sig")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        lineno = getattr(exc, "lineno", 1)
        yield _Item(lineno, None, error=f"invalid JSON: {exc}", pos=len(text))
        return
    if not isinstance(doc, dict):
        yield _Item(1, None, error=f"expected a JSON object with 'entities' and 'relations', got {type(doc).__name__}",
                    pos=len(text))
        return
    for key in ("entities", "relations"):
        if key in doc and not isinstance(doc[key], list):
            yield _Item(1, None, error=f"'{key}' must be an array", pos=len(text))
            return
    del doc

    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    state = {"line": 1, "at": 0}

    def line_of(i: int) -> int:
        state["line"] += text.count("\n", state["at"], i)
        state["at"] = i
        return state["line"]

    def skip(i: int) -> int:
        return ws.match(text, i).end()  # type: ignore[union-attr]

    i = skip(0) + 1  # past "{" (checked above)
    while True:
        i = skip(i)
        if text[i] == "}":
            return
        if text[i] == ",":
            i += 1
            continue
        key, i = decoder.raw_decode(text, i)
        i = skip(skip(i) + 1)  # past ":"
        if key not in ("entities", "relations"):
            _, i = decoder.raw_decode(text, i)
            continue
        i = skip(i + 1)  # past "["
        while text[i] != "]":
            start = i
            value, i = decoder.raw_decode(text, i)
            line = line_of(start)
            if not isinstance(value, dict):
                yield _Item(line, None, error=f"{key} element: expected a JSON object, got {type(value).__name__}",
                            pos=i)
            elif key == "entities":
                yield _entity(value, line, i)
            else:
                yield _relation(value, line, i)
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
        i += 1


# --- the full format ----------------------------------------------------------

_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,254}$")
_RESERVED_LABELS = {"KgNode", "Observation", "KgMeta"}
_NODE_KINDS = {"Entity", "Placeholder"}


class _FullObservation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    labels: list[str] = Field(default_factory=list)
    properties: dict[str, Any]
    link: dict[str, Any] = Field(default_factory=dict)
    #: a retired observation (kept as history; README "Time and history")
    retired: bool = False


class _FullNode(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    labels: list[str]
    properties: dict[str, Any] = Field(default_factory=dict)
    observations: list[_FullObservation] = Field(default_factory=list)


class _FullRelationship(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    from_: str = Field(alias="from", min_length=1, max_length=MAX_NAME_CHARS)
    to: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    relationType: str = Field(min_length=1, max_length=MAX_RELATION_TYPE_CHARS)
    properties: dict[str, Any] = Field(default_factory=dict)


def _decode_props(props: dict[str, Any], reserved: tuple[str, ...], where: str) -> dict[str, Any]:
    out = {}
    for key, raw in props.items():
        if not key:
            raise ValueCodecError(f"{where}: empty property name")
        if key in reserved:
            raise ValueCodecError(f"{where}: property {key!r} is not stored as given (it is derived or reserved)")
        try:
            out[key] = decode_property(raw)
        except ValueCodecError as exc:
            raise ValueCodecError(f"{where}.{key}: {exc}") from exc
    return out


def _check_labels(labels: list[str], where: str) -> list[str]:
    for label in labels:
        if not _LABEL.match(label) or label in _RESERVED_LABELS:
            raise ValueCodecError(f"{where}: label {label!r} is not allowed")
    return sorted(set(labels))


def _full_node(obj: dict[str, Any]) -> dict[str, Any]:
    node = _FullNode.model_validate(obj)
    if not node.name.strip():
        raise ValueCodecError("name must not be empty or only whitespace")
    labels = _check_labels([x for x in node.labels if x != "KgNode"], "labels")
    if len(_NODE_KINDS & set(labels)) != 1:
        raise ValueCodecError("labels must hold exactly one of 'Entity' and 'Placeholder'")
    props = _decode_props(node.properties, DERIVED_NODE_PROPERTIES, "properties")
    observations = []
    for i, o in enumerate(node.observations):
        where = f"observations[{i}]"
        olabels = _check_labels(o.labels, f"{where}.labels")
        if _NODE_KINDS & set(olabels):
            raise ValueCodecError(f"{where}.labels: an observation cannot be an Entity or Placeholder")
        oprops = _decode_props(o.properties, DERIVED_OBSERVATION_PROPERTIES, f"{where}.properties")
        text = oprops.get("text")
        if not isinstance(text, str):
            raise ValueCodecError(f"{where}.properties.text: a string is required")
        if len(text) > MAX_OBSERVATION_CHARS:
            raise ValueCodecError(f"{where}.properties.text: longer than {MAX_OBSERVATION_CHARS} characters")
        link = _decode_props(o.link, (), f"{where}.link")
        observations.append({"labels": olabels, "props": oprops, "link": link, "retired": o.retired})
    return {"name": node.name, "labels": labels, "props": props, "observations": observations}


def _full_relationship(obj: dict[str, Any]) -> dict[str, Any]:
    rel = _FullRelationship.model_validate(obj)
    for what, value in (("from", rel.from_), ("to", rel.to), ("relationType", rel.relationType)):
        if not value.strip():
            raise ValueCodecError(f"{what} must not be empty or only whitespace")
    return {"from": rel.from_, "to": rel.to, "relationType": rel.relationType,
            "props": _decode_props(rel.properties, (), "properties")}


def _full_items(path: Path) -> Iterator[_Item]:
    first = True
    for line, obj, error, pos in _json_lines(path):
        if error:
            yield _Item(line, None, error=error, pos=pos)
            first = False
            continue
        kind = obj.get("type")
        if first:
            first = False
            if kind != "header" or obj.get("format") != FULL_FORMAT:
                yield _Item(line, None, error=f"a full export starts with a header line "
                                              f'{{"type":"header","format":"{FULL_FORMAT}",...}}', pos=pos)
                continue
            version = obj.get("version")
            if not isinstance(version, int) or version > FULL_VERSION:
                raise ValidationError(f"{path}: full export version {version!r} is newer than this kg-neo4j "
                                      f"reads ({FULL_VERSION}); upgrade kg-neo4j", field="path")
            yield _Item(line, "header", obj, pos=pos)
            continue
        try:
            if kind == "node":
                yield _Item(line, "node", _full_node(obj), pos=pos)
            elif kind == "relationship":
                yield _Item(line, "relationship", _full_relationship(obj), pos=pos)
            else:
                yield _Item(line, None, error=f"unknown type {kind!r}: expected 'node' or 'relationship'", pos=pos)
        except pydantic.ValidationError as exc:
            yield _Item(line, kind, error=f"{kind}: {_pydantic_error(exc)}", pos=pos)
        except ValueCodecError as exc:
            yield _Item(line, kind, error=f"{kind}: {exc}", pos=pos)


_READERS: dict[str, Callable[[Path], Iterator[_Item]]] = {
    "jsonl": _reference_items,
    "memory-json": _reference_items,
    "simple-memory": _simple_memory_items,
    "memorymesh": _memorymesh_items,
    "full": _full_items,
}

_KIND_GROUP = {"entity": "entities", "node": "entities", "relation": "relations", "relationship": "relations"}


# ---------------------------------------------------------------------------
# import
# ---------------------------------------------------------------------------


@dataclass
class _ImportReport:
    fmt: str
    namespace: str
    path: str
    counts: dict[str, dict[str, int]] = field(default_factory=lambda: {
        "entities": {"added": 0, "skipped": 0, "rejected": 0},
        "relations": {"added": 0, "skipped": 0, "rejected": 0},
    })
    rejected_lines: list[dict[str, Any]] = field(default_factory=list)
    malformed: int = 0
    rejected: int = 0
    batches_written: int = 0
    batches_rejected: int = 0

    def reject_line(self, line: int, error: str) -> None:
        self.malformed += 1
        if len(self.rejected_lines) < MAX_REPORTED_LINES:
            self.rejected_lines.append({"line": line, "error": error})

    def as_dict(self, seconds: float) -> dict[str, Any]:
        return {
            "format": self.fmt,
            "path": self.path,
            "namespace": self.namespace,
            "entities": self.counts["entities"],
            "relations": self.counts["relations"],
            "rejected_lines": self.rejected_lines,
            "rejected": self.rejected,
            "malformed_lines": self.malformed,
            "batches": {"written": self.batches_written, "rejected": self.batches_rejected},
            "seconds": round(seconds, 3),
        }


Writer = Callable[[list[_Item]], Awaitable[ImportCounts]]


async def _flush(batch: list[_Item], write: Writer, report: _ImportReport) -> None:
    items = [it for it in batch if it.kind != "header"]
    if not items:
        return
    bad = [it for it in items if it.error]
    error: str | None = None
    if bad:
        for it in bad:
            report.reject_line(it.line, str(it.error))
        error = "malformed"
    else:
        try:
            counts = await write(items)
        except neo4j.exceptions.ClientError as exc:
            # Validation passed but Neo4j refused the batch (e.g. mixed-type list property).
            report.reject_line(items[0].line, f"lines {items[0].line}-{items[-1].line} not written: Neo4j said: "
                                              f"{exc.message or exc}")
            error = "neo4j"
        else:
            report.batches_written += 1
            n = {"entities": 0, "relations": 0}
            for it in items:
                n[_KIND_GROUP[str(it.kind)]] += 1
            report.counts["entities"]["added"] += counts.entities_added
            report.counts["entities"]["skipped"] += n["entities"] - counts.entities_added
            report.counts["relations"]["added"] += counts.relations_added
            report.counts["relations"]["skipped"] += n["relations"] - counts.relations_added
            return
    report.batches_rejected += 1
    for it in items:
        group = _KIND_GROUP.get(str(it.kind))
        if group:
            report.counts[group]["rejected"] += 1
        report.rejected += 1
    log.warning("import: lines %d-%d rejected (%s); nothing of that batch was written",
                items[0].line, items[-1].line, error)


def _writer(store: TransferStore, fmt: str) -> Writer:
    if fmt == "full":
        async def write_full(items: list[_Item]) -> ImportCounts:
            return await store.import_full([it.value for it in items if it.kind == "node"],
                                           [it.value for it in items if it.kind == "relationship"])
        return write_full

    async def write_reference(items: list[_Item]) -> ImportCounts:
        return await store.import_reference([it.value for it in items if it.kind == "entity"],
                                            [it.value for it in items if it.kind == "relation"])
    return write_reference


async def run_import(settings: Settings, path: str | Path, *, fmt: str = "auto", batch_size: int = 1000,
                     progress: bool = True, clock: Clock | None = None) -> dict[str, Any]:
    """Import ``path`` into ``settings.namespace``; returns the report the CLI prints."""
    started = time.monotonic()
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"{p}: no such file", field="path")
    if fmt != "auto" and fmt not in IMPORT_FORMATS:
        raise ValidationError(f"unknown import format {fmt!r}; choose auto or one of {', '.join(IMPORT_FORMATS)}",
                              field="format")
    if not 1 <= batch_size <= settings.max_batch_items:
        raise ValidationError(f"batch size must be between 1 and {settings.max_batch_items}", field="batch_size")
    detected = detect_format(p) if fmt == "auto" else fmt
    report = _ImportReport(detected, settings.namespace, str(p))
    clock = clock or SystemClock()

    model = resolve_model(settings.embedding_model)
    embedder = SentenceEmbedder(model, runtime=settings.embedding_runtime) if model else None
    if embedder:
        embedder.start_loading()
    driver, conn = await connect(settings)
    try:
        await bootstrap(driver, conn.database, clock, model, fulltext_analyzer=settings.fulltext_analyzer)
        store = TransferStore(driver, conn.database, settings.namespace, clock, embedder)
        write = _writer(store, detected)
        total = p.stat().st_size  # progress in bytes (characters for Simple Memory's single document)
        with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=f"import {detected}",
                  file=sys.stderr, disable=not progress, dynamic_ncols=True) as bar:
            batch: list[_Item] = []
            done = 0
            for item in _READERS[detected](p):
                batch.append(item)
                if len(batch) >= batch_size:
                    await _flush(batch, write, report)
                    bar.update(item.pos - done)
                    done = item.pos
                    batch = []
            if batch:
                await _flush(batch, write, report)
                bar.update(batch[-1].pos - done)
        if embedder is not None and detected == "full":
            # A full export carries no vectors: embed what is missing in this namespace (idempotent).
            await embed_missing(driver, conn.database, embedder, settings.namespace)
    finally:
        await driver.close()
    out = report.as_dict(time.monotonic() - started)
    log.info("import %s: entities %s, relations %s, %d rejected", detected, out["entities"], out["relations"],
             out["rejected"])
    return out
