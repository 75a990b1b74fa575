"""Replicas behind a load balancer (docs/cluster.md#replicas-behind-a-load-balancer): three
``kg-neo4j serve --transport http --stateless`` processes on one Neo4j, one grants file (a namespace per test),
eight clients each spreading its calls over them round-robin (tests/support/replica_load.py: every HTTP request
to the next replica, the MCP session's initialize included).  The suite's concurrency check
(tests/test_concurrency.py) holds across them: every acknowledged write is in Neo4j exactly once,
nothing unacknowledged is, and a name the clients contest is created by exactly one call.  Two
replicas without ``--stateless`` show why the setting is needed (and that the balancing does cross
replicas): a session started on one is unknown to the other.  The full
8 x 500 was benchmarks/bench_team.py's (docs/performance.md#team-service); a stateless server's refusal of subscriptions is
tests/test_team_http.py's."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from support.many_servers import started
from support.replica_load import BATCH, check, run_clients
from support.servers import Neo4jInfo, http_server

REPLICAS = 3
CLIENTS = 8
OPS = 30  # per client: 10 entity creates, 10 relation creates, 10 observation adds
POOL = 60  # names the clients contest: 8 clients x 10 creates x 5 names over 60 names


@dataclass(frozen=True)
class Replicas:
    stateless: list[str]
    stateful: list[str]
    prefix: str
    headers: dict[str, str]

    def namespace(self, test: str) -> str:
        """Each test its own namespace under the granted prefix: pytest-randomly may run either test
        first, and the check counts everything in its namespace."""
        return f"{self.prefix}/{test}"

    def path(self, test: str) -> str:
        return "/mcp/" + quote(self.namespace(test), safe="")


@pytest.fixture(scope="module")
def replicas(
    neo4j_info: Neo4jInfo, sync_driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Replicas]:
    """Three stateless replicas and two stateful ones, on one grants file granting one namespace prefix."""
    prefix = f"test-replicas-{uuid.uuid4().hex[:8]}"
    token = secrets.token_urlsafe(32)
    grants = tmp_path_factory.mktemp("replicas") / "grants.toml"
    digest = hashlib.sha256(token.encode()).hexdigest()
    grants.write_text(
        f'[principals.writer]\ntoken_sha256 = "{digest}"\ngrants = ["{prefix}/*:write"]\n', encoding="utf-8"
    )
    # warnings only: the server's stderr is a pipe nobody reads while it runs (support.servers.http_server)
    common = ("--namespace", f"{prefix}/default", "--grants", str(grants), "--log-level", "WARNING")
    servers = {
        **{("stateless", i): http_server(neo4j_info, *common, "--stateless") for i in range(REPLICAS)},
        **{("stateful", i): http_server(neo4j_info, *common) for i in range(2)},
    }
    with ExitStack() as stack:
        urls = started(servers, stack)
        try:
            yield Replicas(
                [u for (kind, _), u in urls.items() if kind == "stateless"],
                [u for (kind, _), u in urls.items() if kind == "stateful"],
                prefix,
                {"Authorization": f"Bearer {token}"},
            )
        finally:
            sync_driver.execute_query(
                "MATCH (n) WHERE n.namespace STARTS WITH $prefix DETACH DELETE n",
                prefix=prefix + "/",
                database_=neo4j_info.database,
            )


async def test_acked_writes_land_exactly_once_across_replicas(
    replicas: Replicas, sync_driver: Any, neo4j_info: Neo4jInfo
) -> None:
    urls = replicas.stateless
    test = "stateless"
    acks, _, sent = await run_clients(
        urls, replicas.path(test), replicas.headers, clients=CLIENTS, ops=OPS, pool=POOL
    )
    assert acks.calls == CLIENTS * OPS
    problems = check(sync_driver, neo4j_info.database, replicas.namespace(test), acks)
    assert problems == {}, "\n".join(f"{k}: {str(v)[:400]}" for k, v in problems.items())
    # the clients did contest the names (more creates asked than names exist) ...
    asked = CLIENTS * len(range(0, OPS, 3)) * BATCH
    assert len(acks.entities) <= POOL < asked
    # ... and every replica served its share of the requests (round-robin: within one per client)
    hosts = {u.removeprefix("http://") for u in urls}
    assert set(sent) == hosts
    assert max(sent.values()) - min(sent.values()) <= CLIENTS, sent


async def test_without_stateless_a_session_is_unknown_to_the_next_replica(replicas: Replicas) -> None:
    """Each client's requests alternate between the two replicas; whichever one did not start its
    session answers 404 ("Session not found") to the calls it gets."""
    acks, _, sent = await run_clients(
        replicas.stateful, replicas.path("stateful"), replicas.headers, clients=2, ops=6, pool=POOL
    )
    assert len(sent) == 2 and acks.calls == 12
    assert any("Session not found" in e for e in acks.errors), acks.errors
