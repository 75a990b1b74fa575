"""The repository explains itself: comments point at docs/ or README sections, never at documents
the repository does not hold, and every section they point at exists.

The behavioural sources are summarised in docs/reference-server.md, docs/reference-schemas.md,
docs/memorymesh.md and docs/knowledge-model.md (the README links them; so does the docs site's nav,
"Where the behaviour comes from").  A pointer is ``docs/<file>.md#<anchor>`` (in code, README) or
``<file>.md#<anchor>`` (in docs), and an anchor is a heading's GitHub slug.  The docs site's own
build (``mkdocs build --strict``) checks its links again with MkDocs' slugs; the tests here need no
MkDocs.  Pure file reading: no database.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("kg_neo4j", "cypher", "tests")
SUFFIXES = {".py", ".cypher", ".md"}

# A citation of an outside document: "spec 002 section 7.2", "Spec 000", "§10.4".
CITATION = re.compile(r"\b[Ss]pecs? ?0{0,2}[0-4]\b|§ ?\d")
# Product text that keeps its words: tool descriptions, and the pydantic docstrings and field
# descriptions that become the advertised schemas' descriptions, are part of tools/list, which
# stays identical.
KEPT = (
    "Memory maintenance (spec 004's Memory Enzyme).",
    "traverse_graph return it (spec 004:",
    "Only for knowledge entities (spec 004): trust, level, quote, retention, fading",
    'Fundamentals never decay (spec 004, "Fundamentals vs Creative Space")',
    'The 10 semantic edge types (spec 004, "Data Model: Edges")',
)
# A data file named after its source (tests/data/spec_001_tools.json) is a path, not a citation.
DATA_FILE = re.compile(r"spec_00[0-4]_[\w.]+")

POINTER = re.compile(r"(?<![\w/.-])((?:\.\./)?(?:docs/)?[\w-]+\.md)#([\w-]+)")
# "(docs/knowledge-model.md#decay-and-retention, #access-grades, #memory-levels)": more anchors of
# the file just named
MORE_ANCHORS = re.compile(r"(?<=[\s(])#([a-z][a-z0-9_]*(?:-[a-z0-9_]+)*)\b(?![(\]])")


def _files(*dirs: str) -> list[Path]:
    out = []
    for d in dirs:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts:
                out.append(p)
    return out


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


@cache
def _anchors(md: Path) -> frozenset[str]:
    """GitHub's heading anchors of one markdown file (a repeated heading gets -1, -2, ...)."""
    counts: dict[str, int] = {}
    anchors = set()
    fence = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.+)", line)
        if m:
            slug = _slug(m.group(1))
            anchors.add(f"{slug}-{counts[slug]}" if slug in counts else slug)
            counts[slug] = counts.get(slug, 0) + 1
    return frozenset(anchors)


def _target(source: Path, ref: str) -> Path:
    if ref.startswith("docs/") or ref == "README.md":
        return ROOT / ref
    return (source.parent / ref).resolve()


def _citations() -> list[str]:
    found = []
    for path in _files(*CODE_DIRS):
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            text = DATA_FILE.sub("", line)
            for kept in KEPT:
                text = text.replace(kept, "")
            if CITATION.search(text):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    return found


def test_no_comment_cites_a_spec_the_repository_does_not_hold() -> None:
    found = _citations()
    assert not found, "cite the docs/ or README section instead:\n" + "\n".join(found)


def _pointers() -> list[tuple[Path, int, str, str]]:
    """(file, line, markdown file pointed at, anchor) for every section pointer in code, docs, README."""
    out = []
    for path in [*_files(*CODE_DIRS, "docs"), ROOT / "README.md"]:
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in POINTER.finditer(line):
                target = _target(path, m.group(1))
                if target.parent == ROOT / "docs" or target == ROOT / "README.md":
                    out.append((path, n, m.group(1), m.group(2)))
                    rest = line[m.end() :]
                    # further "#anchor"s of the same file, in the same parenthesis
                    rest = rest.split(")")[0]
                    out += [(path, n, m.group(1), a) for a in MORE_ANCHORS.findall(rest)]
    return out


