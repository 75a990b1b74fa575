"""Strict input, swept from the advertised schemas (issue #11 item 2; README "Input validation").

The cases are generated from what ``tools/list`` of the ``all`` profile advertises (a real MCP stdio
session, the shipped example node schemas), one pytest id per case, e.g.
``create_relations-relations[0].weight-string``.  For every tool a valid base call is written below
(:data:`BASES`: the schema cannot say that a name must exist), then one thing is changed per case:

- ``unknown``: an unknown field at the top and in every closed object (array items, nested objects);
  the documented open objects of schema-generated tools (``additionalProperties: true``) take any field;
- ``string`` / ``number`` / ``boolean`` / ``object`` / ``array``: each JSON type the field does not allow;
- ``nan`` / ``inf`` / ``neginf`` for numbers and integers, sent as the JSON texts NaN / Infinity / -Infinity,
  and as the value of an extra field of an open object (open to any field, not to numbers JSON lacks);
- ``null`` where the field's schema does not allow null;
- ``blank``: whitespace-only text in free-text fields with ``minLength >= 1``.

Each case asserts an MCP tool error (isError) whose text names the field (the unknown field's own name,
else the field's key) and that nothing under the sweep's namespace changed: nodes, labels, properties and
relationships (history included), read from Neo4j before and after.  One server serves the whole module;
a case that wrote anything (a failure) is followed by a re-seed, so every case starts from the same state.
After the cases, each tool's valid base is called once and must succeed (:func:`test_valid_base_succeeds`):
the sweep proves the mutation is refused, not a broken base.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import math
import re
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp.shared.message import SessionMessage

from conftest import Neo4jInfo, searchable, server_env

NAMESPACE = f"test-input-sweep-{uuid.uuid4().hex[:8]}"
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
# test_validation.py; ``minLength`` means non-whitespace only for free text (issue #11 item 2).
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

SKILL_FILE = "sweep/elements/input/workflow.md"

# ------------------------------------------------------------------------------------------- the state
# What the namespace holds before every case; the bases below act on it, each write on targets of its own
# (so that the valid-base controls, which do write, never take away what another base needs).
SEED_CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "create_entities",
        {
            "entities": [
                {
                    "name": "SwA",
                    "entityType": "thing",
                    "observations": ["obs to delete", "obs to invalidate", "kept"],
                },
                {"name": "SwB", "entityType": "thing", "observations": ["b"]},
                {"name": "SwDelEnt", "entityType": "thing", "observations": []},
            ]
        },
    ),
    (
        "create_relations",
        {
            "relations": [
                {"from": "SwA", "to": "SwB", "relationType": rt}
                for rt in ("knows", "del_me", "upd_me", "inv_me")
            ]
        },
    ),
    (
        "add_nodes",
        {
            "nodes": [
                {"name": n, "nodeType": "npc", "metadata": ["Gone: 1", "Keep: 1"]}
                for n in ("SwN1", "SwN2", "SwDelNode")
            ]
        },
    ),
    (
        "add_edges",
        {"edges": [{"from": "SwN1", "to": "SwN2", "edgeType": et} for et in ("upd_edge", "del_edge")]},
    ),
    (
        "store_knowledge",
        {"name": "SwK1", "content": "sweep knowledge one", "type": "rule", "trust": "pattern"},
    ),
    (
        "store_knowledge",
        {"name": "SwK2", "content": "sweep knowledge two", "type": "rule", "trust": "pattern"},
    ),
    (
        "store_knowledge",
        {"name": "SwKForget", "content": "sweep knowledge to forget", "type": "rule", "trust": "inference"},
    ),
    ("record_experience", {"name": "SwExp0", "context": "sweep context", "outcome": "sweep outcome"}),
]

#: A valid call of every hand-declared tool of ``all`` (schema-generated ones come from :func:`mesh_base`).
BASES: dict[str, dict[str, Any]] = {
    "create_entities": {"entities": [{"name": "SwNewEnt", "entityType": "thing", "observations": ["o1"]}]},
    "create_relations": {
        "relations": [
            {
                "from": "SwA",
                "to": "SwB",
                "relationType": "sweep_new",
                "weight": 0.5,
                "validFrom": "2020-01-01T00:00:00Z",
                "validUntil": "2099-01-01T00:00:00Z",
                "reasoning": "why",
                "source": "sweep",
            }
        ]
    },
    "add_observations": {"observations": [{"entityName": "SwA", "contents": ["new obs"]}]},
    "delete_entities": {"entityNames": ["SwDelEnt"]},
    "delete_observations": {"deletions": [{"entityName": "SwA", "observations": ["obs to delete"]}]},
    "delete_relations": {"relations": [{"from": "SwA", "to": "SwB", "relationType": "del_me"}]},
    "read_graph": {"limit": 10},
    "search_nodes": {"query": "Sw"},
    "open_nodes": {"names": ["SwA"]},
    "search_memory": {"query": "sweep", "limit": 5},
    "traverse_graph": {
        "start": ["SwA"],
        "direction": "both",
        "maxDepth": 2,
        "minWeight": 0.0,
        "limit": 10,
        "fanout": 5,
    },
    "update_relations": {
        "relations": [
            {
                "from": "SwA",
                "to": "SwB",
                "relationType": "upd_me",
                "weight": 0.5,
                "reasoning": "why",
                "source": "sweep",
            }
        ]
    },
    "invalidate_relations": {"relations": [{"from": "SwA", "to": "SwB", "relationType": "inv_me"}]},
    "invalidate_observations": {
        "observations": [{"entityName": "SwA", "observations": ["obs to invalidate"]}]
    },
    "entity_history": {"name": "SwA", "limit": 5},
    "add_nodes": {"nodes": [{"name": "SwNewNode", "nodeType": "npc", "metadata": ["Role: sweep"]}]},
    "update_nodes": {"nodes": [{"name": "SwN1", "metadata": ["Key: v2"], "nodeType": "npc"}]},
    "delete_nodes": {"nodeNames": ["SwDelNode"]},
    "add_edges": {"edges": [{"from": "SwN1", "to": "SwN2", "edgeType": "sweep_new", "weight": 0.5}]},
    "update_edges": {"edges": [{"from": "SwN1", "to": "SwN2", "edgeType": "upd_edge", "weight": 0.5}]},
    "delete_edges": {"edges": [{"from": "SwN1", "to": "SwN2", "edgeType": "del_edge"}]},
    "add_metadata": {"nodeName": "SwN2", "metadata": ["Extra: 1"]},
    "delete_metadata": {"nodeName": "SwN1", "metadata": ["Gone: 1"]},
    "read_nodes_graph": {"limit": 10},
    "search_nodes_graph": {"query": "Sw"},
    "open_nodes_graph": {"names": ["SwN1"]},
    "store_knowledge": {
        "name": "SwNewK",
        "content": "new sweep knowledge",
        "type": "rule",
        "trust": "pattern",
        "category": "creative",
        "source": "sweep",
        "sessionId": "sweep-session",
    },
    "connect_knowledge": {
        "from": "SwK1",
        "to": "SwK2",
        "relationType": "refines",
        "reasoning": "why",
        "weight": 0.5,
        "source": "sweep",
    },
    "update_knowledge": {
        "name": "SwK1",
        "content": "updated sweep knowledge",
        "source": "sweep",
        "expertConfirmed": False,
        "sessionId": "sweep-session",
    },
    "forget_knowledge": {"names": ["SwKForget"], "reason": "sweep"},
    "list_knowledge": {
        "names": ["SwK1"],
        "trust": "pattern",
        "includeExpired": False,
        "sortBy": "time",
        "limit": 10,
    },
    "record_experience": {
        "name": "SwExpNew",
        "context": "sweep context",
        "steps": ["step one"],
        "decisions": ["decision one"],
        "outcome": "sweep outcome",
        "success": True,
        "sessionId": "sweep-session",
    },
    "recall_experience": {"context": "sweep context", "limit": 3},
    "memory_stats": {},
    "maintain_graph": {"actions": ["orphans"], "dryRun": True, "minSimilarity": 0.9, "batchSize": 100},
    "crystallize_skill": {"topic": "sweep", "skill_paths": [SKILL_FILE], "limit": 5},
}

#: Second valid calls, for nested objects the base above leaves out (entity_history takes a name or a
#: relation): only the cases inside that object come from them.
NESTED_BASES: dict[str, dict[str, Any]] = {
    "entity_history": {"relation": {"from": "SwA", "to": "SwB", "relationType": "knows"}, "limit": 5},
}

MESH_VERBS = ("add_", "update_", "delete_")


def mesh_base(tool: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """A valid call of a schema-generated tool (``add_<type>``, ``update_<type>``, ``delete_<type>``): every
    advertised property filled from its schema; update and delete act on the seeded ``SwUpd``/``SwDel``
    node of the type, add on a new name."""
    if not tool.startswith(MESH_VERBS) or tool in BASES:
        return None
    verb, _, node_type = tool.partition("_")
    wrapper = schema["properties"].get(node_type)
    if wrapper is None:
        return None
    obj = {
        key: sample(resolve(sub, schema), schema)
        for key, sub in wrapper.get("properties", {}).items()
        if isinstance(sub, dict)
    }  # a boolean schema (true: anything, false: nothing) has no sample
    obj["name"] = {
        "add": f"SwNew {node_type}",
        "update": f"SwUpd {node_type}",
        "delete": f"SwDel {node_type}",
    }[verb]
    if verb == "delete":
        obj = {"name": obj["name"]}
    return {node_type: obj}


def sample(sub: dict[str, Any], root: dict[str, Any]) -> Any:
    """A valid value for a (resolved) property schema of a schema-generated node."""
    if "enum" in sub:
        return sub["enum"][0]
    kinds = allowed_types(sub, root)
    if "array" in kinds:
        return ["sweep item"]
    if "string" in kinds:
        return "sweep value"
    if "number" in kinds or "integer" in kinds:
        return 1
    if "boolean" in kinds:
        return True
    return "sweep value"


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
    nested: bool = False  # mutates NESTED_BASES[tool] instead of the tool's base

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

    from conftest import KG

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


def sweep_session(info: Neo4jInfo, skills_dir: Path) -> contextlib.AbstractAsyncContextManager[Any]:
    """The sweep's session: ``--tools all`` with the shipped example node schemas."""
    return wire_session(info, NAMESPACE, "--tools", "all", "--skills-dir", str(skills_dir))


