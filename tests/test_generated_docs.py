"""The generated tables of README.md and docs/ are what they are generated from: the tool and profile
tables what the declarations generate (docs/gen_tables.py; ``python docs/gen_tables.py`` rewrites
them), the result tables of docs/performance.md and docs/recall.md what the results files render
(benchmarks/report.py; ``python -m benchmarks.report`` rewrites them).  Pure file reading: no database."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from kg_neo4j.server.app import profile_tools

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def _load(path: Path) -> ModuleType:
    """A generator script by its path (neither docs/ nor benchmarks/ is an installed package)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load(ROOT / "docs" / "gen_tables.py")
REPORT = _load(ROOT / "benchmarks" / "report.py")
RESULTS = ROOT / "benchmarks" / "results"


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


# --- the result tables (benchmarks/report.py) ---------------------------------------------------
@pytest.mark.parametrize("path", REPORT.FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_tables_are_the_rendered_results(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert REPORT.render(text) == text, (
        f"{path.relative_to(ROOT)} differs from its results: run python -m benchmarks.report"
    )


def test_the_page_renders_results() -> None:
    blocks = list(REPORT.BLOCK.finditer((ROOT / "docs" / "performance.md").read_text(encoding="utf-8")))
    assert len(blocks) >= 3


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_results_file_says_what_produced_it(path: Path) -> None:
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["command"].startswith("python ")
    assert set(result["tags"]) >= {"kg_neo4j", "commit", "neo4j", "loadavg"}
    assert len(result["tags"]["commit"].removesuffix("+dirty")) == 40
    for table in result["tables"]:
        assert all(len(row) == len(table["headers"]) for row in table["rows"]), table["key"]


def test_a_drifted_result_table_is_found() -> None:
    name = sorted(RESULTS.glob("*.json"))[0].stem
    key = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))["tables"][0]["key"]
    block = f"<!-- results:begin {name}#{key} -->\n| edited | by hand |\n<!-- results:end -->"
    rendered = REPORT.render(block)
    assert rendered != block and "edited" not in rendered
    assert "Produced by `python " in rendered
    assert REPORT.render(rendered) == rendered


def test_cells_read_as_the_text_tables() -> None:
    assert REPORT.cell(None) == "-"
    assert REPORT.cell(2621.4) == "2,621"
    assert REPORT.cell(0.987) == "0.987"
    assert REPORT.cell(26.364321) == "26.36"
    assert REPORT.cell(12000) == "12,000"
    assert REPORT.cell("a | b") == "a \\| b"
