"""Skill files: safe path resolution, markdown to knowledge, and ``kg-neo4j import-skills``
(``run_import_skills``) on the real Neo4j."""

from __future__ import annotations

import builtins
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock
from kg_neo4j.commands.skills import run_import_skills
from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import KnowledgeType
from kg_neo4j.models import MAX_NAME_CHARS, MAX_OBSERVATION_CHARS
from kg_neo4j.settings import Settings
from kg_neo4j.skills import (
    MAX_SKILL_FILE_BYTES,
    content_words,
    coverage,
    infer_type,
    knowledge_name,
    list_skill_files,
    read_skill_file,
    resolve_skill_path,
    skill_knowledge,
    split_sections,
)
from support.servers import Neo4jInfo

FIXTURES = Path(__file__).parent / "data" / "skills"

#: what the fixture tree imports as: name -> (type, source)
EXPECTED = {
    "coding/elements/auth/workflow.md#Auth — Tool Operation Workflow > Operation Steps": (
        "procedure",
        "skills/coding/elements/auth/workflow.md",
    ),
    "coding/elements/auth/workflow.md#Auth — Tool Operation Workflow > Operation Steps > Example": (
        "procedure",
        "skills/coding/elements/auth/workflow.md",
    ),
    "coding/elements/auth/workflow.md#Auth — Tool Operation Workflow > Quality Criteria": (
        "rule",
        "skills/coding/elements/auth/workflow.md",
    ),
    "coding/elements/auth/workflow.md#Auth — Tool Operation Workflow > Related Elements": (
        "procedure",
        "skills/coding/elements/auth/workflow.md",
    ),
    "coding/elements/checklist.md#Elements": ("procedure", "skills/coding/elements/checklist.md"),
    "coding/principles.md#Coding Principles > Error handling": ("rule", "skills/coding/principles.md"),
    "coding/principles.md#Coding Principles > Naming": ("rule", "skills/coding/principles.md"),
    "notes.md": ("observation", "skills/notes.md"),
    "preflight.md": ("procedure", "skills/preflight.md"),
    "preflight.md#Before you start": ("procedure", "skills/preflight.md"),
    "tools/gotchas/shell.md#Shell > rm in scripts": ("rule", "skills/tools/gotchas/shell.md"),
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the fixture skills tree, next to a secret the tests try to reach."""
    root = tmp_path / "skills"
    shutil.copytree(FIXTURES, root)
    (tmp_path / "secret.md").write_text("# Secret\n\nthe password is hunter2\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "more.md").write_text("# More secrets\n\nhunter3\n", encoding="utf-8")
    return root


class OpenSpy:
    """Records every path opened through ``open`` / ``os.open`` while installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def spy_open(file: Any, *args: Any, **kw: Any) -> Any:
            self.paths.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else repr(file))
            return real_open(file, *args, **kw)

        def spy_os_open(path: Any, *args: Any, **kw: Any) -> Any:
            self.paths.append(os.fspath(path))
            return real_os_open(path, *args, **kw)

        monkeypatch.setattr(builtins, "open", spy_open)
        monkeypatch.setattr(os, "open", spy_os_open)

    def outside(self, root: Path) -> list[str]:
        real = root.resolve()
        return [p for p in self.paths if not Path(p).resolve().is_relative_to(real)]


# --------------------------------------------------------------------------- safe paths


@pytest.mark.unit
def test_resolve_accepts_files_inside_the_root(tree: Path) -> None:
    assert resolve_skill_path(tree, "coding/principles.md") == (tree / "coding/principles.md").resolve()
    assert resolve_skill_path(tree, "./coding//principles.md") == (tree / "coding/principles.md").resolve()
    # the docs' example writes skill_paths=["skills/coding/..."]: the root's own name may lead the path
    assert (
        resolve_skill_path(tree, "skills/coding/principles.md") == (tree / "coding/principles.md").resolve()
    )
    # a link that stays inside the root is fine
    (tree / "alias.md").symlink_to(tree / "notes.md")
    assert resolve_skill_path(tree, "alias.md") == (tree / "notes.md").resolve()
    real, text = read_skill_file(tree, "alias.md")
    assert "staging database" in text


