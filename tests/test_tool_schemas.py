"""tools/list and prompts through a real MCP session.

The oracle is the reference's published tool list (docs/reference-schemas.md):
``tests/data/spec_001_tools.json`` is its tool array copied verbatim,
``tests/data/spec_001_system_prompt.txt`` its system prompt; neither is
read from the package, so a drift in ``reference_tools.json`` or ``prompts.py`` is caught.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from support.kg import session

DATA = Path(__file__).parent / "data"
SPEC_TOOLS = json.loads((DATA / "spec_001_tools.json").read_text(encoding="utf-8"))
SPEC_PROMPT = (DATA / "spec_001_system_prompt.txt").read_text(encoding="utf-8")
SPEC_NAMES = [t["name"] for t in SPEC_TOOLS]

READ_ONLY = {"read_graph", "search_nodes", "open_nodes"}
DESTRUCTIVE = {"delete_entities", "delete_observations", "delete_relations"}


@pytest.mark.unit
def test_the_copied_oracle_holds_the_nine_reference_tools_and_the_prompt():
    # The copied oracle itself: 9 tools with the reference's names in its order.
    assert SPEC_NAMES == [
        "create_entities",
        "create_relations",
        "add_observations",
        "delete_entities",
        "delete_observations",
        "delete_relations",
        "read_graph",
        "search_nodes",
        "open_nodes",
    ]
    assert SPEC_PROMPT.startswith("Follow these steps for each interaction:")
    assert "default_user" in SPEC_PROMPT


@pytest.mark.unit
def test_packaged_reference_tools_json_equals_the_reference_schemas():
    packaged = json.loads(resources.files("kg_neo4j.server").joinpath("reference_tools.json").read_text())
    assert packaged == SPEC_TOOLS


async def test_reference_profile_lists_exactly_the_reference_tools(transport, neo4j_info, namespace):
    async with session(transport, neo4j_info, namespace, "--tools", "reference") as s:
        listed = (await s.list_tools()).tools

        # exactly the 9 tools, nothing more
        assert sorted(t.name for t in listed) == sorted(SPEC_NAMES)
        assert len(listed) == 9

        got = {t.name: t for t in listed}
        for spec in SPEC_TOOLS:
            tool = got[spec["name"]]
            assert tool.description == spec["description"], spec["name"]
            assert tool.input_schema == spec["inputSchema"], spec["name"]

        # annotations
        for name, tool in got.items():
            assert tool.annotations is not None, f"{name}: no annotations"
            if name in READ_ONLY:
                assert tool.annotations.read_only_hint is True, name
            else:
                assert tool.annotations.read_only_hint is not True, f"{name} writes, must not claim readOnly"
            if name in DESTRUCTIVE:
                assert tool.annotations.destructive_hint is True, name
        assert {n for n, t in got.items() if t.annotations.destructive_hint is True} == DESTRUCTIVE

        # the recommended system prompt, as an MCP prompt
        prompts = (await s.list_prompts()).prompts
        assert "memory_system_prompt" in [p.name for p in prompts]
        result = await s.get_prompt("memory_system_prompt")
        texts = [m.content.text for m in result.messages if m.content.type == "text"]
        assert len(texts) == 1
        assert texts[0].strip() == SPEC_PROMPT.strip()


def extension_problems(got: Any, want: Any, path: str) -> list[str]:
    """Where ``got`` is not ``want`` plus optional additions: every property of ``want`` is kept
    (recursively, with the same type and description), ``required`` is unchanged, and any other
    keyword is equal.  New properties are allowed; new required ones are not."""
    if not isinstance(want, dict) or not isinstance(got, dict):
        return [] if got == want else [f"{path}: {got!r} != {want!r}"]
    problems: list[str] = []
    for key, value in want.items():
        if key not in got:
            problems.append(f"{path}: '{key}' missing")
        elif key == "properties":
            for prop, prop_schema in value.items():
                if prop not in got[key]:
                    problems.append(f"{path}.{prop}: property missing")
                else:
                    problems += extension_problems(got[key][prop], prop_schema, f"{path}.{prop}")
        elif key == "items":
            problems += extension_problems(got[key], value, f"{path}[]")
        elif got[key] != value:
            problems.append(f"{path}: '{key}' is {got[key]!r}, spec says {value!r}")
    if sorted(got.get("required", [])) != sorted(want.get("required", [])):
        problems.append(f"{path}: required {got.get('required')} != {want.get('required')}")
    return problems


async def test_default_profile_keeps_the_nine_reference_tools(transport, neo4j_info, namespace):
    """Outside ``--tools reference`` the 9 tools keep their names, descriptions, properties and
    required lists; they may only add optional properties (paging, asOf), so reference clients
    keep working."""
    async with session(transport, neo4j_info, namespace) as s:
        got = {t.name: t for t in (await s.list_tools()).tools}
        for spec in SPEC_TOOLS:
            name = spec["name"]
            assert name in got, name
            tool = got[name]
            assert tool.description == spec["description"], name
            assert extension_problems(tool.input_schema, spec["inputSchema"], name) == []
        assert "memory_system_prompt" in [p.name for p in (await s.list_prompts()).prompts]


# --------------------------------------------------------------------------- output schemas inlined


@pytest.mark.unit
def test_inline_refs_keeps_the_meaning():
    import jsonschema
    import pydantic

    from kg_neo4j.server.registry import inline_refs, schema_of

    class Leaf(pydantic.BaseModel):
        name: str
        tags: list[str]

    class Root(pydantic.BaseModel):
        items: list[Leaf]
        best: Leaf | None = None

    original = schema_of(Root)
    assert "$defs" in original
    inlined = inline_refs(original)
    assert "$ref" not in json.dumps(inlined) and "$defs" not in inlined
    good = {"items": [{"name": "a", "tags": ["x"]}], "best": {"name": "b", "tags": []}}
    bad = [
        {"items": [{"name": "a"}]},
        {"items": [{"name": 1, "tags": []}]},
        {"items": [], "best": {"tags": []}},
    ]
    for schema in (original, inlined):
        jsonschema.validate(good, schema)
        for instance in bad:
            try:
                jsonschema.validate(instance, schema)
            except jsonschema.ValidationError:
                continue
            raise AssertionError(f"{instance} passed {schema}")

    class Tree(pydantic.BaseModel):
        children: list[Tree]

    recursive = schema_of(Tree)
    assert inline_refs(recursive) == recursive  # a recursive definition stays as it is


async def test_output_schemas_carry_no_refs(neo4j_info, namespace):
    # Every answer is validated by the client against its output schema; inlined definitions keep that
    # check cheap on big answers (and work with clients that do not resolve $ref).
    async with session("stdio", neo4j_info, namespace, "--tools", "all") as s:
        listed = (await s.list_tools()).tools
        with_output = [t for t in listed if t.output_schema is not None]
        assert len(with_output) == len(listed)
        for tool in with_output:
            assert "$ref" not in json.dumps(tool.output_schema), tool.name
