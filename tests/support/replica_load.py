"""Clients that spread their MCP calls over stateless HTTP replicas round-robin, and the check that every
acknowledged write landed exactly once (tests/test_replicas.py; benchmarks/bench_team.py, removed in #36, ran it at
8 clients x 500 operations).

Each client holds one MCP session whose HTTP requests a load balancer of its own sends to the replicas
in turn (:class:`RoundRobin`, an HTTP transport: the initialize goes to one replica, the next call to
the next, ...), which only works because the servers keep no MCP session (``--stateless``).  The clients
contest the same names, as tests/test_concurrency.py's writers do: every client creates entities and
relations drawn from one shared pool, and adds to the entities it created (or found) a text of its own
and a text every client adds.  What each answer acknowledges (the entities and relations the call
created, the observations it added) is counted; afterwards Neo4j must hold exactly that, once each.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2  # the MCP SDK 2.x client's HTTP library
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

REL_TYPES = ("knows", "likes", "works_with")
BATCH = 5


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer in the client: each HTTP request goes to the next replica (scheme, host and port
    replaced; path and headers kept)."""

    def __init__(self, replicas: Sequence[str], start: int = 0) -> None:
        self.targets = itertools.cycle([httpx2.URL(u) for u in replicas])
        for _ in range(start % len(replicas)):
            next(self.targets)
        self.inner = httpx2.AsyncHTTPTransport()
        self.sent: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        target = next(self.targets)
        request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        self.sent[f"{target.host}:{target.port}"] += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@contextlib.asynccontextmanager
