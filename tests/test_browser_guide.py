"""The Browser guide's queries (cypher/guide.cypher) on a known graph, the style sheet, the endpoint, the command."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from kg_neo4j.browser import SLIDES, guide_cypher, guide_html, style_text
from kg_neo4j.browser.style import grass
from kg_neo4j.clock import ManualClock
from kg_neo4j.cypher import queries
from kg_neo4j.knowledge import decay
from kg_neo4j.models import (
    ConnectIn,
    EntityIn,
    KnowledgeIn,
    ObservationAdd,
    RelationIn,
    RelationInvalidate,
)
from kg_neo4j.store.graph import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from support.servers import KG, free_port

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T_MID = datetime(2026, 1, 15, tzinfo=UTC)
T1 = datetime(2026, 2, 1, tzinfo=UTC)


def r(a: str, b: str, t: str) -> RelationIn:
    return RelationIn.model_validate({"from": a, "to": b, "relationType": t})


@pytest.fixture
async def known(store: GraphStore, clock: ManualClock) -> GraphStore:
    """People and a project at T0, knowledge with a must_precede chain and a contradiction; at T1 an
    observation, a new relation, a new orphan and a closed relation."""
    clock.set(T0)
    await store.create_entities(
        [
            EntityIn(name="Alice", entityType="person", observations=["leads search"]),
            EntityIn(name="Bob", entityType="person", observations=[]),
            EntityIn(name="Acme", entityType="organization", observations=[]),
            EntityIn(name="Rocket", entityType="project", observations=[]),
            EntityIn(name="Lonely", entityType="thing", observations=[]),
        ]
    )
    await store.create_relations(
        [
            r("Alice", "Acme", "works_at"),
            r("Bob", "Acme", "works_at"),
            r("Bob", "Alice", "manages"),
            r("Alice", "Rocket", "works_on"),
            r("Alice", "Bob", "worked_with"),
        ]
    )
    ks = KnowledgeStore(store)
    await ks.store(
        [
            KnowledgeIn(
                name="K1",
                content="Migrate first",
                type="rule",
                trust="principle",
                quote="Migrate first.",
                category="creative",
            ),
            KnowledgeIn(
                name="K2", content="Then deploy", type="procedure", trust="pattern", category="creative"
            ),
            KnowledgeIn(
                name="K3",
                content="Deploys may skip migrations",
                type="insight",
                trust="inference",
                category="creative",
            ),
            KnowledgeIn(
                name="K4",
                content="Backups are sacred",
                type="core",
                trust="principle",
                quote="Backups.",
                category="fundamental",
            ),
        ]
    )
    await ks.connect(
        [
            ConnectIn.model_validate({"from": a, "to": b, "relationType": t})
            for a, b, t in (
                ("K1", "K2", "must_precede"),
                ("K2", "K3", "must_precede"),
                ("K3", "K1", "contradicts"),
                ("K4", "Rocket", "aligns_to"),
            )
        ]
    )
    clock.set(T1)
    await store.add_observations([ObservationAdd(entityName="Alice", contents=["moved to Rocket"])])
    await store.create_entities([EntityIn(name="Dave", entityType="person", observations=[])])
    await store.create_relations([r("Alice", "Carol", "mentors")])
    await store.invalidate_relations(
        [
            RelationInvalidate.model_validate(
                {"from": "Alice", "to": "Bob", "relationType": "worked_with", "validUntil": T1.isoformat()}
            )
        ]
    )
    return store


def run(sync_driver: Any, statement: str, ns: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = sync_driver.execute_query(queries()[statement], ns=ns, **params)
    return [rec.data() for rec in records]


def path_ends(rows: list[dict[str, Any]]) -> set[str]:
    """Names (or observation texts) at the far end of the returned paths."""
    out = set()
    for row in rows:
        if row["p"] is not None:
            end = row["p"][-1]  # data() turns a path into [node, rel type, node, ...]
            out.add(end.get("name") or end.get("text"))
    return out


async def test_whole_memory(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_whole_memory", namespace)
    got = {(x["e"]["name"], x["r"][1] if x["r"] else None, x["x"]["name"] if x["x"] else None) for x in rows}
    assert got == {
        ("Alice", "works_at", "Acme"),
        ("Alice", "works_on", "Rocket"),
        ("Alice", "mentors", "Carol"),
        ("Bob", "works_at", "Acme"),
        ("Bob", "manages", "Alice"),
        ("Acme", None, None),
        ("Rocket", None, None),
        ("Lonely", None, None),
        ("Dave", None, None),
        ("K1", "must_precede", "K2"),
        ("K2", "must_precede", "K3"),
        ("K3", "contradicts", "K1"),
        ("K4", "aligns_to", "Rocket"),
    }  # the closed worked_with is not shown; observations are not nodes of this view
    assert rows[0]["e"]["name"] == "Alice"  # best connected first


async def test_around_an_entity_at_depths_1_2_3(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    assert path_ends(run(sync_driver, "guide_around_1", namespace, name="Alice")) == {
        "leads search",
        "moved to Rocket",
        "Acme",
        "Rocket",
        "Carol",
        "Bob",
    }
    assert path_ends(run(sync_driver, "guide_around_1", namespace, name="Lonely")) == set()
    assert path_ends(run(sync_driver, "guide_around_2", namespace, name="K4")) == {"Rocket", "Alice"}
    assert path_ends(run(sync_driver, "guide_around_3", namespace, name="K4")) == {
        "Rocket",
        "Alice",
        "Acme",
        "Bob",
        "Carol",
    }


async def test_what_changed_since(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_changed_since", namespace, since=T_MID)
    assert [(x["change"], x["name"], x["detail"]) for x in rows] == [
        ("entity created", "Dave", "person"),
        ("observation added", "Alice", "moved to Rocket"),
        ("relation closed", "Alice", "worked_with -> Bob"),
        ("relation created", "Alice", "mentors -> Carol"),
    ]
    assert {x["at"].to_native() for x in rows} == {T1}


async def test_relation_history(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_relation_history", namespace, name="Alice")
    got = [
        (
            x["relation"],
            x["from"],
            x["to"],
            x["status"],
            x["valid_until"].to_native() if x["valid_until"] else None,
        )
        for x in rows
    ]
    assert got == [
        ("manages", "Bob", "Alice", "current", None),
        ("mentors", "Alice", "Carol", "current", None),
        ("worked_with", "Alice", "Bob", "closed", T1),
        ("works_at", "Alice", "Acme", "current", None),
        ("works_on", "Alice", "Rocket", "current", None),
    ]


async def test_graph_as_of(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_as_of", namespace, at=T_MID)
    got = {(x["e"]["name"], x["r"][1] if x["r"] else None, x["x"]["name"] if x["x"] else None) for x in rows}
    assert ("Alice", "worked_with", "Bob") in got  # still valid then
    assert not any(e == "Dave" or t == "mentors" for e, t, _ in got)  # not yet then
    assert {e for e, _, _ in got} == {"Alice", "Bob", "Acme", "Rocket", "Lonely", "K1", "K2", "K3", "K4"}
    before = run(sync_driver, "guide_as_of", namespace, at=datetime(2025, 12, 1, tzinfo=UTC))
    assert before == []


async def test_fading_knowledge(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_fading", namespace)
    now = datetime.now(UTC)
    t = (now - T0).total_seconds() / 86400
    want = {}
    for name, trust in (("K1", "principle"), ("K2", "pattern"), ("K3", "inference")):
        s = decay.initial_stability(trust, "creative")
        want[name] = decay.retention(t, s, category="creative")
    assert [x["name"] for x in rows] == sorted(want, key=lambda n: want[n])  # weakest first; K4 never fades
    for x in rows:
        assert math.isclose(x["retention"], want[x["name"]], abs_tol=2e-3), (x, want)
        assert x["will_expire"] == (want[x["name"]] < 0.02)
    assert any(x["will_expire"] for x in rows) and not all(x["will_expire"] for x in rows)


async def test_contradictions_and_chains(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_contradictions", namespace)
    assert [(x["p"][0]["name"], x["p"][2]["name"]) for x in rows] == [("K3", "K1")]
    rows = run(sync_driver, "guide_must_precede", namespace)
    # the one maximal chain, not its sub-chains
    assert [([n["name"] for n in x["p"][::2]], x["steps"]) for x in rows] == [(["K1", "K2", "K3"], 2)]


async def test_hubs_and_orphans(known: GraphStore, namespace: str, sync_driver: Any) -> None:
    rows = run(sync_driver, "guide_hubs", namespace)
    assert [(x["name"], x["relations"]) for x in rows][:3] == [("Alice", 4), ("Acme", 2), ("Bob", 2)]
    assert ("Rocket", 2) in [(x["name"], x["relations"]) for x in rows]
    rows = run(sync_driver, "guide_orphans", namespace)
    assert [x["name"] for x in rows] == ["Dave", "Lonely"]


@pytest.mark.unit
def test_the_guide_shows_every_query_and_the_cypher_file_holds_them() -> None:
    names = [n for n in queries().names() if n.startswith("guide_")]
    on_slides = [n for _, _, ns in SLIDES for n in ns]
    assert sorted(on_slides) == sorted(names)
    page = guide_html("http://127.0.0.1:7478")
    assert page.count("<slide") == len(SLIDES) + 1
    for n in names:
        assert f'data-query="{n}"' in page and f"// name: {n}" in guide_cypher()
    assert ":style http://127.0.0.1:7478/memory.grass" in page


@pytest.mark.unit
def test_the_shipped_style_is_current() -> None:
    assert style_text() == grass(), (
        "regenerate: python -m kg_neo4j.browser.style > kg_neo4j/browser/memory.grass"
    )
    assert "/*" not in style_text()  # Browser's GraSS parser has no comments


@pytest.mark.line_independent
def test_the_endpoint_serves_with_cors_for_loopback_only() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kg_neo4j.browser.endpoint", "--port", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "the endpoint did not start"
                time.sleep(0.1)
        base = f"http://127.0.0.1:{port}"
        origin = {"Origin": "http://127.0.0.1:7474"}
        pre = httpx.options(
            f"{base}/guide.html",
            headers={
                **origin,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "pragma,cache-control",
            },
        )
        assert (
            pre.status_code == 204 and pre.headers["access-control-allow-origin"] == "http://127.0.0.1:7474"
        )
        assert "pragma" in pre.headers["access-control-allow-headers"]
        got = httpx.get(f"{base}/memory.grass", headers=origin)
        assert got.status_code == 200 and got.text == style_text()
        assert got.headers["access-control-allow-origin"] == "http://127.0.0.1:7474"
        page = httpx.get(f"{base}/guide.html", headers={"Origin": "http://localhost:7474"})
        assert (
            page.headers["content-type"].startswith("text/html")
            and f":style {base}/memory.grass" in page.text
        )
        assert httpx.get(f"{base}/guide.cypher").text == guide_cypher()
        foreign = httpx.get(f"{base}/memory.grass", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in foreign.headers
        assert httpx.get(f"{base}/nope").status_code == 404
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.unit
def test_the_browser_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    env.update(KG_NEO4J_HOME=str(tmp_path / "home"), KG_NEO4J_LOCAL_HTTP_PORT="17999")
    done = subprocess.run(
        [KG, "browser", "--export", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1  # nothing runs in that home
    assert "Neo4j Browser: http://127.0.0.1:17999/browser/" in done.stdout and "user: neo4j" in done.stdout
    assert f"{tmp_path / 'home' / 'neo4j' / 'credentials.json'}" in done.stdout
    assert "kg-neo4j neo4j start" in done.stdout
    assert (tmp_path / "out" / "memory.grass").read_text() == style_text()
    assert (tmp_path / "out" / "guide.cypher").read_text() == guide_cypher()
    assert "<slide" in (tmp_path / "out" / "guide.html").read_text()
    remote = subprocess.run(
        [KG, "browser"],
        env={**env, "NEO4J_URI": "neo4j+s://x.databases.neo4j.io"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert remote.returncode == 0 and ":style" in remote.stdout and "Aura" in remote.stdout