def write_skills(root: Path) -> Path:
    (root / SKILL_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / SKILL_FILE).write_text(
        "# Sweep workflow\n\n- Check the sweep before the merge.\n", encoding="utf-8"
    )
    return root


# ----------------------------------------------------------------------- collection: the advertised list


def _collect_info() -> Neo4jInfo:
    """The test Neo4j as conftest's ``neo4j_info`` finds it (NEO4J_URI, else the local server)."""
    from kg_neo4j.localdb import LocalNeo4j
    from kg_neo4j.settings import Settings

    settings = Settings()
    if settings.neo4j_uri:
        return Neo4jInfo(
            settings.neo4j_uri,
            settings.neo4j_username or "neo4j",
            settings.neo4j_password or "",
            settings.neo4j_database,
            "NEO4J_URI",
        )
    local = LocalNeo4j(settings)
    local.start()
    uri, user, password = local.credentials()
    return Neo4jInfo(uri, user, password, "neo4j", "local")


_ADVERTISED: list[dict[str, Any]] = []


def advertised() -> list[dict[str, Any]]:
    """``tools/list`` of the ``all`` profile, read once through a real MCP session at collection."""
    if not _ADVERTISED:

        async def list_tools() -> list[dict[str, Any]]:
            with tempfile.TemporaryDirectory() as tmp:
                async with sweep_session(_collect_info(), write_skills(Path(tmp))) as s:
                    return [t.model_dump(mode="json", by_alias=True) for t in (await s.list_tools()).tools]

        _ADVERTISED.extend(asyncio.run(list_tools()))
    return _ADVERTISED


