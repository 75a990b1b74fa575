"""The input sweep's cases (tests/test_input_sweep.py), built in process from the declarations: no
Neo4j and no server are needed to collect them.

What the ``all`` profile advertises (``ToolSpec.tool("all")`` of every declaration and of the tools the
shipped example node schemas generate) gives the fields; each declaration's example call
(``example=``, valid against the seed of ``kg_neo4j/server/examples.py``) is the base one thing is
changed in per case; its ``more_examples`` give the cases inside the fields the example leaves out.
Also here: the wire filter that sends NaN and Infinity as bare JSON texts, and the namespace
fingerprint that proves nothing was written.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from mcp.shared.message import SessionMessage

from kg_neo4j.server.profiles import ALL
from kg_neo4j.server.registry import ToolSpec
from support.servers import Neo4jInfo, server_env

UNKNOWN = "kgSweepUnknown"

# The three numbers JSON has no text for.  The SDK's client serialises float('nan') as null (pydantic's
# default), so they travel as marker strings that the wire filter below swaps for the bare JSON texts.
NON_FINITE = {
    "nan": ("__kg_sweep_NaN__", "NaN"),
    "inf": ("__kg_sweep_PosInf__", "Infinity"),
    "neginf": ("__kg_sweep_NegInf__", "-Infinity"),
}

# Keys that name things rather than hold free text: their whitespace rule is the README's "Limits" table
# (entity names "not only whitespace", relationType/entityType as the reference has them), tested in
# test_validation.py; ``minLength`` means non-whitespace only for free text.
IDENTIFIER_KEYS = {
    "name",
    "names",
    "from",
    "to",
    "start",
    "entityName",
    "nodeName",
    "relationType",
    "relationTypes",
    "entityType",
    "entityTypes",
    "edgeType",
    "nodeType",
    "sessionId",
    "element",
    "skill_paths",
    "cursor",
}


# ------------------------------------------------------------------------ the advertised tools, in process


@cache
def specs() -> dict[str, ToolSpec]:
    """The tools of the ``all`` profile, as ``kg-neo4j serve --tools all`` with the shipped node schemas
    lists them (the sweep's fixture checks its session's tools/list against :func:`advertised`)."""
    from kg_neo4j.schemas import load_schemas
    from kg_neo4j.server.app import BUILTIN_TOOL_NAMES, profile_tools

    return {s.name: s for s in profile_tools(ALL, load_schemas(reserved=BUILTIN_TOOL_NAMES))}


@cache
def advertised() -> list[dict[str, Any]]:
    """``tools/list`` of the ``all`` profile as JSON, in listing order."""
    return [s.tool(ALL).model_dump(mode="json", by_alias=True) for s in specs().values()]


def schema_of(tool: str) -> dict[str, Any]:
    return next(t["inputSchema"] for t in advertised() if t["name"] == tool)


# ------------------------------------------------------------------------------- reading the schemas


def resolve(sub: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X``), merging the referring schema's own keys over it."""
    while "$ref" in sub:
        ref = sub["$ref"]
        assert ref.startswith("#/"), f"only local $refs are expected, got {ref}"
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        sub = {**target, **{k: v for k, v in sub.items() if k != "$ref"}}
    return sub


