"""``list_knowledge`` fetches knowledge by name and by skill element (knowledge imported from a
skills directory's ``elements/<element>/`` files) beside trust/type/category/source."""

from __future__ import annotations

import json
from typing import Any

import pytest

from support.kg import session, text_of
from support.servers import Neo4jInfo

ITEMS: list[dict[str, Any]] = [
    {
        "name": "Auth tokens",
        "content": "Rotate tokens daily",
        "type": "rule",
        "trust": "pattern",
        "source": "skills/coding/elements/auth/workflow.md",
    },
    {
        "name": "Auth order",
        "content": "Check the session before the role",
        "type": "procedure",
        "trust": "pattern",
        "source": "skills/coding/elements/auth/checklist.md",
    },
    {
        "name": "Billing retries",
        "content": "Retry invoices three times",
        "type": "rule",
        "trust": "inference",
        "source": "skills/coding/elements/billing/workflow.md",
    },
    {"name": "Tea", "content": "The team drinks tea at four", "type": "insight", "trust": "inference"},
]


async def listed(s: Any, args: dict[str, Any]) -> list[str]:
    result = await s.call_tool("list_knowledge", args)
    assert not result.is_error, text_of(result)
    return sorted(k["name"] for k in json.loads(text_of(result))["knowledge"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"names": ["Tea", "Auth order", "Nope"]}, ["Auth order", "Tea"]),
        ({"names": []}, []),
        ({"element": "auth"}, ["Auth order", "Auth tokens"]),
        ({"element": "billing", "trust": "inference"}, ["Billing retries"]),
        ({"element": "auth", "type": "rule"}, ["Auth tokens"]),
        ({"element": "aut"}, []),  # a whole element name, not a prefix
        ({"names": ["Auth tokens", "Billing retries"], "element": "auth"}, ["Auth tokens"]),
    ],
    ids=[
        "by-names",
        "no-names",
        "by-element",
        "element-and-trust",
        "element-and-type",
        "element-is-whole",
        "names-and-element",
    ],
)
async def test_filters(
    neo4j_info: Neo4jInfo, namespace: str, args: dict[str, Any], expected: list[str]
) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        for item in ITEMS:
            stored = await s.call_tool("store_knowledge", item)
            assert not stored.is_error, text_of(stored)
        assert await listed(s, args) == expected


@pytest.mark.parametrize(
    "args",
    [{"element": "a/b"}, {"element": ""}, {"names": "Tea"}, {"names": [""]}],
    ids=["element-with-slash", "element-empty", "names-not-array", "name-empty"],
)
async def test_bad_filters_name_the_field(
    neo4j_info: Neo4jInfo, namespace: str, args: dict[str, Any]
) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        result = await s.call_tool("list_knowledge", args)
        assert result.is_error and next(iter(args)) in text_of(result)