def base_of(tool: dict[str, Any]) -> dict[str, Any] | None:
    return BASES[tool["name"]] if tool["name"] in BASES else mesh_base(tool["name"], tool["inputSchema"])


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for tool in advertised():
        base = base_of(tool)
        assert base is not None, f"{tool['name']}: no valid base call; add one to BASES"
        cases.extend(tool_cases(tool["name"], tool["inputSchema"], base))
        nested = NESTED_BASES.get(tool["name"])
        if nested is not None:
            cases.extend(
                Case(c.tool, c.path, c.kind, c.value, c.names, nested=True)
                for c in tool_cases(tool["name"], tool["inputSchema"], nested)
                if len(c.path) > 1 and c.path[0] not in base
            )
    return cases


def controls() -> list[Any]:
    """(tool, valid call) for every base, nested ones included."""
    out = [pytest.param(t["name"], base_of(t), id=t["name"]) for t in advertised()]
    out += [pytest.param(name, base, id=f"{name}-{'-'.join(base)}") for name, base in NESTED_BASES.items()]
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        cases = all_cases()
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])
    if "control" in metafunc.fixturenames:
        metafunc.parametrize(("tool", "control"), controls())
    elif "tool" in metafunc.fixturenames:
        tools = [t["name"] for t in advertised()]
        metafunc.parametrize("tool", tools, ids=tools)


