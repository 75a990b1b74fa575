"""kg_neo4j.runtime: each caller opens only what it asks for (docs/development.md#layout), against the real Neo4j."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import neo4j
import pytest

from kg_neo4j.runtime import hook_driver, open_resources
from kg_neo4j.settings import Settings
from support.servers import Neo4jInfo


def settings_for(info: Neo4jInfo, embedding_model: str = "none") -> Settings:
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        neo4j_database=info.database,
        namespace=f"rt-{uuid.uuid4().hex[:8]}",
        embedding_model=embedding_model,
    )


async def test_without_bootstrap_or_embedder_only_the_driver_is_opened_and_closed(
    neo4j_info: Neo4jInfo,
) -> None:
    async with open_resources(settings_for(neo4j_info, "all-MiniLM-L6-v2"), bootstrap=None) as rt:
        assert rt.model is None and rt.embedder is None  # not asked for: the model is not even resolved
        records, _, _ = await rt.driver.execute_query("RETURN 1 AS one", database_=rt.database)
        assert records[0]["one"] == 1
        driver = rt.driver
    with pytest.raises(Exception):  # noqa: B017,PT011 - the driver's own "closed" error
        await driver.execute_query("RETURN 1", database_=neo4j_info.database)


async def test_embedder_follows_the_configured_model(neo4j_info: Neo4jInfo) -> None:
    async with open_resources(settings_for(neo4j_info, "none"), bootstrap="schema", embedder=True) as rt:
        assert rt.model is None and rt.embedder is None  # 'none': nothing to load
        store = rt.graph_store()
        assert rt.graph_store() is store  # one GraphStore per runtime: its caches are shared
        assert store.namespace == rt.namespace
    async with open_resources(
        settings_for(neo4j_info, "all-MiniLM-L6-v2"), bootstrap="full", embedder=True
    ) as rt:
        assert rt.model is not None and rt.model.dimension == 384
        assert rt.embedder is not None and rt.graph_store().embedder is rt.embedder


def test_a_schema_only_runtime_imports_no_torch(neo4j_info: Neo4jInfo) -> None:
    """What maintain, export and rebuild-fulltext open: no encoder, so no torch in the process."""
    probe = (
        "import asyncio, json, sys\n"
        "from kg_neo4j.runtime import open_resources\n"
        "from kg_neo4j.settings import Settings\n"
        "s = Settings(neo4j_uri=sys.argv[1], neo4j_username=sys.argv[2], neo4j_password=sys.argv[3],\n"
        "             neo4j_database=sys.argv[4], embedding_model='all-MiniLM-L6-v2')\n"
        "async def main():\n"
        "    async with open_resources(s, bootstrap='schema') as rt:\n"
        "        rt.maintenance_store(); rt.transfer_store()\n"
        "asyncio.run(main())\n"
        "print(json.dumps(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            neo4j_info.uri,
            neo4j_info.username,
            neo4j_info.password,
            neo4j_info.database,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == []


async def test_hook_driver_fails_fast_and_does_not_bootstrap(neo4j_info: Neo4jInfo) -> None:
    driver, conn = hook_driver(settings_for(neo4j_info), 1.0)
    try:
        assert conn.database == neo4j_info.database
        records, _, _ = await driver.execute_query("RETURN 2 AS two", database_=conn.database)
        assert records[0]["two"] == 2
    finally:
        await driver.close()
    dead = Settings(neo4j_uri="bolt://127.0.0.1:9", neo4j_username="neo4j", neo4j_password="x")
    driver, _ = hook_driver(dead, 0.5)  # no round trip when made: the first query fails, within the timeout
    try:
        with pytest.raises((neo4j.exceptions.ServiceUnavailable, OSError)):
            await driver.execute_query("RETURN 1")
    finally:
        await driver.close()
