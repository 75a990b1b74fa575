"""The server-wide answer cap (``--max-answer-bytes``) and read_graph paging, through MCP.

Over the cap, read tools answer with an isError that says how to get the data anyway (page with
limit/cursor, narrow the query, or export); paging with ``limit``/``nextCursor`` returns every
entity exactly once.  The strict ``--tools reference`` profile keeps read_graph's schema bare.
"""

from __future__ import annotations

import json
from typing import Any

from support.kg import ent, err, ok, rel, session, text_of

CAP = 2000

# names chosen to stress the cursor: mixed case, non-ASCII, quotes, a prefix of another name
NAMES = [f"Entity {i:02d}" for i in range(40)] + ["a", "A", "Zoë", "東京", 'quote"d', "Entity 0", "ß", "😀"]


def _graph_keys(relations: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    return sorted((r["from"], r["to"], r["relationType"]) for r in relations)


async def _populate(s: Any) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Write NAMES (with observations) and a ring of relations, in batches whose echo stays under CAP."""
    for i in range(0, len(NAMES), 5):
        batch = [ent(n, "thing", [f"observation about {n}"]) for n in NAMES[i : i + 5]]
        await ok(s, "create_entities", {"entities": batch})
    ring = [rel(NAMES[i], NAMES[(i + 1) % len(NAMES)], "next") for i in range(len(NAMES))]
    ring.append(rel("Entity 00", "Nobody", "points_at"))  # to a name that is not an entity
    for i in range(0, len(ring), 10):
        await ok(s, "create_relations", {"relations": ring[i : i + 10]})
    return sorted(NAMES), _graph_keys(ring)


async def _page_all(s: Any, limit: int) -> tuple[list[str], list[tuple[str, str, str]], int]:
    entities: list[str] = []
    relations: list[tuple[str, str, str]] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            args["cursor"] = cursor
        result = await s.call_tool("read_graph", args)
        text = text_of(result)
        assert not result.is_error, text
        page = json.loads(text)
        assert len(page["entities"]) <= limit
        assert result.structured_content is not None
        assert result.structured_content.get("nextCursor") == page.get("nextCursor")
        entities += [e["name"] for e in page["entities"]]
        relations += _graph_keys(page["relations"])
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            return entities, relations, pages
        assert isinstance(cursor, str) and cursor
        assert pages <= len(NAMES) + 2, "paging does not end"


async def test_over_the_cap_reads_fail_with_a_way_out_and_paging_gets_everything(
    transport, neo4j_info, namespace
):
    async with session(transport, neo4j_info, namespace, "--max-answer-bytes", str(CAP)) as s:
        names, relations = await _populate(s)

        # -- read_graph over the cap: isError, and the message says what to do instead
        message = await err(s, "read_graph", {})
        low = message.lower()
        assert ("limit" in low and "cursor" in low) or "search_memory" in low or "export" in low, message
        assert str(CAP) in message, "the message should state the cap"

        # -- search_nodes whose answer is over the cap: isError too (never a truncated answer)
        message = await err(s, "search_nodes", {"query": "observation about"})
        assert "limit" in message.lower() or "narrow" in message.lower() or "export" in message.lower(), (
            message
        )

        # -- small answers still work under the cap
        small = await ok(s, "open_nodes", {"names": ["Zoë"]})
        assert [e["name"] for e in small["entities"]] == ["Zoë"]

        # -- paging with limit 2: every entity exactly once, every relation exactly once
        seen, seen_rels, pages = await _page_all(s, 2)
        assert sorted(seen) == names, "paging lost or invented entities"
        assert len(seen) == len(set(seen)), "an entity was returned on two pages"
        assert pages >= len(names) // 2
        assert sorted(seen_rels) == relations, "paging lost or repeated relations"

        # -- page sizes that do not divide the count
        for limit in (3, 5):
            seen, seen_rels, _ = await _page_all(s, limit)
            assert sorted(seen) == names and len(seen) == len(set(seen)), limit

        # -- bad paging arguments are tool errors naming the field
        assert "limit" in await err(s, "read_graph", {"limit": 0})
        assert "limit" in await err(s, "read_graph", {"limit": 10_001})
        assert "limit" in await err(s, "read_graph", {"limit": "2"})
        assert "cursor" in await err(s, "read_graph", {"limit": 2, "cursor": "not-a-cursor!"})


async def test_a_write_whose_echo_exceeds_the_cap_is_not_an_error_after_writing(
    transport, neo4j_info, namespace
):
    """A create whose answer would exceed the cap must not report isError once the write is done
    (an error means "nothing was written" to the client, which would then retry or give up)."""
    big = [ent(f"Big {i:02d}", "thing", [f"a long enough observation number {i}"]) for i in range(40)]
    assert len(json.dumps(big, indent=2)) > CAP
    async with session(transport, neo4j_info, namespace, "--max-answer-bytes", str(CAP)) as s:
        result = await s.call_tool("create_entities", {"entities": big})
        written: list[str] = []
        cursor = None
        while True:
            page = await ok(s, "read_graph", {"limit": 10, **({"cursor": cursor} if cursor else {})})
            written += [e["name"] for e in page["entities"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
    if result.is_error:
        assert written == [], f"isError ({text_of(result)[:200]!r}) but {len(written)} entities were written"
    else:
        assert sorted(written) == [e["name"] for e in big]


async def test_reference_profile_read_graph_has_no_paging(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace, "--tools", "reference") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        schema = tools["read_graph"].input_schema
        assert schema == {"type": "object", "properties": {}}
        assert "limit" not in json.dumps(schema) and "cursor" not in json.dumps(schema)

        await ok(s, "create_entities", {"entities": [ent("A"), ent("B"), ent("C")]})
        await ok(s, "create_relations", {"relations": [rel("A", "B"), rel("B", "C")]})
        # paging arguments are not part of this profile: the whole graph comes back, without nextCursor
        result = await s.call_tool("read_graph", {"limit": 1})
        text = text_of(result)
        assert not result.is_error, text
        graph = json.loads(text)
        assert graph == {
            "entities": [ent("A"), ent("B"), ent("C")],
            "relations": [rel("A", "B"), rel("B", "C")],
        }
        assert "nextCursor" not in (result.structured_content or {})


async def test_default_profile_read_graph_advertises_paging(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        props = tools["read_graph"].input_schema["properties"]
        assert props["limit"]["type"] == "integer"
        assert props["cursor"]["type"] == "string"
        assert tools["read_graph"].input_schema.get("required", []) == []
        # without limit/cursor the answer is exactly the reference shape (no nextCursor key)
        await ok(s, "create_entities", {"entities": [ent("A")]})
        assert await ok(s, "read_graph") == {"entities": [ent("A")], "relations": []}
