"""One Settings object: environment first, CLI flags override."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from kg_neo4j.cli import _settings, build_parser
from kg_neo4j.settings import Settings

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://example.databases.neo4j.io")
    monkeypatch.setenv("NEO4J_USERNAME", "alice")
    monkeypatch.setenv("KG_NEO4J_NAMESPACE", "team-a")
    monkeypatch.setenv("KG_NEO4J_TOOLS", "reference")
    s = Settings()
    assert (s.neo4j_uri, s.neo4j_username, s.namespace, s.tools) == (
        "neo4j+s://example.databases.neo4j.io",
        "alice",
        "team-a",
        "reference",
    )


def test_flags_override_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_NEO4J_NAMESPACE", "from-env")
    monkeypatch.setenv("KG_NEO4J_PORT", "9000")
    args = build_parser().parse_args(["serve", "--namespace", "from-flag", "--transport", "http"])
    s = _settings(args)
    assert s.namespace == "from-flag" and s.transport == "http" and s.port == 9000


@pytest.mark.parametrize("bad", ["", "x" * 256])
def test_namespace_rules(bad: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="namespace"):
        Settings(namespace=bad)
    assert Settings(namespace="x" * 255).namespace == "x" * 255


def test_unknown_profile() -> None:
    with pytest.raises(pydantic.ValidationError, match="unknown tool profile"):
        Settings(tools="everything")


def test_only_settings_reads_the_environment() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "kg_neo4j"
    offenders = [
        str(p)
        for p in root.rglob("*.py")
        if p.name != "settings.py"
        and (
            "os.getenv" in p.read_text()
            or "os.environ[" in p.read_text()
            or "os.environ.get" in p.read_text()
        )
    ]
    assert offenders == []


def test_knowledge_settings_from_environment_and_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KG_NEO4J_SKILLS_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("KG_NEO4J_SESSION_ID", "from-env")
    monkeypatch.setenv("KG_NEO4J_HOOK_BUDGET_CHARS", "1234")
    s = _settings(build_parser().parse_args(["serve"]))
    assert (s.skills_dir, s.session_id, s.hook_budget_chars) == (tmp_path / "env", "from-env", 1234)
    s = _settings(
        build_parser().parse_args(
            ["serve", "--skills-dir", str(tmp_path), "--session-id", "flag", "--tools", "knowledge"]
        )
    )
    assert (s.skills_dir, s.session_id, s.tools) == (tmp_path, "flag", "knowledge")
