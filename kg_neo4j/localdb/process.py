"""Processes, ports and private files of the local Neo4j (POSIX; /proc where present, else ps)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["CHILDREN", "cmdline", "pid_exists", "port_free", "port_open", "say", "terminate", "write_private"]

#: Popen objects of JVMs this process started, so they are reaped (no zombies) and not garbage-collected.
CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def say(message: str) -> None:
    """Progress for people: stderr only (stdout may be the MCP protocol channel)."""
    print(f"kg-neo4j: {message}", file=sys.stderr, flush=True)


def cmdline(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return raw.replace(b"\0", b" ").decode(errors="replace").strip() or None
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return None
    except OSError:
        return None
    try:  # no /proc (macOS)
        out = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True)
        return out.stdout.strip() or None
    except OSError:
        return None


def pid_exists(pid: int) -> bool:
    child = CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) is not running
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def terminate(pid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL after ``timeout``; reaps the child when this process started it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not pid_exists(pid):
            break
        time.sleep(0.2)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 10.0
        while pid_exists(pid) and time.monotonic() < end:
            time.sleep(0.1)
    child = CHILDREN.pop(pid, None)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=1.0)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically to ``path`` with mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
