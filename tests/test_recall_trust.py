"""Trust at recall (docs/knowledge-model.md; docs/knowledge.md#trust-at-recall): search_memory and
traverse_graph show, for each knowledge entity they return, its trust, level, quote, retention and
whether it is fading (R < 0.3), computed with kg_neo4j.knowledge.decay at the read's moment (now,
or asOf).  Entities that are not knowledge carry no such key, and the reference-named reads keep
the reference's answers.  Through real MCP sessions on a real Neo4j."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema
import pytest

from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.vocabulary import Category
from support.kg import doc_after, ok, user_docs
from support.servers import Neo4jInfo, mcp_session

QUOTE = "We do not ship on Fridays. Ever."


async def answer(session: Any, tool: str, args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's text answer (parsed), checked against its output schema and its structured output."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text
    assert not result.is_error, text
    data: dict[str, Any] = json.loads(text)
    jsonschema.validate(data, schema)
    assert result.structured_content == data
    return data


def by_name(entities: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in entities}


async def test_search_and_traverse_show_trust_level_quote_and_fading(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    async with mcp_session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        schemas = {t.name: t.output_schema for t in (await s.list_tools()).tools}
        await ok(
            s,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["Alice deploys on Fridays"]}
                ]
            },
        )
        for item in (
            {
                "name": "No Friday deploys",
                "content": "Never deploy to production on Fridays",
                "type": "rule",
                "trust": "principle",
                "quote": QUOTE,
            },
            {
                "name": "Weekend pages",
                "content": "Friday deploys page people at the weekend",
                "type": "insight",
                "trust": "inference",
            },
        ):
            result = await s.call_tool("store_knowledge", item)
            assert not result.is_error, result.content[0].text
        result = await s.call_tool(
            "connect_knowledge",
            {"from": "No Friday deploys", "to": "Weekend pages", "relationType": "implies"},
        )
        assert not result.is_error
        await ok(
            s,
            "create_relations",
            {"relations": [{"from": "Alice", "to": "No Friday deploys", "relationType": "was_told"}]},
        )

        # Read 60 days ahead (asOf, so no access is recorded): the inference (S = 3 days) has faded, the
        # expert's principle (S = 30 days) has not; retention is the decay module's at that moment.
        stored_at = datetime.now(UTC)
        later = stored_at + timedelta(days=60)
        found = await answer(
            s,
            "search_memory",
            {"query": "deploy Fridays weekend", "asOf": later.isoformat()},
            schemas["search_memory"],
        )
        ents = by_name(found["entities"])
        assert {"Alice", "No Friday deploys", "Weekend pages"} <= set(ents)
        assert "knowledge" not in ents["Alice"]  # not knowledge: the key is absent, not null
        principle, inference = ents["No Friday deploys"]["knowledge"], ents["Weekend pages"]["knowledge"]
        assert (principle["trust"], principle["level"], principle["quote"], principle["fading"]) == (
            "principle",
            1,
            QUOTE,
            False,
        )
        assert (inference["trust"], inference["level"], inference["quote"], inference["fading"]) == (
            "inference",
            1,
            None,
            True,
        )
        assert abs(inference["retention"] - decay.retention(60, 3.0, category=Category.CREATIVE)) < 1e-3
        assert abs(principle["retention"] - decay.retention(60, 30.0, category=Category.CREATIVE)) < 1e-3
        assert principle["retention"] >= decay.FADING_BELOW_RETENTION > inference["retention"]

        walked = await answer(
            s,
            "traverse_graph",
            {"start": ["Alice"], "maxDepth": 2, "asOf": later.isoformat()},
            schemas["traverse_graph"],
        )
        ents = by_name(walked["entities"])
        assert set(ents) == {"Alice", "No Friday deploys", "Weekend pages"}
        assert "knowledge" not in ents["Alice"]
        assert ents["No Friday deploys"]["knowledge"] == principle
        assert ents["Weekend pages"]["knowledge"] == inference

        # Before the knowledge existed it is not there, and neither are its facts.
        before = await answer(
            s,
            "traverse_graph",
            {"start": ["Alice"], "asOf": (stored_at - timedelta(days=1)).isoformat()},
            schemas["traverse_graph"],
        )
        assert before["entities"] == []

        # Now: the inference was last touched 40 days ago (its stored state moved back in the database);
        # a read of now shows it fading, the fresh principle at full strength.
        sync_driver.execute_query(
            "MATCH (k:Knowledge {namespace: $ns, name: 'Weekend pages'}) "
            "SET k.created_at = k.created_at - duration({days: 40})",
            ns=namespace,
            database_=neo4j_info.database,
        )
        walked = await answer(
            s, "traverse_graph", {"start": ["No Friday deploys"], "maxDepth": 1}, schemas["traverse_graph"]
        )
        ents = by_name(walked["entities"])
        assert ents["Weekend pages"]["knowledge"]["fading"] is True
        assert (
            abs(
                ents["Weekend pages"]["knowledge"]["retention"]
                - decay.retention(40, 3.0, category=Category.CREATIVE)
            )
            < 1e-3
        )
        assert ents["No Friday deploys"]["knowledge"]["retention"] > 0.999
        assert ents["No Friday deploys"]["knowledge"]["fading"] is False
        found = await answer(s, "search_memory", {"query": "weekend pages"}, schemas["search_memory"])
        assert by_name(found["entities"])["Weekend pages"]["knowledge"]["fading"] is True

        # The reference-named reads keep the reference's answers: no knowledge facts, exact text (ok checks it).
        for tool, args in (
            ("open_nodes", {"names": ["Alice", "No Friday deploys"]}),
            ("search_nodes", {"query": "friday"}),
            ("read_graph", {}),
        ):
            data = await ok(s, tool, args)
            assert data["entities"] and all(
                set(e) == {"name", "entityType", "observations"} for e in data["entities"]
            ), tool


async def test_a_plain_graph_answers_as_before(neo4j_info: Neo4jInfo, namespace: str) -> None:
    """Without knowledge, search_memory and traverse_graph answers keep exactly their former keys."""
    async with mcp_session("http", neo4j_info, namespace) as s:
        await ok(
            s,
            "create_entities",
            {
                "entities": [
                    {"name": "Bob", "entityType": "person", "observations": ["Bob likes tea"]},
                    {"name": "Tea", "entityType": "drink", "observations": ["Tea is hot"]},
                ]
            },
        )
        await ok(
            s, "create_relations", {"relations": [{"from": "Bob", "to": "Tea", "relationType": "likes"}]}
        )
        found = json.loads((await s.call_tool("search_memory", {"query": "tea"})).content[0].text)
        assert found["entities"] and all(
            set(e) == {"name", "entityType", "observationCount"} for e in found["entities"]
        )
        walked = json.loads((await s.call_tool("traverse_graph", {"start": ["Bob"]})).content[0].text)
        assert [set(e) for e in walked["entities"]] == [{"name", "entityType", "observations", "depth"}] * 2


@pytest.mark.unit
def test_the_docs_describe_the_knowledge_key() -> None:
    # a paragraph headed **Trust at recall.** (README) or a section "## Trust at recall" (docs/)
    marker = next(
        m
        for m in ("**Trust at recall.**", "## Trust at recall\n")
        if any(m in p.read_text() for p in user_docs())
    )
    section = doc_after(marker).strip().split("\n\n", 1)[0]
    for key in (
        "trust",
        "level",
        "quote",
        "retention",
        "fading",
        "asOf",
        "0.3",
        "search_memory",
        "traverse_graph",
    ):
        assert key in section, key
