"""Issue 17: exact history, through real MCP sessions (stdio) on the real Neo4j.

asOf reads before a forget, the asOf memory prior, delete_observations on a knowledge node's content,
retiring observations, type history and the entity_history timeline.  Moments are taken on the test's
side between tool calls (the server's clock is the system clock: every write before the moment carries
an earlier time, every write after a later one).  The recall hook's access is tested in
tests/test_hooks.py::test_recall_records_an_access_and_what_it_showed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support.kg import by_name, ent, err, names, ok, rel, retention_apart
from support.servers import KG, Neo4jInfo, mcp_session, server_env

NO_MODEL = ("--embedding-model", "none")


async def moment() -> str:
    """A moment strictly between the calls before and after it."""
    await asyncio.sleep(0.005)
    at = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.005)
    return at


async def call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    result = await s.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, f"{tool}({args!r}) failed: {text}"
    return json.loads(text)


def same(as_of: Any, then: Any, where: str) -> None:
    """An asOf read equals the read of now made at that moment, retention within its tolerance."""
    as_of, then = retention_apart(as_of, then, where)
    assert as_of == then, where


async def fail(s: Any, tool: str, args: dict[str, Any]) -> str:
    result = await s.call_tool(tool, args)
    assert result.is_error, f"{tool}({args!r}) should have failed: {result.content[0].text[:300]}"
    return str(result.content[0].text)


KNOW = {
    "name": "Friday rule",
    "content": "Never deploy on Fridays",
    "type": "rule",
    "trust": "pattern",
    "category": "creative",
}


async def test_as_of_before_a_forget_shows_the_knowledge(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await ok(s, "create_entities", {"entities": [ent("Team", "group", ["ships weekly"])]})
        await call(s, "store_knowledge", KNOW)
        await call(
            s,
            "connect_knowledge",
            {
                "from": "Friday rule",
                "to": "Team",
                "relationType": "observed_in",
                "reasoning": "seen in the team's releases",
            },
        )
        before = await moment()
        then_graph = await ok(s, "read_graph")
        then_open = await ok(s, "open_nodes", {"names": ["Friday rule"]})
        then_walk = await call(s, "traverse_graph", {"start": ["Team"]})
        await call(s, "forget_knowledge", {"names": ["Friday rule"], "reason": "superseded"})
        assert names(await ok(s, "read_graph")) == ["Team"]  # now: gone
        # retention moves with the reading moment, and the server's clock is not the test's: within 1e-4
        same(await ok(s, "read_graph", {"asOf": before}), then_graph, "read_graph")
        same(await ok(s, "open_nodes", {"names": ["Friday rule"], "asOf": before}), then_open, "open_nodes")
        assert by_name(then_open)["Friday rule"]["observations"] == ["Never deploy on Fridays"]
        assert names(await ok(s, "search_nodes", {"query": "fridays", "asOf": before})) == ["Friday rule"]
        assert await ok(s, "search_nodes", {"query": "fridays"}) == {"entities": [], "relations": []}
        walk = await call(s, "traverse_graph", {"start": ["Team"], "asOf": before})
        same(walk, then_walk, "traverse_graph")
        assert [e["name"] for e in walk["entities"]] == ["Team", "Friday rule"]
        # a page of read_graph as of then holds it too
        page = await ok(s, "read_graph", {"asOf": before, "limit": 10})
        assert names(page) == ["Friday rule", "Team"] and len(page["relations"]) == 1
        # the name is free again; as of then, the forgotten knowledge is still what shows
        await ok(s, "create_entities", {"entities": [ent("Friday rule", "note", ["a new thing"])]})
        same(await ok(s, "open_nodes", {"names": ["Friday rule"], "asOf": before}), then_open, "open_nodes")


async def test_as_of_memory_prior_uses_the_decay_state_of_that_moment(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    # Two knowledge nodes alike in everything the channels score (BM25 statistics are database-wide and
    # drift while other tests write, so scores are compared within one answer, never across answers).
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await call(s, "store_knowledge", {**KNOW, "name": "Rule one"})
        await call(s, "store_knowledge", {**KNOW, "name": "Rule two"})
        at = await moment()

        def scores(answer: dict[str, Any]) -> dict[str, float]:
            return {h["name"]: h["score"] for h in answer["hits"] if h["observation"]}

        first = scores(await call(s, "search_memory", {"query": "deploy on fridays", "asOf": at}))
        assert first["Rule one"] == first["Rule two"]
        # Rule one becomes fundamental: level 4 and R = 1, a larger memory score from now on
        await call(s, "update_knowledge", {"name": "Rule one", "category": "fundamental"})
        now = scores(await call(s, "search_memory", {"query": "deploy on fridays"}))
        assert now["Rule one"] > now["Rule two"]
        then = scores(await call(s, "search_memory", {"query": "deploy on fridays", "asOf": at}))
        assert then["Rule one"] == then["Rule two"]  # as of then, both had the same state


async def test_delete_observations_cannot_remove_a_knowledge_nodes_content(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await call(s, "store_knowledge", KNOW)
        await ok(
            s, "add_observations", {"observations": [{"entityName": "Friday rule", "contents": ["extra"]}]}
        )
        msg = await err(
            s,
            "delete_observations",
            {
                "deletions": [
                    {"entityName": "Friday rule", "observations": ["extra", "Never deploy on Fridays"]}
                ]
            },
        )
        assert "update_knowledge" in msg and "forget_knowledge" in msg and "content" in msg
        assert by_name(await ok(s, "open_nodes", {"names": ["Friday rule"]}))["Friday rule"][
            "observations"
        ] == ["Never deploy on Fridays", "extra"]  # nothing deleted
        await ok(
            s,
            "delete_observations",
            {"deletions": [{"entityName": "Friday rule", "observations": ["extra"]}]},
        )
        assert by_name(await ok(s, "open_nodes", {"names": ["Friday rule"]}))["Friday rule"][
            "observations"
        ] == ["Never deploy on Fridays"]
        msg = await fail(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Friday rule", "observations": ["Never deploy on Fridays"]}]},
        )
        assert "update_knowledge" in msg and "forget_knowledge" in msg


async def test_invalidate_observations_retires_and_keeps(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await ok(s, "create_entities", {"entities": [ent("Alice", "person", ["works at Acme", "likes tea"])]})
        before = await moment()
        retired = await call(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Alice", "observations": ["works at Acme"]}]},
        )
        assert [(r["entityName"], r["observation"]) for r in retired["observations"]] == [
            ("Alice", "works at Acme")
        ]
        assert by_name(await ok(s, "read_graph"))["Alice"]["observations"] == ["likes tea"]
        assert by_name(await ok(s, "read_graph", {"asOf": before}))["Alice"]["observations"] == [
            "works at Acme",
            "likes tea",
        ]
        assert await ok(s, "search_nodes", {"query": "acme"}) == {"entities": [], "relations": []}
        assert names(await ok(s, "search_nodes", {"query": "acme", "asOf": before})) == ["Alice"]
        hits = (await call(s, "search_memory", {"query": "Acme works"}))["hits"]
        assert all(h["observation"] != "works at Acme" for h in hits)
        assert by_name(await ok(s, "open_nodes", {"names": ["Alice"], "asOf": before}))["Alice"][
            "observations"
        ] == ["works at Acme", "likes tea"]
        # re-adding the text makes it current again, as a new observation
        await ok(
            s, "add_observations", {"observations": [{"entityName": "Alice", "contents": ["works at Acme"]}]}
        )
        assert by_name(await ok(s, "read_graph"))["Alice"]["observations"] == ["likes tea", "works at Acme"]
        # all or nothing, with errors naming what is wrong
        msg = await fail(
            s,
            "invalidate_observations",
            {
                "observations": [
                    {"entityName": "Alice", "observations": ["likes tea"]},
                    {"entityName": "Nobody", "observations": ["x"]},
                ]
            },
        )
        assert "Nobody" in msg
        msg = await fail(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Alice", "observations": ["likes coffee"]}]},
        )
        assert "likes coffee" in msg
        msg = await fail(
            s,
            "invalidate_observations",
            {
                "observations": [
                    {
                        "entityName": "Alice",
                        "observations": ["likes tea"],
                        "validUntil": "2999-01-01T00:00:00Z",
                    }
                ]
            },
        )
        assert "validUntil" in msg and "future" in msg
        assert "likes tea" in by_name(await ok(s, "read_graph"))["Alice"]["observations"]
    async with mcp_session("stdio", neo4j_info, namespace, *NO_MODEL) as s:  # default: the tool is there
        assert "invalidate_observations" in {t.name for t in (await s.list_tools()).tools}
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "reference", *NO_MODEL) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert "invalidate_observations" not in tools and "entity_history" not in tools


async def test_type_changes_are_kept(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await ok(s, "create_entities", {"entities": [ent("Gandalf", "wizard", ["grey"])]})
        await call(s, "store_knowledge", KNOW)
        t1 = await moment()
        await call(s, "update_nodes", {"nodes": [{"name": "Gandalf", "nodeType": "npc"}]})
        await call(s, "update_knowledge", {"name": "Friday rule", "type": "procedure"})
        t2 = await moment()
        await call(s, "update_nodes", {"nodes": [{"name": "Gandalf", "nodeType": "maiar"}]})
        types_at = {}
        for at in (t1, t2, None):
            graph = await ok(s, "read_graph", {"asOf": at} if at else {})
            types_at[at] = {e["name"]: e["entityType"] for e in graph["entities"]}
        assert types_at[t1] == {"Gandalf": "wizard", "Friday rule": "rule"}
        assert types_at[t2] == {"Gandalf": "npc", "Friday rule": "procedure"}
        assert types_at[None] == {"Gandalf": "maiar", "Friday rule": "procedure"}
        assert names(await ok(s, "search_nodes", {"query": "wizard", "asOf": t1})) == ["Gandalf"]
        assert names(await ok(s, "search_nodes", {"query": "wizard", "asOf": t2})) == []
        assert names(await ok(s, "search_nodes", {"query": "maiar", "asOf": t2})) == []
        assert names(await ok(s, "search_nodes", {"query": "maiar"})) == ["Gandalf"]
        walk = await call(s, "traverse_graph", {"start": ["Gandalf"], "asOf": t1})
        assert walk["entities"][0]["entityType"] == "wizard"
        history = await call(s, "entity_history", {"name": "Gandalf"})
        assert [
            (e["event"], e["detail"].get("from"), e["detail"].get("to"))
            for e in history["events"]
            if e["event"] == "type_changed"
        ] == [("type_changed", "wizard", "npc"), ("type_changed", "npc", "maiar")]


async def test_entity_history_is_a_paged_timeline(neo4j_info: Neo4jInfo, namespace: str) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await ok(
            s,
            "create_entities",
            {"entities": [ent("Alice", "person", ["works at Acme"]), ent("Acme", "org")]},
        )
        await call(
            s,
            "create_relations",
            {
                "relations": [
                    {
                        **rel("Alice", "Acme", "works_at"),
                        "weight": 1.0,
                        "reasoning": "her profile",
                        "source": "crm",
                    }
                ]
            },
        )
        await call(
            s,
            "update_relations",
            {
                "relations": [
                    {**rel("Alice", "Acme", "works_at"), "weight": 0.6, "reasoning": "fewer commits"}
                ]
            },
        )
        await call(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Alice", "observations": ["works at Acme"]}]},
        )
        await call(s, "invalidate_relations", {"relations": [rel("Alice", "Acme", "works_at")]})
        await call(s, "update_nodes", {"nodes": [{"name": "Alice", "nodeType": "contractor"}]})
        await call(s, "store_knowledge", {**KNOW, "name": "Alice rule"})
        await call(s, "update_knowledge", {"name": "Alice rule", "trust": "inference"})
        await call(s, "forget_knowledge", {"names": ["Alice rule"]})

        events = (await call(s, "entity_history", {"name": "Alice"}))["events"]
        assert [e["event"] for e in events] == [
            "created",
            "observation_added",
            "relation_opened",
            "relation_updated",
            "observation_retired",
            "relation_closed",
            "type_changed",
        ]
        opened, updated, closed = events[2]["detail"], events[3]["detail"], events[5]["detail"]
        assert (opened["weight"], opened["reasoning"], opened["source"]) == (1.0, "her profile", "crm")
        assert (updated["weightBefore"], updated["weight"], updated["reasoning"]) == (
            1.0,
            0.8,
            "fewer commits",
        )
        assert (closed["from"], closed["to"], closed["relationType"]) == ("Alice", "Acme", "works_at")
        times = [e["at"] for e in events]
        assert times == sorted(times)
        # paged: two at a time gives the same events
        paged: list[Any] = []
        cursor = None
        while True:
            page = await call(
                s, "entity_history", {"name": "Alice", "limit": 2, **({"cursor": cursor} if cursor else {})}
            )
            paged += page["events"]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        assert paged == events
        # one relation's history
        rel_events = (await call(s, "entity_history", {"relation": rel("Alice", "Acme", "works_at")}))[
            "events"
        ]
        assert [e["event"] for e in rel_events] == ["relation_opened", "relation_updated", "relation_closed"]
        # knowledge: trust change and forget
        k_events = [e["event"] for e in (await call(s, "entity_history", {"name": "Alice rule"}))["events"]]
        assert k_events == ["created", "observation_added", "trust_changed", "forgotten"]
        # errors name the field
        assert "name" in await fail(s, "entity_history", {})
        assert "Nobody" in await fail(s, "entity_history", {"name": "Nobody"})
        assert "cursor" in await fail(s, "entity_history", {"name": "Alice", "cursor": "bogus"})
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["entity_history"].annotations.read_only_hint is True


async def test_full_export_and_import_keep_the_history(
    tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """Type history, relation versions and retired observations travel with `export --format full`: the
    imported copy answers asOf reads as the original does."""
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all", *NO_MODEL) as s:
        await ok(
            s,
            "create_entities",
            {"entities": [ent("Ann", "person", ["likes tea", "works at Acme"]), ent("Bob", "person")]},
        )
        await call(s, "create_relations", {"relations": [{**rel("Ann", "Bob"), "weight": 1.0}]})
        t1 = await moment()
        await call(s, "update_nodes", {"nodes": [{"name": "Ann", "nodeType": "robot"}]})
        await call(s, "update_relations", {"relations": [{**rel("Ann", "Bob"), "weight": 0.2}]})
        await call(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Ann", "observations": ["works at Acme"]}]},
        )
        t2 = await moment()
        reads = [("read_graph", {}), ("traverse_graph", {"start": ["Ann"]})]
        original = [await call(s, t, {**a, "asOf": at}) for at in (t1, t2) for t, a in reads]
    full = tmp_path / "full.jsonl"
    done = subprocess.run(
        [KG, "export", str(full), "--format", "full", "--namespace", namespace, "--no-progress"],
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert '"retired":true' in full.read_text().replace(" ", "")
    copy = f"{namespace}-copy"
    done = subprocess.run(
        [KG, "import", str(full), "--namespace", copy, "--no-progress"],
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    async with mcp_session("stdio", neo4j_info, copy, "--tools", "all", *NO_MODEL) as s:
        imported = [await call(s, t, {**a, "asOf": at}) for at in (t1, t2) for t, a in reads]
        assert imported == original
        assert by_name(original[0])["Ann"] == {
            "name": "Ann",
            "entityType": "person",
            "observations": ["likes tea", "works at Acme"],
        }
        assert original[1]["relations"][0]["weight"] == 1.0 and original[3]["relations"][0]["weight"] == 0.6
        assert by_name(await ok(s, "read_graph"))["Ann"]["observations"] == ["likes tea"]


async def test_search_memory_of_now_skips_retired_observations_in_every_channel(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    """With the embedding model (vector channels too), a retired observation is no hit of now."""
    async with mcp_session("stdio", neo4j_info, namespace, "--embedding-model", "all-MiniLM-L6-v2") as s:
        # the write embeds its texts, so the model has loaded once it answers
        await ok(
            s,
            "create_entities",
            {"entities": [ent("Alice", "person", ["Alice moved to Lisbon in May", "Alice plays the cello"])]},
        )
        query = {"query": "where does Alice live now?"}
        before = await call(s, "search_memory", query)
        assert before["mode"] == "hybrid"
        assert "Alice moved to Lisbon in May" in [h["observation"] for h in before["hits"]]
        await call(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Alice", "observations": ["Alice moved to Lisbon in May"]}]},
        )
        after = await call(s, "search_memory", query)
        assert "Alice moved to Lisbon in May" not in [h["observation"] for h in after["hits"]]
        assert after["entities"] == [{"name": "Alice", "entityType": "person", "observationCount": 1}]
