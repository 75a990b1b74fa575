"""Non-English memory (docs/recall.md#languages): the fulltext analyzer is a setting, checked at start against
Neo4j's analyzers and the index's own (a change stops the server, naming `kg-neo4j rebuild-fulltext`);
Chinese (cjk) and German text stored through MCP tools is found by fulltext recall where the english
analyzer finds it wrongly or not at all.  The embedding model can be a local directory or an installed
Python package; its dimension sizes the vector indexes, and another dimension is a clear error naming
`kg-neo4j reembed`.

The analyzer and the model are properties of the whole database, so these tests run on the private
Neo4j (conftest ``private_neo4j_server``, shared with test_reembed.py and emptied per module).  No
weights are downloaded: the models are made here from the shipped model's files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg_neo4j.embeddings import resolve_model
from support.servers import KG, Neo4jInfo, server_env, stdio_session, wipe_neo4j

ZH_DB = "数据库每天晚上需要备份"  # "the database needs a backup every night"
ZH_DECOY = "据说库房里有数不清的箱子"  # holds 数, 据 and 库, but not the word 数据库
DE_DB = "Die Datenbanken werden jede Nacht gesichert"
DE_DOG = "Der Hund schläft im Garten"
TEXTS = {"zh-1": ZH_DB, "zh-2": ZH_DECOY, "de-1": DE_DB, "de-2": DE_DOG}


@pytest.fixture
def private(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    """The private Neo4j, emptied before each test: each of them starts from a fresh database (the analyzer
    and the vector dimensions are set by the first server on it), whatever ran before it."""
    wipe_neo4j(private_neo4j_server)
    return private_neo4j_server


def kg(info: Neo4jInfo, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KG, *args],
        env=server_env(info, **env),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


async def recall_all(
    info: Neo4jInfo, namespace: str, queries: list[str], **env: str
) -> dict[str, tuple[set[str], str]]:
    """Per query, the observations search_memory's hits hold and its mode, from one server started with ``env``."""
    out = {}
    async with stdio_session(info, "--namespace", namespace, env=server_env(info, **env)) as s:
        for query in queries:
            result = await s.call_tool("search_memory", {"query": query})
            assert not result.is_error, result.content[0].text
            data = json.loads(result.content[0].text)
            out[query] = ({h["observation"] for h in data["hits"] if h["observation"]}, data["mode"])
    return out


async def recall(info: Neo4jInfo, namespace: str, query: str, **env: str) -> tuple[set[str], str]:
    return (await recall_all(info, namespace, [query], **env))[query]


async def test_fulltext_analyzer_setting_detection_rebuild_and_recall(private: Neo4jInfo) -> None:
    ns = "languages"
    # A fresh database gets the index with the configured analyzer; store through the MCP tools.
    async with stdio_session(
        private, "--namespace", ns, env=server_env(private, KG_NEO4J_FULLTEXT_ANALYZER="cjk")
    ) as s:
        result = await s.call_tool(
            "create_entities",
            {
                "entities": [
                    {"name": name, "entityType": "note", "observations": [text]}
                    for name, text in TEXTS.items()
                ]
            },
        )
        assert not result.is_error, result.content[0].text
    cjk = await recall(private, ns, "数据库", KG_NEO4J_FULLTEXT_ANALYZER="cjk")
    assert cjk == ({ZH_DB}, "fulltext+graph")  # bigrams: 数据 + 据库; the decoy has neither

    # Starting with another analyzer is detected and names the rebuild; nothing is served.
    proc = kg(private, "serve", "--namespace", ns, "--fulltext-analyzer", "english")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "kg-neo4j rebuild-fulltext --fulltext-analyzer english" in proc.stderr and "'cjk'" in proc.stderr

    # An analyzer Neo4j does not offer, or a malformed name, is refused with what is allowed.
    proc = kg(private, "serve", "--namespace", ns, KG_NEO4J_FULLTEXT_ANALYZER="klingon")
    assert proc.returncode == 2
    assert "'klingon' is not a fulltext analyzer this Neo4j offers" in proc.stderr
    assert all(a in proc.stderr for a in ("cjk", "german", "standard-no-stop-words"))
    proc = kg(private, "serve", "--fulltext-analyzer", "Not valid!")
    assert (
        proc.returncode == 2
        and "--fulltext-analyzer" in proc.stderr
        and "listAvailableAnalyzers" in proc.stderr
    )

    # The rebuild: Neo4j indexes the stored text again with the new analyzer.
    proc = kg(private, "rebuild-fulltext", "--fulltext-analyzer", "english", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "index": "kg_fulltext_ns",
        "analyzer": "english",
        "previous": "cjk",
        "rebuilt": True,
    }
    english = await recall_all(private, ns, ["数据库", "Datenbank"], KG_NEO4J_FULLTEXT_ANALYZER="english")
    # english splits Chinese into single characters: the decoy matches as well as the real answer
    assert english["数据库"][0] == {ZH_DB, ZH_DECOY}
    # and its English stemmer leaves the German plural alone: "Datenbank" does not find "Datenbanken"
    assert english["Datenbank"][0] == set()

    proc = kg(private, "rebuild-fulltext", "--no-progress", KG_NEO4J_FULLTEXT_ANALYZER="german")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["previous"] == "english"
    again = kg(private, "rebuild-fulltext", "--no-progress", KG_NEO4J_FULLTEXT_ANALYZER="german")
    assert json.loads(again.stdout)["rebuilt"] is False  # idempotent
    german = await recall_all(private, ns, ["Datenbank", "Hunde"], KG_NEO4J_FULLTEXT_ANALYZER="german")
    assert german["Datenbank"] == ({DE_DB}, "fulltext+graph")
    assert german["Hunde"][0] == {DE_DOG}  # plural -> Hund
    # back to the default, so that the next test's servers start as everyone's do
    assert kg(private, "rebuild-fulltext", "--no-progress").returncode == 0


