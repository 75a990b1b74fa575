"""Agent lifecycle hooks (docs/knowledge-model.md#hooks): ``kg-neo4j hook NAME`` (docs/hooks.md).

Each reads the hook's JSON on stdin (Claude Code's hook input: ``session_id``, ``transcript_path``,
``hook_event_name``, ``prompt``, ``tool_name``, ``tool_input``, ``stop_hook_active``, ...) and prints
what Claude Code reads on stdout: plain text for the agent's context (session-start, recall,
post-compact, correction-detector), or a JSON decision (search-enforcer, auto-capture).

A hook must never block the user because of our bug: it answers within about a second (no
embedding model, so no torch on this path), and on any failure (Neo4j down, bad JSON, a timeout)
it prints nothing and exits 0.  Work that need not delay the answer (access writes) runs after
the answer is printed.  Logs go to stderr, only with ``--log-level DEBUG``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from kg_neo4j.clock import Clock
from kg_neo4j.errors import KgError
from kg_neo4j.hooks.common import CONNECT_TIMEOUT, TIME_BUDGET, fit, parse_payload
from kg_neo4j.hooks.config import HookConfig, hook_config
from kg_neo4j.hooks.context import Answer, HookContext
from kg_neo4j.settings import Settings

__all__ = ["HOOKS", "HookConfig", "fit", "hook_config", "main", "parse_payload", "run_hook"]

log = logging.getLogger(__name__)

#: The hooks, in lifecycle order; ``kg-neo4j hook`` offers exactly these.
HOOKS = ("session-start", "recall", "correction-detector", "search-enforcer", "auto-capture", "post-compact")
#: Hooks that answer without the graph (so without importing the Neo4j driver).
NO_GRAPH = frozenset({"search-enforcer"})
#: session-start's own budget (its imports and Python's start come on top, and grow with the machine's load:
#: docs/hooks.md#latency; the target is the whole call under 2 s), and the decay sweep's share (it stops
#: between chunks and resumes next time).
SESSION_START_BUDGET = 0.8
SWEEP_BUDGET = 0.3
#: Seconds the work after the answer (access writes) may take.
AFTER_BUDGET = 2.0


async def _answer(name: str, ctx: HookContext) -> Answer:
    if name == "session-start":
        from kg_neo4j.hooks.session_start import session_start

        return await session_start(ctx)
    if name == "recall":
        from kg_neo4j.hooks.recall import recall

        return await recall(ctx)
    if name == "post-compact":
        from kg_neo4j.hooks.recall import post_compact

        return await post_compact(ctx)
    if name == "correction-detector":
        from kg_neo4j.hooks.correction import correction

        return await correction(ctx)
    if name == "search-enforcer":
        from kg_neo4j.hooks.enforcer import search_enforcer

        return await search_enforcer(ctx)
    from kg_neo4j.hooks.capture import auto_capture

    return await auto_capture(ctx)


async def run_hook(
    name: str,
    payload: dict[str, Any],
    settings: Settings,
    *,
    clock: Clock | None = None,
    driver: Any = None,
    time_budget: float | None = None,
    sweep_budget: float = SWEEP_BUDGET,
    config: HookConfig | None = None,
    emit: Callable[[str], None] | None = None,
) -> str:
    """The text hook ``name`` prints for ``payload``: handed to ``emit`` first, then the hook's
    after-work runs (within AFTER_BUDGET), then it is returned.  Opens and closes its own driver
    unless given one; past ``time_budget`` (default ``KG_NEO4J_HOOK_TIME_BUDGET``, else 1 s, session-start
    0.8 s; + 0.2 s) it raises TimeoutError."""
    if name not in HOOKS:
        raise ValueError(f"unknown hook {name!r}; one of {', '.join(HOOKS)}")
    if name not in NO_GRAPH:
        # imported before the clock starts: the budget bounds the hook's work, not Python's imports
        import kg_neo4j.store.knowledge  # noqa: F401
        import kg_neo4j.store.maintenance  # noqa: F401
    if time_budget is None:
        time_budget = settings.hook_time_budget or (
            SESSION_START_BUDGET if name == "session-start" else TIME_BUDGET
        )
    connect_timeout = max(CONNECT_TIMEOUT, settings.hook_time_budget or 0)
    deadline = time.monotonic() + time_budget
    config = config or hook_config(settings)

    def connect() -> Any:
        if driver is not None:
            return driver
        from kg_neo4j.runtime import hook_driver

        made, conn = hook_driver(settings, connect_timeout)
        ctx.database = conn.database
        return made

    ctx = HookContext(
        connect,
        database=settings.neo4j_database,
        namespace=settings.namespace,
        budget=settings.hook_budget_chars,
        config=config,
        payload=payload,
        deadline=deadline,
        sweep_budget=sweep_budget,
        auth_token=settings.auth_token,
        **({"clock": clock} if clock else {}),
    )
    acting = None
    if name not in NO_GRAPH:  # what a hook records (accesses, corrections) names KG_NEO4J_ACTOR
        from kg_neo4j.store.actor import current_actor, default_actor

        acting = current_actor.set(default_actor(settings.actor))
    try:
        answer = await asyncio.wait_for(_answer(name, ctx), timeout=time_budget + 0.2)
        if emit is not None and answer.text:
            emit(answer.text)
        for work in answer.after:
            try:
                await asyncio.wait_for(work(), timeout=AFTER_BUDGET)
            except Exception as exc:  # noqa: BLE001 - the answer has gone; the write is best effort
                log.debug("hook %s: after the answer: %s: %s", name, type(exc).__name__, exc)
        return answer.text
    finally:
        if acting is not None:
            current_actor.reset(acting)
        if driver is None and ctx._driver is not None:
            await ctx._driver.close()


def main(name: str, settings: Settings, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """``kg-neo4j hook NAME``: always exits 0; prints the hook's answer, or nothing on any failure
    (a bad hook setting is one line on stderr: it will not fix itself)."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout

    def emit(text: str) -> None:
        try:
            out.write(text + "\n")
            out.flush()
        except Exception:  # noqa: BLE001 - a closed pipe is not the user's problem
            pass

    try:
        config = hook_config(settings)
    except KgError as exc:
        print(f"kg-neo4j hook: error: {exc}", file=sys.stderr)
        return 0
    try:
        payload = parse_payload(stdin.read())
        asyncio.run(run_hook(name, payload, settings, config=config, emit=emit))
    except BaseException as exc:  # noqa: BLE001 - a hook never blocks the user
        log.debug("hook %s failed: %s: %s", name, type(exc).__name__, exc)
    return 0
