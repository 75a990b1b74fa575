"""The hooks' own settings (``KG_NEO4J_HOOK_*``, fields of :class:`~kg_neo4j.settings.Settings`,
which checks them), gathered for the hooks with the state directory resolved."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kg_neo4j.settings import Settings


@dataclass(frozen=True)
class HookConfig:
    #: KG_NEO4J_HOOK_STATE_DIR: where per-session hook state and search markers live (docs/hooks.md)
    hook_state_dir: Path
    #: KG_NEO4J_HOOK_CORRECTIONS: the correction detector records `corrected` accesses (false: it does nothing)
    hook_corrections: bool = True
    #: KG_NEO4J_HOOK_GUARD_TOOLS: tools the search-enforcer blocks until a memory search happened (empty: off)
    hook_guard_tools: tuple[str, ...] = ()
    #: KG_NEO4J_HOOK_SEARCH_URL: a running `kg-neo4j serve --transport http` (its /mcp URL) that the recall
    #: hook asks for recall by meaning (None: keywords only)
    hook_search_url: str | None = None


def hook_config(settings: Settings) -> HookConfig:
    """The hook settings of ``settings`` (environment variables, checked by :class:`Settings`)."""
    return HookConfig(
        hook_state_dir=settings.hook_state_dir.expanduser()
        if settings.hook_state_dir
        else settings.home / "hooks",
        hook_corrections=settings.hook_corrections,
        hook_guard_tools=tuple(settings.hook_guard_tools),
        hook_search_url=settings.hook_search_url,
    )