def sliced_model(dst: Path, *, hidden: int = 128, layers: int = 2, intermediate: int = 512) -> Path:
    """A small BERT model directory made from the shipped model's files (nothing downloaded): its first
    ``layers`` layers, each tensor cut to ``hidden`` / ``intermediate`` dimensions, the same tokenizer.
    A poorer model, but a real one the numpy runtime runs, of another dimension (128, not 384)."""
    from safetensors.numpy import load_file, save_file

    base = resolve_model("all-MiniLM-L6-v2")
    assert base is not None
    src = base.path
    dst.mkdir(parents=True)
    for name in (
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
        "special_tokens_map.json",
        "sentence_bert_config.json",
        "modules.json",
        "config_sentence_transformers.json",
    ):
        shutil.copy(src / name, dst / name)
    config = json.loads((src / "config.json").read_text())
    config.update(
        hidden_size=hidden,
        num_attention_heads=hidden // 32,
        num_hidden_layers=layers,
        intermediate_size=intermediate,
    )
    (dst / "config.json").write_text(json.dumps(config))
    (dst / "1_Pooling").mkdir()
    pooling = json.loads((src / "1_Pooling" / "config.json").read_text())
    pooling["word_embedding_dimension"] = hidden
    (dst / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    cut = {384: hidden, 1536: intermediate}
    tensors = {}
    for name, t in load_file(str(src / "model.safetensors")).items():
        if name.startswith("encoder.layer.") and int(name.split(".")[2]) >= layers:
            continue
        tensors[name] = np.ascontiguousarray(t[tuple(slice(0, cut.get(n, n)) for n in t.shape)])
    save_file(tensors, str(dst / "model.safetensors"))
    return dst


def model_package(site: Path, module: str) -> Path:
    """An installed Python package carrying the shipped model in its model/ folder (files linked)."""
    base = resolve_model("all-MiniLM-L6-v2")
    assert base is not None
    pkg = site / module
    (pkg / "model").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A sentence-transformers model shipped as a package."""\n')
    for item in base.path.iterdir():
        (pkg / "model" / item.name).symlink_to(item)
    return pkg


async def vector_dimensions(info: Neo4jInfo) -> dict[str, Any]:
    from neo4j import AsyncGraphDatabase

    async with AsyncGraphDatabase.driver(info.uri, auth=(info.username, info.password)) as drv:
        records, _, _ = await drv.execute_query(
            "SHOW VECTOR INDEXES YIELD name, options RETURN name, options.indexConfig.`vector.dimensions` AS dim"
        )
    return {r["name"]: r["dim"] for r in records}


async def test_local_directory_and_installed_package_models(private: Neo4jInfo, tmp_path: Path) -> None:
    ns = "models"
    tiny = sliced_model(tmp_path / "tiny-minilm-128")
    site = tmp_path / "site"
    model_package(site, "kg_test_minilm_pkg")

    # A local directory: its dimension (128, read from its files) sizes the vector indexes.
    env = {"KG_NEO4J_EMBEDDING_MODEL": str(tiny)}
    async with stdio_session(private, "--namespace", ns, env=server_env(private, **env)) as s:
        result = await s.call_tool(
            "create_entities",
            {
                "entities": [
                    {
                        "name": "Alice",
                        "entityType": "person",
                        "observations": ["Alice adopted a kitten last week"],
                    },
                    {"name": "Bob", "entityType": "person", "observations": ["Bob repairs old bicycles"]},
                ]
            },
        )
        assert not result.is_error, result.content[0].text
    assert (await vector_dimensions(private))["kg_observation_embedding"] == 128
    found, mode = await recall(private, ns, "Alice adopted a kitten last week", **env)
    assert mode == "hybrid" and "Alice adopted a kitten last week" in found

    # An installed package (by its distribution or module name) of another dimension: a clear error naming
    # reembed; after `kg-neo4j reembed` the server recalls by meaning (no shared word with the question).
    pkg_env = {"KG_NEO4J_EMBEDDING_MODEL": "kg-test-minilm-pkg", "PYTHONPATH": str(site)}
    proc = kg(private, "serve", "--namespace", ns, **pkg_env)
    assert proc.returncode == 2
    assert "kg-neo4j reembed --embedding-model kg-test-minilm-pkg" in proc.stderr and "384" in proc.stderr
    proc = kg(private, "reembed", "--no-progress", **pkg_env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["dimension"] == 384
    assert (await vector_dimensions(private))["kg_observation_embedding"] == 384
    found, mode = await recall(private, ns, "who got a new cat?", **pkg_env)
    assert mode == "hybrid" and "Alice adopted a kitten last week" in found

    # A package that carries no model is named as such.
    proc = kg(private, "serve", "--namespace", ns, KG_NEO4J_EMBEDDING_MODEL="json")
    assert proc.returncode == 2 and "carries no sentence-transformers model" in proc.stderr


@pytest.mark.unit
def test_docs_languages_section_matches_the_tests() -> None:
    from support.servers import ROOT

    section = (
        (ROOT / "docs" / "recall.md")
        .read_text(encoding="utf-8")
        .split("\n## Languages", 1)[1]
        .split("\n## ", 1)[0]
    )
    for needle in (
        "KG_NEO4J_FULLTEXT_ANALYZER",
        "--fulltext-analyzer",
        "kg-neo4j rebuild-fulltext",
        "listAvailableAnalyzers",
        ZH_DB,
        ZH_DECOY,
        "Datenbank",
        "`german`",
        "`cjk`",
        "kg-neo4j reembed",
    ):
        assert needle in section, needle
