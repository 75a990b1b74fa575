"""``kg-neo4j import`` / ``export`` against the real Neo4j (no mocks): every import format
detected and imported, malformed lines rejected with their batch, the reference JSONL
export byte-exact, lossless export → import round trips (jsonl and full), and the CLI.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j.spatial
import neo4j.time
import pytest
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock, SystemClock
from kg_neo4j.commands.transfer import run_export, run_import
from kg_neo4j.errors import ValidationError
from kg_neo4j.models import EntityIn, ObservationAdd, ObservationDelete, RelationIn, RelationInvalidate
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.value_codec import ValueCodecError, decode_property, decode_value, encode_value
from kg_neo4j.transfer import detect_format, export
from support.servers import KG, Neo4jInfo, server_env

# --------------------------------------------------------------------------- helpers


def settings_for(info: Neo4jInfo, namespace: str, embedding_model: str = "none") -> Settings:
    """Imports run without embeddings unless a test asks (test_imports_are_embedded)."""
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        neo4j_database=info.database,
        namespace=namespace,
        embedding_model=embedding_model,
    )


def jsonl(*objs: Any) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


def ent(name: str, etype: str = "person", obs: list[str] | None = None) -> dict[str, Any]:
    return {"type": "entity", "name": name, "entityType": etype, "observations": obs or []}


def rel(a: str, b: str, t: str = "knows") -> dict[str, Any]:
    return {"type": "relation", "from": a, "to": b, "relationType": t}


def other_store(store: GraphStore, namespace: str | None = None) -> GraphStore:
    return GraphStore(
        store.driver,
        database=store.database,
        namespace=namespace or f"{store.namespace}-copy",
        clock=store.clock,
    )


async def import_file(
    info: Neo4jInfo, namespace: str, path: Path, clock: ManualClock, **kw: Any
) -> dict[str, Any]:
    return await run_import(settings_for(info, namespace), path, progress=False, clock=clock, **kw)


async def labels_of(driver: AsyncDriver, namespace: str) -> dict[str, list[str]]:
    records, _, _ = await driver.execute_query(
        "MATCH (n:KgNode) WHERE n.namespace = $ns RETURN n.name AS name, labels(n) AS labels", ns=namespace
    )
    return {r["name"]: sorted(r["labels"]) for r in records}


def rel_set(graph: Any) -> list[tuple[str, str, str]]:
    return sorted((r.from_, r.to, r.relationType) for r in graph.relations)


# Raw dump of everything stored in a namespace (the full round trip compares these).
_DUMP_NODES = """
MATCH (n:KgNode) WHERE n.namespace = $ns
CALL (n) {
  OPTIONAL MATCH (n)-[h:HAS_OBSERVATION]->(o:Observation)
  WITH h, o ORDER BY o.seq
  RETURN collect(CASE WHEN o IS NULL THEN null ELSE {
    labels: labels(o), props: properties(o), link: properties(h),
    zoned: [k IN keys(o) WHERE valueType(o[k]) STARTS WITH 'ZONED DATETIME' | k + '=' + toString(o[k])]
  } END) AS observations
}
RETURN n.name AS name, labels(n) AS labels, properties(n) AS props,
       [k IN keys(n) WHERE valueType(n[k]) STARTS WITH 'ZONED DATETIME' | k + '=' + toString(n[k])] AS zoned,
       observations
ORDER BY name
"""
_DUMP_RELS = """
MATCH (a:KgNode)-[r]->(b:KgNode) WHERE a.namespace = $ns
RETURN a.name AS `from`, b.name AS to, type(r) AS type, properties(r) AS props,
       [k IN keys(r) WHERE valueType(r[k]) STARTS WITH 'ZONED DATETIME' | k + '=' + toString(r[k])] AS zoned