# ---------------------------------------------------------------------------------------- the fixture

FINGERPRINT = """
CALL () {
  MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN n
  UNION MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
  UNION MATCH (n:KgMeta) WHERE n.namespace = $ns RETURN n
}
OPTIONAL MATCH (n)--(m)
WITH collect(n) + collect(m) AS found
UNWIND found AS n
WITH DISTINCT n
// labels and properties read once per node, before the rows of its relationships: Neo4j reads committed
// data as it goes, so a grouping key read per row could differ within one node when a catch-up
// (store/text_catch_up.py) relabels it meanwhile, and split it into two records
WITH n, labels(n) AS labels, properties(n) AS props
OPTIONAL MATCH (n)-[r]-()
RETURN elementId(n) AS id, labels, props,
       collect(DISTINCT [elementId(r), type(r), elementId(startNode(r)), elementId(endNode(r)),
                         properties(r)]) AS rels
"""


def fingerprint(driver: Any, database: str, namespace: str) -> list[str]:
    """Everything ``namespace`` holds, in a comparable form (ids, labels, properties, relationships).  A node
    moved into the text index by the server's catch-up meanwhile (:KgPending to :KgText,
    store/text_catch_up.py) is the same node: both read as :KgText."""
    records = driver.execute_query(FINGERPRINT, ns=namespace, database_=database).records
    return sorted(
        repr(
            (
                r["id"],
                searchable(r["labels"]),
                sorted(r["props"].items()),
                sorted(repr(x) for x in r["rels"] if x[0] is not None),
            )
        )
        for r in records
    )


def changes(before: list[str], after: list[str]) -> str:
    """What a fingerprint comparison found: the entries gone and the entries new (a failure names them)."""
    gone, new = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    return f"gone {gone}; new {new}"[:3000]


