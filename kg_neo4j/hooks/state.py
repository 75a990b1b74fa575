"""Per-session hook state and the search markers, kept as small JSON files (docs/hooks.md, "State").

Layout under the state directory (``KG_NEO4J_HOOK_STATE_DIR``, default ``$KG_NEO4J_HOME/hooks``)::

    <namespace key>/sessions/<session key>.json   one agent session: what recall showed, per prompt
                                                   (knowledge names and how each was graded), when the
                                                   session was first seen and when it searched memory
    <namespace key>/last-search.json               the last search_memory call of any MCP session

Keys are hashes, so any namespace or session id makes a safe file name.  A session file lives
:data:`SESSION_TTL` seconds after its last change: reads ignore older files and session-start
deletes them.  Writers lock the file (``fcntl.flock``) and replace it atomically, because Claude
Code runs the hooks of one event in parallel (recall and the correction detector).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

try:  # POSIX; elsewhere writes are atomic (os.replace) but not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: How long a session's state lives after its last change (seconds): a day.
SESSION_TTL = 24 * 3600
#: At most this many prompts are kept per session (the oldest go first).
MAX_TURNS = 50


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # A temporary file of its own per write: the server marks searches from worker threads, so two
    # writers of one process (one pid) may race on the same path; each replaces with its own file.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


class HookState:
    """The hook state of one namespace under ``root``."""

    def __init__(self, root: Path, namespace: str, *, now: Callable[[], float] = time.time) -> None:
        self.dir = Path(root) / _key(namespace)
        self.now = now

    def session_path(self, session_id: str) -> Path:
        return self.dir / "sessions" / f"{_key(session_id)}.json"

    def session(self, session_id: str) -> dict[str, Any]:
        """The session's state ({} when there is none, or it expired)."""
        data = _read(self.session_path(session_id))
        if data is None or self.now() - float(data.get("updated", 0)) > SESSION_TTL:
            return {}
        return data

    def update(self, session_id: str, change: Callable[[dict[str, Any]], Any]) -> Any:
        """Apply ``change`` to the session's state under the lock and save it; returns what ``change`` returns."""
        path = self.session_path(session_id)
        with _locked(path):
            data = self.session(session_id) or {
                "session_id": session_id,
                "first_seen": self.now(),
                "turns": [],
            }
            result = change(data)
            data["updated"] = self.now()
            data["turns"] = data.get("turns", [])[-MAX_TURNS:]
            _write(path, data)
        return result

    def touch(self, session_id: str) -> dict[str, Any]:
        """Make sure the session is known (its ``first_seen`` set); returns its state."""
        return dict(self.update(session_id, lambda data: dict(data)))

    # -- recall's record of what it showed ------------------------------------------------------
    def add_turn(self, session_id: str, prompt: str, names: list[str], *, searched: bool) -> None:
        def change(data: dict[str, Any]) -> None:
            data["turns"].append({"prompt": prompt, "names": names, "at": self.now(), "graded": None})
            if searched:
                data["searched_at"] = self.now()

        self.update(session_id, change)

    # -- search markers ---------------------------------------------------------------------------
    @property
    def last_search_path(self) -> Path:
        return self.dir / "last-search.json"

    def mark_search(self, session: str | None, agent_session: str | None = None) -> None:
        """search_memory ran (in the server, MCP session ``session``): the namespace's marker, and the
        agent session's own when the server was given one (``--session-id``, e.g. Claude Code's id)."""
        _write(self.last_search_path, {"at": self.now(), "session": session})
        if agent_session:
            self.update(agent_session, lambda data: data.__setitem__("searched_at", self.now()))

    def searched(self, session_id: str) -> bool:
        """Whether a memory search happened in this agent session: the session's own marker (the
        recall hook's, or search_memory's under ``--session-id``), or a search_memory call of any MCP
        session after this agent session was first seen."""
        data = self.touch(session_id)
        if data.get("searched_at"):
            return True
        last = _read(self.last_search_path) or {}
        return float(last.get("at", 0)) >= float(data.get("first_seen", self.now()))

    def prune(self) -> int:
        """Delete expired session files; returns how many."""
        gone = 0
        for path in (self.dir / "sessions").glob("*.json"):
            data = _read(path)
            if data is None or self.now() - float(data.get("updated", 0)) > SESSION_TTL:
                with contextlib.suppress(OSError):
                    path.unlink()
                    path.with_name(path.name + ".lock").unlink(missing_ok=True)
                    gone += 1
        return gone