"""


def _clean(
    props: dict[str, Any], drop: tuple[str, ...] = ("namespace", "embedding", "embedding_model")
) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in drop}


async def dump(driver: AsyncDriver, namespace: str) -> dict[str, Any]:
    nodes, _, _ = await driver.execute_query(_DUMP_NODES, ns=namespace)
    rels, _, _ = await driver.execute_query(_DUMP_RELS, ns=namespace)
    return {
        "nodes": [
            {
                "name": r["name"],
                "labels": sorted(r["labels"]),
                "props": _clean(r["props"]),
                "zoned": sorted(r["zoned"]),
                "observations": [
                    {
                        "labels": sorted(o["labels"]),
                        "props": _clean(o["props"]),
                        "link": o["link"],
                        "zoned": sorted(o["zoned"]),
                    }
                    for o in r["observations"]
                ],
            }
            for r in nodes
        ],
        "relationships": sorted(
            (
                {
                    "from": r["from"],
                    "to": r["to"],
                    "type": r["type"],
                    "props": r["props"],
                    "zoned": sorted(r["zoned"]),
                }
                for r in rels
            ),
            key=lambda x: json.dumps([x["from"], x["to"], x["type"], str(sorted(x["props"].items()))]),
        ),
    }


# --------------------------------------------------------------------------- detection (pure)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("memory.jsonl", jsonl(ent("A"), rel("A", "B")), "jsonl"),
        ("graph.txt", jsonl(rel("A", "B"), ent("A")), "jsonl"),
        ("memory.json", jsonl(ent("A"), rel("A", "B")), "memory-json"),
        ("memory.json", json.dumps({"entities": [ent("A")], "relations": []}, indent=2), "simple-memory"),
        ("memory.json", json.dumps({"entities": [], "relations": []}), "simple-memory"),
        ("memory.json", "{\n}\n", "simple-memory"),
        (
            "memory.json",
            jsonl({"type": "node", "name": "G", "nodeType": "npc", "metadata": []}),
            "memorymesh",
        ),
        (
            "mesh.jsonl",
            jsonl({"type": "edge", "from": "G", "to": "R", "edgeType": "located_in"}),
            "memorymesh",
        ),
        ("x.jsonl", jsonl({"type": "header", "format": "kg-neo4j-full", "version": 1}), "full"),
        ("x.jsonl", "\n\n" + jsonl("{broken", ent("A")), "jsonl"),  # first line unreadable: the next decides
        ("empty.jsonl", "\n", "jsonl"),
    ],
)
def test_detect_format(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert detect_format(path) == expected


@pytest.mark.unit
def test_detect_format_refuses_unknown_content(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(jsonl({"hello": 1}, "not json"))
    with pytest.raises(ValidationError, match="--format"):
        detect_format(path)


@pytest.mark.unit
@pytest.mark.parametrize(
    "value",
    [
        neo4j.time.DateTime(2026, 3, 1, 10, 0, 0, 123456789, tzinfo=UTC),
        neo4j.time.DateTime(2026, 3, 1, 10, 0, 0, 5),
        neo4j.time.Date(1990, 5, 1),
        neo4j.time.Duration(months=1, days=2, seconds=3, nanoseconds=500_000_000),
        neo4j.spatial.CartesianPoint((1.5, 2.0)),
        neo4j.spatial.WGS84Point((13.4, 52.5, 10.0)),
        [1, 2, 3],
        ["a"],
        0.25,
        True,
        "x",
        b"\x00\x01",
    ],
)
def test_value_codec_round_trips(value: Any) -> None:
    encoded = encode_value(value)
    assert json.loads(json.dumps(encoded)) == encoded
    assert decode_value(encoded) == value


@pytest.mark.unit
def test_value_codec_rejects_garbage() -> None:
    for bad in (
        {"$datetime": "yesterday"},
        {"$nope": 1},
        {"a": 1},
        {"$point": {"srid": 1, "coordinates": [1, 2]}},
        {"$datetime": "2026-01-01T00:00:00"},
    ):
        with pytest.raises(ValueCodecError):
            decode_value(bad)


# --------------------------------------------------------------------------- import formats


async def test_import_reference_jsonl(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(
        jsonl(
            ent("Alice", "person", ["likes tea", "Ünïcödé"]),
            ent("Bob"),
            "",
            ent("Alice", "other", ["dropped"]),  # an existing name: skipped, like the reference
            rel("Alice", "Bob"),
            rel("Alice", "Bob"),  # exact duplicate: skipped
            rel("Alice", "Bob", "works with"),
            rel("Bob", "Carol"),  # Carol is only referenced: placeholder
        ),
        encoding="utf-8",
    )
    report = await import_file(neo4j_info, namespace, path, clock)
    assert report["format"] == "jsonl"
    assert report["entities"] == {"added": 2, "skipped": 1, "rejected": 0}
    assert report["relations"] == {"added": 3, "skipped": 1, "rejected": 0}
    assert report["rejected"] == 0 and report["rejected_lines"] == []
    graph = await store.read_graph()
    assert [e.model_dump() for e in graph.entities] == [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea", "Ünïcödé"]},
        {"name": "Bob", "entityType": "person", "observations": []},
    ]
    assert rel_set(graph) == [
        ("Alice", "Bob", "knows"),
        ("Alice", "Bob", "works with"),
        ("Bob", "Carol", "knows"),
    ]
    assert (await labels_of(store.driver, namespace))["Carol"] == ["KgNode", "Placeholder"]

    # Importing the same file again adds nothing.
    again = await import_file(neo4j_info, namespace, path, clock)
    assert again["entities"] == {"added": 0, "skipped": 3, "rejected": 0}
    assert again["relations"] == {"added": 0, "skipped": 4, "rejected": 0}


async def test_import_legacy_memory_json(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "memory.json"
    path.write_text(jsonl(ent("A", "t", ["o"]), rel("A", "B", "r")))
    report = await import_file(neo4j_info, namespace, path, clock)
    assert report["format"] == "memory-json"
    assert report["entities"]["added"] == 1 and report["relations"]["added"] == 1
    graph = await store.read_graph()
    assert graph.reference() == {
        "entities": [{"name": "A", "entityType": "t", "observations": ["o"]}],
        "relations": [{"from": "A", "to": "B", "relationType": "r"}],
    }


async def test_import_simple_memory(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    doc = {
        "entities": [
            {"name": "John", "entityType": "person", "observations": ["Works at Acme"]},
            {"name": "Acme", "entityType": "organization", "observations": []},
        ],
        "relations": [{"from": "John", "to": "Acme", "relationType": "works_for"}],
    }
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(doc, indent=2))  # Simple Memory writes 2-space pretty JSON
    report = await import_file(neo4j_info, namespace, path, clock)
    assert report["format"] == "simple-memory"
    assert report["entities"]["added"] == 2 and report["relations"]["added"] == 1
    graph = await store.read_graph()
    assert [e.name for e in graph.entities] == ["Acme", "John"]
    assert rel_set(graph) == [("John", "Acme", "works_for")]


async def test_simple_memory_bad_element_reports_its_line(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    doc = {
        "entities": [
            {"name": "A", "entityType": "t", "observations": []},
            {"name": "B", "entityType": "t", "observations": []},
        ],
        "relations": [{"from": "A", "relationType": "r"}],
    }
    text = json.dumps(doc, indent=2)
    bad_line = [i for i, ln in enumerate(text.splitlines(), 1) if ln == "    {"][-1]  # the relation element
    path = tmp_path / "memory.json"
    path.write_text(text)
    report = await import_file(neo4j_info, namespace, path, clock, batch_size=2)
    assert report["rejected_lines"] == [{"line": bad_line, "error": "relation: to: Field required"}]
    assert report["entities"]["added"] == 2 and report["relations"]["rejected"] == 1
    assert [e.name for e in (await store.read_graph()).entities] == ["A", "B"]

    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "entities": [\n    {"name": "X",\n  ]\n}\n')
    report = await import_file(neo4j_info, namespace, broken, clock, fmt="simple-memory")
    assert report["rejected"] == 1 and report["rejected_lines"][0]["line"] == 4
    assert "invalid JSON" in report["rejected_lines"][0]["error"]


async def test_import_memorymesh(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "memory.json"
    path.write_text(
        jsonl(
            {
                "type": "node",
                "name": "Gandalf",
                "nodeType": "npc",
                "metadata": ["Role: Wizard", "Status: Active"],
            },
            {
                "type": "node",
                "name": "Rivendell",
                "nodeType": "location",
                "metadata": ["Region: Middle-earth"],
            },
            {"type": "edge", "from": "Gandalf", "to": "Rivendell", "edgeType": "located_in", "weight": 0.75},
            {"type": "edge", "from": "Rivendell", "to": "Gandalf", "edgeType": "hosts"},
        )
    )
    report = await import_file(neo4j_info, namespace, path, clock)
    assert report["format"] == "memorymesh"
    assert report["entities"]["added"] == 2 and report["relations"]["added"] == 2
    graph = await store.read_graph()
    assert [e.model_dump() for e in graph.entities] == [
        {"name": "Gandalf", "entityType": "npc", "observations": ["Role: Wizard", "Status: Active"]},
        {"name": "Rivendell", "entityType": "location", "observations": ["Region: Middle-earth"]},
    ]
    weights = {(r.from_, r.relationType): r.weight for r in graph.relations}
    assert weights == {("Gandalf", "located_in"): 0.75, ("Rivendell", "hosts"): 1.0}

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        jsonl(
            {"type": "edge", "from": "A", "to": "B", "weight": 0.5},
            {"type": "edge", "from": "A", "to": "B", "edgeType": "x", "weight": 2},
        )
    )
    report = await import_file(neo4j_info, namespace, bad, clock, fmt="memorymesh")
    errors = [r["error"] for r in report["rejected_lines"]]
    assert errors[0] == "relation: edgeType: Field required"
    assert errors[1].startswith("relation: weight: Input should be less than or equal to 1")


async def test_malformed_lines_reject_only_their_batch(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(
        jsonl(
            ent("A"),
            ent("B"),
            ent("C"),  # lines 1-3: batch 1, lands
            ent("D"),
            "",  # line 4; line 5 blank (not an item)
            '{"type": "entity", "name": "broken"',  # line 6: bad JSON -> batch 2 rejected
            ent("E"),  # line 7
            {"type": "entity", "name": "F", "observations": []},  # line 8: no entityType -> batch 3 rejected
            rel("A", "B"),  # line 9
            ent("G", obs=["x" * 8001]),  # line 10: over the observation limit
            ent("H"),
            rel("A", "C"),
            ent("I"),  # lines 11-13: batch 4 lands
            {"type": "thing"},  # line 14: batch 5 rejected
        )
    )
    report = await import_file(neo4j_info, namespace, path, clock, batch_size=3)
    lines = [(r["line"], r["error"].split(":")[0]) for r in report["rejected_lines"]]
    assert lines == [(6, "invalid JSON"), (8, "entity"), (10, "entity"), (14, "unknown type 'thing'")]
    assert "entityType: Field required" in report["rejected_lines"][1]["error"]
    assert "at most 8000 characters" in report["rejected_lines"][2]["error"]
    assert report["entities"] == {"added": 5, "skipped": 0, "rejected": 4}  # D E F G rejected
    assert report["relations"] == {"added": 1, "skipped": 0, "rejected": 1}
    assert report["rejected"] == 7  # every line not imported, malformed or not
    assert report["batches"] == {"written": 2, "rejected": 3}
    graph = await store.read_graph()
    assert [e.name for e in graph.entities] == ["A", "B", "C", "H", "I"]
    assert rel_set(graph) == [("A", "C", "knows")]


async def test_relations_before_their_entities(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(jsonl(rel("A", "B"), rel("B", "C"), ent("A", obs=["a"]), ent("B"), ent("A", "dup")))
    report = await import_file(neo4j_info, namespace, path, clock, batch_size=2)
    assert report["entities"] == {"added": 2, "skipped": 1, "rejected": 0}
    graph = await store.read_graph()
    assert [e.model_dump() for e in graph.entities] == [
        {"name": "A", "entityType": "person", "observations": ["a"]},
        {"name": "B", "entityType": "person", "observations": []},
    ]
    labels = await labels_of(store.driver, namespace)
    assert labels == {
        "A": ["Entity", "KgNode", "KgText", "person"],
        "B": ["Entity", "KgNode", "KgText", "person"],
        "C": ["KgNode", "Placeholder"],
    }
    # Within one batch entities are written first: the relation line first in the batch still finds them.
    ns2 = namespace + "-b"
    report = await import_file(neo4j_info, ns2, path, clock, batch_size=100)
    assert report["batches"]["written"] == 1
    assert (await labels_of(store.driver, ns2)) == labels


async def test_import_many_batches(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    path = tmp_path / "big.jsonl"
    n = 2500
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps(ent(f"e{i:05d}", "thing", [f"obs {i}"])) + "\n")
        for i in range(n - 1):
            f.write(json.dumps(rel(f"e{i:05d}", f"e{i + 1:05d}", "next")) + "\n")
    report = await import_file(neo4j_info, namespace, path, clock, batch_size=1000)
    assert report["entities"] == {"added": n, "skipped": 0, "rejected": 0}
    assert report["relations"] == {"added": n - 1, "skipped": 0, "rejected": 0}
    assert report["batches"]["written"] == 5
    page = await store.read_graph(limit=10)
    assert page.entities[0].observations == ["obs 0"]


async def test_import_argument_errors(tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str) -> None:
    settings = settings_for(neo4j_info, namespace)
    with pytest.raises(ValidationError, match="no such file"):
        await run_import(settings, tmp_path / "missing.jsonl", progress=False)
    (tmp_path / "a.jsonl").write_text(jsonl(ent("A")))
    with pytest.raises(ValidationError, match="batch size"):
        await run_import(settings, tmp_path / "a.jsonl", batch_size=0, progress=False)
    with pytest.raises(ValidationError, match="unknown import format"):
        await run_import(settings, tmp_path / "a.jsonl", fmt="csv", progress=False)


# --------------------------------------------------------------------------- export


async def _sample_graph(store: GraphStore, clock: ManualClock) -> None:
    await store.create_entities(
        [
            EntityIn(
                name="Alice", entityType="person", observations=["likes tea", 'says "hi"\n', "Ünïcödé ✓"]
            ),
            EntityIn(name="Bob", entityType="person", observations=[]),
            EntityIn(name="Émile", entityType="person", observations=["à bientôt"]),
        ]
    )
    clock.advance(minutes=5)
    await store.create_relations(
        [
            RelationIn(**{"from": "Alice"}, to="Bob", relationType="knows"),
            RelationIn(**{"from": "Bob"}, to="Carol", relationType="works with"),  # Carol: placeholder
            RelationIn(**{"from": "Dave"}, to="Alice", relationType="mentions"),  # Dave: placeholder start
        ]
    )


async def test_export_jsonl_is_the_reference_file(
    tmp_path: Path,
    neo4j_info: Neo4jInfo,
    store: GraphStore,
    namespace: str,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await _sample_graph(store, clock)
    monkeypatch.setattr(export, "EXPORT_PAGE", 2)  # several pages even for this small graph
    out = tmp_path / "memory.jsonl"
    report = await run_export(settings_for(neo4j_info, namespace), out, progress=False, clock=clock)
    assert report["entities"] == 3 and report["relations"] == 3
    text = out.read_text(encoding="utf-8")
    expected = "\n".join(
        [
            '{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea","says \\"hi\\"\\n","Ünïcödé ✓"]}',
            '{"type":"entity","name":"Bob","entityType":"person","observations":[]}',
            '{"type":"entity","name":"Émile","entityType":"person","observations":["à bientôt"]}',
            '{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}',
            '{"type":"relation","from":"Bob","to":"Carol","relationType":"works with"}',
            '{"type":"relation","from":"Dave","to":"Alice","relationType":"mentions"}',
        ]
    )
    assert text == expected  # JSON.stringify per line, entities first, joined by "\n" like saveGraph
    kinds = [json.loads(line)["type"] for line in text.split("\n")]
    assert kinds == ["entity"] * 3 + ["relation"] * 3


async def test_export_empty_namespace(tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str) -> None:
    out = tmp_path / "empty.jsonl"
    report = await run_export(settings_for(neo4j_info, namespace), out, progress=False)
    assert report["entities"] == 0 and out.read_text() == ""
    full = tmp_path / "empty.full.jsonl"
    await run_export(settings_for(neo4j_info, namespace), full, fmt="full", progress=False)
    lines = full.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["format"] == "kg-neo4j-full"


async def test_jsonl_round_trip(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    await _sample_graph(store, clock)
    await store.add_observations([ObservationAdd(entityName="Bob", contents=["later"])])
    out = tmp_path / "memory.jsonl"
    await run_export(settings_for(neo4j_info, namespace), out, progress=False, clock=clock)
    copy = other_store(store)
    report = await import_file(neo4j_info, copy.namespace, out, clock)
    assert report["rejected"] == 0
    before, after = await store.read_graph(), await copy.read_graph()
    assert after.reference()["entities"] == before.reference()["entities"]
    assert rel_set(after) == rel_set(before)
    assert await labels_of(store.driver, copy.namespace) == await labels_of(store.driver, namespace)
    # And exporting the copy gives the same file.
    out2 = tmp_path / "copy.jsonl"
    await run_export(settings_for(neo4j_info, copy.namespace), out2, progress=False, clock=clock)
    assert out2.read_text() == out.read_text()


_EXTRAS = """
MATCH (n:KgNode {namespace: $ns, name: 'Alice'})
SET n:Extra,
    n.born = date('1990-05-01'),
    n.met = datetime('2026-03-01T10:00:00.123456789[Europe/Berlin]'),
    n.named_utc = datetime('2026-03-01T10:00:00[UTC]'),
    n.offset = datetime('2026-03-01T10:00:00+05:30'),
    n.local = localdatetime('2026-01-01T12:00:00.000000001'),
    n.at = time('10:00:00+02:00'),
    n.lt = localtime('09:30'),
    n.dur = duration('P1M2DT3.5S'),
    n.loc = point({x: 1.5, y: 2.0}),
    n.geo = point({longitude: 13.4, latitude: 52.5, height: 10.0}),
    n.tags = ['a', 'b'], n.scores = [1, 2, 3], n.flag = true, n.ratio = 0.25,
    n.embedding = [0.1, 0.2, 0.3], n.embedding_model = 'test-model'
