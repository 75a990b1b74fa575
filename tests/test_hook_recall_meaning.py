"""recall by meaning: with KG_NEO4J_HOOK_SEARCH_URL naming a running ``kg-neo4j serve --transport http``
(with the embedding model), ``kg-neo4j hook recall`` finds knowledge a reworded prompt shares no
keyword with; without it (or with the server refusing) it falls back to keywords."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from neo4j import AsyncDriver

from support.hooks import hook_env, knowledge_node, prompt_payload, run_hook_cli
from support.servers import Neo4jInfo, http_server, http_session, server_env

TOKEN = "s3cret-hook-token"
KNOWLEDGE = [
    {
        "name": "Deploy checklist",
        "content": "run the database migrations before deploying",
        "type": "procedure",
        "trust": "principle",
        "quote": "migrate, then deploy",
    },
    {
        "name": "Coffee",
        "content": "the office coffee machine is on floor two",
        "type": "observation",
        "trust": "pattern",
    },
    {
        "name": "Code review",
        "content": "every pull request needs one approving review",
        "type": "rule",
        "trust": "pattern",
    },
]
REWORDED = "How should I ship schema changes to production?"  # no keyword of the knowledge


async def test_recall_by_meaning_through_the_http_server(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = server_env(
        neo4j_info,
        KG_NEO4J_EMBEDDING_MODEL="all-MiniLM-L6-v2",
        KG_NEO4J_AUTH_TOKEN=TOKEN,
        KG_NEO4J_HOOK_STATE_DIR=str(tmp_path),
    )
    with http_server(neo4j_info, "--namespace", namespace, "--tools", "all", env=env) as url:
        async with http_session(url, headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            for item in KNOWLEDGE:
                assert not (await session.call_tool("store_knowledge", item)).is_error
            deadline = time.monotonic() + 120
            while True:  # the server loads its model in the background: wait until it searches by meaning
                result = await session.call_tool("search_memory", {"query": "warm up", "limit": 1})
                if json.loads(result.content[0].text)["mode"] == "hybrid" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            assert json.loads(result.content[0].text)["mode"] == "hybrid"
        keywords = hook_env(neo4j_info, namespace, tmp_path)
        assert run_hook_cli("recall", prompt_payload("sess-k", REWORDED), keywords).stdout == ""

        before = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
        meaning = hook_env(
            neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_SEARCH_URL=f"{url}/mcp", KG_NEO4J_AUTH_TOKEN=TOKEN
        )
        out = run_hook_cli("recall", prompt_payload("sess-m", REWORDED), meaning)
        lines = out.stdout.splitlines()
        assert lines[1] == (
            "- [procedure · principle · level 1] Deploy checklist: run the database migrations "
            'before deploying (expert: "migrate, then deploy")'
        )
        assert out.stderr == ""
        # one access: the server's search_memory records its hits (just after answering); the hook does not again
        deadline = time.monotonic() + 30
        while (await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist"))[
            "access_count"
        ] == before["access_count"] and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        after = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
        assert after["access_count"] == before["access_count"] + 1

        # keywords still count: a prompt naming the knowledge finds it, fused with the server's hits
        both = run_hook_cli("recall", prompt_payload("sess-m", "the coffee machine"), meaning).stdout
        first = both.splitlines()[1]  # its level grows with the accesses the searches record
        assert first.startswith("- [observation · pattern · level ") and first.endswith(
            "] Coffee: the office coffee machine is on floor two"
        )

        wrong = hook_env(
            neo4j_info,
            namespace,
            tmp_path,
            KG_NEO4J_HOOK_SEARCH_URL=f"{url}/mcp",
            KG_NEO4J_AUTH_TOKEN="wrong-token",
        )
        refused = run_hook_cli("recall", prompt_payload("sess-w", REWORDED), wrong)
        assert (refused.stdout, refused.stderr) == ("", "")  # 401: keywords alone, which find nothing
    gone = run_hook_cli("recall", prompt_payload("sess-w", "the coffee machine"), meaning)
    assert "Coffee" in gone.stdout  # the server has stopped: keywords alone
