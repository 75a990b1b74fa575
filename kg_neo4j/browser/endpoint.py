"""The loopback endpoint that serves the style sheet and the guide to the local Neo4j Browser.

``kg-neo4j neo4j start`` starts it as its own small process (``python -m kg_neo4j.browser.endpoint``,
pid file ``guide-endpoint.json`` in the local Neo4j's home) on ``127.0.0.1:<KG_NEO4J_LOCAL_GUIDE_PORT>``
(default 7478); ``kg-neo4j neo4j stop`` stops it.  It serves, read-only and without touching Neo4j:

- ``GET /memory.grass``  the style sheet (``:style`` fetches it);
- ``GET /guide.html``    the guide's slides (``:play`` fetches it);
- ``GET /guide.cypher``  the guide's queries as plain Cypher.

Browser fetches them from its own page (``http://127.0.0.1:7474``) with the headers ``pragma`` and
``cache-control``, so the request is cross-origin with a preflight.  The answers carry
``Access-Control-Allow-Origin: <the request's Origin>`` only for a loopback origin (``http://127.0.0.1``,
``http://localhost``, ``http://[::1]``, any port), ``Access-Control-Allow-Methods: GET, OPTIONS`` and
``Access-Control-Allow-Headers: pragma, cache-control, content-type``; no credentials are allowed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from kg_neo4j.browser import GUIDE_CYPHER_FILE, GUIDE_FILE, STYLE_FILE, guide_cypher, guide_html, style_text
from kg_neo4j.localdb.process import cmdline, pid_exists, port_free, port_open, say, terminate, write_private

__all__ = ["PID_FILE", "base_url", "ensure_running", "serve", "stop"]

PID_FILE = "guide-endpoint.json"
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
_MODULE = "kg_neo4j.browser.endpoint"


def base_url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def _allowed_origin(origin: str | None) -> str | None:
    if not origin:
        return None
    parts = urlsplit(origin)
    return origin if parts.scheme in ("http", "https") and parts.hostname in _LOOPBACK_HOSTS else None


def _handler(port: int) -> type[BaseHTTPRequestHandler]:
    bodies = {
        f"/{STYLE_FILE}": ("text/plain; charset=utf-8", style_text()),
        f"/{GUIDE_FILE}": ("text/html; charset=utf-8", guide_html(base_url(port))),
        f"/{GUIDE_CYPHER_FILE}": ("text/plain; charset=utf-8", guide_cypher()),
    }

    class Handler(BaseHTTPRequestHandler):
        server_version = "kg-neo4j-guide"

        def _cors(self) -> None:
            origin = _allowed_origin(self.headers.get("Origin"))
            if origin:
                self.send_header("Access-Control-Allow-Origin", origin)
                self.send_header("Vary", "Origin")
                self.send_header("Access-Control-Allow-Methods", "GET, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "pragma, cache-control, content-type")
                self.send_header("Access-Control-Max-Age", "600")

        def do_OPTIONS(self) -> None:  # noqa: N802 - the http.server naming
            self.send_response(204)
            self._cors()
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            path = urlsplit(self.path).path
            found = bodies.get(path)
            if found is None:
                body = ("not found; try " + ", ".join(sorted(bodies)) + "\n").encode()
                self.send_response(404)
                ctype = "text/plain; charset=utf-8"
            else:
                ctype, text = found
                body = text.encode("utf-8")
                self.send_response(200)
            self._cors()
            self.send_header("Content-Type", ctype)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stderr, quietly
            return

    return Handler


def serve(port: int) -> None:
    """Serve until killed (the process ``ensure_running`` starts)."""
    with ThreadingHTTPServer(("127.0.0.1", port), _handler(port)) as httpd:
        httpd.serve_forever()


def _read_state(home: Path) -> dict[str, object] | None:
    try:
        state = json.loads((home / PID_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and isinstance(state.get("pid"), int) else None


def _ours(pid: int) -> bool:
    cmd = cmdline(pid)
    return pid_exists(pid) and cmd is not None and _MODULE in cmd


def ensure_running(home: Path, port: int, timeout: float = 15.0) -> str:
    """Start the endpoint for this home unless it runs already; returns its base URL.

    A port held by another process is an error naming the setting to change."""
    state = _read_state(home)
    if state is not None:
        pid = int(str(state["pid"]))
        if _ours(pid) and state.get("port") == port and port_open(port):
            return base_url(port)
        if _ours(pid):
            terminate(pid, 5.0)
    if not port_free(port):
        from kg_neo4j.errors import Neo4jUnavailableError

        raise Neo4jUnavailableError(
            f"port 127.0.0.1:{port} is in use, so the Browser style and guide cannot be served there; "
            "set KG_NEO4J_LOCAL_GUIDE_PORT to a free port"
        )
    log = open(home / "logs" / "guide-endpoint.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", _MODULE, "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"},
        )
    finally:
        log.close()
    write_private(home / PID_FILE, json.dumps({"pid": proc.pid, "port": port}) + "\n")
    deadline = time.monotonic() + timeout
    while not port_open(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"the Browser guide endpoint did not start on port {port}; see "
                f"{home / 'logs' / 'guide-endpoint.log'}"
            )
        time.sleep(0.1)
    say(f"Browser style and guide served at {base_url(port)} (pid {proc.pid})")
    return base_url(port)


def stop(home: Path) -> bool:
    """Stop this home's endpoint; True if it was running."""
    state = _read_state(home)
    with contextlib.suppress(FileNotFoundError):
        (home / PID_FILE).unlink()
    if state is None:
        return False
    pid = int(str(state["pid"]))
    if not _ours(pid):
        return False
    terminate(pid, 5.0)
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m {_MODULE}")
    parser.add_argument("--port", type=int, required=True)
    serve(parser.parse_args(argv).port)


if __name__ == "__main__":
    main()
