"""Private local Neo4j servers of either line (5.26 LTS, the current calendar release) for the
version tests: a temporary home on free ports, the jars installed once in the default home's
``dist/`` (outside the clone, shared with `kg-neo4j neo4j start`), which other homes link."""

from __future__ import annotations

import socket
from pathlib import Path

from kg_neo4j.localdb import LocalNeo4j
from kg_neo4j.settings import Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cached_dist(version: str) -> Path:
    """``<default home>/neo4j/dist/<version>``, downloaded there once if missing."""
    cache = LocalNeo4j(Settings(local_neo4j_version=version))
    cache.install(progress=False)
    return cache.dist_dir


def private_server(
    home: Path, version: str, bolt_port: int | None = None, http_port: int | None = None
) -> LocalNeo4j:
    """A LocalNeo4j of ``version`` in ``home`` (not started); the same ports for the same home keep
    a restart under another version on the same data."""
    settings = Settings(
        home=home,
        local_neo4j_version=version,
        local_bolt_port=bolt_port or free_port(),
        local_http_port=http_port or free_port(),
        local_heap="768m",
        local_pagecache="256m",
        local_tx_log_retention="100M size",
    )
    cached_dist(version)  # LocalNeo4j.install then links these jars instead of downloading them
    return LocalNeo4j(settings)
