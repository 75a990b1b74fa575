"""``kg-neo4j hook auto-capture`` (Stop): the command-type auto-capture (docs/hooks.md, "auto-capture").

It reads Claude Code's JSONL transcript (``transcript_path``; one JSON object per line, ``type``
``user`` or ``assistant``, the text in ``message.content``) from where it stopped last time, and:

- grades: knowledge recall showed for an earlier prompt, followed by user prompts none of which is a
  correction, gets an ``applied`` access (grade 4), once;
- captures: when the new messages carry learning signals (an explicit "remember"/"always"/"never",
  a correction, a decision with its reason), it blocks the stop once with the store_knowledge calls
  to make, as ``{"decision": "block", "reason": ...}``; with ``stop_hook_active`` true (Claude Code is
  already continuing because of a Stop hook) it never blocks.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_neo4j.hooks.common import clip, prompt_key, text_of
from kg_neo4j.hooks.context import Answer, HookContext
from kg_neo4j.hooks.detect import DECISION, is_correction, signals
from kg_neo4j.knowledge.vocabulary import AccessGrade

#: Only the transcript's tail is read (a long session's file grows to many megabytes).
TAIL_BYTES = 2 * 1024 * 1024
#: At most this many store instructions per block.
MAX_CAPTURES = 8
QUOTE_CHARS = 300
NAME_WORDS = 8


@dataclass
class Message:
    uuid: str
    role: str  # "user" (a prompt the user typed) or "assistant" (the agent's text)
    text: str


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # blocks: text, tool_use, tool_result, thinking, ...
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def read_transcript(path: str) -> list[Message]:
    """The user prompts and assistant texts of the transcript's tail, in order (tool results,
    sidechains, meta messages and Claude Code's own command/reminder messages are left out)."""
    p = Path(path)
    with p.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - TAIL_BYTES))
        raw = f.read().decode("utf-8", errors="replace")
    lines = raw.splitlines()
    if size > TAIL_BYTES and lines:
        lines = lines[1:]  # the first line is cut
    out = []
    for i, ln in enumerate(lines):
        try:
            entry = json.loads(ln)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        if entry.get("isSidechain") or entry.get("isMeta"):
            continue
        message = entry.get("message")
        text = _text(message.get("content") if isinstance(message, dict) else None).strip()
        if not text or text.startswith("<"):  # <command-name>, <local-command-stdout>, <system-reminder>
            continue
        out.append(Message(str(entry.get("uuid") or f"line-{i}"), str(entry["type"]), text))
    return out


def _store_call(kind: str, msg: Message, session: str) -> str:
    quote = clip(msg.text, QUOTE_CHARS)
    name = clip(" ".join(msg.text.split()[:NAME_WORDS]), 80)
    if msg.role == "assistant":  # the agent's own decision: an inference, no quote
        args: dict[str, Any] = {
            "name": name,
            "content": quote,
            "type": "insight",
            "trust": "inference",
            "source": "auto-capture",
        }
    else:
        args = {
            "name": name,
            "content": quote,
            "type": "insight" if kind == "decision" else "rule",
            "trust": "principle",
            "quote": quote,
            "source": "auto-capture",
        }
    if session:
        args["sessionId"] = session
    what = {
        "remember": "The user asked you to remember",
        "correction": "The user corrected you",
        "decision": "A decision with its reason",
    }[kind]
    return f'{what}: "{quote}" -> store_knowledge {json.dumps(args, ensure_ascii=False)}'


def instructions(found: list[tuple[str, Message]], session: str) -> str:
    steps = [
        f"{i}. {_store_call(kind, msg, session)}" for i, (kind, msg) in enumerate(found[:MAX_CAPTURES], 1)
    ]
    return (
        "kg-neo4j auto-capture: this conversation taught something worth keeping. Before you stop, store it "
        "with the kg-neo4j MCP tools (give each a short precise name and restate the content as a rule; skip "
        "what search_memory shows is stored already):\n"
        + "\n".join(steps)
        + "\nFor a correction, also update_knowledge or forget_knowledge the knowledge it contradicts. "
        "Connect related knowledge with connect_knowledge. Then finish."
    )


def _learning(messages: list[Message]) -> list[tuple[str, Message]]:
    found: list[tuple[str, Message]] = []
    for msg in messages:
        if msg.role == "user":
            kinds = signals(msg.text)
            # one instruction per message: the strongest signal names it
            for kind in ("correction", "remember", "decision"):
                if kind in kinds:
                    found.append((kind, msg))
                    break
        elif DECISION.search(msg.text):
            found.append(("decision", msg))
    return found


async def auto_capture(ctx: HookContext) -> Answer:
    sid = ctx.session_id
    path = text_of(ctx.payload, "transcript_path")
    if not sid or not path:
        return Answer()
    messages = read_transcript(path)
    prompts = [m.text for m in messages if m.role == "user"]
    keys = [prompt_key(p) for p in prompts]
    corrections = ctx.config.hook_corrections

    def step(data: dict[str, Any]) -> tuple[list[str], list[Message]]:
        applied: list[str] = []
        for turn in data["turns"]:
            if turn.get("graded") or turn.get("prompt") not in keys:
                continue
            later = prompts[len(keys) - keys[::-1].index(turn["prompt"]) :]
            if not later:
                continue  # the user has not answered yet
            if any(is_correction(p) for p in later):
                turn["graded"] = "corrected" if corrections else "not applied"
                continue
            turn["graded"] = "applied"
            applied += turn.get("names") or []
        seen = data.get("captured")
        ids = [m.uuid for m in messages]
        new = messages[ids.index(seen) + 1 :] if seen in ids else messages
        if messages:
            data["captured"] = messages[-1].uuid
        return list(dict.fromkeys(applied)), new

    applied, new = ctx.state.update(sid, step)
    found = [] if ctx.payload.get("stop_hook_active") is True else _learning(new)
    text = json.dumps({"decision": "block", "reason": instructions(found, sid)}) if found else ""

    async def after() -> None:
        await ctx.record(applied, int(AccessGrade.APPLIED))

    return Answer(text, [after] if applied else [])
