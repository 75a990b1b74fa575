"""A model or dimension change is detected at startup (without torch) and stops the server with
a clear error naming `kg-neo4j reembed`; reembed fixes it, in committed batches, resumably.

Runs on a second, private Neo4j (a temporary home on free ports), because the embedding model
is a property of the whole database."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kg_neo4j.embeddings import load_embedder
from kg_neo4j.errors import ConfigError
from kg_neo4j.models import EntityIn
from kg_neo4j.server.app import open_runtime
from kg_neo4j.settings import Settings
from kg_neo4j.store import connect
from kg_neo4j.store.embeddings import reembed
from support.servers import KG, Neo4jInfo, server_env, wipe_neo4j

PEOPLE = [
    EntityIn(
        name=f"P{i}",
        entityType="person",
        observations=[f"P{i} likes topic number {i}", f"P{i} lives in city {i}"],
    )
    for i in range(30)
]


@pytest.fixture(scope="module")
def private_neo4j(private_neo4j_server: Neo4jInfo) -> Neo4jInfo:
    wipe_neo4j(private_neo4j_server)  # shared with test_languages.py: start from an empty database
    return private_neo4j_server


#: Another model, another dimension: a random 128-d, 2-layer BERT the numpy runtime runs (nothing downloaded,
#: no torch), made once by tests/data/embeddings/make_reference.py.
SMALL_MODEL = Path(__file__).resolve().parent / "data" / "embeddings" / "tiny-bert-128"


@pytest.fixture(scope="module")
def small_model() -> Path:
    assert (SMALL_MODEL / "model.safetensors").is_file()
    return SMALL_MODEL


def settings_for(info: Neo4jInfo, model: str, namespace: str = "reembed") -> Settings:
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        embedding_model=model,
        namespace=namespace,
    )


async def vector_dims(info: Neo4jInfo) -> dict[str, Any]:
    driver, _ = await connect(settings_for(info, "none"))
    try:
        records, _, _ = await driver.execute_query(
            "SHOW VECTOR INDEXES YIELD name, options, state "
            "RETURN name, options.indexConfig.`vector.dimensions` AS dim, state"
        )
        return {r["name"]: (r["dim"], r["state"]) for r in records}
    finally:
        await driver.close()


@pytest.mark.line_independent
def test_model_files_give_dimension_without_torch(small_model: Path) -> None:
    code = (
        "import sys; from kg_neo4j.embeddings import resolve_model; "
        f"i = resolve_model({str(small_model)!r}); print(i.dimension, 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [str(Path(KG).with_name("python")), "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["128", "False"]


async def test_model_change_is_refused_reembed_fixes_it_and_resumes_when_interrupted(
    private_neo4j: Neo4jInfo, small_model: Path
) -> None:
    # 1. a graph embedded with MiniLM (384)
    async with open_runtime(settings_for(private_neo4j, "all-MiniLM-L6-v2")) as rt:
        await rt.store.create_entities(PEOPLE)
    assert (await vector_dims(private_neo4j))["kg_observation_embedding"] == (384, "ONLINE")

    # 2. the server refuses another model, naming `kg-neo4j reembed` (the serve process, as users meet it)
    env = server_env(private_neo4j, KG_NEO4J_EMBEDDING_MODEL=str(small_model))
    proc = subprocess.run(
        [KG, "serve", "--namespace", "reembed"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "kg-neo4j reembed" in proc.stderr and "all-MiniLM-L6-v2" in proc.stderr and "128" in proc.stderr

    # 3. reembed (CLI, committed batches) switches the whole database to the new model
    proc = subprocess.run(
        [KG, "reembed", "--batch-size", "16", "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["model"] == str(small_model) and report["dimension"] == 128
    assert report["reembedded"] == len(PEOPLE) * 3  # 60 observations + 30 entities
    assert (await vector_dims(private_neo4j))["kg_observation_embedding"] == (128, "ONLINE")

    async with open_runtime(settings_for(private_neo4j, str(small_model))) as rt:
        assert rt.store.embedder is not None and rt.store.embedder.runtime == "numpy"
        result = await rt.store.search_memory("P7 likes topic number 7", limit=3)
    assert result.mode == "hybrid" and "P7 likes topic number 7" in [h.observation for h in result.hits]

    # 4. back to MiniLM, interrupted (the tests run in random order: one story, one test)
    await interrupted_reembed_is_reported_and_resumes(private_neo4j)


async def interrupted_reembed_is_reported_and_resumes(private_neo4j: Neo4jInfo) -> None:
    """The database is on the 128-d model; go back to MiniLM, interrupted."""
    minilm = load_embedder("all-MiniLM-L6-v2", background=False)
    assert minilm is not None
    settings = settings_for(private_neo4j, "all-MiniLM-L6-v2")
    driver, conn = await connect(settings)
    batches = 0

    def stop_after_two(n: int) -> None:
        nonlocal batches
        batches += 1
        if batches == 2:
            raise KeyboardInterrupt  # what Ctrl-C would do mid-run

    try:
        with pytest.raises(KeyboardInterrupt):
            await reembed(driver, conn.database, minilm, batch_size=10, on_progress=stop_after_two)
        with pytest.raises(ConfigError, match="interrupted"):
            async with open_runtime(settings):
                pass
        second = await reembed(driver, conn.database, minilm, batch_size=10)
        assert second["reembedded"] == len(PEOPLE) * 3 - 20  # the two committed batches are not redone
        records, _, _ = await driver.execute_query(
            "MATCH (n) WHERE n:Observation OR n:Entity RETURN collect(DISTINCT n.embedding_model) AS models, "
            "collect(DISTINCT size(n.embedding)) AS dims"
        )
        assert records[0]["models"] == ["all-MiniLM-L6-v2"] and records[0]["dims"] == [384]
    finally:
        await driver.close()
    async with open_runtime(settings) as rt:
        assert (await rt.store.search_memory("P3 topic", limit=2)).hits
