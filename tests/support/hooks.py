"""Helpers of the hook tests: run ``kg-neo4j hook NAME`` as Claude Code does (JSON on stdin, a real
subprocess), seed knowledge through the real store, read a knowledge node back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.models import KnowledgeIn
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from support.servers import KG, Neo4jInfo, server_env

DATA = Path(__file__).resolve().parents[1] / "data"


def hook_env(info: Neo4jInfo, namespace: str, state: Path, **extra: str) -> dict[str, str]:
    """A hook subprocess's environment; its time budget raised to 60 s (a test checks what a hook
    prints, not how fast: on a busy machine the default 1 s ran out and the hook printed nothing)."""
    extra.setdefault("KG_NEO4J_HOOK_TIME_BUDGET", "60")
    return server_env(info, KG_NEO4J_NAMESPACE=namespace, KG_NEO4J_HOOK_STATE_DIR=str(state), **extra)


def run_hook_cli(name: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [KG, "hook", name], input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def prompt_payload(session: str, prompt: str, cwd: str = "/home/dev/shop") -> dict[str, Any]:
    """Claude Code's UserPromptSubmit input."""
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{session}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


async def store_knowledge(
    driver: AsyncDriver, info: Neo4jInfo, namespace: str, *items: dict[str, Any]
) -> None:
    """Knowledge written through the real store (at the real time: the hooks run in a subprocess)."""
    graph = GraphStore(driver, database=info.database, namespace=namespace)
    await KnowledgeStore(graph).store([KnowledgeIn(**item) for item in items])


async def knowledge_node(driver: AsyncDriver, info: Neo4jInfo, namespace: str, name: str) -> dict[str, Any]:
    records, _, _ = await driver.execute_query(
        "MATCH (k:Knowledge {namespace: $ns, name: $name}) RETURN properties(k) AS p",
        ns=namespace,
        name=name,
        database_=info.database,
    )
    assert len(records) == 1, name
    return dict(records[0]["p"])


DEPLOY = {
    "name": "Deploy checklist",
    "content": "run the database migrations before deploying",
    "type": "procedure",
    "trust": "principle",
    "quote": "migrate, then deploy",
}
