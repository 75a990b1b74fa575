"""A local Neo4j Community server without Docker.

The server's jars come from Maven Central (``mvn dependency:copy-dependencies``, once,
cached under ``<home>/neo4j/dist/<version>/lib``) and run with the machine's Java.
Layout under ``Settings.local_dir`` (``~/.kg-neo4j/neo4j`` by default)::

    dist/<version>/lib/   the jars (pom.xml next to it)
    conf/neo4j.conf       rewritten on every start
    data/ logs/ run/ plugins/ import/
    logs/console.log      the JVM's stdout/stderr
    server.json           pid file (pid, version, ports) of the running JVM
    credentials.json      the generated password (mode 0600)
    .lock                 serialises install/start/stop across processes

Nothing here writes to stdout: it may be the MCP protocol channel.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.settings import Settings

try:  # POSIX only; on other systems starts are simply not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["LocalNeo4j", "java_requirement", "parse_java_major"]

#: The Neo4j Browser is a separate artifact with its own versions; this one works with 5.x and later.
BROWSER_VERSION = "5.24.0"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
USERNAME = "neo4j"
INITIAL_PASSWORD = "neo4j"

_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kg-neo4j</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId><version>{version}</version></dependency>
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId><version>{browser}</version></dependency>
  </dependencies>
</project>
"""

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_MEMORY_RE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
_RETENTION_RE = re.compile(
    r"(true|false|keep_all|keep_none|[1-9][0-9]*[kKmMgG]? (files|size|txs|entries)"
    r"|[1-9][0-9]* (hours|days)( [1-9][0-9]*[kKmMgG]?)?)"
)
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?$")

#: Popen objects of JVMs this process started, so they are reaped (no zombies) and not garbage-collected.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_JAVA_MAJOR_CACHE: dict[str, int | None] = {}


# --------------------------------------------------------------------------- Java


def java_requirement(version: str) -> int:
    """The Java major version a Neo4j version needs: 5.x -> 17, 2025.x and later -> 21."""
    head = version.strip().split(".", 1)[0]
    if not head.isdigit():
        raise ConfigError(f"cannot read the Neo4j version {version!r}; expected e.g. 5.26.30 or 2025.10.1")
    major = int(head)
    if major >= 2025:
        return 21
    if major == 5:
        return 17
    if major == 4:
        return 11
    raise ConfigError(f"Neo4j {version} is not supported by the local server manager; use 5.x or 2025.x+")


def parse_java_major(text: str) -> int | None:
    """The major version from ``java -version`` output (``"1.8.0_392"`` -> 8, ``"17.0.15"`` -> 17)."""
    m = re.search(r'version "([^"]+)"', text)
    if not m:
        m = re.search(r"^\S+ (\d[\w.+-]*)", text.strip())
        if not m:
            return None
    parts = re.findall(r"\d+", m.group(1))
    if not parts:
        return None
    major = int(parts[0])
    if major == 1 and len(parts) > 1:  # 1.8.0 -> 8
        major = int(parts[1])
    return major


