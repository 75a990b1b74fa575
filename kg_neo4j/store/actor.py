"""Who is writing: the principal a write is attributed to (docs/team.md#attribution).

The server sets :data:`current_actor` around each tool call (the HTTP principal, or over stdio the
configured ``--actor`` or the OS user); the executor passes it to every statement as ``$actor``.
A context variable rather than an argument on every store method: the store's many write paths all
record it, and none of them may forget it.
"""

from __future__ import annotations

import contextvars
import getpass

#: The principal of the call being handled; None outside a tool call (CLI commands: :func:`default_actor`).
current_actor: contextvars.ContextVar[str | None] = contextvars.ContextVar("kg_actor", default=None)


def default_actor(configured: str | None = None) -> str:
    """``configured`` (``--actor``), else the OS user's login name, else ``"unknown"``."""
    if configured:
        return configured
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (some containers)
        return "unknown"


def actor() -> str:
    """The actor of the current write: the call's principal, else the OS user."""
    return current_actor.get() or default_actor()
