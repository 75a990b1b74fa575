"""``kg-neo4j hook session-start | recall | post-compact`` on a prepared graph (in process, with the
injected clock), and as the CLI does it: no torch on the path, exit 0 and nothing printed when
Neo4j is unreachable or stdin is garbage (every hook of HOOKS).  The other hooks: test_hook_*.py."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from neo4j import AsyncDriver
from test_maintenance import DAY, DIM, NOW, edges, knowledge, node, seed
from test_maintenance_actions import near, random_vector

from kg_neo4j.clock import ManualClock
from kg_neo4j.hooks import HOOKS, HookConfig, fit, parse_payload, run_hook
from kg_neo4j.hooks.state import HookState
from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.vocabulary import Category
from kg_neo4j.models import EntityIn
from kg_neo4j.settings import Settings
from kg_neo4j.store import GraphStore
from kg_neo4j.store.connection import ensure_vector_indexes
from support.servers import KG, Neo4jInfo, free_port, server_env

OLD = NOW - 400 * DAY


def settings(info: Neo4jInfo, namespace: str, budget: int = 4000) -> Settings:
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        neo4j_database=info.database,
        namespace=namespace,
        hook_budget_chars=budget,
    )


async def hook(
    name: str,
    payload: dict[str, Any],
    driver: AsyncDriver,
    info: Neo4jInfo,
    namespace: str,
    clock: ManualClock,
    budget: int = 4000,
    state: Path | None = None,
) -> str:
    # a generous time budget: what the hook prints must not depend on how busy the machine is
    config = HookConfig(hook_state_dir=state or Path("/nonexistent/kg-neo4j-hook-state"))
    return await run_hook(
        name,
        payload,
        settings(info, namespace, budget),
        clock=clock,
        driver=driver,
        time_budget=120.0,
        sweep_budget=60.0,
        config=config,
    )


async def test_session_start(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    db = neo4j_info.database
    clock.set(NOW)
    await ensure_vector_indexes(driver, db, DIM)
    rng = random.Random(namespace)
    base = random_vector(rng)
    fading = knowledge("fading", created_at=NOW - 100 * DAY)  # a pattern untouched for 100 days: R = 0.11
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge("decayed", trust="inference", created_at=OLD),
            fading,
            knowledge(
                "keeper",
                trust="principle",
                quote="always migrate first",
                created_at=NOW - 3 * DAY,
                vector=base,
            ),
            knowledge("copy", trust="inference", created_at=NOW - DAY, vector=near(base, rng, 0.02)),
            knowledge("gone", created_at=NOW - DAY),
        ],
    )
    await edges(driver, db, namespace, [{"from": "keeper", "to": "gone", "type": "refines"}])
    await driver.execute_query(  # expired by something that left its edge open
        "MATCH (k:Knowledge {namespace: $ns, name: 'gone'}) REMOVE k:KgNode:Entity:Knowledge "
        "SET k:ExpiredKnowledge, k.expired_at = $now, k.expired_reason = 'forgotten'",
        ns=namespace,
        now=NOW,
        database_=db,
    )
    r = decay.retention(100.0, fading["stability"], category=Category.CREATIVE)
    text = await hook(
        "session-start",
        {"session_id": "abc", "hook_event_name": "SessionStart", "source": "startup"},
        driver,
        neo4j_info,
        namespace,
        clock,
    )
    lines = text.splitlines()
    assert lines[0] == (
        f"Knowledge graph memory (kg-neo4j, namespace '{namespace}'): 3 knowledge nodes. "
        "Session-start maintenance:"
    )
    assert lines[1] == "- repaired 1 open edges of expired knowledge"
    assert lines[2] == "- 4 orphan knowledge nodes: copy, decayed, fading, keeper"  # before the sweep
    assert lines[3] == "- decay: 1 knowledge nodes expired (unused too long): decayed"
    assert lines[4] == (
        f"- fading (retention < 0.3; use or confirm them, or let them go): fading (R {r:.2f})"
    )
    assert lines[5].startswith(
        "- possible duplicates (merge with maintain_graph action merge, or connect them): copy ~ keeper (0."
    )
    assert len(lines) == 6
    assert "ExpiredKnowledge" in (await node(driver, db, namespace, "decayed"))["labels"]
    again = await hook("session-start", {}, driver, neo4j_info, namespace, clock)
    assert "repaired" not in again and "decay:" not in again and "fading (R" in again


async def test_session_start_on_an_empty_namespace_prints_nothing(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    assert await hook("session-start", {}, driver, neo4j_info, namespace, clock) == ""


async def _recall_graph(driver: AsyncDriver, info: Neo4jInfo, namespace: str, clock: ManualClock) -> None:
    clock.set(NOW)
    await seed(
        driver,
        info.database,
        namespace,
        [
            knowledge(
                "Deploy checklist",
                trust="principle",
                quote="migrate, then deploy",
                content="run the database migrations before deploying",
                type="procedure",
                level=2,
                sessions=3,
            ),
            knowledge("Coffee", content="the office coffee machine is on floor two"),
        ],
    )
    store = GraphStore(driver, database=info.database, namespace=namespace, clock=clock)
    await store.create_entities(
        [
            EntityIn(
                name="Alice",
                entityType="person",
                observations=["Alice deploys the database on fridays", "likes tea"],
            )
        ]
    )


async def test_recall(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock) -> None:
    await _recall_graph(driver, neo4j_info, namespace, clock)
    text = await hook(
        "recall",
        {
            "session_id": "abc",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "How do we deploy the database?",
        },
        driver,
        neo4j_info,
        namespace,
        clock,
    )
    assert text.splitlines() == [
        "Relevant knowledge from memory (kg-neo4j; trust: principle = the expert's, pattern = observed, "
        "inference = your own idea):",
        "- [procedure · principle · level 2] Deploy checklist: run the database migrations before deploying "
        '(expert: "migrate, then deploy")',
        "- [person] Alice: Alice deploys the database on fridays; likes tea",
    ]
    assert await hook("recall", {"prompt": "zebra quantum"}, driver, neo4j_info, namespace, clock) == ""
    assert await hook("recall", {"prompt": "   "}, driver, neo4j_info, namespace, clock) == ""
    assert await hook("recall", {}, driver, neo4j_info, namespace, clock) == ""


async def test_recall_finds_its_own_beside_a_crowded_namespace(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    """The fulltext index spans every namespace and a query asks for one namespace's best, which a
    namespace whose name holds this one's words shares ("<ns>-crowd"): its 600 better matches fill the
    first page of 500, and recall reads again with a larger k until it finds this namespace's own."""
    from kg_neo4j.hooks import recall as recall_hook
    from kg_neo4j.text import fulltext_query

    await _recall_graph(driver, neo4j_info, namespace, clock)
    crowd = f"{namespace}-crowd"
    other = GraphStore(driver, database=neo4j_info.database, namespace=crowd, clock=clock)
    try:
        for start in range(0, 600, 100):
            await other.create_entities(
                [
                    EntityIn(
                        name=f"Crowd {i}",
                        entityType="note",
                        observations=[f"deploy the database, deploy the database {i}"],
                    )
                    for i in range(start, start + 100)
                ]
            )
        raw, _, _ = await driver.execute_query(
            # the index is eventually consistent: wait for the writes above first, as every product read does
            "CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh() "
            "CALL db.index.fulltext.queryNodes('kg_fulltext_ns', $q, {limit: $k}) YIELD node "
            "RETURN count(CASE WHEN node.namespace = $ns AND node.name IN $shown THEN 1 END) AS own",
            q=fulltext_query("deploy the database", namespace),
            k=recall_hook.RECALL_K,
            ns=namespace,
            shown=["Deploy checklist", "Alice"],
            database_=neo4j_info.database,
        )
        # What else the first page holds depends on the whole database (other tests' namespaces score
        # too): only that it misses at least one of the two answers below is this test's, so the answer
        # needs recall's wider read.
        assert raw[0]["own"] < 2, raw[0]
        text = await hook("recall", {"prompt": "deploy the database"}, driver, neo4j_info, namespace, clock)
        assert text.splitlines()[1:] == [
            "- [procedure · principle · level 2] Deploy checklist: run the database migrations before deploying "
            '(expert: "migrate, then deploy")',
            "- [person] Alice: Alice deploys the database on fridays; likes tea",
        ]
    finally:
        await driver.execute_query(
            "MATCH (n {namespace: $ns}) DETACH DELETE n", ns=crowd, database_=neo4j_info.database
        )


