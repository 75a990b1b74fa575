"""The local server's settings check, ``neo4j.conf`` and JVM command line (both lines: 5.26, 2025.x+)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings

__all__ = ["browser_settings", "check_settings", "command", "conf_text"]

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

_MEMORY_RE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
_RETENTION_RE = re.compile(
    r"(true|false|keep_all|keep_none|[1-9][0-9]*[kKmMgG]? (files|size|txs|entries)"
    r"|[1-9][0-9]* (hours|days)( [1-9][0-9]*[kKmMgG]?)?)"
)
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?$")


def check_settings(settings: Settings) -> None:
    """ConfigError naming the KG_NEO4J_LOCAL_* setting that Neo4j would refuse (or misread)."""
    version = settings.local_neo4j_version
    if not _VERSION_RE.match(version):
        raise ConfigError(
            f"KG_NEO4J_LOCAL_NEO4J_VERSION={version!r} is not a Neo4j version like 5.26.30 or 2026.09.0"
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
    if len({settings.local_bolt_port, settings.local_http_port, settings.local_guide_port}) < 3:
        raise ConfigError("the local Bolt, HTTP and guide ports must differ")


def conf_text(s: Settings, home: Path, bolt_port: int, http_port: int) -> str:
    """``neo4j.conf``, rewritten on every start: loopback only, our directories, sizes and retention."""
    return "\n".join(
        [
            "# Written by kg-neo4j on every start; edit the KG_NEO4J_LOCAL_* settings instead.",
            "server.default_listen_address=127.0.0.1",
            "server.default_advertised_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{bolt_port}",
            f"server.bolt.advertised_address=127.0.0.1:{bolt_port}",
            f"server.http.listen_address=127.0.0.1:{http_port}",
            f"server.http.advertised_address=127.0.0.1:{http_port}",
            "server.https.enabled=false",
            f"server.memory.heap.initial_size={s.local_heap}",
            f"server.memory.heap.max_size={s.local_heap}",
            f"server.memory.pagecache.size={s.local_pagecache}",
            f"db.tx_log.rotation.retention_policy={s.local_tx_log_retention}",
            "db.tx_log.rotation.size=64M",
            f"server.directories.data={home / 'data'}",
            f"server.directories.logs={home / 'logs'}",
            f"server.directories.plugins={home / 'plugins'}",
            f"server.directories.run={home / 'run'}",
            f"server.directories.import={home / 'import'}",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            *browser_settings(s.local_guide_port),
            "",
        ]
    )


def browser_settings(guide_port: int) -> list[str]:
    """Browser applies our style and offers our guide on connect, both fetched from the loopback endpoint
    ``neo4j start`` starts (kg_neo4j/browser/endpoint.py;
    docs/neo4j-versions.md#how-the-local-server-is-set-up)."""
    base = f"http://127.0.0.1:{guide_port}"
    return [
        f"browser.post_connect_cmd=style {base}/memory.grass; play {base}/guide.html",
        "browser.remote_content_hostname_whitelist=guides.neo4j.com,localhost,127.0.0.1",
    ]


#: Lucene, under Neo4j's vector indexes, computes vector distances with SIMD only when the JVM lets it
#: read this incubator module, from Java 21 (Lucene 9.11 in 5.26 and Lucene 10 in 2025.x+; on Java 17
#: it only logs that the Java is too old; docs/performance.md#find_duplicates measures the gain); Lucene
#: logs a warning asking for it when it is missing.
VECTOR_API_JAVA = 21
_VECTOR_API_FLAG = "--add-modules=jdk.incubator.vector"


def command(
    java: Path, java_major: int, lib_dir: Path, main_class: str, home: Path, conf_dir: Path, heap: str
) -> list[str]:
    """The JVM command line: the same flags for both lines, only the main class differs (and the
    vector API flag, given to a Java that Lucene can use it on)."""
    return [
        str(java),
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *_JVM_FLAGS,
        *([_VECTOR_API_FLAG] if java_major >= VECTOR_API_JAVA else []),
        "-cp",
        f"{lib_dir}{os.sep}*",
        main_class,
        f"--home-dir={home}",
        f"--config-dir={conf_dir}",
        "--console-mode",
    ]
