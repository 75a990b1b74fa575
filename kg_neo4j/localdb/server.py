"""LocalNeo4j: install, start, stop and describe one local Neo4j Community server.

Layout under ``Settings.local_dir`` (``~/.kg-neo4j/neo4j`` by default)::

    dist/<version>/lib/   the jars (pom.xml next to it)
    conf/neo4j.conf       rewritten on every start
    data/ logs/ run/ plugins/ import/
    data/kg-neo4j.json    the Neo4j version that last ran on this data (stores upgrade, never downgrade)
    logs/console.log      the JVM's stdout/stderr
    server.json           pid file (pid, version, ports, java, main class) of the running JVM
    credentials.json      the generated password (mode 0600)
    .lock                 serialises install/start/stop across processes
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.localdb import config, install
from kg_neo4j.localdb.auth import USERNAME, Credentials
from kg_neo4j.localdb.java import JavaChoice, choose_java
from kg_neo4j.localdb.process import (
    CHILDREN,
    cmdline,
    pid_exists,
    port_free,
    port_open,
    say,
    terminate,
    write_private,
)
from kg_neo4j.settings import Settings, default_home

try:  # POSIX only; on other systems starts are simply not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["LocalNeo4j"]


def _line(version: str) -> tuple[int, int]:
    """(major, minor) of a Neo4j version: what decides whether a store can be opened."""
    major, minor = (re.findall(r"\d+", version) + ["0", "0"])[:2]
    return int(major), int(minor)


class LocalNeo4j:
    """Install, start, stop and describe a local Neo4j Community server (no Docker)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.version = settings.local_neo4j_version
        config.check_settings(settings)
        self.home = settings.local_dir.expanduser().resolve()
        self.bolt_port = settings.local_bolt_port
        self.http_port = settings.local_http_port
        self._credentials = Credentials(self.credentials_file, self.bolt_uri, self.log_file, self.data_dir)

    # ----------------------------------------------------------------- paths

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def dist_dir(self) -> Path:
        return self.home / "dist" / self.version

    @property
    def lib_dir(self) -> Path:
        return self.dist_dir / "lib"

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def data_version_file(self) -> Path:
        return self.data_dir / "kg-neo4j.json"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def log_file(self) -> Path:
        return self.logs_dir / "console.log"

    @property
    def pid_file(self) -> Path:
        return self.home / "server.json"

    @property
    def credentials_file(self) -> Path:
        return self.home / "credentials.json"

    def is_installed(self) -> bool:
        return (self.dist_dir / ".complete").exists() and self.lib_dir.is_dir()

    # ----------------------------------------------------------------- install

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.home.mkdir(parents=True, exist_ok=True)
        fh = open(self.home / ".lock", "a+")  # noqa: SIM115 - held for the with-block
        try:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            yield
        finally:
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()

    def choose_java(self) -> JavaChoice:
        """The JDK for this Neo4j version (see kg_neo4j/localdb/java.py), or ConfigError saying what to install."""
        return choose_java(
            self.version, explicit=self.settings.local_neo4j_java, java_home=self.settings.java_home
        )

    def find_java(self) -> Path:
        return self.choose_java().path

    def install(self, progress: bool = True) -> Path:
        """Download the Neo4j jars from Maven Central once; return the lib directory."""
        if not self.is_installed():
            with self._lock():
                self._install_locked(progress)
        return self.lib_dir

    def _install_locked(self, progress: bool) -> None:
        # Another home (a test's, a second server's) takes the default home's jars of the same version.
        if self.is_installed() or install.reuse(
            self.version, self.dist_dir, self.lib_dir, default_home() / "neo4j" / "dist" / self.version
        ):
            return
        install.download(self.version, self.dist_dir, self.lib_dir, progress)

    def entry_point(self) -> str:
        """The main class of the installed version (read from its jar)."""
        return install.entry_point(self.lib_dir, self.version)

    # ----------------------------------------------------------------- state

    def _read_state(self) -> dict[str, object] | None:
        try:
            state = json.loads(self.pid_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and isinstance(state.get("pid"), int) else None

    def _is_our_jvm(self, pid: int) -> bool:
        child = CHILDREN.get(pid)
        if child is not None:  # started by this process: its command line may still be the launcher's re-exec
            return child.poll() is None
        if not pid_exists(pid):
            return False
        cmd = cmdline(pid)
        return (
            cmd is not None
            and any(main in cmd.split() for main in install.ENTRY_POINTS)
            and f"--home-dir={self.home}" in cmd
        )

    def _live_state(self) -> dict[str, object] | None:
        """The pid-file state if that JVM is alive; removes a stale pid file."""
        state = self._read_state()
        if state is None:
            return None
        pid = state["pid"]
        assert isinstance(pid, int)
        if self._is_our_jvm(pid):
            return state
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()
        return None

    def data_version(self) -> str | None:
        """The Neo4j version that last ran on this data directory (None: fresh or from before this was kept)."""
        try:
            data = json.loads(self.data_version_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) else None
        return version if isinstance(version, str) else None

    def check_data_version(self) -> None:
        last = self.data_version()
        if last is None or _line(last) == _line(self.version):
            return
        if _line(last) > _line(self.version):
            raise ConfigError(
                f"the data in {self.data_dir} was last run by Neo4j {last}; Neo4j {self.version} cannot open it "
                f"(Neo4j upgrades stores, never downgrades them). Set KG_NEO4J_LOCAL_NEO4J_VERSION={last}, or use "
                f"another KG_NEO4J_HOME for Neo4j {self.version}"
            )
        say(
            f"upgrading the data in {self.data_dir} from Neo4j {last} to {self.version} (Neo4j {last} will "
            f"not open it afterwards)"
        )

    # ----------------------------------------------------------------- config

    def _conf_text(self) -> str:
        return config.conf_text(self.settings, self.home, self.bolt_port, self.http_port)

    def _command(self, java: JavaChoice, main_class: str) -> list[str]:
        return config.command(
            java.path,
            java.major,
            self.lib_dir,
            main_class,
            self.home,
            self.conf_dir,
            self.settings.local_heap,
        )

    def _log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    # ----------------------------------------------------------------- lifecycle

    def start(self, timeout: float = 180.0) -> None:
        """Start the server (idempotent) and wait until Bolt accepts a login."""
        with self._lock():
            state = self._live_state()
            if state is not None:
                if state.get("bolt_port") != self.bolt_port or state.get("http_port") != self.http_port:
                    raise Neo4jUnavailableError(
                        f"the local Neo4j in {self.home} already runs on Bolt port {state.get('bolt_port')} and "
                        f"HTTP port {state.get('http_port')}; run `kg-neo4j neo4j stop` first to change ports"
                    )
                if state.get("version") not in (None, self.version):
                    raise Neo4jUnavailableError(
                        f"the local Neo4j in {self.home} already runs version {state.get('version')}, not "
                        f"{self.version}; run `kg-neo4j neo4j stop` first to change versions"
                    )
                pid = state["pid"]
                assert isinstance(pid, int)
                self._wait_ready(pid, time.monotonic() + timeout)
                return
            self._start_locked(timeout)

    def _start_locked(self, timeout: float) -> None:
        java = self.choose_java()
        self.check_data_version()
        self._install_locked(progress=True)
        main_class = self.entry_point()
        for port, what in ((self.bolt_port, "BOLT"), (self.http_port, "HTTP")):
            if not port_free(port):
                raise Neo4jUnavailableError(
                    f"port 127.0.0.1:{port} is already in use by another process, so the local Neo4j "
                    f"cannot listen there; stop that process or set KG_NEO4J_LOCAL_{what}_PORT "
                    f"(or point NEO4J_URI at the server that is running)"
                )
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "neo4j.conf").write_text(self._conf_text(), encoding="utf-8")

        started = time.monotonic()
        cmd = self._command(java, main_class)
        with open(self.log_file, "ab") as log:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(
                f"\n==== kg-neo4j starting Neo4j {self.version} at {stamp}: {shlex.join(cmd)}\n".encode()
            )
            log.flush()
            try:
                proc = subprocess.Popen(
                    cmd,
                    cwd=self.home,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
            except OSError as exc:
                raise Neo4jUnavailableError(f"could not start Java ({java.path}): {exc}") from exc
        CHILDREN[proc.pid] = proc
        state = {
            "pid": proc.pid,
            "version": self.version,
            "bolt_port": self.bolt_port,
            "http_port": self.http_port,
            "java": str(java.path),
            "java_version": java.major,
            "entry_point": main_class,
            "started_at": time.time(),
        }
        write_private(self.pid_file, json.dumps(state, indent=2) + "\n")
        say(
            f"starting Neo4j {self.version} with Java {java.major} ({java.path}) on {self.bolt_uri} "
            f"(log: {self.log_file}) ..."
        )
        try:
            self._wait_ready(proc.pid, started + timeout)
        except BaseException:
            terminate(proc.pid, 15.0)
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()
            raise
        write_private(self.data_version_file, json.dumps({"version": self.version}) + "\n")
        say(f"Neo4j {self.version} is up on {self.bolt_uri} ({time.monotonic() - started:.1f} s)")

    def _wait_ready(self, pid: int, deadline: float) -> None:
        """Wait until Bolt answers, then make sure the password is set and works."""
        while True:
            if not self._is_our_jvm(pid):
                raise Neo4jUnavailableError(
                    f"the local Neo4j (pid {pid}) exited during start-up; last lines of {self.log_file}:\n"
                    f"{self._log_tail()}"
                )
            if port_open(self.bolt_port):
                break
            if time.monotonic() > deadline:
                raise Neo4jUnavailableError(
                    f"the local Neo4j did not open Bolt port {self.bolt_port} in time; see {self.log_file}:\n"
                    f"{self._log_tail()}"
                )
            time.sleep(0.2)
        self._credentials.ensure(deadline)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``); True if it was running."""
        with self._lock():
            state = self._live_state()
            if state is None:
                return False
            pid = state["pid"]
            assert isinstance(pid, int)
            terminate(pid, timeout)
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()
            return True

    # ----------------------------------------------------------------- reporting

    def status(self) -> dict[str, object]:
        state = self._live_state() or {}
        bolt_port = int(str(state.get("bolt_port", self.bolt_port)))
        http_port = int(str(state.get("http_port", self.http_port)))
        running = bool(state) and port_open(bolt_port)
        return {
            "running": running,
            "starting": bool(state) and not running,
            "pid": state.get("pid"),
            "bolt_uri": f"bolt://127.0.0.1:{bolt_port}",
            "http_url": f"http://127.0.0.1:{http_port}",
            "browser_url": f"http://127.0.0.1:{http_port}/browser/",
            "version": state.get("version", self.version),
            "java": state.get("java"),
            "entry_point": state.get("entry_point"),
            "data_version": self.data_version(),
            "installed": self.is_installed(),
            "home": str(self.home),
            "data_dir": str(self.data_dir),
            "log_file": str(self.log_file),
            "credentials_file": str(self.credentials_file),
        }

    def credentials(self) -> tuple[str, str, str]:
        """``(bolt uri, "neo4j", password)``; Neo4jUnavailableError if the server was never started."""
        creds = self._credentials.read()
        if creds is None or not creds.get("initialized"):
            raise Neo4jUnavailableError(
                f"the local Neo4j in {self.home} has never been started; run `kg-neo4j neo4j start`"
            )
        return self.bolt_uri, USERNAME, str(creds["password"])

    def env_lines(self) -> list[str]:
        uri, user, password = self.credentials()
        return [
            f"export NEO4J_URI={shlex.quote(uri)}",
            f"export NEO4J_USERNAME={shlex.quote(user)}",
            f"export NEO4J_PASSWORD={shlex.quote(password)}",
        ]