WITH n
MATCH (n)-[h:HAS_OBSERVATION]->(o:Observation {seq: 1})
SET o:Pinned, o.source = 'chat', o.seen = datetime('2025-12-24T18:00:00Z'), h.note = 'link prop'
WITH n
MATCH (n)-[r:knows]->(:KgNode {name: 'Bob'})
SET r.reasoning = 'met at work', r.source = 'import test'
"""


async def test_full_round_trip_is_lossless(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    await _sample_graph(store, clock)
    clock.advance(hours=1)
    await store.add_observations([ObservationAdd(entityName="Alice", contents=["fourth"])])
    await store.delete_observations(
        [ObservationDelete(entityName="Alice", observations=["likes tea"])]
    )  # seq gap
    await store.create_relations(
        [
            RelationIn(
                **{"from": "Alice"},
                to="Émile",
                relationType="knows",
                weight=0.5,
                validFrom=datetime(2025, 1, 1, tzinfo=UTC),
                validUntil=datetime(2027, 1, 1, tzinfo=UTC),
            ),
            RelationIn(
                **{"from": "Alice"},
                to="Bob",
                relationType="worked with",
                weight=0.3,
                validFrom=datetime(2024, 1, 1, tzinfo=UTC),
            ),
        ]
    )
    # expired: closed in the past through invalidation (create refuses a relation that has already ended)
    await store.invalidate_relations(
        [
            RelationInvalidate.model_validate(
                {
                    "from": "Alice",
                    "to": "Bob",
                    "relationType": "worked with",
                    "validUntil": "2025-01-01T00:00:00+00:00",
                }
            )
        ]
    )
    await store.driver.execute_query(_EXTRAS, ns=namespace)
    original = await dump(store.driver, namespace)
    assert any("Placeholder" in n["labels"] for n in original["nodes"])

    out = tmp_path / "full.jsonl"
    report = await run_export(
        settings_for(neo4j_info, namespace), out, fmt="full", progress=False, clock=clock
    )
    assert report["entities"] == 3 and report["placeholders"] == 2 and report["relations"] == 5
    assert (
        report["skipped_properties"] == ["embedding", "embedding_model"] and report["embeddings_skipped"] == 1
    )
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["version"] == 1
    assert [x["type"] for x in lines[1:]] == ["node"] * 5 + ["relationship"] * 5
    alice = next(x for x in lines if x.get("name") == "Alice")
    assert alice["properties"]["met"] == {
        "$datetime": "2026-03-01T10:00:00.123456789+01:00",
        "zone": "Europe/Berlin",
    }
    assert "name_lower" not in alice["properties"] and "embedding" not in alice["properties"]

    copy = other_store(store)
    imported = await import_file(neo4j_info, copy.namespace, out, clock, batch_size=4)
    assert imported["format"] == "full" and imported["rejected"] == 0
    assert imported["entities"] == {"added": 5, "skipped": 0, "rejected": 0}
    assert imported["relations"] == {"added": 5, "skipped": 0, "rejected": 0}
    assert await dump(store.driver, copy.namespace) == original  # labels, props, observation order, zones
    assert (await copy.read_graph()).model_dump() == (await store.read_graph()).model_dump()

    # Exporting the copy gives the same lines (the header aside), and a second import changes nothing.
    out2 = tmp_path / "copy.jsonl"
    await run_export(settings_for(neo4j_info, copy.namespace), out2, fmt="full", progress=False, clock=clock)
    assert out2.read_text().splitlines()[1:] == out.read_text().splitlines()[1:]
    again = await import_file(neo4j_info, copy.namespace, out, clock)
    assert again["entities"]["added"] == 0 and again["relations"]["added"] == 0
    assert await dump(store.driver, copy.namespace) == original

    # The write order (turn) came along, and the copy's next observation is written after all of it.
    turns = [o["props"]["turn"] for n in original["nodes"] for o in n["observations"] if "turn" in o["props"]]
    assert turns and all(isinstance(t, int) for t in turns)  # add_observations' "fourth" has one
    await copy.add_observations([ObservationAdd(entityName="Alice", contents=["after the import"])])
    records, _, _ = await store.driver.execute_query(
        "MATCH (o:Observation {namespace: $ns, text: 'after the import'}) RETURN o.turn AS turn",
        ns=copy.namespace,
    )
    assert records[0]["turn"] > max(turns)


async def test_full_import_rejects_malformed_lines(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock
) -> None:
    header = {"type": "header", "format": "kg-neo4j-full", "version": 1}
    node = {
        "type": "node",
        "name": "A",
        "labels": ["Entity"],
        "properties": {"entityType": "t"},
        "observations": [{"labels": [], "properties": {"text": "hi", "seq": 0}}],
    }
    path = tmp_path / "full.jsonl"
    path.write_text(
        jsonl(
            header,
            node,
            {**node, "name": "B", "labels": ["Entity", "Placeholder"]},  # line 3
            {**node, "name": "C", "properties": {"when": {"$datetime": "soon"}}},  # line 4
            {**node, "name": "D", "labels": ["Entity", "bad label"]},  # line 5
            {**node, "name": "E", "properties": {"name_lower": "e"}},  # line 6
            {**node, "name": "F", "properties": {"tags": [1, "a"]}},  # line 7
            {
                "type": "relationship",
                "from": "A",
                "to": "Z",
                "relationType": "r",
                "properties": {"weight": 1.0},
            },
        )
    )
    report = await import_file(neo4j_info, namespace, path, clock, batch_size=1)
    assert [r["line"] for r in report["rejected_lines"]] == [3, 4, 5, 6, 7]
    assert "exactly one of 'Entity' and 'Placeholder'" in report["rejected_lines"][0]["error"]
    assert "$datetime" in report["rejected_lines"][1]["error"]
    assert "one kind of value" in report["rejected_lines"][4]["error"]
    assert report["entities"] == {"added": 1, "skipped": 0, "rejected": 5}
    assert report["relations"]["added"] == 1
    assert await labels_of(store.driver, namespace) == {
        "A": ["Entity", "KgNode", "KgText", "t"],
        "Z": ["KgNode", "Placeholder"],
    }

    no_header = tmp_path / "nohead.jsonl"
    no_header.write_text(jsonl(node))
    report = await import_file(neo4j_info, namespace, no_header, clock, fmt="full")
    assert report["rejected_lines"][0]["line"] == 1 and "header" in report["rejected_lines"][0]["error"]

    newer = tmp_path / "newer.jsonl"
    newer.write_text(jsonl({**header, "version": 99}, node))
    with pytest.raises(ValidationError, match="newer"):
        await import_file(neo4j_info, namespace, newer, clock)


# --------------------------------------------------------------------------- CLI


def kg(info: Neo4jInfo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG, *args], env=server_env(info), capture_output=True, text=True, timeout=300)


async def test_cli_import_export_end_to_end(
    tmp_path: Path, neo4j_info: Neo4jInfo, driver: AsyncDriver, namespace: str
) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(jsonl(ent("Alice", obs=["a"]), ent("Bob"), rel("Alice", "Bob"), rel("Bob", "Carol")))
    done = kg(neo4j_info, "import", str(src), "--namespace", namespace)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout holds the report only; the progress bar is on stderr
    assert report["entities"]["added"] == 2 and report["relations"]["added"] == 2
    assert "import jsonl" in done.stderr

    out = tmp_path / "out.jsonl"
    done = kg(neo4j_info, "export", str(out), "--namespace", namespace)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entities"] == 2
    assert out.read_text() == src.read_text().rstrip("\n").replace(": ", ":").replace(", ", ",")

    full = tmp_path / "full.jsonl"
    done = kg(neo4j_info, "export", str(full), "--format", "full", "--namespace", namespace, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("export nodes") == 0
    ns2 = f"{namespace}-cli-{uuid.uuid4().hex[:6]}"
    done = kg(neo4j_info, "import", str(full), "--namespace", ns2, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "full"
    assert await dump(driver, ns2) == await dump(driver, namespace)
    reader = GraphStore(driver, namespace=ns2, clock=SystemClock(), database=neo4j_info.database)
    assert rel_set(await reader.read_graph()) == [("Alice", "Bob", "knows"), ("Bob", "Carol", "knows")]

    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl(ent("X"), "{oops"))
    done = kg(neo4j_info, "import", str(bad), "--namespace", ns2, "--no-progress")
    assert done.returncode == 1
    assert json.loads(done.stdout)["rejected_lines"][0]["line"] == 2

    unknown = tmp_path / "x.csv"
    unknown.write_text("a,b\n")
    done = kg(neo4j_info, "import", str(unknown), "--namespace", ns2)
    assert done.returncode == 2 and "--format" in done.stderr and done.stdout == ""


@pytest.mark.unit
def test_decode_property_checks_what_neo4j_can_store() -> None:
    assert decode_property([1, 2.5]) == [1, 2.5]
    assert decode_property([{"$date": "2026-01-01"}]) == [neo4j.time.Date(2026, 1, 1)]
    for bad in ([1, "a"], [[1]], [1, None], [True, 1], [{"$date": "2026-01-01"}, "x"]):
        with pytest.raises(ValueCodecError):
            decode_property(bad)


async def test_imports_are_embedded(
    tmp_path: Path, neo4j_info: Neo4jInfo, sync_driver: Any, embedder: Any
) -> None:
    """With a model configured, imported observations and entities get vectors: reference
    formats at write time, a full export (which carries none) right after the import."""
    ns = f"embedded-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "memory.jsonl"
    path.write_text(
        jsonl(
            {"type": "entity", "name": "A", "entityType": "t", "observations": ["alpha", "beta"]},
            {"type": "relation", "from": "A", "to": "B", "relationType": "r"},
        )
    )
    await run_import(settings_for(neo4j_info, ns, "all-MiniLM-L6-v2"), path, progress=False)
    full = tmp_path / "full.jsonl"
    await run_export(settings_for(neo4j_info, ns), full, fmt="full", progress=False)
    ns2 = f"embedded-full-{uuid.uuid4().hex[:8]}"
    await run_import(settings_for(neo4j_info, ns2, "all-MiniLM-L6-v2"), full, progress=False)
    for namespace in (ns, ns2):
        records, _, _ = sync_driver.execute_query(
            "MATCH (n) WHERE (n:Observation OR n:Entity) AND n.namespace = $ns "
            "RETURN count(n) AS n, collect(DISTINCT n.embedding_model) AS models, "
            "collect(DISTINCT size(n.embedding)) AS dims",
            ns=namespace,
        )
        assert records[0]["n"] == 3
        assert records[0]["models"] == ["all-MiniLM-L6-v2"] and records[0]["dims"] == [384]