@pytest.mark.unit
@pytest.mark.parametrize(
    "rel, message",
    [
        ("../secret.md", "'..'"),
        ("coding/../../secret.md", "'..'"),
        ("..\\secret.md", "'..'"),
        ("coding/../principles.md", "'..'"),  # even when it would land inside: '..' is refused outright
        ("/etc/passwd", "absolute"),
        ("SECRET_ABSOLUTE", "absolute"),
        ("C:\\Windows\\win.ini", "absolute"),
        ("README.txt", "not a markdown file"),
        ("coding", "not a markdown file"),
        ("missing.md", "no such file"),
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        (".", "names the skills directory itself"),
        ("notes.md\x00.txt", "NUL"),
        ("link-out.md", "outside the skills directory"),
        ("linked-dir/more.md", "outside the skills directory"),
        ("fake.md", "not a .md file"),
        ("dir.md", "is a directory"),
        ("big.md", "bytes"),
        ("dangling.md", "broken link"),
        ("x" * 2000 + ".md", "longer than"),
    ],
)
def test_resolve_rejects_and_reads_nothing(
    tree: Path, monkeypatch: pytest.MonkeyPatch, rel: str, message: str
) -> None:
    outside = tree.parent
    (tree / "link-out.md").symlink_to(outside / "secret.md")
    (tree / "linked-dir").symlink_to(outside / "outside", target_is_directory=True)
    (tree / "fake.md").symlink_to(tree / "README.txt")
    (tree / "dir.md").mkdir()
    (tree / "big.md").write_bytes(b"#" * (MAX_SKILL_FILE_BYTES + 1))
    (tree / "dangling.md").symlink_to(tree / "nowhere.md")
    if rel == "SECRET_ABSOLUTE":
        rel = str(outside / "secret.md")
    spy = OpenSpy(monkeypatch)
    for attempt in (resolve_skill_path, read_skill_file):
        with pytest.raises(ValidationError, match=message) as err:
            attempt(tree, rel)  # type: ignore[operator]
        assert err.value.field == "skill_paths"
        assert "hunter2" not in str(err.value) and str(outside / "secret.md") not in str(err.value).replace(
            rel, ""
        )
    assert spy.paths == []  # nothing was opened, inside or outside the root


@pytest.mark.unit
def test_read_refuses_binary_and_non_utf8(tree: Path) -> None:
    (tree / "bin.md").write_bytes(b"# x\n\x00\x01")
    (tree / "latin1.md").write_bytes("# caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValidationError, match="not a text file"):
        read_skill_file(tree, "bin.md")
    with pytest.raises(ValidationError, match="not UTF-8"):
        read_skill_file(tree, "latin1.md")


@pytest.mark.unit
def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        resolve_skill_path(tmp_path / "nope", "a.md")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValidationError, match="not a directory"):
        resolve_skill_path(tmp_path / "file", "a.md")


@pytest.mark.unit
def test_listing_is_sorted_md_only_and_stays_inside(tree: Path) -> None:
    (tree / "link-out.md").symlink_to(tree.parent / "secret.md")
    (tree / "linked-dir").symlink_to(tree.parent / "outside", target_is_directory=True)
    files = list_skill_files(tree)
    assert files == sorted(files)
    assert "README.txt" not in files and ".drafts/draft.md" not in files
    assert not any(f.startswith("linked-dir/") for f in files)  # directory links are not followed
    assert "link-out.md" in files  # listed; resolve_skill_path refuses to read it
    assert set(files) - {"link-out.md"} == {n.split("#")[0] for n in EXPECTED}


# --------------------------------------------------------------------------- markdown to knowledge


@pytest.mark.unit
def test_sections_by_heading_levels_code_and_front_matter() -> None:
    text = (
        "---\ntitle: t\n---\nintro\n"
        "# A #\n\nbody a\n"
        "## B\nbody b\n#### deep\nstill b\n"
        "```\n# not a heading\n```\n"
        "~~~md\n## nor this\n~~~\n"
        "### C\nbody c\n"
        "## D\n"
        "# E\nbody e\n"
        "#hashtag is no heading\n"
    )
    sections = split_sections(text)
    assert [(s.headings, s.line) for s in sections] == [
        ((), 1),
        (("A",), 5),
        (("A", "B"), 8),
        (("A", "B", "C"), 18),
        (("A", "D"), 20),
        (("E",), 21),
    ]
    by = {s.headings: s.body for s in sections}
    assert by[()] == "title: t\n\nintro"
    assert by[("A",)] == "body a"
    assert by[("A", "B")] == "body b\n#### deep\nstill b\n```\n# not a heading\n```\n~~~md\n## nor this\n~~~"
    assert by[("A", "D")] == ""
    assert by[("E",)] == "body e\n#hashtag is no heading"


