"""Security as a probe (docs/team.md): every tool of every profile, called by a
principal with ``read`` on namespace ``a`` and ``write`` on namespace ``b`` (and no grant on ``c``),
over real HTTP through real MCP sessions, with each tool's declared example call (valid against the
seed graph of ``kg_neo4j/server/examples.py``; the schema-generated MemoryMesh tools' too).

One ``kg-neo4j serve --transport http --tools P --grants FILE`` per profile, the five started side by
side; ``a`` and ``c`` are seeded once for the module (nothing may ever change them), each profile gets a
``b`` of its own, seeded before its probe (its write examples act on it once each).  A ``seeder``
principal with ``admin`` on the run's namespaces writes the seeds through the ``all`` server's tools.

What each profile's probe asserts:

- on ``a`` (read): the session lists exactly the read tools; read tools answer without error; every
  write and admin tool is a tool error naming the scope it needs and saying nothing was written;
- on ``c`` (no grant): the door refuses the MCP session, and a raw JSON-RPC ``tools/call`` POST for
  each tool is a 403 whose JSON body names ``c`` and the scope needed;
- on ``b`` (write): the session lists the read and write tools; both answer without error; every admin
  tool is a tool error naming ``admin``, and ``b``'s fingerprint is the same before and after it;
- the fingerprints (tests/support/sweep_cases.py: every node, label, property and relationship of a namespace)
  of ``a`` and ``c`` are the same at the end as after the seed, ``b``'s unchanged by the ``a`` and ``c``
  phases; no refusal carries a stack trace.

The matrix (per profile and namespace, calls allowed and refused) is printed to the terminal.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import pytest_asyncio
from mcp.shared.exceptions import MCPError

from kg_neo4j.schemas import NodeSchema, load_schemas
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES, profile_tools
from kg_neo4j.server.examples import write_seed, write_skill_files
from kg_neo4j.server.profiles import ALL, DEFAULT, KNOWLEDGE, MEMORYMESH, REFERENCE
from kg_neo4j.server.registry import ToolSpec
from support.many_servers import starting
from support.servers import Neo4jInfo, http_server, http_session
from support.sweep_cases import changes, fingerprint

PROFILES = (REFERENCE, DEFAULT, MEMORYMESH, KNOWLEDGE, ALL)
# The server's stderr is a pipe nobody reads while it runs (support.servers.http_server): the access log of
# the hundreds of requests the `all` server answers would fill it, and a full pipe blocks the server.
QUIET = ("--log-level", "WARNING")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Probe:
    run: str
    urls: dict[str, str]
    tokens: dict[str, str]
    driver: Any
    database: str
    schemas: list[NodeSchema]

    @property
    def a(self) -> str:
        return f"{self.run}/a"

    def b(self, profile: str) -> str:
        return f"{self.run}/b/{profile}"

    @property
    def c(self) -> str:
        return f"{self.run}/c"

    def fingerprint(self, namespace: str) -> list[str]:
        return fingerprint(self.driver, self.database, namespace)

    async def seed(self, namespace: str) -> None:
        async with http_session(self.urls[ALL], bearer(self.tokens["seeder"]), path=ns_path(namespace)) as s:

            async def call(name: str, args: dict[str, Any]) -> None:
                result = await s.call_tool(name, args)
                assert not result.is_error, f"seeding {name} on {namespace} failed: {text_of(result)}"

            await write_seed(call, self.schemas)
            # what only this namespace holds, where the read examples look (Ada Lovelace's observations,
            # Elara's metadata): an answer elsewhere that shows it read across namespaces
            marker = self.marker(namespace)
            await call(
                "add_observations", {"observations": [{"entityName": "Ada Lovelace", "contents": [marker]}]}
            )
            await call("add_metadata", {"nodeName": "Elara", "metadata": [f"Marker: {marker}"]})

    def marker(self, namespace: str) -> str:
        return f"seen only in {namespace}"

    def foreign(self, answer: str, namespace: str) -> list[str]:
        """The other namespaces whose marker ``answer`` (read on ``namespace``) shows."""
        return [ns for ns in self.namespaces if ns != namespace and self.marker(ns) in answer]

    @property
    def namespaces(self) -> list[str]:
        return [self.a, self.c, *(self.b(p) for p in PROFILES)]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ns_path(namespace: str) -> str:
    return "/mcp/" + quote(namespace, safe="")


def text_of(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def write_grants(path: Path, principals: dict[str, list[str]]) -> dict[str, str]:
    """A grants file with a fresh 256-bit token per principal (only its SHA-256 in the file)."""
    tokens = {name: secrets.token_urlsafe(32) for name in principals}
    lines = []
    for name, grants in principals.items():
        digest = hashlib.sha256(tokens[name].encode()).hexdigest()
        lines += [
            f'[principals."{name}"]',
            f'token_sha256 = "{digest}"',
            f"grants = {json.dumps(grants)}",
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return tokens


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def probe(
    neo4j_info: Neo4jInfo, sync_driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Probe]:
    run = f"probe-{uuid.uuid4().hex[:8]}"
    home = tmp_path_factory.mktemp("probe")
    grants = home / "grants.toml"
    tokens = write_grants(grants, {"P1": [f"{run}/a:read", f"{run}/b/*:write"], "seeder": [f"{run}/*:admin"]})
    skills = write_skill_files(home / "skills")
    servers = {
        profile: http_server(
            neo4j_info,
            *("--namespace", f"{run}/default", "--grants", str(grants)),
            *("--tools", profile, "--skills-dir", str(skills)),
            *QUIET,
        )
        for profile in PROFILES
    }
    with ExitStack() as stack:
        urls = starting(servers, stack)
        probe = Probe(
            run, {}, tokens, sync_driver, neo4j_info.database, load_schemas(reserved=BUILTIN_TOOL_NAMES)
        )
        try:
            # the seeds go through the `all` server while the others are still starting
            probe.urls[ALL] = await asyncio.wrap_future(urls[ALL])
            await asyncio.gather(*(probe.seed(ns) for ns in probe.namespaces))
            for profile, url in urls.items():
                probe.urls[profile] = await asyncio.wrap_future(url)
            yield probe
        finally:
            sync_driver.execute_query(
                "MATCH (n) WHERE n.namespace IN $namespaces DETACH DELETE n",
                namespaces=probe.namespaces,
                database_=neo4j_info.database,
            )


def refused_for_scope(result: Any, spec: ToolSpec, namespace: str) -> str | None:
    """Why ``result`` is not the tool error of a call the grant does not allow, or None if it is."""
    text = text_of(result)
    if not result.is_error:
        return f"{spec.name} on {namespace}: not refused: {text[:200]}"
    if f"needs the {spec.scope!r} scope" not in text or "nothing was written" not in text:
        return f"{spec.name} on {namespace}: refused without naming {spec.scope!r}: {text[:200]}"
    if "Traceback" in text:
        return f"{spec.name} on {namespace}: the refusal carries a stack trace"
    return None


def answered(probe: Probe, result: Any, spec: ToolSpec, namespace: str, seen: set[str]) -> str | None:
    """Why ``result`` is not an allowed call's answer on ``namespace``, or None if it is; a marker of
    ``namespace`` in the answer goes into ``seen``."""
    if result.is_error:
        return f"{spec.name} on {namespace}: an allowed call failed: {text_of(result)[:200]}"
    answer = text_of(result) + json.dumps(result.structured_content, ensure_ascii=False)
    if probe.marker(namespace) in answer:
        seen.add(spec.name)
    if foreign := probe.foreign(answer, namespace):
        return f"{spec.name} on {namespace}: the answer shows what only {foreign} hold"
    return None


def tools_call(spec: ToolSpec, call_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": spec.name, "arguments": spec.example},
    }


@pytest.mark.parametrize("profile", PROFILES)
async def test_every_tool_on_read_write_and_foreign_namespaces(
    probe: Probe, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url, token = probe.urls[profile], probe.tokens["P1"]
    a, b, c = probe.a, probe.b(profile), probe.c
    specs = profile_tools(profile, probe.schemas)
    scope_of = {s.name: s.scope for s in specs}
    seeded = {ns: probe.fingerprint(ns) for ns in (a, b, c)}
    matrix: Counter[tuple[str, str]] = Counter()
    problems: list[str] = []
    seen: dict[str, set[str]] = {a: set(), b: set()}  # the reads that showed their namespace's marker

    def expect(problem: str | None, namespace: str, outcome: str) -> None:
        matrix[(namespace, outcome)] += 1
        if problem is not None:
            problems.append(problem)

    def unchanged(namespace: str, when: str) -> None:
        now = probe.fingerprint(namespace)
        if now != seeded[namespace]:
            problems.append(f"{namespace} changed {when}: {changes(seeded[namespace], now)}")

    # a: read.  The write and admin tools are not listed, and calling one anyway is refused.
    async with http_session(url, bearer(token), path=ns_path(a)) as s:
        listed = {t.name for t in (await s.list_tools()).tools}
        assert listed == {n for n, scope in scope_of.items() if scope == "read"}
        for spec in specs:
            result = await s.call_tool(spec.name, spec.example)
            if spec.scope == "read":
                expect(answered(probe, result, spec, a, seen[a]), "a", "allowed")
            else:
                expect(refused_for_scope(result, spec, a), "a", "refused")
    for ns in (a, b, c):
        unchanged(ns, "by the calls on a")

    # c: no grant.  The door refuses the session, and every tool's tools/call on its own.
    with pytest.raises(ExceptionGroup) as door:  # the SDK's client fails the session's start
        async with http_session(url, bearer(token), path=ns_path(c)):
            pass
    assert door.group_contains(MCPError), repr(door.value)
    async with httpx.AsyncClient(timeout=30) as client:
        for i, spec in enumerate(specs, start=1):
            response = await client.post(
                f"{url}{ns_path(c)}", json=tools_call(spec, i), headers={**HEADERS, **bearer(token)}
            )
            body = response.json() if response.status_code == 403 else {}
            ok = body.get("namespace") == c and body.get("needed") == "read" and "P1" in body.get("error", "")
            expect(
                None
                if ok and "Traceback" not in response.text
                else f"{spec.name} on c: {response.status_code} {response.text[:200]}",
                "c",
                "refused",
            )
    for ns in (a, b, c):
        unchanged(ns, "by the calls on c")

    # b: write.  Read and write tools answer; admin tools are refused and leave b as it was.
    async with http_session(url, bearer(token), path=ns_path(b)) as s:
        listed = {t.name for t in (await s.list_tools()).tools}
        assert listed == {n for n, scope in scope_of.items() if scope != "admin"}
        for spec in specs:
            if spec.scope == "admin":
                before = probe.fingerprint(b)
                result = await s.call_tool(spec.name, spec.example)
                after = probe.fingerprint(b)
                expect(refused_for_scope(result, spec, b), "b", "refused")
                if after != before:
                    problems.append(f"{spec.name} refused on b, but b changed: {changes(before, after)}")
            else:
                result = await s.call_tool(spec.name, spec.example)
                expect(answered(probe, result, spec, b, seen[b]), "b", "allowed")
    for ns in (a, c):
        unchanged(ns, "by the calls on b")
    if any(scope == "write" for scope in scope_of.values()):
        assert probe.fingerprint(b) != seeded[b], "the allowed writes on b changed nothing"

    counts = ", ".join(
        f"{ns}: {matrix[(ns, 'allowed')]} allowed / {matrix[(ns, 'refused')]} refused" for ns in "abc"
    )
    # the marker check has teeth: some read of each namespace shows that namespace's own marker
    assert seen[a] and seen[b], f"no read showed its own namespace's marker: {seen}"
    with capsys.disabled():
        print(f"\nprobe matrix {profile} ({len(specs)} tools): {counts}")
    assert sum(matrix.values()) == 3 * len(specs)
    assert matrix[("c", "allowed")] == 0 and matrix[("a", "allowed")] == list(scope_of.values()).count("read")
    assert problems == [], "\n".join(problems)


@pytest.mark.unit
def test_the_matrix_covers_every_tool_of_every_profile() -> None:
    """What the probe walks: each profile's tools as its server lists them, each with an example call."""
    schemas = load_schemas(reserved=BUILTIN_TOOL_NAMES)
    for profile in PROFILES:
        specs = profile_tools(profile, schemas)
        assert specs and all(s.example is not None for s in specs), profile
    assert {s.scope for s in profile_tools(ALL, schemas)} == {"read", "write", "admin"}
