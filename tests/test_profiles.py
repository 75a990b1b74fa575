"""The README's profile table is what `kg-neo4j serve --tools X` lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import Neo4jInfo, stdio_session
from kg_neo4j.settings import PROFILES

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_profiles() -> dict[str, tuple[list[str], int]]:
    text = README.read_text()
    start = text.index("<!-- profiles-table")
    table: dict[str, tuple[list[str], int]] = {}
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if table:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`([a-z]+)`", cells[0])
        if m:
            table[m.group(1)] = ([t.strip() for t in cells[1].split(",")], int(cells[2]))
    return table


def test_readme_table_covers_every_profile() -> None:
    table = readme_profiles()
    assert set(table) == set(PROFILES)
    for profile, (tools, count) in table.items():
        assert len(tools) == count, profile
        assert len(set(tools)) == count, f"{profile}: duplicate tool in the README row"


@pytest.mark.parametrize("profile", PROFILES)
async def test_tools_list_matches_readme(profile: str, neo4j_info: Neo4jInfo, namespace: str) -> None:
    expected, count = readme_profiles()[profile]
    async with stdio_session(neo4j_info, "--tools", profile, "--namespace", namespace) as session:
        listed = [t.name for t in (await session.list_tools()).tools]
    assert sorted(listed) == sorted(expected)
    assert len(listed) == count


@pytest.mark.parametrize("profile", PROFILES)
def test_readme_table_is_the_profiles_table(profile: str) -> None:
    """The README row is ``server/profiles.py``'s table (the shipped node schemas generate the rest)."""
    from kg_neo4j.schemas import load_schemas
    from kg_neo4j.server.profiles import GENERATED_PROFILES, built_in_tools

    generated = [n for s in load_schemas() for n in s.tool_names] if profile in GENERATED_PROFILES else []
    expected, _ = readme_profiles()[profile]
    assert sorted([*built_in_tools(profile), *generated]) == sorted(expected)
