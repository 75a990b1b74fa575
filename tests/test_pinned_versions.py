"""The two pinned Neo4j versions (kg_neo4j/localdb: LTS_VERSION, CURRENT_VERSION) are the ones the
settings default to, docker/compose.yaml offers, .ci/run tests and the README names: one place to bump."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kg_neo4j.localdb import CURRENT_VERSION, LTS_VERSION
from kg_neo4j.settings import Settings
from support.kg import doc_after, user_docs

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def test_the_default_local_version_is_the_lts() -> None:
    assert Settings.model_fields["local_neo4j_version"].default == LTS_VERSION
    assert LTS_VERSION.startswith("5.26.") and re.fullmatch(r"20\d\d\.\d\d\.\d+", CURRENT_VERSION)


def test_compose_offers_both_pinned_community_tags() -> None:
    compose = (ROOT / "docker" / "compose.yaml").read_text(encoding="utf-8")
    assert f"image: ${{NEO4J_IMAGE:-neo4j:{LTS_VERSION}-community}}" in compose
    assert f"NEO4J_IMAGE=neo4j:{CURRENT_VERSION}-community" in compose
    tags = set(re.findall(r"neo4j:(\d[\w.]*)-community", compose))
    assert tags == {LTS_VERSION, CURRENT_VERSION}, f"compose.yaml names other Neo4j tags: {tags}"


def test_ci_runs_the_suite_on_the_current_line_from_the_code_constant() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "from kg_neo4j.localdb import CURRENT_VERSION" in ci
    assert 'KG_NEO4J_LOCAL_NEO4J_VERSION="$current_version"' in ci
    # one server at a time: the 5.26 started by the run is stopped before the current line starts
    stop = ci.index(".venv/bin/kg-neo4j neo4j stop\n")
    start = ci.index('"${current_env[@]}" .venv/bin/kg-neo4j neo4j start')
    assert stop < start
    # both passes in the same random order (.ci/run prints the seed)
    assert (
        ci.count('\n.venv/bin/python -m pytest -q --durations=15 --randomly-seed="$seed"\n') == 1
    )  # the 5.26 pass
    # the current-line pass leaves out what cannot differ on the line (unit, line_independent) and the
    # Keycloak test (it proves the OAuth door, not a Neo4j line); its -m replaces pyproject's, so it leaves
    # out the opt-in sentence-transformers comparison again
    assert (
        '\ncurrent_tests="not unit and not line_independent and not keycloak and not sentence_transformers"\n'
        in ci
    )
    assert (
        ci.count(
            '"${current_env[@]}" .venv/bin/python -m pytest -q --durations=15 --randomly-seed="$seed" '
            '-m "$current_tests"\n'
        )
        == 1
    )


def test_the_docs_name_the_pinned_versions() -> None:
    section = doc_after("## Neo4j versions\n").split("\n## ", 1)[0]
    assert f"KG_NEO4J_LOCAL_NEO4J_VERSION={CURRENT_VERSION}" in section
    docs = "\n".join(p.read_text(encoding="utf-8") for p in user_docs())
    assert f"neo4j:{CURRENT_VERSION}-community" in docs and f"neo4j:{LTS_VERSION}-community" in docs
    assert f"| `{LTS_VERSION}` |" in docs  # the settings table's default
