"""Strict input, swept from the advertised schemas (docs/input-validation.md#input-validation-and-limits).

The cases are generated in process from what the ``all`` profile advertises (the declarations and the
tools the shipped example node schemas generate; tests/support/sweep_cases.py), one pytest id per case, e.g.
``create_relations-relations[0].weight-string``: collecting them needs no Neo4j and no server.  Each
declaration's example call (``example=``, valid against the seed of ``kg_neo4j/server/examples.py``) is
the base, and one thing is changed per case:

- ``unknown``: an unknown field at the top and in every closed object (array items, nested objects);
  the documented open objects of schema-generated tools (``additionalProperties: true``) take any field;
- ``string`` / ``number`` / ``boolean`` / ``object`` / ``array``: each JSON type the field does not allow;
- ``nan`` / ``inf`` / ``neginf`` for numbers and integers, sent as the JSON texts NaN / Infinity / -Infinity,
  and as the value of an extra field of an open object (open to any field, not to numbers JSON lacks);
- ``null`` where the field's schema does not allow null;
- ``blank``: whitespace-only text in free-text fields with ``minLength >= 1``.

Each case asserts an MCP tool error (isError) whose text names the field (the unknown field's own name,
else the field's key) and that nothing under the sweep's namespace changed: nodes, labels, properties and
relationships (history included), read from Neo4j after every case and compared with the read before
(``support.sweep_cases.fingerprint``).  One server (``--tools all``, a real MCP stdio session) serves the cases;
its session's tools/list must be what the cases were built from.  A case that wrote anything (a failure)
is followed by a re-seed, so every case starts from the same state.

Every example call succeeds against the seed (:func:`test_example_call_succeeds`): the sweep proves the
mutation is refused, not a broken base.  The examples run on a second server and namespace, seeded the
same way, so their writes never meet the cases, in any order.
"""

from __future__ import annotations

import contextlib
import math
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp.shared.message import SessionMessage

from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES
from kg_neo4j.server.examples import write_seed, write_skill_files
from kg_neo4j.server.profiles import ALL
from support.servers import Neo4jInfo
from support.sweep_cases import (
    NON_FINITE,
    Case,
    NonFiniteWire,
    advertised,
    all_cases,
    changes,
    example_of,
    fingerprint,
    held,
    mutate,
    names_field,
    specs,
    wire_session,
)


def controls() -> list[Any]:
    """(tool, example call) for every tool of ``all``: its example and each of its more_examples."""
    out = []
    for name, spec in specs().items():
        out.append(pytest.param(name, spec.example, id=name))
        out += [pytest.param(name, more, id=f"{name}-{'-'.join(more)}") for more in spec.more_examples]
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        cases = all_cases()
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])
    if "example" in metafunc.fixturenames:
        metafunc.parametrize(("tool", "example"), controls())
    elif "tool" in metafunc.fixturenames:
        tools = [t["name"] for t in advertised()]
        metafunc.parametrize("tool", tools, ids=tools)


# ---------------------------------------------------------------------------------------- the fixtures


@dataclass
class Served:
    """A seeded ``--tools all`` session on a namespace of its own."""

    session: Any
    driver: Any
    database: str
    namespace: str
    last: list[str] = field(default_factory=list)

    def fingerprint(self) -> list[str]:
        return fingerprint(self.driver, self.database, self.namespace)

    async def call(self, name: str, args: dict[str, Any]) -> None:
        result = await self.session.call_tool(name, args)
        assert not result.is_error, f"seeding {name}({args}) failed: {result.content}"

    async def seed(self) -> None:
        self.driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=self.namespace, database_=self.database
        )
        await write_seed(self.call, load_schemas(reserved=BUILTIN_TOOL_NAMES))
        self.last = self.fingerprint()


@pytest.fixture(scope="module")
def skills_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_skill_files(tmp_path_factory.mktemp("sweep-skills"))


@contextlib.asynccontextmanager
async def seeded(info: Neo4jInfo, driver: Any, skills_dir: Path, purpose: str) -> AsyncIterator[Served]:
    namespace = f"test-input-sweep-{purpose}-{uuid.uuid4().hex[:8]}"
    args = ("--tools", ALL, "--skills-dir", str(skills_dir))
    async with held(wire_session(info, namespace, *args)) as session:
        listed = [t.model_dump(mode="json", by_alias=True) for t in (await session.list_tools()).tools]
        assert listed == advertised(), (
            "the server's tools/list differs from the one the cases were built from"
        )
        served = Served(session, driver, info.database, namespace)
        try:
            await served.seed()
            yield served
        finally:
            driver.execute_query(
                "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace, database_=info.database
            )


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def sweep(neo4j_info: Neo4jInfo, sync_driver: Any, skills_dir: Path) -> AsyncIterator[Served]:
    async with seeded(neo4j_info, sync_driver, skills_dir, "cases") as served:
        yield served


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def examples(neo4j_info: Neo4jInfo, sync_driver: Any, skills_dir: Path) -> AsyncIterator[Served]:
    async with seeded(neo4j_info, sync_driver, skills_dir, "examples") as served:
        yield served


# ------------------------------------------------------------------------------------------ the tests


