"""Neo4j's jars from Maven Central, and the main class they start with.

``mvn dependency:copy-dependencies`` fetches ``org.neo4j:neo4j:<version>`` and everything it
needs (once; Maven keeps its own cache in ``~/.m2``) into ``<home>/dist/<version>/lib``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from kg_neo4j.errors import ConfigError, Neo4jUnavailableError
from kg_neo4j.localdb.process import say

__all__ = [
    "BROWSER_VERSION",
    "CURRENT_VERSION",
    "ENTRY_POINTS",
    "LTS_VERSION",
    "download",
    "entry_point",
    "reuse",
]

#: The two Neo4j releases CI runs the suite against (docs/neo4j-versions.md#neo4j-versions): the LTS, which is
#: the default (``KG_NEO4J_LOCAL_NEO4J_VERSION``), and the newest calendar release of the current line.
LTS_VERSION = "5.26.30"
CURRENT_VERSION = "2026.09.0"

#: The Neo4j Browser is a separate artifact with its own versions; this one works with 5.x and later.
BROWSER_VERSION = "5.24.0"
#: The Community main classes: 5.x's, and 2025.x's and later's (the jar names its own, see entry_point).
ENTRY_POINTS = ("org.neo4j.server.CommunityEntryPoint", "org.neo4j.server.Neo4jCommunity")
_SERVICE = "META-INF/services/org.neo4j.server.startup.EntryPoint"

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


def entry_point(lib_dir: Path, version: str) -> str:
    """The main class of this Neo4j: the one ``neo4j-<version>.jar`` registers as its startup
    entry point (``org.neo4j.server.Neo4jCommunity`` since 2025.x), else the one of its line."""
    jar = lib_dir / f"neo4j-{version}.jar"
    try:
        with zipfile.ZipFile(jar) as zf:
            text = zf.read(_SERVICE).decode("utf-8", errors="replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        text = ""
    for line in text.splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            return name
    return ENTRY_POINTS[1] if int(version.split(".", 1)[0]) >= 2025 else ENTRY_POINTS[0]


def reuse(version: str, dist_dir: Path, lib_dir: Path, source: Path) -> bool:
    """Link (or copy) the jars of a complete install of ``version`` in another home (``source``:
    its ``dist/<version>``) instead of downloading them again; False when there is none."""
    if source.resolve() == dist_dir.resolve() or not (source / ".complete").exists():
        return False
    jars = sorted((source / "lib").glob("*.jar"))
    if not any(j.name == f"neo4j-{version}.jar" for j in jars):
        return False
    staging = dist_dir / "lib.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for jar in jars:
        try:
            os.link(jar, staging / jar.name)  # same file system: no copy, and the source may go away
        except OSError:
            shutil.copy2(jar, staging / jar.name)
    shutil.rmtree(lib_dir, ignore_errors=True)
    staging.rename(lib_dir)
    (dist_dir / ".complete").write_text(f"{time.time()}\n", encoding="utf-8")
    say(f"Neo4j {version}: reused the {len(jars)} jars of {source}")
    return True


def download(version: str, dist_dir: Path, lib_dir: Path, progress: bool) -> None:
    """Fetch the jars of ``version`` into ``lib_dir`` (via ``dist_dir/lib.partial``, renamed when complete)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigError(
            "Maven (`mvn`) is needed once to download Neo4j from Maven Central; install it "
            "(Debian/Ubuntu: `apt-get install maven`; macOS: `brew install maven`) or use docker/compose.yaml"
        )
    dist_dir.mkdir(parents=True, exist_ok=True)
    pom = dist_dir / "pom.xml"
    pom.write_text(_POM.format(version=version, browser=BROWSER_VERSION), encoding="utf-8")
    staging = dist_dir / "lib.partial"
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [
        mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(pom),
        "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
    ]  # fmt: skip
    say(f"downloading Neo4j {version} from Maven Central (once) into {lib_dir} ...")
    started = time.monotonic()
    # stdout must stay clean (it may be the MCP channel): Maven's output goes to stderr,
    # stripped of colour codes and blank lines; without ``progress`` only on failure.
    kept: list[str] = []
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=dist_dir,
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
            f"downloading Neo4j {version} with Maven failed (exit {returncode}); check the "
            f"version and network access to Maven Central. Command: {shlex.join(cmd)}{tail}"
        )
    if not any(staging.glob(f"neo4j-{version}.jar")):
        raise Neo4jUnavailableError(f"Maven finished but neo4j-{version}.jar is missing in {staging}")
    shutil.rmtree(lib_dir, ignore_errors=True)
    staging.rename(lib_dir)
    (dist_dir / ".complete").write_text(f"{time.time()}\n", encoding="utf-8")
    jars = sum(1 for _ in lib_dir.glob("*.jar"))
    say(f"Neo4j {version} downloaded ({jars} jars, {time.monotonic() - started:.0f} s)")