@dataclass
class Sweep:
    session: Any
    driver: Any
    database: str
    tools: dict[str, dict[str, Any]]
    last: Any = None

    def fingerprint(self) -> list[str]:
        return fingerprint(self.driver, self.database, NAMESPACE)

    async def seed(self) -> None:
        self.driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=NAMESPACE, database_=self.database
        )
        calls = list(SEED_CALLS)
        for name, tool in self.tools.items():
            if name.startswith(("update_", "delete_")) and name not in BASES:
                node_type = name.partition("_")[2]
                wrapper = tool["inputSchema"]["properties"][node_type]
                add = mesh_base(f"add_{node_type}", self.tools[f"add_{node_type}"]["inputSchema"])
                assert add is not None and "properties" in wrapper
                obj = dict(add[node_type])
                obj["name"] = f"SwUpd {node_type}" if name.startswith("update_") else f"SwDel {node_type}"
                calls.append((f"add_{node_type}", {node_type: obj}))
        for name, args in calls:
            result = await self.session.call_tool(name, args)
            assert not result.is_error, f"seeding {name}({args}) failed: {result.content}"
        await self.settled()
        self.last = self.fingerprint()

    async def settled(self, timeout: float = 30.0) -> None:
        """Wait until the server's text catch-up has moved and released what the seed wrote (no node of the
        namespace carries :KgPending as kg-neo4j's label; store/text_catch_up.py): the cases then run with
        nothing of the namespace left for it to relabel."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = self.driver.execute_query(
                "MATCH (n:KgPending) WHERE n.namespace = $ns AND NOT 'KgPending' IN coalesce(n.type_labels, []) "
                "RETURN count(n) AS c",
                ns=NAMESPACE,
                database_=self.database,
            ).records[0]["c"]
            if left == 0:
                return
            assert asyncio.get_running_loop().time() < deadline, (
                f"the server's text catch-up left {left} node(s) :KgPending after {timeout:.0f} s"
            )
            await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
def skills_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_skills(tmp_path_factory.mktemp("sweep-skills"))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def sweep(neo4j_info: Neo4jInfo, sync_driver: Any, skills_dir: Path) -> AsyncIterator[Sweep]:
    async with held(sweep_session(neo4j_info, skills_dir)) as session:
        listed = [t.model_dump(mode="json", by_alias=True) for t in (await session.list_tools()).tools]
        assert listed == advertised(), (
            "the session's tools/list differs from the one the cases were built from"
        )
        state = Sweep(session, sync_driver, neo4j_info.database, {t["name"]: t for t in listed})
        try:
            await state.seed()
            yield state
        finally:
            sync_driver.execute_query(
                "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n",
                ns=NAMESPACE,
                database_=neo4j_info.database,
            )


# ------------------------------------------------------------------------------------------ the tests


async def test_bad_input_is_refused_naming_the_field(sweep: Sweep, case: Case) -> None:
    base = NESTED_BASES[case.tool] if case.nested else base_of(sweep.tools[case.tool])
    assert base is not None
    args = mutate(base, case.path, case.value)
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


def incoherences(sub: Any, where: str) -> Iterator[str]:
    """Spots in an advertised schema that say something other than what the sweep (and any JSON Schema
    validator) reads there: a ``properties`` entry that is not a schema object (``"additionalProperties":
    false`` put among the properties declares a field of that name that may never be sent), and a nullable
    ``type`` whose ``enum`` lacks null (``enum`` alone then refuses the null that ``type`` admits); and an
    object that does not say whether it takes unknown fields (issue #11: ``additionalProperties: false``
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


def test_advertised_schema_says_what_it_means(tool: str) -> None:
    """The schemas the sweep is built from are read the same way by any client."""
    schema = next(t["inputSchema"] for t in advertised() if t["name"] == tool)
    found = list(incoherences(schema, "$"))
    assert not found, "; ".join(found)


async def test_valid_base_succeeds(sweep: Sweep, tool: str, control: dict[str, Any]) -> None:
    """The control: each tool's unchanged base call succeeds.  It runs after the cases (file order) because
    the write bases do write; each writes only on targets of its own, so the controls do not depend on
    each other's order."""
    assert control is not None, f"{tool}: no valid base call; add one to BASES"
    result = await sweep.session.call_tool(tool, control)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    sweep.last = sweep.fingerprint()
    assert not result.is_error, f"{tool}({control}) failed: {text[:300]}"


async def test_whole_namespace_is_what_the_fingerprint_reads(sweep: Sweep) -> None:
    """The fingerprint's fast read (indexed seeds and their neighbours) sees every node of the namespace:
    a full scan by the ``namespace`` property counts the same nodes."""
    full = sweep.driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=NAMESPACE, database_=sweep.database
    ).records[0]["c"]
    assert full > 0 and full == len(sweep.fingerprint())


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
