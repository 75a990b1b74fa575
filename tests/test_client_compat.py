"""Clients of the MCP SDK 1.x and of protocol versions 2025-03-26 and 2025-06-18 keep working
against the server built on SDK 2.x (docs/connecting.md#connecting-an-agent)."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path
from typing import Any

import httpx
import pytest

from kg_neo4j.server.app import profile_tools
from support.kg import RawStdio
from support.servers import KG, ROOT, Neo4jInfo, http_server, server_env

#: what ``serve`` lists by default (the ``default`` profile's declarations)
DEFAULT_TOOLS = len(profile_tools("default"))

#: The last 1.x release of the MCP SDK, in a venv of its own (cached between runs).
MCP1 = "mcp==1.26.0"
MCP1_VENV = Path.home() / ".cache" / "kg-neo4j-tests" / "mcp-1.26.0"
CLIENT = ROOT / "tests" / "data" / "mcp1_client.py"


@pytest.fixture(scope="module")
def mcp1_python() -> Path:
    py = MCP1_VENV / "bin" / "python"
    if not py.exists() or subprocess.run([str(py), "-c", "import mcp"], capture_output=True).returncode:
        venv.create(MCP1_VENV, with_pip=True, clear=True)
        done = subprocess.run([str(py), "-m", "pip", "install", "-q", MCP1], capture_output=True, text=True)
        assert done.returncode == 0, (
            f"could not install {MCP1} for the 1.x client test: {done.stderr[-2000:]}"
        )
    return py


def _check(out: dict[str, Any], tools: int) -> None:
    assert out["sdk"].startswith("1."), out["sdk"]
    assert out["server"] == "kg-neo4j"
    assert len(out["tools"]) == tools
    created = [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]
    assert json.loads(out["created_text"]) == created
    assert out["created_structured"] == {"entities": created}
    assert json.loads(out["graph_text"]) == {"entities": created, "relations": []}
    assert out["bad_is_error"] and "Nobody" in out["bad_text"]


def test_sdk1_client_over_stdio(mcp1_python: Path, neo4j_info: Neo4jInfo, namespace: str) -> None:
    env = server_env(neo4j_info)
    done = subprocess.run(
        [str(mcp1_python), str(CLIENT), "stdio", KG, "serve", "--namespace", namespace],
        input=json.dumps(env),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    _check(json.loads(done.stdout.strip().splitlines()[-1]), DEFAULT_TOOLS)


def test_sdk1_client_over_http(mcp1_python: Path, neo4j_info: Neo4jInfo, namespace: str) -> None:
    with http_server(neo4j_info, "--namespace", namespace, "--tools", "reference") as url:
        done = subprocess.run(
            [str(mcp1_python), str(CLIENT), "http", url],
            capture_output=True,
            text=True,
            timeout=180,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
    assert done.returncode == 0, done.stderr[-3000:]
    _check(json.loads(done.stdout.strip().splitlines()[-1]), 9)


def _lines(version: str) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "create_entities",
                "arguments": {"entities": [{"name": "Bo", "entityType": "dog", "observations": ["barks"]}]},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "open_nodes", "arguments": {"names": ["Bo"]}},
        },
    ]


def _check_answers(version: str, answers: dict[int, dict[str, Any]]) -> None:
    assert answers[1]["result"]["protocolVersion"] == version
    assert answers[1]["result"]["serverInfo"]["name"] == "kg-neo4j"
    assert len(answers[2]["result"]["tools"]) == DEFAULT_TOOLS
    bo = [{"name": "Bo", "entityType": "dog", "observations": ["barks"]}]
    assert json.loads(answers[3]["result"]["content"][0]["text"]) == bo
    assert answers[3]["result"].get("isError") in (None, False)
    assert json.loads(answers[4]["result"]["content"][0]["text"]) == {"entities": bo, "relations": []}


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
def test_old_protocol_versions_over_stdio(neo4j_info: Neo4jInfo, namespace: str, version: str) -> None:
    raw = RawStdio(neo4j_info, namespace)
    answers: dict[int, dict[str, Any]] = {}
    try:
        for m in _lines(version):
            raw.send(json.dumps(m))
            if "id" in m:
                answers[m["id"]] = raw.receive()
    finally:
        raw.close()
    _check_answers(version, answers)


def _sse_json(r: httpx.Response) -> dict[str, Any]:
    if r.headers["content-type"].startswith("text/event-stream"):
        return dict(json.loads([ln[5:] for ln in r.text.splitlines() if ln.startswith("data:")][-1]))
    return dict(r.json())


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
def test_old_protocol_versions_over_http(neo4j_info: Neo4jInfo, namespace: str, version: str) -> None:
    with (
        http_server(neo4j_info, "--namespace", namespace) as url,
        httpx.Client(base_url=url, timeout=60) as c,
    ):
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        answers: dict[int, dict[str, Any]] = {}
        for m in _lines(version):
            r = c.post("/mcp", headers=headers, content=json.dumps(m))
            assert r.status_code in (200, 202), r.text
            if "mcp-session-id" in r.headers:
                headers["mcp-session-id"] = r.headers["mcp-session-id"]
            if m["method"] == "initialize" and version != "2025-03-26":
                headers["mcp-protocol-version"] = version
            if "id" in m:
                answers[m["id"]] = _sse_json(r)
    _check_answers(version, answers)
