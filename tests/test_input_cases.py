"""The concrete bad-input cases, each refused with an error naming the field and
nothing written, in every profile that lists the tool (the ``default`` profile wherever the tool lives there,
and ``all``); and the accepted ones: ``update_edges``' ``newWeight``, the ``reference`` profile stripping
an unknown field as the reference server does, and ``kg-neo4j import`` of a reference memory file.

Every call goes through a real MCP stdio session (non-finite numbers as the bare JSON texts NaN and
Infinity, see ``support.sweep_cases.NonFiniteWire``); "nothing written" is a before/after read of the
session's namespace in Neo4j (``support.sweep_cases.fingerprint``).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES, profile_tools
from kg_neo4j.server.profiles import DEFAULT, KNOWLEDGE, MEMORYMESH
from support.kg import session as ref_session
from support.servers import KG, Neo4jInfo, server_env
from support.sweep_cases import NON_FINITE, fingerprint, held, names_field, wire_session

NAN, INF = NON_FINITE["nan"][0], NON_FINITE["inf"][0]

# Each case runs in every one of these profiles that lists its tool, and in ``all``; what a profile lists
# comes from the declarations (and the shipped node schemas), and the test asserts the session lists it.
PROFILES = {
    p: {s.name for s in profile_tools(p, load_schemas(reserved=BUILTIN_TOOL_NAMES))}
    for p in (DEFAULT, KNOWLEDGE, MEMORYMESH)
}


@dataclass(frozen=True)
class Bad:
    id: str
    tool: str
    args: dict[str, Any]
    names: tuple[str, ...]  # every one must be named by the error


def rel(**extra: Any) -> dict[str, Any]:
    return {"from": "A", "to": "B", "relationType": "r", **extra}


def edge(**extra: Any) -> dict[str, Any]:
    return {"from": "A", "to": "B", "edgeType": "e", **extra}


BAD = [
    # unknown fields: a misspelt weight and a snake_case validUntil (the first example)
    Bad(
        "create_relations-misspelt-weigth-and-valid_until",
        "create_relations",
        {
            "relations": [
                {
                    "from": "A",
                    "to": "B",
                    "relationType": "r",
                    "weigth": 0.2,
                    "valid_until": "2020-01-01T00:00:00Z",
                }
            ]
        },
        ("weigth", "valid_until"),
    ),
    # ... in the other families' profiles too (every profile but reference refuses them)
    Bad(
        "add_nodes-unknown-field-in-item",
        "add_nodes",
        {"nodes": [{"name": "N9", "nodeType": "thing", "metadata": [], "colour": "red"}]},
        ("colour",),
    ),
    Bad(
        "store_knowledge-unknown-field",
        "store_knowledge",
        {"name": "K9", "content": "new", "type": "rule", "trust": "pattern", "colour": "red"},
        ("colour",),
    ),
    # loose coercion
    Bad(
        "update_knowledge-expertConfirmed-string-yes",
        "update_knowledge",
        {"name": "K", "trust": "pattern", "expertConfirmed": "yes"},
        ("expertConfirmed",),
    ),
    Bad(
        "update_relations-validFrom-number",
        "update_relations",
        {"relations": [rel(validFrom=123)]},
        ("validFrom",),
    ),
    Bad(
        "create_relations-validFrom-number",
        "create_relations",
        {"relations": [rel(relationType="r_new", validFrom=123)]},
        ("validFrom",),
    ),
    Bad(
        "create_relations-weight-true",
        "create_relations",
        {"relations": [rel(relationType="r_new", weight=True)]},
        ("weight",),
    ),
    Bad("update_relations-weight-true", "update_relations", {"relations": [rel(weight=True)]}, ("weight",)),
    Bad("add_edges-weight-true", "add_edges", {"edges": [edge(edgeType="e_new", weight=True)]}, ("weight",)),
    Bad("update_edges-weight-true", "update_edges", {"edges": [edge(weight=True)]}, ("weight",)),
    Bad(
        "connect_knowledge-weight-true",
        "connect_knowledge",
        {"from": "K", "to": "K2", "relationType": "refines", "weight": True},
        ("weight",),
    ),
    Bad("read_graph-limit-true", "read_graph", {"limit": True}, ("limit",)),
    Bad("search_memory-limit-true", "search_memory", {"query": "A", "limit": True}, ("limit",)),
    Bad("traverse_graph-limit-true", "traverse_graph", {"start": ["A"], "limit": True}, ("limit",)),
    Bad("traverse_graph-maxDepth-true", "traverse_graph", {"start": ["A"], "maxDepth": True}, ("maxDepth",)),
    Bad("traverse_graph-fanout-true", "traverse_graph", {"start": ["A"], "fanout": True}, ("fanout",)),
    Bad(
        "maintain_graph-batchSize-true",
        "maintain_graph",
        {"actions": ["prune"], "dryRun": False, "batchSize": True},
        ("batchSize",),
    ),
    Bad(
        "create_relations-weight-string-0.5",
        "create_relations",
        {"relations": [rel(relationType="r_new", weight="0.5")]},
        ("weight",),
    ),
    Bad(
        "update_relations-weight-string-0.5",
        "update_relations",
        {"relations": [rel(weight="0.5")]},
        ("weight",),
    ),
    Bad("update_edges-weight-string-0.5", "update_edges", {"edges": [edge(weight="0.5")]}, ("weight",)),
    Bad(
        "traverse_graph-minWeight-string-0.5",
        "traverse_graph",
        {"start": ["A"], "minWeight": "0.5"},
        ("minWeight",),
    ),
    Bad(
        "update_relations-clearValidUntil-string-yes",
        "update_relations",
        {"relations": [rel(clearValidUntil="yes")]},
        ("clearValidUntil",),
    ),
    Bad(
        "maintain_graph-dryRun-string-yes",
        "maintain_graph",
        {"actions": ["prune"], "dryRun": "yes"},
        ("dryRun",),
    ),
    # NaN and Infinity, as the JSON texts
    Bad("update_relations-weight-NaN", "update_relations", {"relations": [rel(weight=NAN)]}, ("weight",)),
    Bad("update_edges-weight-NaN", "update_edges", {"edges": [edge(weight=NAN)]}, ("weight",)),
    Bad("read_graph-limit-NaN", "read_graph", {"limit": NAN}, ("limit",)),
    Bad("read_graph-limit-Infinity", "read_graph", {"limit": INF}, ("limit",)),
    # null where the schema has no null
    Bad(
        "add_artifact-owner-null",
        "add_artifact",
        {"artifact": {"name": "Art", "rarity": "Common", "owner": None}},
        ("owner",),
    ),
    # whitespace-only free text where the schema says minLength 1
    Bad(
        "update_knowledge-content-whitespace",
        "update_knowledge",
        {"name": "K", "content": " \t\n "},
        ("content",),
    ),
]


def bad_cases() -> list[Any]:
    out = []
    for case in BAD:
        for profile in [p for p, tools in PROFILES.items() if case.tool in tools] + ["all"]:
            out.append(pytest.param(case, profile, id=f"{case.id}-{profile}"))
    return out


# ------------------------------------------------------------------------------------------ sessions


@dataclass
class Served:
    session: Any
    namespace: str
    tools: set[str]


async def seed(s: Served) -> None:
    """A, B (and K, K2 where knowledge lives) with a relation A-r->B and edges A-e->B, A-w1->B, A-w2->B."""
    calls: list[tuple[str, dict[str, Any]]] = []
    if "create_entities" in s.tools:
        calls.append(
            (
                "create_entities",
                {"entities": [{"name": n, "entityType": "thing", "observations": ["x"]} for n in ("A", "B")]},
            )
        )
        calls.append(("create_relations", {"relations": [rel()]}))
    elif "add_nodes" in s.tools:
        calls.append(
            ("add_nodes", {"nodes": [{"name": n, "nodeType": "thing", "metadata": ["x"]} for n in "AB"]})
        )
    if "store_knowledge" in s.tools:
        if "create_entities" not in s.tools:
            calls += [
                ("store_knowledge", {"name": n, "content": f"entity {n}", "type": "rule", "trust": "pattern"})
                for n in ("A", "B")
            ]
        # an inference, so that raising it to pattern needs expertConfirmed (the coercion case)
        calls += [
            (
                "store_knowledge",
                {"name": n, "content": f"knowledge {n}", "type": "rule", "trust": "inference"},
            )
            for n in ("K", "K2")
        ]
    if "add_edges" in s.tools:
        calls.append(("add_edges", {"edges": [edge(edgeType=t) for t in ("e", "w1", "w2")]}))
    for tool, args in calls:
        result = await s.session.call_tool(tool, args)
        assert not result.is_error, f"seeding {tool}: {result.content}"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(neo4j_info: Neo4jInfo, sync_driver: Any) -> AsyncIterator[dict[str, Served]]:
    """One seeded session per profile (default, knowledge, memorymesh, all), each on its own namespace."""
    run = uuid.uuid4().hex[:8]
    namespaces = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            out: dict[str, Served] = {}
            for profile in (*PROFILES, "all"):
                ns = f"test-input-cases-{profile}-{run}"
                namespaces.append(ns)
                session = await stack.enter_async_context(
                    held(wire_session(neo4j_info, ns, "--tools", profile))
                )
                out[profile] = Served(session, ns, {t.name for t in (await session.list_tools()).tools})
                await seed(out[profile])
            yield out
    finally:
        for ns in namespaces:
            sync_driver.execute_query(
                "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns, database_=neo4j_info.database
            )


def text_of(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize(("case", "profile"), bad_cases())
async def test_bad_input_is_refused_and_writes_nothing(
    served: dict[str, Served], sync_driver: Any, neo4j_info: Neo4jInfo, case: Bad, profile: str
) -> None:
    s = served[profile]
    assert case.tool in s.tools, f"{case.tool} is not listed by the {profile} profile"
    before = fingerprint(sync_driver, neo4j_info.database, s.namespace)
    result = await s.session.call_tool(case.tool, case.args)
    text = text_of(result)
    after = fingerprint(sync_driver, neo4j_info.database, s.namespace)
    if after != before:  # undo a wrongful write so that the other cases see the seeded state
        sync_driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=s.namespace, database_=neo4j_info.database
        )
        await seed(s)
    assert result.is_error, f"accepted: {text[:300]}"
    missing = [n for n in case.names if not names_field(text, n)]
    assert not missing, f"the error does not name {missing}: {text[:300]}"
    assert after == before, "refused, but the namespace changed"


def edge_weights(answer: dict[str, Any]) -> dict[str, float]:
    return {
        e["edgeType"]: e["weight"] for e in answer["data"]["edges"] if e["from"] == "A" and e["to"] == "B"
    }


@pytest.mark.parametrize("profile", ["memorymesh", "all"])
async def test_update_edges_takes_new_weight_as_weight(served: dict[str, Served], profile: str) -> None:
    """MemoryMesh's ``newWeight`` (docs/memorymesh.md#edge-weights) does what ``weight`` does: the new weight is the mean
    of current and given."""
    s = served[profile]
    by_weight = await s.session.call_tool("update_edges", {"edges": [edge(edgeType="w1", weight=0.5)]})
    by_new_weight = await s.session.call_tool("update_edges", {"edges": [edge(edgeType="w2", newWeight=0.5)]})
    assert not by_weight.is_error and not by_new_weight.is_error, (text_of(by_weight), text_of(by_new_weight))
    opened = await s.session.call_tool(
        "open_nodes_graph" if profile == "all" else "open_nodes", {"names": ["A"]}
    )
    assert not opened.is_error, text_of(opened)
    weights = edge_weights(json.loads(text_of(opened)))
    assert weights["w1"] == weights["w2"] == 0.75, weights


@pytest.mark.parametrize("profile", ["memorymesh", "all"])
async def test_update_edges_refuses_weight_and_new_weight_together(
    served: dict[str, Served], sync_driver: Any, neo4j_info: Neo4jInfo, profile: str
) -> None:
    s = served[profile]
    before = fingerprint(sync_driver, neo4j_info.database, s.namespace)
    result = await s.session.call_tool("update_edges", {"edges": [edge(weight=0.5, newWeight=0.5)]})
    assert result.is_error, text_of(result)
    assert names_field(text_of(result), "newWeight") and names_field(text_of(result), "weight"), text_of(
        result
    )
    assert fingerprint(sync_driver, neo4j_info.database, s.namespace) == before


async def test_reference_profile_strips_unknown_fields(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    """The one deliberate exception: the reference profile drops unknown fields as the reference server does,
    and answers exactly as for the call without them."""
    from support.kg import ok

    try:
        async with ref_session("stdio", neo4j_info, namespace, "--tools", "reference") as s:
            made = await ok(
                s,
                "create_entities",
                {
                    "entities": [
                        {"name": "A", "entityType": "thing", "observations": ["a"], "colour": "red"}
                    ],
                    "dryRun": True,
                },
            )
            assert made == [{"name": "A", "entityType": "thing", "observations": ["a"]}]
            await ok(
                s, "create_entities", {"entities": [{"name": "B", "entityType": "thing", "observations": []}]}
            )
            linked = await ok(
                s, "create_relations", {"relations": [rel(weigth=0.2, valid_until="2020-01-01T00:00:00Z")]}
            )
            assert linked == [rel()]
            graph = await ok(s, "read_graph", {"verbose": True})
            assert graph["relations"] == [rel()]
            assert sorted(e["name"] for e in graph["entities"]) == ["A", "B"]
    finally:
        sync_driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace, database_=neo4j_info.database
        )


async def test_import_reads_a_reference_memory_file(
    tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    """The reference's memory file (one JSON object a line, with its ``type`` key) still imports."""
    from support.kg import ok

    lines: list[dict[str, Any]] = [
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": ["likes tea"]},
        {"type": "entity", "name": "Bob", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Alice", "to": "Bob", "relationType": "knows"},
    ]
    src = tmp_path / "memory.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    try:
        done = subprocess.run(
            [KG, "import", str(src), "--namespace", namespace, "--no-progress"],
            env=server_env(neo4j_info),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        async with ref_session("stdio", neo4j_info, namespace, "--tools", "reference") as s:
            graph = await ok(s, "read_graph")
        assert graph == {
            "entities": [{k: v for k, v in x.items() if k != "type"} for x in lines[:2]],
            "relations": [{k: v for k, v in lines[2].items() if k != "type"}],
        }
    finally:
        sync_driver.execute_query(
            "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=namespace, database_=neo4j_info.database
        )
