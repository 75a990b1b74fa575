"""Who is writing: the principal a write is attributed to (docs/team.md#attribution).

The server sets :data:`current_actor` around each tool call (the HTTP principal, or over stdio the
configured ``--actor`` or the OS user); the executor passes it to every statement as ``$actor``.
A context variable rather than an argument on every store method: the store's many write paths all
record it, and none of them may forget it.  The CLI commands that write (import, import-skills,
maintain) run :func:`acting_as` ``default_actor(settings.actor)`` (``KG_NEO4J_ACTOR``, else the OS user).
Only a principal's name is ever recorded: never a token or its hash.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import getpass
from collections.abc import Iterator

#: The principal of the call being handled; None outside a tool call (CLI commands: :func:`default_actor`).
current_actor: contextvars.ContextVar[str | None] = contextvars.ContextVar("kg_actor", default=None)


def default_actor(configured: str | None = None) -> str:
    """``configured`` (``--actor``), else the OS user's login name, else ``"unknown"``."""
    if configured:
        return configured
    return _os_user()


@functools.cache
def _os_user() -> str:
    """Looked up once per process: every statement asks (the executor's ``$actor``)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (some containers)
        return "unknown"


def actor() -> str:
    """The actor of the current write: the call's principal, else the OS user."""
    return current_actor.get() or default_actor()


@contextlib.contextmanager
def acting_as(name: str) -> Iterator[None]:
    """Attribute the writes made inside the block (in this task and the tasks it starts) to ``name``."""
    token = current_actor.set(name)
    try:
        yield
    finally:
        current_actor.reset(token)
