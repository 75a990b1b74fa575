"""The tool and profile tables of README.md and docs/ are what the declarations generate
(docs/gen_tables.py; ``python docs/gen_tables.py`` rewrites them).  Pure file reading: no database."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from kg_neo4j.server.app import profile_tools

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tables", ROOT / "docs" / "gen_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen()


@pytest.mark.parametrize("path", GEN.FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_tables_are_the_generated(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert GEN.render(text, str(path)) == text, (
        f"{path.relative_to(ROOT)} differs from the declarations: run python docs/gen_tables.py"
    )


def _blocks(path: Path) -> list[str]:
    return [m.group(2) for m in GEN.BLOCK.finditer(path.read_text(encoding="utf-8"))]


def test_the_readme_and_the_tools_page_hold_their_tables() -> None:
    assert set(_blocks(ROOT / "README.md")) >= {"default-tools", "profile-counts"}
    assert set(_blocks(ROOT / "docs" / "tools.md")) >= {"tool-reference", "profile-lists", "schema-tools"}


def test_every_block_name_is_known_and_closed() -> None:
    for path in GEN.FILES:
        text = path.read_text(encoding="utf-8")
        opened = re.findall(r"<!-- tools:begin ([\w-]+) -->", text)
        assert set(opened) <= set(GEN.BLOCKS), path
        assert len(opened) == len(_blocks(path)), f"{path}: a block without its <!-- tools:end -->"


def test_a_drifted_table_is_found() -> None:
    # the check compares text: a row edited by hand is a difference, and rendering restores it
    count = len(profile_tools("default"))
    block = f"<!-- tools:begin profile-counts -->\n| `default` | {count - 1} | edited by hand |\n<!-- tools:end -->"
    rendered = GEN.render(block)
    assert rendered != block
    assert f"| `default` | {count} |" in rendered
    assert GEN.render(rendered) == rendered


def test_summaries_are_one_sentence_of_the_description() -> None:
    assert GEN._summary("Read the entire knowledge graph") == "Read the entire knowledge graph."
    assert GEN._summary("Do this. Then that.") == "Do this."
    assert GEN._summary("a | b.") == "a \\| b."
    # an initial inside a quoted example or a parenthesis ends no sentence
    assert GEN._summary('Groups ("Alice Smith", "A. Smith"), best first. Changes nothing.') == (
        'Groups ("Alice Smith", "A. Smith"), best first.'
    )
    assert GEN._summary("Walk the graph (e.g. Alice. Bob) one step. More.") == (
        "Walk the graph (e.g. Alice. Bob) one step."
    )