def test_the_pointer_scan_sees_the_docs_pointers() -> None:
    # the scan itself: code points into the source summaries, and each summary points at the page
    # saying what kg-neo4j does
    pointers = _pointers()
    cited = {(p.name, ref) for p, _, ref, _ in pointers}
    assert ("knowledge-model.md", "knowledge.md") in cited
    assert ("decay.py", "docs/knowledge-model.md") in cited
    assert {ref for _, _, ref, _ in pointers} >= {"docs/memorymesh.md", "reference-schemas.md", "tools.md"}


@pytest.mark.parametrize(
    "doc", ["reference-server.md", "reference-schemas.md", "memorymesh.md", "knowledge-model.md"]
)
def test_each_source_summary_exists_with_sections_and_is_linked_from_the_readme(doc: str) -> None:
    assert len(_anchors(ROOT / "docs" / doc)) >= 3
    assert f"(docs/{doc})" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_cited_section_exists_as_a_heading() -> None:
    missing = []
    for path, n, ref, anchor in _pointers():
        target = _target(path, ref)
        if not target.is_file():
            missing.append(f"{path.relative_to(ROOT)}:{n}: {ref} does not exist")
        elif anchor not in _anchors(target):
            missing.append(f"{path.relative_to(ROOT)}:{n}: {ref}#{anchor} is no heading of {ref}")
    assert not missing, "\n".join(missing)


#: ``README "Tools"`` or ``README "Tools", "Profiles"``: sections cited by their heading (a title may
#: wrap onto the next comment line).
README_CITATION = re.compile(r'README,?\s+("[^"]+"(?:,\s*"[^"]+")*)')


def _readme_citations(text: str) -> list[str]:
    titles = []
    for m in README_CITATION.finditer(text):
        for quoted in re.findall(r'"([^"]+)"', m.group(1)):
            titles.append(" ".join(re.sub(r"^\s*(?:#|//)", "", x) for x in quoted.splitlines()).strip())
    return [" ".join(t.split()) for t in titles]


def test_every_readme_section_cited_exists() -> None:
    """A ``README "..."`` citation names a heading of README.md (a section moved to docs/ is cited
    there, ``docs/<page>.md#<anchor>``)."""
    assert _readme_citations('x (README "A", "B\n# c") y (README, "D")') == ["A", "B c", "D"]
    headings = {
        m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", (ROOT / "README.md").read_text(), re.M)
    }
    missing = [
        f'{path.relative_to(ROOT)}: README "{title}"'
        for path in [*_files(*CODE_DIRS, "benchmarks", ".ci", "docs"), ROOT / ".ci" / "run"]
        if path != Path(__file__).resolve()
        for title in _readme_citations(path.read_text(encoding="utf-8"))
        if title not in headings
    ]
    assert not missing, "no such README heading (cite the docs page's section):\n" + "\n".join(missing)


def test_slugs_follow_github() -> None:
    # the anchor rule the pointers rely on, on headings of the kinds the docs use
    assert (
        _slug("Maintenance: `maintain_graph` and `kg-neo4j maintain`")
        == "maintenance-maintain_graph-and-kg-neo4j-maintain"
    )
    assert _slug("Answers and errors") == "answers-and-errors"
    assert _slug("Recall: `search_memory`") == "recall-search_memory"


def test_every_docs_page_is_in_the_site_nav() -> None:
    # mkdocs build --strict refuses a page outside the nav too; this says so without MkDocs installed
    nav = set(re.findall(r"^\s*- (?:[^:\n]+: )?([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == nav, (
        f"not in mkdocs.yml's nav: {sorted(pages - nav)}; no such page: {sorted(nav - pages)}"
    )


def test_the_readme_stays_short() -> None:
    # the README is the pitch, the two commands, connecting, the default tools and development; the
    # rest lives in docs/
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move sections to docs/"
