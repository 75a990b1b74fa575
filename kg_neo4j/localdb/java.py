"""Which Java runs which Neo4j, and where to find it.

Neo4j 5.x runs on Java 17 or 21; 2025.x and later (the calendar-versioned line) need Java 21
or later.  A JDK is looked for where users and installers put one
(docs/install.md#a-local-neo4j-without-docker):
``KG_NEO4J_LOCAL_NEO4J_JAVA`` (a ``java`` binary), ``JAVA_HOME``, ``PATH``, then the usual
install directories.
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kg_neo4j.errors import ConfigError

__all__ = [
    "JAVA_LOCATIONS",
    "JavaChoice",
    "choose_java",
    "java_major",
    "java_requirement",
    "parse_java_major",
]

#: Glob patterns of ``java`` binaries in the usual JDK install locations (Debian/Ubuntu and RPM
#: packages, Docker images' /opt/java, tarballs unpacked in /opt, SDKMAN, IntelliJ, macOS).
JAVA_LOCATIONS: tuple[str, ...] = (
    "/usr/lib/jvm/*/bin/java",
    "/usr/local/lib/jvm/*/bin/java",
    "/usr/java/*/bin/java",
    "/opt/java/*/bin/java",
    "/opt/*jdk*/bin/java",
    "/opt/*jdk*/Contents/Home/bin/java",
    "~/.sdkman/candidates/java/*/bin/java",
    "~/.jdks/*/bin/java",
    "/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java",
)

_MAJOR_CACHE: dict[str, int | None] = {}


def java_requirement(version: str) -> int:
    """The Java major version a Neo4j version needs: 5.x -> 17, 2025.x and later -> 21."""
    head = version.strip().split(".", 1)[0]
    if not head.isdigit():
        raise ConfigError(f"cannot read the Neo4j version {version!r}; expected e.g. 5.26.30 or 2026.09.0")
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


def java_major(java: Path) -> int | None:
    """The major version of a ``java`` binary (None when it does not run); cached per path."""
    key = str(java)
    if key not in _MAJOR_CACHE:
        try:
            out = subprocess.run(
                [key, "-version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
            )
            _MAJOR_CACHE[key] = parse_java_major(out.stderr + out.stdout)
        except (OSError, subprocess.SubprocessError):
            _MAJOR_CACHE[key] = None
    return _MAJOR_CACHE[key]


def install_hint(required: int) -> str:
    return (
        f"install a Java {required}+ JDK or JRE (Debian/Ubuntu: `apt-get install openjdk-{required}-jre-headless` "
        f"where the release has it, or Eclipse Temurin from https://adoptium.net; SDKMAN: "
        f"`sdk install java {required}-tem`; macOS: `brew install openjdk@{required}`), then set JAVA_HOME to it "
        f"or KG_NEO4J_LOCAL_NEO4J_JAVA to its bin/java"
    )


@dataclass(frozen=True)
class JavaChoice:
    path: Path
    major: int


def choose_java(
    neo4j_version: str,
    *,
    explicit: Path | None,
    java_home: Path | None,
    path_java: str | None | bool = True,
    locations: Sequence[str] = JAVA_LOCATIONS,
) -> JavaChoice:
    """The ``java`` to run ``neo4j_version`` with, or ConfigError naming what is missing.

    ``path_java``: True looks ``java`` up on PATH, a string is that binary, False/None skips PATH.
    An explicit binary must do; otherwise a good enough JAVA_HOME or PATH java wins (the user's
    choice), then the oldest good one in ``locations`` (closest to what Neo4j is tested with).
    """
    required = java_requirement(neo4j_version)
    if explicit is not None:
        java = Path(explicit).expanduser()
        major = java_major(java)
        if major is None:
            raise ConfigError(f"KG_NEO4J_LOCAL_NEO4J_JAVA={java} is not a runnable java binary")
        if major < required:
            raise ConfigError(
                f"Neo4j {neo4j_version} needs Java {required}+, but KG_NEO4J_LOCAL_NEO4J_JAVA={java} "
                f"is Java {major}; {install_hint(required)}"
            )
        return JavaChoice(java, major)

    preferred: list[Path] = []
    if java_home is not None and str(java_home) not in ("", "."):
        preferred.append(Path(java_home).expanduser() / "bin" / "java")
    on_path = shutil.which("java") if path_java is True else (path_java or None)
    if on_path:
        preferred.append(Path(on_path))
    others = [Path(p) for pattern in locations for p in sorted(glob.glob(str(Path(pattern).expanduser())))]

    seen: set[Path] = set()
    found: list[tuple[int, int, Path]] = []  # (major, order, path)
    for order, java in enumerate([*preferred, *others]):
        try:
            real = java.resolve()
        except OSError:
            continue
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        major = java_major(java)
        if major is not None:
            found.append((major, order, java))
    good = [f for f in found if f[0] >= required]
    chosen = [f for f in good if f[1] < len(preferred)] or sorted(good)
    if chosen:
        return JavaChoice(chosen[0][2], chosen[0][0])
    have = ", ".join(f"{p} (Java {m})" for m, _, p in found) or "none"
    home = f"JAVA_HOME={java_home}" if java_home else "JAVA_HOME (unset)"
    raise ConfigError(
        f"Neo4j {neo4j_version} needs Java {required}+ and none was found. Java found: {have}. Looked at "
        f"KG_NEO4J_LOCAL_NEO4J_JAVA (unset), {home}, PATH and {', '.join(locations)}; {install_hint(required)}"
    )