def _java_major(java: Path) -> int | None:
    key = str(java)
    if key not in _JAVA_MAJOR_CACHE:
        try:
            out = subprocess.run(
                [key, "-version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
            )
            _JAVA_MAJOR_CACHE[key] = parse_java_major(out.stderr + out.stdout)
        except (OSError, subprocess.SubprocessError):
            _JAVA_MAJOR_CACHE[key] = None
    return _JAVA_MAJOR_CACHE[key]


def _java_install_hint(required: int) -> str:
    return (
        f"install Java {required} (Debian/Ubuntu: `apt-get install openjdk-{required}-jre-headless`; "
        f"macOS: `brew install openjdk@{required}`) or set JAVA_HOME (or KG_NEO4J_LOCAL_NEO4J_JAVA) "
        f"to a Java {required}+ installation"
    )


# --------------------------------------------------------------------------- processes


def _cmdline(pid: int) -> str | None:
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


def _pid_exists(pid: int) -> bool:
    child = _CHILDREN.get(pid)
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


def _port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _write_private(path: Path, text: str) -> None:
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


def _say(message: str) -> None:
    print(f"kg-neo4j: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the manager


class LocalNeo4j:
    """Install, start, stop and describe a local Neo4j Community server (no Docker)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.version = settings.local_neo4j_version
        if not _VERSION_RE.match(self.version):
            raise ConfigError(
                f"KG_NEO4J_LOCAL_NEO4J_VERSION={self.version!r} is not a Neo4j version like 5.26.30"
            )
        for name in ("local_heap", "local_pagecache"):
            value = getattr(settings, name)
            if not _MEMORY_RE.match(value):
                raise ConfigError(
                    f"KG_NEO4J_{name.upper()}={value!r} must be a size like 512m or 1g (digits, then k, m or g)"
                )
        if not _RETENTION_RE.fullmatch(settings.local_tx_log_retention):
            raise ConfigError(
                f"KG_NEO4J_LOCAL_TX_LOG_RETENTION={settings.local_tx_log_retention!r} must be a Neo4j "
                "retention policy like '256M size', '2 files' or '1 days' (or keep_all / keep_none)"
            )
        for name in ("local_bolt_port", "local_http_port"):
            port = getattr(settings, name)
            if not 0 < port < 65536:
                raise ConfigError(f"KG_NEO4J_{name.upper()}={port} is not a TCP port")
        if settings.local_bolt_port == settings.local_http_port:
            raise ConfigError("the local Bolt and HTTP ports must differ")
        self.home = settings.local_dir.expanduser().resolve()
        self.bolt_port = settings.local_bolt_port
        self.http_port = settings.local_http_port

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

    # ----------------------------------------------------------------- locking

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

    # ----------------------------------------------------------------- java / maven

    def find_java(self) -> Path:
        """The ``java`` binary to run this Neo4j version with, or ConfigError saying what to install."""
        required = java_requirement(self.version)
        explicit = self.settings.local_neo4j_java
        if explicit is not None:
            java = Path(explicit).expanduser()
            major = _java_major(java)
            if major is None:
                raise ConfigError(f"KG_NEO4J_LOCAL_NEO4J_JAVA={java} is not a runnable java binary")
            if major < required:
                raise ConfigError(
                    f"Neo4j {self.version} needs Java {required}+, but KG_NEO4J_LOCAL_NEO4J_JAVA={java} "
                    f"is Java {major}; {_java_install_hint(required)}"
                )
            return java

        # The user's choices first (JAVA_HOME, then PATH), then the usual install locations.
        candidates: list[Path] = []
        if self.settings.java_home is not None and str(self.settings.java_home) not in ("", "."):
            candidates.append(Path(self.settings.java_home).expanduser() / "bin" / "java")
        on_path = shutil.which("java")
        if on_path:
            candidates.append(Path(on_path))
        n_preferred = len(candidates)
        for pattern in (
            "/usr/lib/jvm/*/bin/java",
            "/usr/local/lib/jvm/*/bin/java",
            "/opt/java/*/bin/java",
            "/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java",
        ):
            candidates.extend(Path(p) for p in sorted(glob.glob(pattern)))

        seen: set[Path] = set()
        found: list[tuple[int, int, Path]] = []  # (major, order, path)
        for order, java in enumerate(candidates):
            try:
                real = java.resolve()
            except OSError:
                continue
            if real in seen or not real.is_file():
                continue
            seen.add(real)
            major = _java_major(java)
            if major is not None:
                found.append((major, order, java))
        # A preferred Java that is new enough wins; otherwise the oldest Java that satisfies the
        # requirement (closest to what Neo4j is tested with).
        good = [f for f in found if f[0] >= required]
        preferred = [f for f in good if f[1] < n_preferred]
        if preferred:
            return preferred[0][2]
        if good:
            return min(good, key=lambda f: (f[0], f[1]))[2]
        have = ", ".join(f"{p} (Java {m})" for m, _, p in found) or "no java found"
        raise ConfigError(
            f"Neo4j {self.version} needs Java {required}+ ({have}); {_java_install_hint(required)}"
        )

    def install(self, progress: bool = True) -> Path:
        """Download the Neo4j jars from Maven Central once; return the lib directory."""
        if self.is_installed():
            return self.lib_dir
        with self._lock():
            return self._install_locked(progress)

    def _install_locked(self, progress: bool) -> Path:
        if self.is_installed():
            return self.lib_dir
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ConfigError(
                "Maven (`mvn`) is needed once to download Neo4j from Maven Central; install it "
                "(Debian/Ubuntu: `apt-get install maven`; macOS: `brew install maven`) or use docker/compose.yaml"
            )
        self.dist_dir.mkdir(parents=True, exist_ok=True)
        pom = self.dist_dir / "pom.xml"
        pom.write_text(_POM.format(version=self.version, browser=BROWSER_VERSION), encoding="utf-8")
        staging = self.dist_dir / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        cmd = [
            mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(pom),
            "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
        ]  # fmt: skip
        _say(f"downloading Neo4j {self.version} from Maven Central (once) into {self.lib_dir} ...")
        started = time.monotonic()
        # stdout must stay clean (it may be the MCP channel): Maven's output goes to stderr,
        # stripped of colour codes and blank lines; without ``progress`` only on failure.
        kept: list[str] = []
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=self.dist_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            raise ConfigError(f"could not run Maven ({mvn}): {exc}") from exc
        assert proc.stdout is not None
        with proc.stdout:
            for raw in proc.stdout:
                line = _ANSI_RE.sub("", raw).rstrip()
                if not line:
                    continue
                kept = [*kept[-39:], line]
                if progress:
                    print(f"  mvn: {line}", file=sys.stderr, flush=True)
        returncode = proc.wait()
        if returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = "" if progress else "\n" + "\n".join(kept)
            raise Neo4jUnavailableError(
                f"downloading Neo4j {self.version} with Maven failed (exit {returncode}); check the "
                f"version and network access to Maven Central. Command: {shlex.join(cmd)}{tail}"
            )
        if not any(staging.glob(f"neo4j-{self.version}.jar")):
            raise Neo4jUnavailableError(
                f"Maven finished but neo4j-{self.version}.jar is missing in {staging}"
            )
        shutil.rmtree(self.lib_dir, ignore_errors=True)
        staging.rename(self.lib_dir)
        (self.dist_dir / ".complete").write_text(f"{time.time()}\n", encoding="utf-8")
        jars = sum(1 for _ in self.lib_dir.glob("*.jar"))
        _say(f"Neo4j {self.version} downloaded ({jars} jars, {time.monotonic() - started:.0f} s)")
        return self.lib_dir

    # ----------------------------------------------------------------- state

    def _read_state(self) -> dict[str, object] | None:
        try:
            state = json.loads(self.pid_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and isinstance(state.get("pid"), int) else None

    def _is_our_jvm(self, pid: int) -> bool:
        if not _pid_exists(pid):
            return False
        cmd = _cmdline(pid)
        return cmd is not None and ENTRY_POINT in cmd and f"--home-dir={self.home}" in cmd

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

    def _read_credentials(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.credentials_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("password"), str) else None

    def _write_credentials(self, password: str, initialized: bool) -> None:
        payload = {"username": USERNAME, "password": password, "initialized": initialized}
        _write_private(self.credentials_file, json.dumps(payload, indent=2) + "\n")

    # ----------------------------------------------------------------- config

    def _conf_text(self) -> str:
        s = self.settings
        d = self.home
        return "\n".join(
            [
                "# Written by kg-neo4j on every start; edit the KG_NEO4J_LOCAL_* settings instead.",
                "server.default_listen_address=127.0.0.1",
                "server.default_advertised_address=127.0.0.1",
                f"server.bolt.listen_address=127.0.0.1:{self.bolt_port}",
                f"server.bolt.advertised_address=127.0.0.1:{self.bolt_port}",
                f"server.http.listen_address=127.0.0.1:{self.http_port}",
                f"server.http.advertised_address=127.0.0.1:{self.http_port}",
                "server.https.enabled=false",
                f"server.memory.heap.initial_size={s.local_heap}",
                f"server.memory.heap.max_size={s.local_heap}",
                f"server.memory.pagecache.size={s.local_pagecache}",
                f"db.tx_log.rotation.retention_policy={s.local_tx_log_retention}",
                "db.tx_log.rotation.size=64M",
                f"server.directories.data={d / 'data'}",
                f"server.directories.logs={d / 'logs'}",
                f"server.directories.plugins={d / 'plugins'}",
                f"server.directories.run={d / 'run'}",
                f"server.directories.import={d / 'import'}",
                "dbms.security.auth_enabled=true",
                "dbms.usage_report.enabled=false",
                "",
            ]
        )

    def _command(self, java: Path) -> list[str]:
        heap = self.settings.local_heap
        return [
            str(java),
            f"-Xms{heap}",
            f"-Xmx{heap}",
            *_JVM_FLAGS,
            "-cp",
            f"{self.lib_dir}{os.sep}*",
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.conf_dir}",
            "--console-mode",
        ]

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
                pid = state["pid"]
                assert isinstance(pid, int)
                self._wait_ready(pid, time.monotonic() + timeout)
                return

            java = self.find_java()
            self._install_locked(progress=True)
            for port, what in ((self.bolt_port, "BOLT"), (self.http_port, "HTTP")):
                if not _port_free(port):
                    raise Neo4jUnavailableError(
                        f"port 127.0.0.1:{port} is already in use by another process, so the local Neo4j "
                        f"cannot listen there; stop that process or set KG_NEO4J_LOCAL_{what}_PORT "
                        f"(or point NEO4J_URI at the server that is running)"
                    )
            for sub in ("conf", "data", "logs", "run", "plugins", "import"):
                (self.home / sub).mkdir(parents=True, exist_ok=True)
            (self.conf_dir / "neo4j.conf").write_text(self._conf_text(), encoding="utf-8")

            started = time.monotonic()
            cmd = self._command(java)
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
                    raise Neo4jUnavailableError(f"could not start Java ({java}): {exc}") from exc
            _CHILDREN[proc.pid] = proc
            state = {
                "pid": proc.pid,
                "version": self.version,
                "bolt_port": self.bolt_port,
                "http_port": self.http_port,
                "java": str(java),
                "started_at": time.time(),
            }
            _write_private(self.pid_file, json.dumps(state, indent=2) + "\n")
            _say(f"starting Neo4j {self.version} on {self.bolt_uri} (log: {self.log_file}) ...")
            try:
                self._wait_ready(proc.pid, started + timeout)
            except BaseException:
                self._terminate(proc.pid, 15.0)
                with contextlib.suppress(FileNotFoundError):
                    self.pid_file.unlink()
                raise
            _say(f"Neo4j {self.version} is up on {self.bolt_uri} ({time.monotonic() - started:.1f} s)")

    def _wait_ready(self, pid: int, deadline: float) -> None:
        """Wait until Bolt answers, then make sure the password is set and works."""
        while True:
            if not self._is_our_jvm(pid):
                raise Neo4jUnavailableError(
                    f"the local Neo4j (pid {pid}) exited during start-up; last lines of {self.log_file}:\n"
                    f"{self._log_tail()}"
                )
            if _port_open(self.bolt_port):
                break
            if time.monotonic() > deadline:
                raise Neo4jUnavailableError(
                    f"the local Neo4j did not open Bolt port {self.bolt_port} in time; see {self.log_file}:\n"
                    f"{self._log_tail()}"
                )
            time.sleep(0.2)
        self._ensure_password(deadline)

    def _ensure_password(self, deadline: float) -> None:
        from neo4j.exceptions import AuthError

        creds = self._read_credentials()
        if creds is None:
            creds = {"password": secrets.token_urlsafe(24), "initialized": False}
            self._write_credentials(str(creds["password"]), False)
        password = str(creds["password"])
        if creds.get("initialized"):
            self._retry_login(password, deadline)
            return
        try:
            self._retry(deadline, lambda: self._change_initial_password(password))
        except AuthError:
            # A previous start may have changed the password but died before recording it.
            try:
                self._retry_login(password, deadline)
            except AuthError as exc:
                raise Neo4jUnavailableError(
                    f"the local Neo4j in {self.home} has a password kg-neo4j does not know "
                    f"({self.credentials_file} is missing or stale). To start over, stop it and delete "
                    f"{self.data_dir} (this deletes the stored graph)."
                ) from exc
        self._write_credentials(password, True)

    def _change_initial_password(self, password: str) -> None:
        import neo4j

        with neo4j.GraphDatabase.driver(
            self.bolt_uri, auth=(USERNAME, INITIAL_PASSWORD), connection_timeout=5.0
        ) as driver:
            with driver.session(database="system") as session:
                session.run(
                    "ALTER CURRENT USER SET PASSWORD FROM $old TO $new",
                    old=INITIAL_PASSWORD,
                    new=password,
                ).consume()

    def _retry_login(self, password: str, deadline: float) -> None:
        import neo4j

        def login() -> None:
            with neo4j.GraphDatabase.driver(
                self.bolt_uri, auth=(USERNAME, password), connection_timeout=5.0
            ) as driver:
                with driver.session(database="system") as session:
                    session.run("SHOW DEFAULT DATABASE").consume()

        self._retry(deadline, login)

    def _retry(self, deadline: float, action: Callable[[], None]) -> None:
        """Run ``action`` until it succeeds; retry only errors of a server that is still starting."""
        from neo4j.exceptions import (
            AuthError,
            ClientError,
            ServiceUnavailable,
            SessionExpired,
            TransientError,
        )

        while True:
            try:
                action()
                return
            except AuthError:
                raise
            except (ServiceUnavailable, SessionExpired, TransientError, OSError) as exc:
                error: Exception = exc
            except ClientError as exc:
                code = getattr(exc, "code", "") or ""
                if "DatabaseUnavailable" not in code and "DatabaseNotFound" not in code:
                    raise
                error = exc
            if time.monotonic() > deadline:
                raise Neo4jUnavailableError(
                    f"the local Neo4j on {self.bolt_uri} did not accept a login in time ({error}); "
                    f"see {self.log_file}"
                ) from error
            time.sleep(0.5)

    def _terminate(self, pid: int, timeout: float) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not _pid_exists(pid):
                break
            time.sleep(0.2)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            end = time.monotonic() + 10.0
            while _pid_exists(pid) and time.monotonic() < end:
                time.sleep(0.1)
        child = _CHILDREN.pop(pid, None)
        if child is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=1.0)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``); True if it was running."""
        with self._lock():
            state = self._live_state()
            if state is None:
                return False
            pid = state["pid"]
            assert isinstance(pid, int)
            self._terminate(pid, timeout)
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()
            return True

    # ----------------------------------------------------------------- reporting

    def status(self) -> dict[str, object]:
        state = self._live_state()
        running = state is not None and _port_open(int(state.get("bolt_port", self.bolt_port)))  # type: ignore[call-overload]
        bolt_port = int(state["bolt_port"]) if state else self.bolt_port  # type: ignore[call-overload]
        http_port = int(state["http_port"]) if state else self.http_port  # type: ignore[call-overload]
        return {
            "running": running,
            "starting": state is not None and not running,
            "pid": state["pid"] if state else None,
            "bolt_uri": f"bolt://127.0.0.1:{bolt_port}",
            "http_url": f"http://127.0.0.1:{http_port}",
            "browser_url": f"http://127.0.0.1:{http_port}/browser/",
            "version": state.get("version", self.version) if state else self.version,
            "installed": self.is_installed(),
            "home": str(self.home),
            "data_dir": str(self.data_dir),
            "log_file": str(self.log_file),
            "credentials_file": str(self.credentials_file),
        }

    def credentials(self) -> tuple[str, str, str]:
        """``(bolt uri, "neo4j", password)``; Neo4jUnavailableError if the server was never started."""
        creds = self._read_credentials()
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
