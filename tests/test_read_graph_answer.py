"""read_graph's whole-graph answer, byte for byte, through a real MCP session.

The unpaged answer is built straight from flat rows (no models); these tests pin its exact text and
structured copy on a known graph: unicode and characters JSON must escape, an empty entity type, an
empty observations list, observations added later (insertion order), relations to and between
placeholders (names that are not entities).  The expected text is written out here by hand for the
small graph, and for a larger one made with ``json.dumps(indent=2)`` (the reference's
``JSON.stringify(x, null, 2)``); the paged read of the same graph (the model path) must agree.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from support.kg import err, ok, session, text_of

LS = "\u2028"  # JSON.stringify leaves U+2028 as it is; json.dumps(ensure_ascii=False) too

ENTITIES = [
    {
        "name": "Zoë",
        "entityType": "person",
        "observations": ['likes "quotes"', "東京 😀", "line\nbreak", "tab\there", "back\\slash"],
    },
    {"name": "Alice", "entityType": "", "observations": []},
    {"name": "Empty", "entityType": "thing", "observations": []},
    {"name": "ß", "entityType": "letter", "observations": [f"{LS} separator", "ctrl \u0001 / solidus"]},
]
RELATIONS = [  # one call each: creation order is the answer's order
    {"from": "Alice", "to": "Zoë", "relationType": "knows"},
    {"from": "Zoë", "to": "Nobody", "relationType": "points_at"},
    {"from": "Ghost", "to": "Alice", "relationType": "haunts"},
    {"from": "Ghost", "to": "Nobody", "relationType": "between placeholders"},
]

# What the reference answers for that graph once Alice got one observation: entities in name order
# (code points: "Alice" < "Empty" < "Zoë" < "ß"), observations in insertion order, relations in creation
# order, placeholders (Nobody, Ghost) never listed as entities.
EXPECTED_TEXT = r"""{
  "entities": [
    {
      "name": "Alice",
      "entityType": "",
      "observations": [
        "added later"
      ]
    },
    {
      "name": "Empty",
      "entityType": "thing",
      "observations": []
    },
    {
      "name": "Zoë",
      "entityType": "person",
      "observations": [
        "likes \"quotes\"",
        "東京 😀",
        "line\nbreak",
        "tab\there",
        "back\\slash"
      ]
    },
    {
      "name": "ß",
      "entityType": "letter",
      "observations": [
        "<LS> separator",
        "ctrl \u0001 / solidus"
      ]
    }
  ],
  "relations": [
    {
      "from": "Alice",
      "to": "Zoë",
      "relationType": "knows"
    },
    {
      "from": "Zoë",
      "to": "Nobody",
      "relationType": "points_at"
    },
    {
      "from": "Ghost",
      "to": "Alice",
      "relationType": "haunts"
    },
    {
      "from": "Ghost",
      "to": "Nobody",
      "relationType": "between placeholders"
    }
  ]
}""".replace("<LS>", LS)


def _expected_structured() -> dict[str, Any]:
    by_name = {e["name"]: dict(e) for e in ENTITIES}
    by_name["Alice"]["observations"] = ["added later"]
    return {"entities": [by_name[n] for n in ("Alice", "Empty", "Zoë", "ß")], "relations": RELATIONS}


async def _read(s: Any, args: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    result = await s.call_tool("read_graph", args or {})
    text = text_of(result)
    assert not result.is_error, text
    assert result.structured_content is not None
    return text, dict(result.structured_content)


async def _populate(s: Any) -> str:
    """Write the known graph; returns a moment before Alice's later observation (for asOf)."""
    await ok(s, "create_entities", {"entities": ENTITIES})
    for r in RELATIONS:
        await ok(s, "create_relations", {"relations": [r]})
    before = datetime.now(UTC).isoformat()
    await ok(s, "add_observations", {"observations": [{"entityName": "Alice", "contents": ["added later"]}]})
    return before


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_whole_graph_answer_is_byte_exact(transport, neo4j_info, namespace, profile):
    async with session(transport, neo4j_info, namespace, "--tools", profile) as s:
        assert await _read(s) == (
            '{\n  "entities": [],\n  "relations": []\n}',
            {"entities": [], "relations": []},
        )
        before = await _populate(s)
        text, structured = await _read(s)
        assert text == EXPECTED_TEXT
        assert structured == _expected_structured()
        assert json.loads(text) == structured
        if profile == "default":
            # the paged read (models path) lists the same graph; asOf sees Alice before her observation
            page_text, page = await _read(s, {"limit": 10})
            assert page.pop("nextCursor") is None
            assert page == structured
            assert json.loads(page_text) == {**structured, "nextCursor": None}
            old_text, old = await _read(s, {"asOf": before})
            assert old["entities"][0] == {"name": "Alice", "entityType": "", "observations": []}
            assert old_text == EXPECTED_TEXT.replace('[\n        "added later"\n      ]', "[]", 1)


async def test_larger_graph_matches_json_dumps_and_the_cap_counts_the_text(neo4j_info, namespace):
    """300 entities in 3 batches, a ring of relations and one to a placeholder: the answer is exactly
    ``json.dumps(indent=2, ensure_ascii=False)`` of the graph; a cap just below the text's size refuses it
    with the paging advice, a cap of exactly its size serves it."""
    entities = [
        {
            "name": f"N{i:03d} ü",
            "entityType": ["a", "b", ""][i % 3],
            "observations": [f'o{k} of {i} "q" \\' for k in range(i % 4)],
        }
        for i in range(300)
    ]
    relations = [
        {"from": f"N{i:03d} ü", "to": f"N{(i * 7 + 1) % 300:03d} ü", "relationType": "r"} for i in range(300)
    ] + [{"from": "N000 ü", "to": "nowhere", "relationType": "r"}]
    async with session("stdio", neo4j_info, namespace, "--tools", "reference") as s:
        for i in range(0, 300, 100):
            await ok(s, "create_entities", {"entities": entities[i : i + 100]})
        await ok(s, "create_relations", {"relations": relations})
        text, structured = await _read(s)
    # one create_relations call: one created_at, so its relations come in (from, to, type) order
    want = {
        "entities": sorted(entities, key=lambda e: e["name"]),
        "relations": sorted(relations, key=lambda r: (r["from"], r["to"], r["relationType"])),
    }
    assert text == json.dumps(want, indent=2, ensure_ascii=False)
    assert structured == want
    size = len(text.encode())
    async with session(
        "stdio", neo4j_info, namespace, "--tools", "reference", "--max-answer-bytes", str(size - 1)
    ) as s:
        message = await err(s, "read_graph")
        assert str(size - 1) in message and "cursor" in message, message
    async with session(
        "stdio", neo4j_info, namespace, "--tools", "reference", "--max-answer-bytes", str(size)
    ) as s:
        assert await _read(s) == (text, want)
