"""``kg-neo4j export --format memorymesh | simple-memory``: the files MemoryMesh and Simple Memory
write, and each round trip through ``kg-neo4j import`` (docs/moving-over.md#moving-over-from-the-reference-memory-server)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kg_neo4j.clock import ManualClock
from kg_neo4j.commands.transfer import run_export, run_import
from kg_neo4j.formats import EXPORT_FORMATS
from kg_neo4j.models import EntityIn, RelationIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.transfer import detect_format, export
from support.servers import KG, Neo4jInfo, server_env

ENTITIES = [
    {"name": "Alice", "entityType": "person", "observations": ["likes tea", 'says "hi"\n', "Ünïcödé ✓"]},
    {"name": "Bob", "entityType": "person", "observations": []},
    {"name": "Émile", "entityType": "person", "observations": ["à bientôt"]},
]
#: (from, to, type, weight): Carol is never created (a placeholder end), Dave neither.
RELATIONS = [
    ("Alice", "Bob", "knows", 0.5),
    ("Bob", "Carol", "works with", 1.0),
    ("Dave", "Alice", "mentions", 0.25),
]


def settings_for(info: Neo4jInfo, namespace: str) -> Settings:
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        neo4j_database=info.database,
        namespace=namespace,
        embedding_model="none",
    )


async def sample(store: GraphStore, clock: ManualClock) -> None:
    await store.create_entities([EntityIn(**e) for e in ENTITIES])
    clock.advance(minutes=1)
    await store.create_relations(
        [RelationIn(**{"from": a}, to=b, relationType=t, weight=w) for a, b, t, w in RELATIONS]
    )


async def test_memorymesh_file(
    tmp_path: Path,
    neo4j_info: Neo4jInfo,
    store: GraphStore,
    namespace: str,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await sample(store, clock)
    monkeypatch.setattr(export, "EXPORT_PAGE", 2)  # several pages even for this small graph
    out = tmp_path / "mesh.jsonl"
    report = await run_export(
        settings_for(neo4j_info, namespace), out, fmt="memorymesh", progress=False, clock=clock
    )
    assert (report["entities"], report["relations"]) == (3, 3)
    lines = [
        *(
            json.dumps(
                {
                    "type": "node",
                    "name": e["name"],
                    "nodeType": e["entityType"],
                    "metadata": e["observations"],
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
            for e in ENTITIES
        ),
        '{"type":"edge","from":"Alice","to":"Bob","edgeType":"knows","weight":0.5}',
        '{"type":"edge","from":"Bob","to":"Carol","edgeType":"works with","weight":1}',  # 1, as JavaScript writes it
        '{"type":"edge","from":"Dave","to":"Alice","edgeType":"mentions","weight":0.25}',
    ]
    assert out.read_text(encoding="utf-8") == "".join(line + "\n" for line in lines)
    assert detect_format(out) == "memorymesh"


async def test_simple_memory_file(
    tmp_path: Path,
    neo4j_info: Neo4jInfo,
    store: GraphStore,
    namespace: str,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await sample(store, clock)
    monkeypatch.setattr(export, "EXPORT_PAGE", 2)
    out = tmp_path / "memory.json"
    await run_export(
        settings_for(neo4j_info, namespace), out, fmt="simple-memory", progress=False, clock=clock
    )
    graph = {
        "entities": ENTITIES,
        "relations": [{"from": a, "to": b, "relationType": t} for a, b, t, _ in RELATIONS],
    }
    # JSON.stringify(graph, null, 2), which is what json.dumps(indent=2) writes too
    assert out.read_text(encoding="utf-8") == json.dumps(graph, ensure_ascii=False, indent=2)
    assert detect_format(out) == "simple-memory"


@pytest.mark.parametrize("fmt", ["memorymesh", "simple-memory"])
async def test_empty_namespace(tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str, fmt: str) -> None:
    out = tmp_path / "empty.out"
    report = await run_export(settings_for(neo4j_info, namespace), out, fmt=fmt, progress=False)
    assert report["entities"] == 0
    expected = "" if fmt == "memorymesh" else json.dumps({"entities": [], "relations": []}, indent=2)
    assert out.read_text() == expected


async def _graph(store: GraphStore) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    g = await store.read_graph()
    return g.reference()["entities"], sorted((r.from_, r.to, r.relationType, r.weight) for r in g.relations)


@pytest.mark.parametrize("fmt", ["memorymesh", "simple-memory"])
async def test_round_trip_through_import(
    tmp_path: Path, neo4j_info: Neo4jInfo, store: GraphStore, namespace: str, clock: ManualClock, fmt: str
) -> None:
    await sample(store, clock)
    out = tmp_path / f"graph.{fmt}"
    await run_export(settings_for(neo4j_info, namespace), out, fmt=fmt, progress=False, clock=clock)
    copy = GraphStore(store.driver, database=store.database, namespace=f"{namespace}-copy", clock=clock)
    report = await run_import(settings_for(neo4j_info, copy.namespace), out, progress=False, clock=clock)
    assert report["format"] == fmt and report["rejected"] == 0
    (ents, rels), (ents2, rels2) = await _graph(store), await _graph(copy)
    assert ents2 == ents
    if fmt == "memorymesh":
        assert rels2 == rels  # weights travel with MemoryMesh edges
    else:
        assert [r[:3] for r in rels2] == [r[:3] for r in rels]  # Simple Memory has no weights
    out2 = tmp_path / f"again.{fmt}"
    await run_export(settings_for(neo4j_info, copy.namespace), out2, fmt=fmt, progress=False, clock=clock)
    assert out2.read_text() == out.read_text()


def test_cli_offers_every_format(neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path) -> None:
    for fmt in EXPORT_FORMATS:
        out = tmp_path / f"x.{fmt}"
        done = subprocess.run(
            [KG, "export", str(out), "--format", fmt, "--namespace", namespace, "--no-progress"],
            env=server_env(neo4j_info),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert out.exists()
