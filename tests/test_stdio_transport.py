"""The stdio transport serves the same session whether stdout is a pipe (what every MCP client gives it)
or a regular file, with messages larger than a pipe's buffer, refused lines answered, and a clean end at
end of input (docs/connecting.md, "Protocol errors")."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.kg import INIT
from support.servers import KG, Neo4jInfo, server_env

#: longer than the pipe's 64 KiB, so one message spans several reads and writes
BIG_OBSERVATIONS = [f"observation {i}: " + "long text " * 390 for i in range(20)]


def _call(rid: int, name: str, arguments: dict[str, Any]) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


def _session_lines() -> list[str]:
    return [
        json.dumps(INIT),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        "not json",
        _call(
            3,
            "create_entities",
            {"entities": [{"name": "Ada", "entityType": "person", "observations": BIG_OBSERVATIONS}]},
        ),
        "",  # a blank line is skipped
        _call(4, "read_graph", {}) + "\r",  # a CRLF line ending
    ]


def _answers(read: Callable[[], bytes], want: int, timeout: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = read().splitlines()
        if len(lines) >= want:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"fewer than {want} answers within {timeout} s: {read()[:500]!r}")


@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
def test_one_session_through_pipes_and_files(neo4j_info: Neo4jInfo, tmp_path: Path, stdout_kind: str) -> None:
    """The same messages give the same answers whether stdout is a pipe or a regular file; messages and
    answers larger than a pipe's buffer; the server ends at end of input."""
    namespace = f"test-stdio-transport-{uuid.uuid4().hex[:8]}"
    args = [KG, "serve", "--tools", "reference", "--embedding-model", "none", "--namespace", namespace]
    out_path = tmp_path / "out.jsonl"
    with out_path.open("wb") as fout:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(neo4j_info),
            stdout=subprocess.PIPE if stdout_kind == "pipe" else fout,
        )
        assert proc.stdin is not None
        received = bytearray()

        def read() -> bytes:
            if stdout_kind == "file":
                return out_path.read_bytes()
            assert proc.stdout is not None
            while select.select([proc.stdout], [], [], 0.05)[0]:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                received.extend(chunk)
            return bytes(received)

        try:
            lines = _session_lines()
            for want, batch in ((4, lines[:-1]), (5, lines[-1:])):  # read_graph once the create has answered
                for line in batch:
                    proc.stdin.write(line.encode() + b"\n")
                    proc.stdin.flush()
                answers = _answers(read, want)
        finally:
            proc.stdin.close()  # end of input: the server stops
            code = proc.wait(timeout=60)
            err = proc.stderr.read() if proc.stderr else b""
    assert code == 0, err.decode(errors="replace")[-2000:]
    by_id = {a.get("id"): a for a in answers}
    # a refused line is answered by the transport itself, so it may overtake the answer before it
    assert sorted(by_id, key=lambda i: i or 0) == [None, 1, 2, 3, 4], answers
    assert len(by_id[2]["result"]["tools"]) == 9
    assert by_id[None]["error"]["code"] == -32700
    assert "result" in by_id[3] and not by_id[3]["result"].get("isError"), by_id[3]
    graph = json.loads(by_id[4]["result"]["content"][0]["text"])
    assert [(e["name"], e["observations"]) for e in graph["entities"]] == [("Ada", BIG_OBSERVATIONS)]
    assert graph["relations"] == []


@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
def test_empty_input_ends_cleanly(neo4j_info: Neo4jInfo, tmp_path: Path, stdout_kind: str) -> None:
    """Input that ends before any message (the pipe may already be closed as it is connected): exit 0,
    nothing written."""
    args = [
        KG,
        "serve",
        "--embedding-model",
        "none",
        "--namespace",
        f"test-stdio-empty-{uuid.uuid4().hex[:8]}",
    ]
    out_path = tmp_path / "out.jsonl"
    with out_path.open("wb") as fout:
        proc = subprocess.run(
            args,
            input=b"",
            stderr=subprocess.PIPE,
            env=server_env(neo4j_info),
            timeout=120,
            stdout=subprocess.PIPE if stdout_kind == "pipe" else fout,
        )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert (proc.stdout if stdout_kind == "pipe" else out_path.read_bytes()) == b""
