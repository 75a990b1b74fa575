"""auto-capture: the agent-type Stop hook's settings snippet (docs/hooks.md) and ``kg-neo4j hook
auto-capture`` end to end on Claude Code JSONL transcripts (tests/data/transcript_*.jsonl): it blocks
once with store_knowledge instructions when it finds learning signals, never when stop_hook_active is
true, and grades the knowledge recall showed `applied` (grade 4) when the user did not correct it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from neo4j import AsyncDriver

from kg_neo4j.hooks import HOOKS
from kg_neo4j.knowledge.decay import GRADE_MULTIPLIER
from kg_neo4j.knowledge.vocabulary import AccessGrade
from kg_neo4j.models import KnowledgeIn
from support.hooks import (
    DATA,
    DEPLOY,
    hook_env,
    knowledge_node,
    prompt_payload,
    run_hook_cli,
    store_knowledge,
)
from support.servers import Neo4jInfo

DOCS = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"
FIRST_PROMPT = "How do we deploy the database?"  # the transcripts' first user prompt


def json_blocks() -> list[dict[str, Any]]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.S)]


@pytest.mark.unit
def test_settings_snippets_parse_and_name_our_hooks_and_tools() -> None:
    command_type, agent_type = json_blocks()
    commands = [h["command"] for groups in command_type["hooks"].values() for g in groups for h in g["hooks"]]
    assert sorted(re.search(r"kg-neo4j hook (\S+)", c).group(1) for c in commands) == sorted(HOOKS)  # type: ignore[union-attr]
    (stop,) = agent_type["hooks"]["Stop"]
    (hook,) = stop["hooks"]
    assert hook["type"] == "agent" and hook["timeout"] == 60
    for word in (
        "store_knowledge",
        "update_knowledge",
        "forget_knowledge",
        "connect_knowledge",
        "search_memory",
        "stop_hook_active",
        "transcript_path",
        "$ARGUMENTS",
        "<auto-capture>",
        '"quote"',
    ):
        assert word in hook["prompt"], word
    # the fields the prompt asks for are store_knowledge's own
    asked = set(re.findall(r'\\?"(\w+)\\?": ', hook["prompt"])) - {"ok", "reason"}
    assert asked <= set(KnowledgeIn.model_fields) and {"name", "content", "type", "trust", "source"} <= asked


def stop(session: str, transcript: Path, active: bool = False) -> dict[str, Any]:
    """Claude Code's Stop input."""
    return {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": "/home/dev/shop",
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
    }


async def _recalled(
    driver: AsyncDriver, info: Neo4jInfo, namespace: str, env: dict[str, str], session: str
) -> dict[str, Any]:
    await store_knowledge(driver, info, namespace, DEPLOY)
    assert "Deploy checklist" in run_hook_cli("recall", prompt_payload(session, FIRST_PROMPT), env).stdout
    return await knowledge_node(driver, info, namespace, "Deploy checklist")


async def test_learning_signals_block_once_and_grade_applied(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = hook_env(neo4j_info, namespace, tmp_path / "state")
    before = await _recalled(driver, neo4j_info, namespace, env, "sess-l")
    transcript = tmp_path / "sess-l.jsonl"
    shutil.copy(DATA / "transcript_learning.jsonl", transcript)

    # stop_hook_active: never blocks (but the user answered the recalled knowledge without correcting it)
    out = run_hook_cli("auto-capture", stop("sess-l", transcript, active=True), env)
    assert out.stdout == ""
    after = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    assert after["access_count"] == before["access_count"] + 1
    assert after["stability"] / before["stability"] == pytest.approx(
        GRADE_MULTIPLIER[AccessGrade.APPLIED], rel=1e-3
    )

    fresh = tmp_path / "sess-m.jsonl"
    shutil.copy(DATA / "transcript_learning.jsonl", fresh)
    answer = json.loads(run_hook_cli("auto-capture", stop("sess-m", fresh), env).stdout)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "block"
    reason = answer["reason"]
    calls = [json.loads(m) for m in re.findall(r"-> store_knowledge (\{.*\})", reason)]
    assert len(calls) == 2
    remember, decision = calls
    quote = "Thanks, that works. Remember: we always tag releases from the release branch, never from main."
    assert remember == {
        "name": "Thanks, that works. Remember: we always tag releases",
        "content": quote,
        "type": "rule",
        "trust": "principle",
        "quote": quote,
        "source": "auto-capture",
        "sessionId": "sess-m",
    }
    assert decision["trust"] == "inference" and "quote" not in decision
    assert decision["content"].startswith("Noted. I chose to keep the tag step in CI because")
    for item in calls:  # each is a valid store_knowledge input
        KnowledgeIn(**item)
    assert "update_knowledge or forget_knowledge" in reason and "connect_knowledge" in reason
    # once: the same transcript again (the agent stored and stops again) does not block
    assert run_hook_cli("auto-capture", stop("sess-m", fresh), env).stdout == ""
    # new messages with a signal block again
    with fresh.open("a") as f:
        f.write(
            json.dumps(
                {
                    "type": "user",
                    "uuid": "u-late",
                    "sessionId": "sess-m",
                    "isSidechain": False,
                    "message": {"role": "user", "content": "From now on, use squash merges."},
                }
            )
            + "\n"
        )
    assert json.loads(run_hook_cli("auto-capture", stop("sess-m", fresh), env).stdout)["decision"] == "block"


async def test_a_correction_is_captured_and_not_graded_applied(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = hook_env(neo4j_info, namespace, tmp_path / "state", KG_NEO4J_HOOK_CORRECTIONS="false")
    before = await _recalled(driver, neo4j_info, namespace, env, "sess-c")
    answer = json.loads(
        run_hook_cli("auto-capture", stop("sess-c", DATA / "transcript_correction.jsonl"), env).stdout
    )
    assert answer["decision"] == "block"
    assert answer["reason"].count("-> store_knowledge") == 1
    assert (
        'The user corrected you: "No, that\'s wrong: on staging the migrations run after the deploy."'
        in answer["reason"]
    )
    assert await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist") == before


async def test_no_signal_no_block(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    env = hook_env(neo4j_info, namespace, tmp_path / "state")
    before = await _recalled(driver, neo4j_info, namespace, env, "sess-p")
    out = run_hook_cli("auto-capture", stop("sess-p", DATA / "transcript_plain.jsonl"), env)
    assert (out.stdout, out.stderr) == ("", "")
    after = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    assert after["access_count"] == before["access_count"] + 1  # applied: the user moved on
    # a missing transcript: nothing, exit 0
    out = run_hook_cli("auto-capture", stop("sess-p", tmp_path / "missing.jsonl"), env)
    assert (out.stdout, out.stderr) == ("", "")