async def test_recall_keeps_to_the_budget(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    await _recall_graph(driver, neo4j_info, namespace, clock)
    full = await hook("recall", {"prompt": "deploy the database"}, driver, neo4j_info, namespace, clock)
    lines = full.splitlines()
    budget = len(lines[0]) + 1 + len(lines[1])  # exactly the header and the first line
    text = await hook(
        "recall", {"prompt": "deploy the database"}, driver, neo4j_info, namespace, clock, budget=budget
    )
    assert text == "\n".join(lines[:2]) and len(text) <= budget
    assert (
        await hook(
            "recall",
            {"prompt": "deploy the database"},
            driver,
            neo4j_info,
            namespace,
            clock,
            budget=len(lines[0]),
        )
        == ""
    )


async def test_post_compact(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock
) -> None:
    clock.set(NOW)
    await seed(
        driver,
        neo4j_info.database,
        namespace,
        [
            knowledge(
                "identity",
                type="core",
                trust="principle",
                quote="you are my assistant",
                content="Serve the team",
            ),
            knowledge("arithmetic", category="fundamental", level=4, content="2 + 2 = 4"),
            knowledge(
                "habit", trust="inference", level=4, accesses=60, last_access=NOW - DAY, content="tests first"
            ),
            knowledge("minor", content="a passing remark"),
        ],
    )
    text = await hook(
        "post-compact",
        {"hook_event_name": "SessionStart", "source": "compact"},
        driver,
        neo4j_info,
        namespace,
        clock,
    )
    assert text.splitlines() == [
        "Core knowledge (kg-neo4j memory, restored after compaction):",
        '- [core · principle · level 1] identity: Serve the team (expert: "you are my assistant")',
        "- [rule · pattern · fundamental · level 4] arithmetic: 2 + 2 = 4",
        "- [rule · inference · level 4] habit: tests first",
    ]
    lines = text.splitlines()
    budget = len(lines[0]) + 1 + len(lines[1]) + 5  # the header and one line, not two
    short = await hook("post-compact", {}, driver, neo4j_info, namespace, clock, budget=budget)
    assert short.splitlines() == lines[:2] and len(short) <= budget


@pytest.mark.unit
def test_fit_and_payload() -> None:
    assert fit("h", ["a", "bb"], 100) == "h\na\nbb"
    assert fit("h", ["a", "bb"], 4) == "h\na"
    assert fit("h", ["abc"], 3) == ""
    assert parse_payload("") == {} and parse_payload('{"prompt": "x"}') == {"prompt": "x"}
    for bad in ("not json {", "[1, 2]", '"text"'):
        with pytest.raises(ValueError):
            parse_payload(bad)


# --- as the CLI runs them ---------------------------------------------------------------------------

PROBE = """
import io, json, sys
from kg_neo4j.cli import main
s = {"session_id": "probe", "transcript_path": sys.argv[1], "cwd": "/home/dev/shop"}
payloads = {"session-start": {**s, "source": "startup"}, "recall": {**s, "prompt": "deploy the database"},
            "correction-detector": {**s, "prompt": "No, that's wrong"},
            "search-enforcer": {**s, "tool_name": "Edit", "tool_input": {"file_path": "/x"}},
            "auto-capture": {**s, "stop_hook_active": False}, "post-compact": {**s, "source": "compact"}}
codes = {}
for name, payload in payloads.items():
    sys.stdin = io.StringIO(json.dumps(payload))
    codes[name] = main(["hook", name])
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"codes": codes, "heavy": heavy}), file=sys.stderr)
"""


async def test_hooks_from_the_cli_import_no_torch(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock, tmp_path: Path
) -> None:
    await _recall_graph(driver, neo4j_info, namespace, clock)
    # an embedding model configured, as a server would be, and a search server (down): no hook loads the model
    env = server_env(
        neo4j_info,
        KG_NEO4J_NAMESPACE=namespace,
        KG_NEO4J_EMBEDDING_MODEL="all-MiniLM-L6-v2",
        KG_NEO4J_HOOK_STATE_DIR=str(tmp_path),
        KG_NEO4J_HOOK_GUARD_TOOLS="Edit",
        KG_NEO4J_HOOK_SEARCH_URL=f"http://127.0.0.1:{free_port()}/mcp",
    )
    transcript = str(Path(__file__).parent / "data" / "transcript_learning.jsonl")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, transcript], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    assert probe == {"codes": dict.fromkeys(HOOKS, 0), "heavy": []}
    assert "Deploy checklist" in proc.stdout

    out = subprocess.run(
        [KG, "hook", "recall"],
        input=json.dumps({"prompt": "deploy the database"}),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.splitlines()[1].startswith("- [procedure · principle · level 2] Deploy checklist:")


@pytest.mark.parametrize("name", HOOKS)
def test_hook_with_neo4j_unreachable_prints_nothing(neo4j_info: Neo4jInfo, name: str) -> None:
    env = server_env(neo4j_info, NEO4J_URI=f"bolt://127.0.0.1:{free_port()}")
    proc = subprocess.run(
        [KG, "hook", name],
        input=json.dumps({"prompt": "deploy the database"}),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


@pytest.mark.parametrize("stdin", ["not json {", "[1, 2]", "\x00\xff garbage"])
@pytest.mark.parametrize("name", HOOKS)
def test_hook_with_garbage_stdin_prints_nothing(neo4j_info: Neo4jInfo, name: str, stdin: str) -> None:
    proc = subprocess.run(
        [KG, "hook", name],
        input=stdin,
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_unknown_hook_is_a_usage_error_but_exits_0(neo4j_info: Neo4jInfo) -> None:
    proc = subprocess.run(
        [KG, "hook", "stop"],
        input="{}",
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "" and "invalid choice" in proc.stderr
    for name in HOOKS:
        assert repr(name) in proc.stderr  # the choices offered are exactly HOOKS


# --- session-start's maintenance list, recall's access and session record --------------------------


async def test_session_start_maintenance(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock, tmp_path: Path
) -> None:
    db = neo4j_info.database
    clock.set(NOW)
    await seed(
        driver,
        db,
        namespace,
        [
            knowledge(n, created_at=NOW - DAY)
            for n in ("a", "b", "c", "o1", "o2", "o3", "o4", "o5", "o6", "gone")
        ],
    )
    await edges(
        driver,
        db,
        namespace,
        [
            {"from": "a", "to": "b", "type": "refines", "weight": 0.1},  # weak: closed
            {"from": "b", "to": "c", "type": "implies", "weight": 0.8, "at": NOW - DAY / 2},
            {"from": "a", "to": "c", "type": "causes", "weight": 0.9},  # old: not reviewed
        ],
    )
    # expired by an older version that left the vector on its observation (an index entry)
    await driver.execute_query(
        "MATCH (k:Knowledge {namespace: $ns, name: 'gone'}) REMOVE k:KgNode:Entity:Knowledge "
        "SET k:ExpiredKnowledge, k.expired_at = $now, k.expired_reason = 'forgotten' "
        "CREATE (k)-[:HAS_OBSERVATION]->(:Observation {namespace: $ns, text: 'old', seq: 0, embedding: $v, "
        "embedding_model: 'test'})",
        ns=namespace,
        now=NOW,
        v=[1.0] + [0.0] * (DIM - 1),
        database_=db,
    )
    stale = HookState(tmp_path, namespace, now=lambda: 0.0)  # a session seen long ago: expired
    stale.touch("old-session")
    assert stale.session_path("old-session").exists()
    text = await hook(
        "session-start",
        {"session_id": "new", "source": "startup"},
        driver,
        neo4j_info,
        namespace,
        clock,
        state=tmp_path,
    )
    lines = text.splitlines()
    assert lines[0] == (
        f"Knowledge graph memory (kg-neo4j, namespace '{namespace}'): 9 knowledge nodes. "
        "Session-start maintenance:"
    )
    assert "- cleaned 1 index entries (vectors) left on expired knowledge" in lines
    assert "- closed 1 weak edges (weight < 0.3): a -[refines 0.1]-> b" in lines
    assert (
        "- warning: 6 knowledge nodes have no relationship (orphans; connect them with connect_knowledge): "
        "o1, o2, o3, o4, o5 and 1 more"
    ) in lines
    assert (
        "- review the 1 edges created in the last 24 hours (are they right?): b -[implies 0.8]-> c" in lines
    )
    records, _, _ = await driver.execute_query(
        "MATCH (:ExpiredKnowledge {namespace: $ns})-[:HAS_OBSERVATION]->(o) RETURN o.embedding IS NULL AS clean",
        ns=namespace,
        database_=db,
    )
    assert len(records) == 2 and all(r["clean"] for r in records)  # its content and the old one
    assert not stale.session_path("old-session").exists()  # expired hook state deleted
    assert HookState(tmp_path, namespace).session("new")["session_id"] == "new"
    again = await hook("session-start", {}, driver, neo4j_info, namespace, clock, state=tmp_path)
    assert "cleaned" not in again and "weak edges" not in again and "warning: 6" in again


async def test_recall_records_an_access_and_what_it_showed(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, clock: ManualClock, tmp_path: Path
) -> None:
    await _recall_graph(driver, neo4j_info, namespace, clock)
    before = await node(driver, neo4j_info.database, namespace, "Deploy checklist")
    clock.set(NOW + 10 * DAY)
    text = await hook(
        "recall",
        {"session_id": "sess-1", "prompt": "How do we deploy the database?"},
        driver,
        neo4j_info,
        namespace,
        clock,
        state=tmp_path,
    )
    assert "Deploy checklist" in text
    after = await node(driver, neo4j_info.database, namespace, "Deploy checklist")
    # one normal access (grade 3): S grows by e^(1 - R) at R after 10 days, the session is recorded
    r = decay.retention(10.0, before["stability"], category=Category.CREATIVE)
    assert after["access_count"] == before["access_count"] + 1
    assert after["stability"] == pytest.approx(decay.grow_stability(before["stability"], r, 3))
    assert "sess-1" in after["sessions"] and after["last_access"].to_native() == NOW + 10 * DAY
    coffee = await node(driver, neo4j_info.database, namespace, "Coffee")
    assert coffee["access_count"] == 0  # not shown, not touched
    state = HookState(tmp_path, namespace).session("sess-1")
    assert [t["names"] for t in state["turns"]] == [["Deploy checklist"]] and state["searched_at"]


@pytest.mark.unit
def test_search_marks_from_many_threads_of_one_process_never_collide(tmp_path: Path) -> None:
    """The server marks each search_memory from a worker thread: writers of one process share a pid,
    and each still replaces the marker with a file of its own (no lost temporary file, no error)."""
    from concurrent.futures import ThreadPoolExecutor

    state = HookState(tmp_path, "ns")
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: state.mark_search(f"mcp-{i}"), range(400)))
    marker = json.loads(state.last_search_path.read_text(encoding="utf-8"))
    assert marker["session"].startswith("mcp-")
    assert [p.name for p in state.last_search_path.parent.iterdir() if p.name.endswith(".tmp")] == []