async def test_bad_input_is_refused_naming_the_field(sweep: Served, case: Case) -> None:
    args = mutate(example_of(case), case.path, case.value)
    try:
        result = await sweep.session.call_tool(case.tool, args)
    except Exception as exc:  # a JSON-RPC error instead of a tool error
        raise AssertionError(f"{case.id}: a protocol error, not a tool error: {exc}") from None
    text = " ".join(getattr(block, "text", "") for block in result.content)
    before, after = sweep.last, sweep.fingerprint()
    wrote = after != before
    if wrote:
        await sweep.seed()  # the next case starts from the seeded state again
    assert result.is_error, f"{case.id}: accepted: {text[:300]}"
    assert names_field(text, case.names), f"{case.id}: the error does not name {case.names!r}: {text[:300]}"
    assert not wrote, f"{case.id}: refused, but the namespace changed: {changes(before, after)}"


async def test_example_call_succeeds(examples: Served, tool: str, example: dict[str, Any]) -> None:
    """Each declaration's example call succeeds against the seed (the control of the cases: their base
    is valid).  Each write example acts on targets of its own, so any order works."""
    result = await examples.session.call_tool(tool, example)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, f"{tool}({example}) failed: {text[:300]}"


async def test_whole_namespace_is_what_the_fingerprint_reads(sweep: Served) -> None:
    """The fingerprint's read (indexed seeds and their neighbours) sees every node of the namespace: a
    full scan by the ``namespace`` property counts the same nodes."""
    full = sweep.driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=sweep.namespace, database_=sweep.database
    ).records[0]["c"]
    assert full > 0 and full == len(sweep.fingerprint())


async def test_fingerprint_sees_a_property_change(sweep: Served) -> None:
    """A change of one property of one node changes the fingerprint (and is named by it)."""
    before = sweep.fingerprint()
    sweep.driver.execute_query(
        "MATCH (n:KgNode {namespace: $ns, name: 'Ada Lovelace'}) SET n.kgSweepProbe = 1",
        ns=sweep.namespace,
        database_=sweep.database,
    )
    try:
        after = sweep.fingerprint()
        assert after != before and "kgSweepProbe=1:1" in changes(before, after)
    finally:
        sweep.driver.execute_query(
            "MATCH (n:KgNode {namespace: $ns, name: 'Ada Lovelace'}) REMOVE n.kgSweepProbe",
            ns=sweep.namespace,
            database_=sweep.database,
        )
    assert sweep.fingerprint() == before


def incoherences(sub: Any, where: str) -> Iterator[str]:
    """Spots in an advertised schema that say something other than what the sweep (and any JSON Schema
    validator) reads there: a ``properties`` entry that is not a schema object (``"additionalProperties":
    false`` put among the properties declares a field of that name that may never be sent), and a nullable
    ``type`` whose ``enum`` lacks null (``enum`` alone then refuses the null that ``type`` admits); and an
    object that does not say whether it takes unknown fields (``additionalProperties: false``
    wherever they are refused, ``true`` on the documented open objects)."""
    if not isinstance(sub, dict):
        return
    if (sub.get("type") == "object" or "properties" in sub) and "additionalProperties" not in sub:
        yield f"{where}: an object without additionalProperties"
    for key, prop in sub.get("properties", {}).items():
        if not isinstance(prop, dict):
            yield f"{where}.properties.{key} is {prop!r}, not a schema"
        yield from incoherences(prop, f"{where}.{key}")
    kinds = sub.get("type")
    if (
        "enum" in sub
        and (kinds == "null" or (isinstance(kinds, list) and "null" in kinds))
        and None not in sub["enum"]
    ):
        yield f"{where}: type admits null, enum {sub['enum']} does not"
    for key in ("items", "additionalProperties"):
        yield from incoherences(sub.get(key), f"{where}.{key}")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, alt in enumerate(sub.get(key, [])):
            yield from incoherences(alt, f"{where}.{key}[{i}]")
    for name, d in sub.get("$defs", {}).items():
        yield from incoherences(d, f"$defs.{name}")


@pytest.mark.unit
def test_advertised_schema_says_what_it_means(tool: str) -> None:
    """The schemas the sweep is built from are read the same way by any client."""
    schema = next(t["inputSchema"] for t in advertised() if t["name"] == tool)
    found = list(incoherences(schema, "$"))
    assert not found, "; ".join(found)


@pytest.mark.unit
def test_every_tool_has_cases_each_with_its_own_id() -> None:
    """The cases are built in process (no Neo4j): every tool of ``all`` has some, and no id repeats."""
    cases = all_cases()
    assert {c.tool for c in cases} == set(specs())
    assert len({c.id for c in cases}) == len(cases)


@pytest.mark.unit
async def test_non_finite_numbers_reach_the_wire_as_json_text() -> None:
    """The markers become the bare JSON texts (the SDK alone would send null)."""
    assert all(not math.isfinite(float(lit)) for _, lit in NON_FINITE.values())
    sent: list[Any] = []

    class Sink:
        async def send(self, item: Any) -> None:
            sent.append(item)

    import mcp.types as types

    msg = types.JSONRPCRequest(
        jsonrpc="2.0",
        id=1,
        method="tools/call",
        params={
            "name": "read_graph",
            "arguments": {"limit": NON_FINITE["nan"][0], "x": NON_FINITE["neginf"][0]},
        },
    )
    await NonFiniteWire(Sink()).send(SessionMessage(message=msg))
    text = sent[0].message.model_dump_json()
    assert '"limit":NaN' in text and '"x":-Infinity' in text