@pytest.mark.unit
def test_items_names_types_sources() -> None:
    text = "# Guide\n\n## Steps\n1. do\n\n## Steps\n2. again\n\n## Empty\n\n## Pitfalls\nnever x\n"
    items = skill_knowledge("team/guide.md", text)
    assert [(i.name, i.type.value, i.source, i.content) for i in items] == [
        ("team/guide.md#Guide > Steps", "procedure", "skills/team/guide.md", "1. do"),
        ("team/guide.md#Guide > Steps (2)", "procedure", "skills/team/guide.md", "2. again"),
        ("team/guide.md#Guide > Pitfalls", "rule", "skills/team/guide.md", "never x"),
    ]
    assert all(
        i.trust.value == "pattern" and i.category.value == "creative" and i.quote is None for i in items
    )
    # the same text gives the same names (stable)
    assert [i.name for i in skill_knowledge("team/guide.md", text)] == [i.name for i in items]


@pytest.mark.unit
def test_long_sections_are_split_into_parts_without_loss() -> None:
    paragraph = ("word " * 199 + "end.").strip()
    body = "\n\n".join(f"{n} {paragraph}" for n in range(30))  # ~30 KB
    items = skill_knowledge("big.md", f"# Big\n\n{body}\n")
    assert len(items) >= 4
    assert items[0].name == "big.md#Big"
    assert [i.name for i in items[1:]] == [f"big.md#Big (part {n})" for n in range(2, len(items) + 1)]
    assert all(len(i.content) <= MAX_OBSERVATION_CHARS for i in items)
    assert "\n\n".join(i.content for i in items) == body  # cut at paragraph breaks, nothing lost


@pytest.mark.unit
def test_long_names_are_cut_uniquely() -> None:
    a = knowledge_name("d/" * 300 + "f.md", "H" * 600 + " one")
    b = knowledge_name("d/" * 300 + "f.md", "H" * 600 + " two")
    assert len(a) == len(b) == MAX_NAME_CHARS and a != b
    assert a == knowledge_name("d/" * 300 + "f.md", "H" * 600 + " one")


@pytest.mark.unit
@pytest.mark.parametrize(
    "rel, headings, default, expected",
    [
        ("coding/elements/auth/workflow.md", ["Auth", "Related Elements"], None, "procedure"),
        ("coding/principles.md", ["Coding Principles", "Naming"], None, "rule"),
        ("tools/gotchas/batch.md", ["Batch reference"], None, "rule"),
        ("design/pitfalls.md", [], None, "rule"),
        ("design/checklist.md", ["Colour"], None, "procedure"),
        ("design/notes.md", ["Operation Steps"], None, "procedure"),  # the heading speaks first
        ("design/brand.md", ["How to pick a font"], None, "procedure"),
        ("design/brand.md", ["Lessons learned"], None, "insight"),
        ("design/brand.md", ["House style"], None, "preference"),
        ("design/brand.md", ["Colour"], None, "observation"),
        ("design/brand.md", ["Colour"], "insight", "insight"),  # --type where nothing says
    ],
)
def test_type_inference(rel: str, headings: list[str], default: str | None, expected: str) -> None:
    assert infer_type(rel, headings, default) == KnowledgeType(expected)


@pytest.mark.unit
def test_content_words_and_coverage() -> None:
    item = content_words("Rotate the JWT signing keys every 90 days.")
    assert item == content_words("rotated jwt sign KEY every 90 day")
    assert coverage(item, content_words("Every 90 days we rotate our JWT signing keys")) == 1.0
    assert coverage(item, content_words("JWT tokens expire after 90 minutes")) == pytest.approx(
        2 / 7
    )  # jwt, 90 of rotat jwt sign key every 90 day
    assert coverage(frozenset(), frozenset()) == 1.0


# --------------------------------------------------------------------------- import-skills on Neo4j


def settings_for(info: Neo4jInfo, namespace: str, embedding_model: str = "none") -> Settings:
    return Settings(
        neo4j_uri=info.uri,
        neo4j_username=info.username,
        neo4j_password=info.password,
        neo4j_database=info.database,
        namespace=namespace,
        embedding_model=embedding_model,
    )


async def knowledge_nodes(driver: AsyncDriver, info: Neo4jInfo, namespace: str) -> dict[str, dict[str, Any]]:
    records, _, _ = await driver.execute_query(
        "MATCH (k:KgNode:Entity:Knowledge {namespace: $ns}) "
        "OPTIONAL MATCH (k)-[:HAS_OBSERVATION]->(o:Observation) "
        "RETURN k.name AS name, k.entityType AS type, k.source AS source, k.trust AS trust, "
        "k.category AS category, k.content AS content, count(o) AS observations, "
        "k.embedding IS NOT NULL AS embedded",
        ns=namespace,
        database_=info.database,
    )
    return {r["name"]: dict(r) for r in records}


