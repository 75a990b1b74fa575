"""``kg-neo4j hook search-enforcer`` (PreToolUse): denies the tools named in
``KG_NEO4J_HOOK_GUARD_TOOLS`` until the agent session has searched memory (HookState.searched:
recall showed knowledge, or search_memory ran), answering in Claude Code's PreToolUse format::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                            "permissionDecisionReason": "..."}}

The memory tools themselves (any ``..._search_memory`` and the other reads) are never denied."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from kg_neo4j.hooks.common import clip, text_of
from kg_neo4j.hooks.context import Answer, HookContext

#: Tools that read memory: never denied (a guard on ``*`` must not block the search it asks for).
MEMORY_READS = frozenset(
    {
        "search_memory",
        "search_nodes",
        "open_nodes",
        "read_graph",
        "list_knowledge",
        "recall_experience",
        "traverse_graph",
        "memory_stats",
    }
)
QUERY_CHARS = 200


def _suggested_query(tool: str, tool_input: Any) -> str:
    """What to search for: the file, command or description the tool is about to act on."""
    if isinstance(tool_input, dict):
        for key in (
            "description",
            "file_path",
            "notebook_path",
            "path",
            "command",
            "pattern",
            "url",
            "prompt",
        ):
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return clip(value, QUERY_CHARS)
    return f"conventions and rules for {tool}"


async def search_enforcer(ctx: HookContext) -> Answer:
    tool = text_of(ctx.payload, "tool_name")
    guarded = ctx.config.hook_guard_tools
    if not guarded or not tool or not ctx.session_id or tool.rsplit("__", 1)[-1] in MEMORY_READS:
        return Answer()
    if not any(fnmatch.fnmatchcase(tool, pattern) for pattern in guarded):
        return Answer()
    if ctx.state.searched(ctx.session_id):
        return Answer()
    query = _suggested_query(tool, ctx.payload.get("tool_input"))
    reason = (
        f"kg-neo4j: search the memory before using {tool} in this session. Call the search_memory tool with "
        f"{json.dumps({'query': query})} (or your own words for what you are about to do), apply what it "
        "returns, then retry."
    )
    return Answer(
        json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        )
    )