async def balanced_session(
    replicas: Sequence[str], path: str, headers: dict[str, str], start: int = 0
) -> AsyncIterator[tuple[Any, RoundRobin]]:
    """A real MCP client session whose requests go round-robin over ``replicas`` (base URLs)."""
    transport = RoundRobin(replicas, start)
    async with (
        httpx2.AsyncClient(
            headers=headers, transport=transport, timeout=httpx2.Timeout(30, read=300)
        ) as client,
        streamable_http_client(f"{replicas[0]}{path}", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session, transport


def entity_name(i: int) -> str:
    return f"E{i:03d}"


@dataclass
class Acks:
    """What the answers acknowledged, with how many times each."""

    entities: Counter[str] = field(default_factory=Counter)
    relations: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    observations: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    calls: int = 0


def plan(client: int, ops: int, pool: int) -> list[tuple[str, dict[str, Any]]]:
    """The calls of one client: creates of contested entities and relations, observations added to
    names the client's earlier creates ensured (their create answered, whoever created them)."""
    rng = random.Random(client)
    ensured: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    for k in range(ops):
        if k % 3 == 0 or not ensured:
            names = [entity_name(i) for i in rng.sample(range(pool), BATCH)]
            ensured += names
            entities = [{"name": n, "entityType": "node", "observations": [f"born {n}"]} for n in names]
            calls.append(("create_entities", {"entities": entities}))
        elif k % 3 == 1:
            rels = []
            for _ in range(BATCH):
                a, b = rng.sample(range(pool), 2)
                rels.append(
                    {"from": entity_name(a), "to": entity_name(b), "relationType": rng.choice(REL_TYPES)}
                )
            calls.append(("create_relations", {"relations": rels}))
        else:
            name = rng.choice(ensured)
            texts = [f"client {client} op {k}", f"shared {name}"]
            calls.append(("add_observations", {"observations": [{"entityName": name, "contents": texts}]}))
    return calls


def acknowledge(acks: Acks, tool: str, answer: dict[str, Any]) -> None:
    if tool == "create_entities":
        for e in answer["entities"]:
            acks.entities[e["name"]] += 1
            for text in e["observations"]:
                acks.observations[(e["name"], text)] += 1
    elif tool == "create_relations":
        for r in answer["relations"]:
            acks.relations[(r["from"], r["to"], r["relationType"])] += 1
    else:
        for res in answer["results"]:
            for text in res["addedObservations"]:
                acks.observations[(res["entityName"], text)] += 1


async def run_clients(
    replicas: Sequence[str],
    path: str,
    headers: dict[str, str],
    *,
    clients: int,
    ops: int,
    pool: int,
) -> tuple[Acks, float, Counter[str]]:
    """``clients`` sessions side by side, ``ops`` calls each; the acks, the wall time of the calls (the
    sessions' starts excluded) and how many HTTP requests each replica got."""
    acks = Acks()
    sent: Counter[str] = Counter()
    ready = asyncio.Barrier(clients)  # every session started before the clock starts
    started: list[float] = []

    async def client(idx: int) -> None:
        async with balanced_session(replicas, path, headers, start=idx) as (session, transport):
            await ready.wait()
            started.append(time.perf_counter())
            for tool, args in plan(idx, ops, pool):
                acks.calls += 1
                try:
                    result = await session.call_tool(tool, args)
                except Exception as exc:  # a failed request is counted, not hidden
                    acks.errors.append(f"client {idx} {tool}: {exc!r}"[:300])
                    continue
                if result.is_error:
                    text = " ".join(getattr(b, "text", "") for b in result.content)
                    acks.errors.append(f"client {idx} {tool}: {text}"[:300])
                else:
                    acknowledge(acks, tool, result.structured_content)
        sent.update(transport.sent)

    await asyncio.gather(*(client(i) for i in range(clients)))
    return acks, time.perf_counter() - min(started), sent


def check(driver: Any, database: str, namespace: str, acks: Acks) -> dict[str, Any]:
    """Every problem found in ``namespace`` against the acks (empty: each acknowledged write is there
    exactly once, nothing unacknowledged was written, no name was created twice)."""
    problems: dict[str, Any] = {}

    def rows(query: str) -> list[Any]:
        return list(driver.execute_query(query, ns=namespace, database_=database).records)

    if acks.errors:
        problems[f"failed calls ({len(acks.errors)})"] = acks.errors[:5]
    per_name = {
        r["name"]: (r["c"], r["e"])
        for r in rows(
            "MATCH (n:KgNode {namespace: $ns}) WHERE n.name IS NOT NULL "
            "RETURN n.name AS name, count(*) AS c, sum(CASE WHEN n:Entity THEN 1 ELSE 0 END) AS e"
        )
    }
    if bad := {n: v for n, v in per_name.items() if v[0] != 1}:
        problems["several nodes for one name"] = bad
    entities = {n for n, (_, e) in per_name.items() if e}
    if entities != set(acks.entities):
        problems["entities lost or unacknowledged"] = sorted(entities ^ set(acks.entities))
    if bad := {n: c for n, c in acks.entities.items() if c != 1}:
        problems["entities acknowledged as created by several calls"] = bad

    per_rel = Counter(
        {
            (r["a"], r["b"], r["t"]): r["c"]
            for r in rows(
                "MATCH (a:KgNode {namespace: $ns})-[r]->(b:KgNode) "
                "RETURN a.name AS a, b.name AS b, type(r) AS t, count(*) AS c"
            )
        }
    )
    if bad := {k: c for k, c in per_rel.items() if c != 1}:
        problems["duplicated relationships"] = bad
    if set(per_rel) != set(acks.relations):
        problems["relations lost or unacknowledged"] = sorted(set(per_rel) ^ set(acks.relations))[:20]
    if bad := {k: c for k, c in acks.relations.items() if c != 1}:
        problems["relations acknowledged as created by several calls"] = bad

    per_obs = Counter(
        {
            (r["name"], r["text"]): r["c"]
            for r in rows(
                "MATCH (e:Entity {namespace: $ns})-[:HAS_OBSERVATION]->(o:Observation) "
                "RETURN e.name AS name, o.text AS text, count(*) AS c"
            )
        }
    )
    if bad := {k: c for k, c in per_obs.items() if c != 1}:
        problems["duplicated observations"] = dict(list(bad.items())[:20])
    if set(per_obs) != set(acks.observations):
        problems["observations lost or unacknowledged"] = sorted(set(per_obs) ^ set(acks.observations))[:20]
    if bad := {k: c for k, c in acks.observations.items() if c != 1}:
        problems["observations acknowledged as added by several calls"] = dict(list(bad.items())[:20])
    return problems