async def test_import_skills_tree_and_reimport_is_idempotent(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tree: Path
) -> None:
    (tree / "link-out.md").symlink_to(tree.parent / "secret.md")
    settings = settings_for(neo4j_info, namespace)
    clock = ManualClock()
    report = await run_import_skills(settings, tree, progress=False, clock=clock)
    assert {k: report[k] for k in ("files", "sections", "stored", "skipped", "rejected", "namespace")} == {
        "files": 6,
        "sections": len(EXPECTED),
        "stored": len(EXPECTED),
        "skipped": 0,
        "rejected": 1,
        "namespace": namespace,
    }
    assert report["rejected_files"][0]["path"] == "link-out.md"
    assert "outside the skills directory" in report["rejected_files"][0]["error"]

    nodes = await knowledge_nodes(driver, neo4j_info, namespace)
    assert {n: (v["type"], v["source"]) for n, v in nodes.items()} == EXPECTED
    assert all(
        v["trust"] == "pattern" and v["category"] == "creative" and v["observations"] == 1
        for v in nodes.values()
    )
    assert "hunter2" not in str(nodes)
    steps = nodes["coding/elements/auth/workflow.md#Auth — Tool Operation Workflow > Operation Steps"][
        "content"
    ]
    assert steps.startswith("1. Create the signing key") and "### Example" not in steps

    again = await run_import_skills(settings, tree, progress=False, clock=clock, batch_size=3)
    assert (again["stored"], again["skipped"], again["sections"]) == (0, len(EXPECTED), len(EXPECTED))
    assert await knowledge_nodes(driver, neo4j_info, namespace) == nodes

    # a new section in a file is the only thing the next run stores
    with (tree / "notes.md").open("a", encoding="utf-8") as fh:
        fh.write("\n## Gotchas\n\nThe reset drops every temporary table.\n")
    third = await run_import_skills(settings, tree, progress=False, clock=clock)
    assert (third["stored"], third["skipped"]) == (1, len(EXPECTED))
    assert (await knowledge_nodes(driver, neo4j_info, namespace))["notes.md#Gotchas"]["type"] == "rule"


async def test_import_skills_options_and_refusals(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    settings = settings_for(neo4j_info, namespace)
    (tmp_path / "misc.md").write_text("# Colour\n\nTeal reads well on dark slides.\n", encoding="utf-8")
    report = await run_import_skills(
        settings,
        tmp_path,
        knowledge_type="insight",
        trust="inference",
        category="fundamental",
        progress=False,
    )
    assert report["stored"] == 1
    node = (await knowledge_nodes(driver, neo4j_info, namespace))["misc.md#Colour"]
    assert (node["type"], node["trust"], node["category"]) == ("insight", "inference", "fundamental")

    with pytest.raises(ValidationError, match="principle.*quote"):
        await run_import_skills(settings, tmp_path, trust="principle", progress=False)
    with pytest.raises(ValidationError, match="type must be one of"):
        await run_import_skills(settings, tmp_path, knowledge_type="recipe", progress=False)
    with pytest.raises(ValidationError, match="batch size"):
        await run_import_skills(settings, tmp_path, batch_size=0, progress=False)
    with pytest.raises(ValidationError, match="does not exist"):
        await run_import_skills(settings, tmp_path / "missing", progress=False)
    assert len(await knowledge_nodes(driver, neo4j_info, namespace)) == 1


async def test_imported_skills_are_embedded(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("# Deploy\n\nRun the migrations before the deploy.\n", encoding="utf-8")
    report = await run_import_skills(
        settings_for(neo4j_info, namespace, "all-MiniLM-L6-v2"), tmp_path, progress=False
    )
    assert report["stored"] == 1
    assert (await knowledge_nodes(driver, neo4j_info, namespace))["a.md#Deploy"]["embedded"] is True


async def test_import_never_sends_one_name_twice(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("# X.md\n\nfrom a\n", encoding="utf-8")
    (tmp_path / "a.md#X.md").write_text(
        "from the oddly named file\n", encoding="utf-8"
    )  # also named "a.md#X.md"
    report = await run_import_skills(settings_for(neo4j_info, namespace), tmp_path, progress=False)
    assert (report["files"], report["sections"], report["stored"], report["skipped"]) == (2, 2, 1, 1)
    assert (await knowledge_nodes(driver, neo4j_info, namespace))["a.md#X.md"]["content"] == "from a"