def branches(sub: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    sub = resolve(sub, root)
    for key in ("anyOf", "oneOf"):
        if key in sub:
            return [b for alt in sub[key] for b in branches(alt, root)]
    return [sub]


def allowed_types(sub: dict[str, Any], root: dict[str, Any]) -> set[str]:
    """The JSON types a property schema admits ('integer' and 'number' as JSON Schema says them)."""
    kinds: set[str] = set()
    for b in branches(sub, root):
        t = b.get("type")
        if isinstance(t, list):
            kinds |= set(t)
        elif isinstance(t, str):
            kinds.add(t)
        elif "enum" in b:
            kinds |= {json_type(v) for v in b["enum"]}
        elif "const" in b:
            kinds.add(json_type(b["const"]))
        else:
            kinds.add("any")
    return kinds


def json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def object_branch(sub: dict[str, Any], root: dict[str, Any]) -> dict[str, Any] | None:
    for b in branches(sub, root):
        if b.get("type") == "object" or "properties" in b:
            return b
    return None


def array_items(sub: dict[str, Any], root: dict[str, Any]) -> dict[str, Any] | None:
    for b in branches(sub, root):
        if b.get("type") == "array" and isinstance(b.get("items"), dict):
            return dict(b["items"])
    return None


def min_length(sub: dict[str, Any], root: dict[str, Any]) -> int:
    return max(
        (int(b.get("minLength", 0)) for b in branches(sub, root) if "string" == b.get("type")), default=0
    )


# --------------------------------------------------------------------------------------- the cases

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Case:
    tool: str
    path: Path_
    kind: str
    value: Any
    names: str  # what the error must name
    example: int = 0  # mutates the declaration's example (0) or its more_examples[example - 1]

    @property
    def id(self) -> str:
        return f"{self.tool}-{show(self.path)}-{self.kind}"


def show(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out or "$"


def wrong_values(kinds: set[str]) -> dict[str, Any]:
    """One value of each JSON type the field does not allow, the most tempting coercion of each."""
    if "any" in kinds:
        return {}
    numeric = "number" in kinds or "integer" in kinds
    candidates: dict[str, Any] = {
        "string": "5"
        if "integer" in kinds
        else "0.5"
        if numeric
        else "yes"
        if "boolean" in kinds
        else "sweep",
        "number": 2.5 if "integer" in kinds else 1 if "boolean" in kinds else 123,
        "boolean": True,
        "object": {"sweep": "x"},
        "array": ["sweep"],
    }
    return {
        k: v for k, v in candidates.items() if k not in kinds and not (k == "number" and "number" in kinds)
    }


def field_cases(
    tool: str, path: Path_, key: str, sub: dict[str, Any], root: dict[str, Any], base_value: Any
) -> Iterator[Case]:
    """Every case for one field at ``path`` (its key ``key``), recursing into its objects and items."""
    kinds = allowed_types(sub, root)
    for kind, value in wrong_values(kinds).items():
        yield Case(tool, path, kind, value, key)
    if kinds & {"number", "integer"}:
        for kind, (marker, _) in NON_FINITE.items():
            yield Case(tool, path, kind, marker, key)
    if "null" not in kinds and "any" not in kinds:
        yield Case(tool, path, "null", None, key)
    if "string" in kinds and min_length(sub, root) >= 1 and key not in IDENTIFIER_KEYS:
        yield Case(tool, path, "blank", " \t\n ", key)
    obj = object_branch(sub, root)
    if obj is not None and isinstance(base_value, dict):
        yield from object_cases(tool, path, obj, root, base_value)
    items = array_items(sub, root)
    if items is not None and isinstance(base_value, list) and base_value:
        # an item is named by its array's key: "entityNames[0] must be a string" names entityNames
        yield from field_cases(tool, (*path, 0), key, items, root, base_value[0])


def object_cases(
    tool: str, path: Path_, obj: dict[str, Any], root: dict[str, Any], base: dict[str, Any]
) -> Iterator[Case]:
    obj = resolve(obj, root)
    if obj.get("additionalProperties") is not True:  # open objects of schema-generated tools take any field
        yield Case(tool, (*path, UNKNOWN), "unknown", "sweep", UNKNOWN)
    else:  # ... but no number JSON has no text for: "NaN and Infinity rejected" holds there too
        for kind, (marker, _) in NON_FINITE.items():
            yield Case(tool, (*path, UNKNOWN), kind, marker, UNKNOWN)
    for key, sub in obj.get("properties", {}).items():
        if not isinstance(sub, dict):  # a boolean schema (true: anything, false: nothing) has no wrong type
            continue
        yield from field_cases(tool, (*path, key), key, sub, root, base.get(key))


def tool_cases(tool: str, schema: dict[str, Any], base: dict[str, Any]) -> list[Case]:
    return list(object_cases(tool, (), schema, schema, base))


def mutate(base: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    args = copy.deepcopy(base)
    target: Any = args
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return args


def names_field(text: str, key: str) -> bool:
    """The error names ``key`` as a word (``name`` is not named by ``entityName``)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(key)}(?![A-Za-z0-9_])", text) is not None


# ------------------------------------------------------------------------------------ the wire filter


def all_cases() -> list[Case]:
    """Every case of every tool of ``all``: the example's fields, then the fields only a further example
    holds (``more_examples``)."""
    cases: list[Case] = []
    for name, spec in specs().items():
        assert spec.example is not None, f"{name}: its declaration has no example call"
        schema = schema_of(name)
        cases.extend(tool_cases(name, schema, spec.example))
        for i, more in enumerate(spec.more_examples, start=1):
            cases.extend(
                Case(c.tool, c.path, c.kind, c.value, c.names, example=i)
                for c in tool_cases(name, schema, more)
                if len(c.path) > 1 and c.path[0] not in spec.example
            )
    return cases


def example_of(case: Case) -> dict[str, Any]:
    spec = specs()[case.tool]
    base = spec.more_examples[case.example - 1] if case.example else spec.example
    assert base is not None
    return base


class _RawMessage:
    """Stands in for a JSON-RPC message whose text is already written (the SDK's writer asks only this)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def model_dump_json(self, **_: Any) -> str:
        return self.text


class NonFiniteWire:
    """The client's send stream, with the non-finite markers sent as the bare JSON texts NaN / Infinity."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def send(self, item: SessionMessage) -> None:
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        if "__kg_sweep_" in text:
            for marker, literal in NON_FINITE.values():
                text = text.replace(json.dumps(marker), literal)
            item = SessionMessage(message=_RawMessage(text), metadata=item.metadata)  # type: ignore[arg-type]
        await self.inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> NonFiniteWire:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


@contextlib.asynccontextmanager
async def wire_session(info: Neo4jInfo, namespace: str, *args: str) -> AsyncIterator[Any]:
    """A real MCP stdio session on ``kg-neo4j serve --namespace namespace *args`` whose client sends the
    non-finite markers as bare JSON numbers (:class:`NonFiniteWire`)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from support.servers import KG

    params = StdioServerParameters(
        command=KG, args=["serve", "--namespace", namespace, *args], env=server_env(info)
    )
    # the server's log goes to a scratch file: the sweep prints nothing
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, NonFiniteWire(write)) as session,
        ):
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def held(cm: contextlib.AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """Enter ``cm`` in a task of its own and leave it in that task: the SDK's sessions hold anyio cancel
    scopes, which must be left by the task that entered them, while pytest-asyncio sets a module fixture up
    and tears it down in two different tasks."""
    started: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with cm as value:
                started.set_result(value)
                await stop.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
            raise

    task = asyncio.create_task(hold())
    try:
        yield await started
    finally:
        stop.set()
        await task


# ------------------------------------------------------------------------------------ the fingerprint


def _text(value: str) -> str:
    """Cypher: a property value as text, each scalar prefixed by its length (no two values read alike)."""

    def scalar(e: str) -> str:
        return f"toString(size(toString({e}))) + ':' + toString({e})"

    return (
        f"CASE WHEN {value} IS :: LIST<ANY> THEN '[' + reduce(t = '', e IN {value} | t + {scalar('e')}) + ']' "
        f"ELSE {scalar(value)} END"
    )


def _properties(x: str) -> str:
    """Cypher: the properties of ``x`` as text, keys in order."""
    keys = f"COLLECT {{ UNWIND keys({x}) AS k RETURN k ORDER BY k }}"
    return f"reduce(s = '', k IN {keys} | s + k + '=' + {_text(f'{x}[k]')} + ';')"


# Everything the namespace holds, one line of text per node (its id, labels, properties and
# relationships), written by Neo4j: the client reads a list of strings, which the driver decodes far
# faster than the nested maps and temporal values of the nodes themselves.  The read starts from the
# namespace's indexed labels and takes their neighbours (every node of a namespace is one of them:
# test_whole_namespace_is_what_the_fingerprint_reads), so other namespaces, written concurrently or not,
# are not read.
FINGERPRINT = f"""
CALL () {{
  MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN n
  UNION MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
  UNION MATCH (n:KgMeta) WHERE n.namespace = $ns RETURN n
  UNION MATCH (n:KgMergeRecord) WHERE n.namespace = $ns RETURN n
}}
OPTIONAL MATCH (n)--(m)
WITH collect(n) + collect(m) AS found
UNWIND found AS n
WITH DISTINCT n
WITH elementId(n) + ' ' + reduce(s = '', l IN COLLECT {{ UNWIND labels(n) AS l RETURN l ORDER BY l }} | s + ':' + l)
     + ' {{' + {_properties("n")} + '}}'
     + reduce(s = '', r IN COLLECT {{ MATCH (n)-[r]-() RETURN r ORDER BY elementId(r) }} |
              s + ' -[' + elementId(r) + ':' + type(r) + ' ' + elementId(startNode(r)) + '>'
              + elementId(endNode(r)) + ' {{' + {_properties("r")} + '}}]') AS entry
ORDER BY entry
RETURN collect(entry) AS fp
"""


def fingerprint(driver: Any, database: str, namespace: str) -> list[str]:
    """Everything ``namespace`` holds, in a comparable form (one line per node, see ``FINGERPRINT``)."""
    with driver.session(database=database) as session:
        fp: list[str] = session.run(FINGERPRINT, ns=namespace).single(strict=True)["fp"]
    return fp


def changes(before: list[str], after: list[str]) -> str:
    """What a fingerprint comparison found: the entries gone and the entries new (a failure names them)."""
    gone, new = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    return f"gone {gone}; new {new}"[:3000]
