"""`kg-neo4j serve --tools X` lists what the declarations give for X (each tool's ``profiles=``, and the
tools the shipped node schemas generate), in that order.  The README's and the docs' profile tables are
generated from the same declarations (docs/gen_tables.py, checked by tests/test_generated_docs.py)."""

from __future__ import annotations

import pytest

from kg_neo4j.schemas import load_schemas
from kg_neo4j.server.app import BUILTIN_TOOL_NAMES, profile_tools
from kg_neo4j.settings import PROFILES
from support.servers import Neo4jInfo, stdio_session


def declared(profile: str) -> list[str]:
    return [s.name for s in profile_tools(profile, load_schemas(reserved=BUILTIN_TOOL_NAMES))]


@pytest.mark.parametrize("profile", PROFILES)
async def test_tools_list_is_what_the_declarations_give(
    profile: str, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    async with stdio_session(neo4j_info, "--tools", profile, "--namespace", namespace) as session:
        listed = [t.name for t in (await session.list_tools()).tools]
    assert listed == declared(profile)


@pytest.mark.unit
def test_every_profile_lists_tools_and_all_lists_the_most() -> None:
    counts = {p: len(declared(p)) for p in PROFILES}
    assert all(counts.values()), counts
    assert max(counts.values()) == counts["all"], counts
