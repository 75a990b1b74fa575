"""``kg-neo4j hook search-enforcer`` end to end: with KG_NEO4J_HOOK_GUARD_TOOLS set, a guarded tool is
denied (Claude Code's PreToolUse JSON) until the agent session searched memory: search_memory through
a real MCP session (its marker), or the recall hook showing knowledge."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from neo4j import AsyncDriver

from kg_neo4j.hooks.state import HookState
from support.hooks import DEPLOY, hook_env, prompt_payload, run_hook_cli, store_knowledge
from support.servers import Neo4jInfo, stdio_session


def pre_tool(session: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's PreToolUse input."""
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{session}.jsonl",
        "cwd": "/home/dev/shop",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }


EDIT = {"file_path": "/home/dev/shop/Makefile", "old_string": "deploy:\n", "new_string": "deploy: migrate\n"}


def denial(stdout: str) -> str:
    """The reason of a PreToolUse deny answer (fails on anything else)."""
    answer = json.loads(stdout)
    assert set(answer) == {"hookSpecificOutput"}
    out = answer["hookSpecificOutput"]
    assert (out["hookEventName"], out["permissionDecision"]) == ("PreToolUse", "deny")
    assert set(out) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    return str(out["permissionDecisionReason"])


async def test_guarded_tools_wait_for_a_memory_search(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    await store_knowledge(driver, neo4j_info, namespace, DEPLOY)
    env = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_GUARD_TOOLS="Edit,Write,Bash")
    reason = denial(run_hook_cli("search-enforcer", pre_tool("sess-e", "Edit", EDIT), env).stdout)
    assert reason == (
        "kg-neo4j: search the memory before using Edit in this session. Call the search_memory tool "
        'with {"query": "/home/dev/shop/Makefile"} (or your own words for what you are about to do), '
        "apply what it returns, then retry."
    )
    bash = denial(
        run_hook_cli(
            "search-enforcer",
            pre_tool("sess-e", "Bash", {"command": "make deploy", "description": "Deploy"}),
            env,
        ).stdout
    )
    assert '{"query": "Deploy"}' in bash
    # tools not guarded, and the memory tools themselves, pass
    for tool, tool_input in (
        ("Read", {"file_path": "/home/dev/shop/Makefile"}),
        ("mcp__kg-neo4j__search_memory", {"query": "deploy"}),
    ):
        assert run_hook_cli("search-enforcer", pre_tool("sess-e", tool, tool_input), env).stdout == ""

    # a real search_memory through an MCP session of the same namespace leaves the marker
    async with stdio_session(neo4j_info, env=env) as session:
        result = await session.call_tool("search_memory", {"query": "deploy the database"})
        assert not result.is_error
    marker = HookState(tmp_path, namespace).last_search_path
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:  # written just after the answer
        await asyncio.sleep(0.1)
    assert json.loads(marker.read_text())["session"].startswith("mcp-")
    assert run_hook_cli("search-enforcer", pre_tool("sess-e", "Edit", EDIT), env).stdout == ""

    # a session first seen after that search has not searched yet; recall showing knowledge counts as one
    assert denial(
        run_hook_cli("search-enforcer", pre_tool("sess-f", "Write", {"file_path": "/x"}), env).stdout
    )
    assert (
        "Deploy checklist"
        in run_hook_cli("recall", prompt_payload("sess-f", "deploy the database"), env).stdout
    )
    assert run_hook_cli("search-enforcer", pre_tool("sess-f", "Write", {"file_path": "/x"}), env).stdout == ""


def test_without_the_setting_nothing_is_guarded(
    neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = hook_env(neo4j_info, namespace, tmp_path)
    assert run_hook_cli("search-enforcer", pre_tool("sess-g", "Edit", EDIT), env).stdout == ""
    everything = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_GUARD_TOOLS="*")
    assert denial(
        run_hook_cli(
            "search-enforcer", pre_tool("sess-g", "WebFetch", {"url": "https://x"}), everything
        ).stdout
    )
    bad = run_hook_cli(
        "search-enforcer",
        pre_tool("sess-g", "Edit", EDIT),
        hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_GUARD_TOOLS="Edit;Write"),
    )
    assert (
        bad.stdout == ""
        and "KG_NEO4J_HOOK_GUARD_TOOLS must be a comma-separated list of tool names" in bad.stderr
    )


PROBE = """
import io, json, sys
from kg_neo4j.cli import main
sys.stdin = io.StringIO(json.dumps({"session_id": "probe", "tool_name": "Edit", "tool_input": {"file_path": "/x"}}))
code = main(["hook", "search-enforcer"])
print(json.dumps({"code": code, "neo4j": "neo4j" in sys.modules}), file=sys.stderr)
"""


def test_the_enforcer_does_not_load_the_neo4j_driver(
    neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    """It runs before every tool call: it answers from the state files alone."""
    import subprocess
    import sys

    env = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_GUARD_TOOLS="Edit")
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == {"code": 0, "neo4j": False}
    assert denial(proc.stdout)


async def test_a_server_given_the_agent_session_id_marks_that_session(
    neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_GUARD_TOOLS="Edit")
    async with stdio_session(neo4j_info, env={**env, "KG_NEO4J_SESSION_ID": "claude-7"}) as session:
        assert not (await session.call_tool("search_memory", {"query": "deploy"})).is_error
    state = HookState(tmp_path, namespace)
    deadline = time.monotonic() + 30
    while not state.session("claude-7").get("searched_at") and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert state.session("claude-7")["searched_at"]
    # the namespace marker is older than a session first seen now, but this session searched itself
    assert run_hook_cli("search-enforcer", pre_tool("claude-7", "Edit", EDIT), env).stdout == ""
    assert denial(run_hook_cli("search-enforcer", pre_tool("claude-8", "Edit", EDIT), env).stdout)
