"""crystallize_skill on the real Neo4j: knowledge about a topic that the skill files do not
reflect yet, and the tool's refusal to read anything outside the skills directory."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from test_skills import FIXTURES, OpenSpy

from kg_neo4j.errors import ValidationError
from kg_neo4j.models import EntityIn, KnowledgeIn
from kg_neo4j.server.registry import Runtime, call
from kg_neo4j.server.skills import crystallize_skill
from kg_neo4j.settings import Settings
from kg_neo4j.skills import LEXICAL_THRESHOLD, crystallize
from kg_neo4j.skills import sync as sync_module
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from support.servers import Neo4jInfo, http_server, http_session, server_env, stdio_session

WORKFLOW = "coding/elements/auth/workflow.md"
#: reflected: every content word is in the workflow's "Operation Steps"
IN_FILE = KnowledgeIn(
    name="JWT key rotation",
    content="Rotate the JWT signing keys every 90 days with kms_rotate_key.",
    type="procedure",
    trust="pattern",
)
#: not reflected anywhere in the skill files
NOT_IN_FILE = KnowledgeIn(
    name="JWT revocation",
    type="rule",
    trust="principle",
    content="Revoke every JWT of a user as soon as their password changes.",
    quote="When the password changes, all of that user's JWTs die. No exceptions.",
)
#: about something else entirely
OFF_TOPIC = KnowledgeIn(
    name="Slide colours", content="Teal reads well on dark slides.", type="preference", trust="inference"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    shutil.copytree(FIXTURES, root)
    (tmp_path / "secret.md").write_text("# Secret\n\nRevoke every JWT hunter2\n", encoding="utf-8")
    (root / "link-out.md").symlink_to(tmp_path / "secret.md")
    return root


async def seed(store: GraphStore) -> None:
    await KnowledgeStore(store).store([IN_FILE, NOT_IN_FILE, OFF_TOPIC])
    # an ordinary entity whose type is a knowledge type is not knowledge
    await store.create_entities(
        [
            EntityIn(
                name="JWT glossary",
                entityType="rule",
                observations=["JWT means JSON Web Token; revoke and rotate apply."],
            )
        ]
    )


def names(items: list[Any]) -> list[str]:
    return [i.name if hasattr(i, "name") else i["name"] for i in items]


async def test_crystallize_reports_what_the_files_miss(store: GraphStore, tree: Path) -> None:
    await seed(store)
    result = await crystallize(store, tree, "JWT", [WORKFLOW, "coding/principles.md"], limit=10)
    assert result.method == "lexical" and result.lexicalThreshold == LEXICAL_THRESHOLD
    assert [f.path for f in result.files] == [WORKFLOW, "coding/principles.md"]
    assert names(result.unsynced) == ["JWT revocation"]
    assert names(result.reflected) == ["JWT key rotation"]
    match = result.reflected[0].bestMatch
    assert (match.path, match.section, match.coverage) == (
        WORKFLOW,
        "Auth — Tool Operation Workflow > Operation Steps",
        1.0,
    )
    miss = result.unsynced[0]
    assert (miss.type, miss.trust, miss.content, miss.quote) == (
        "rule",
        "principle",
        NOT_IN_FILE.content,
        NOT_IN_FILE.quote,
    )
    assert miss.bestMatch is not None and miss.bestMatch.coverage < LEXICAL_THRESHOLD

    # once the skill file says it, it is reflected
    with (tree / WORKFLOW).open("a", encoding="utf-8") as fh:
        fh.write("\n## Revocation\n\nWhen a user's password changes, revoke every JWT of theirs at once.\n")
    again = await crystallize(store, tree, "JWT", [WORKFLOW], limit=10)
    assert again.unsynced == [] and sorted(names(again.reflected)) == ["JWT key rotation", "JWT revocation"]

    # limit bounds how much knowledge is checked; a topic nothing matches checks nothing
    assert len((await crystallize(store, tree, "JWT", [WORKFLOW], limit=1)).reflected) == 1
    nothing = await crystallize(store, tree, "kubernetes", [WORKFLOW], limit=10)
    assert nothing.reflected == [] and nothing.unsynced == []


async def test_crystallize_with_embeddings(semantic_store: GraphStore, tree: Path) -> None:
    await seed(semantic_store)
    # the vector channel also brings "Slide colours" (a nearest neighbour, however far): it is not about the topic
    result = await crystallize(semantic_store, tree, "JWT signing and revocation", [WORKFLOW], limit=10)
    assert result.method == "lexical+semantic" and result.semanticThreshold is not None
    assert names(result.reflected) == ["JWT key rotation"]
    assert names(result.unsynced) == ["JWT revocation"]
    assert result.reflected[0].bestMatch.similarity is not None
    assert result.unsynced[0].bestMatch is not None and result.unsynced[0].bestMatch.similarity is not None


async def test_crystallize_refuses_paths_outside_the_root(
    store: GraphStore, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(store)
    spy = OpenSpy(monkeypatch)
    for bad in ("../secret.md", str(tree.parent / "secret.md"), "link-out.md", "README.txt", "coding"):
        with pytest.raises(ValidationError):
            await crystallize(store, tree, "JWT", [WORKFLOW, bad], limit=10)
    assert spy.outside(tree) == []
    with pytest.raises(ValidationError, match="at least one"):
        await crystallize(store, tree, "JWT", [], limit=10)
    with pytest.raises(ValidationError, match="limit"):
        await crystallize(store, tree, "JWT", [WORKFLOW], limit=0)
    with pytest.raises(ValidationError, match="at most 50"):
        await crystallize(store, tree, "JWT", [WORKFLOW] * 51, limit=10)
    monkeypatch.setattr(sync_module, "MAX_SKILL_CHARS_PER_CALL", 800)  # each file fits, both do not
    with pytest.raises(ValidationError, match="fewer files"):
        await crystallize(store, tree, "JWT", [WORKFLOW, "coding/principles.md"], limit=10)


# --------------------------------------------------------------------------- the tool


def runtime(store: GraphStore, skills_dir: Path | None) -> Runtime:
    return Runtime(
        store=store,
        profile="all",
        max_answer_bytes=8 * 1024 * 1024,
        settings=Settings(skills_dir=skills_dir, embedding_model="none"),
    )


async def test_tool_in_process(store: GraphStore, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    await seed(store)
    spec = crystallize_skill
    assert spec.name == "crystallize_skill" and spec.read_only and set(spec.profiles) == {"knowledge", "all"}
    rt = runtime(store, tree)

    ok = await call(spec, rt, {"topic": "JWT", "skill_paths": [WORKFLOW]})
    assert not ok.is_error, ok.content
    assert json.loads(ok.content[0].text) == ok.structured_content
    assert names(ok.structured_content["unsynced"]) == ["JWT revocation"]
    alias = await call(spec, rt, {"topic": "JWT", "skillPaths": [f"skills/{WORKFLOW}"], "limit": 5})
    assert not alias.is_error and alias.structured_content == ok.structured_content

    spy = OpenSpy(monkeypatch)
    for bad, says in (
        ("../secret.md", "'..'"),
        (str(tree.parent / "secret.md"), "absolute"),
        ("link-out.md", "outside the skills directory"),
        ("README.txt", "not a markdown file"),
    ):
        res = await call(spec, rt, {"topic": "JWT", "skill_paths": [bad]})
        assert res.is_error and says in res.content[0].text, res.content
        assert "hunter2" not in res.content[0].text
    assert spy.outside(tree) == []

    for args, says in (
        ({"skill_paths": [WORKFLOW]}, "topic"),
        ({"topic": "JWT"}, "skill_paths"),
        ({"topic": "JWT", "skill_paths": [WORKFLOW], "limit": 1000}, "limit"),
    ):
        res = await call(spec, rt, args)
        assert res.is_error and says in res.content[0].text, res.content

    off = await call(spec, runtime(store, None), {"topic": "JWT", "skill_paths": [WORKFLOW]})
    assert (
        off.is_error
        and "KG_NEO4J_SKILLS_DIR" in off.content[0].text
        and "--skills-dir" in off.content[0].text
    )


@contextlib.asynccontextmanager
async def served(transport: str, info: Neo4jInfo, namespace: str, tree: Path) -> AsyncIterator[Any]:
    """``kg-neo4j serve --tools all`` with KG_NEO4J_SKILLS_DIR set, over ``transport``."""
    env = server_env(info, KG_NEO4J_SKILLS_DIR=str(tree))
    args = ("--namespace", namespace, "--tools", "all")
    if transport == "stdio":
        async with stdio_session(info, *args, env=env) as s:
            yield s
    else:
        with http_server(info, *args, env=env) as url:
            async with http_session(url) as s:
                yield s


async def test_tool_over_mcp(
    transport: str, neo4j_info: Neo4jInfo, namespace: str, tree: Path, store: GraphStore
) -> None:
    await seed(store)
    async with served(transport, neo4j_info, namespace, tree) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["crystallize_skill"].annotations.read_only_hint is True
        res = await session.call_tool("crystallize_skill", {"topic": "JWT", "skill_paths": [WORKFLOW]})
        assert not res.is_error, res.content
        assert names(res.structured_content["unsynced"]) == ["JWT revocation"]
        assert names(res.structured_content["reflected"]) == ["JWT key rotation"]
        for bad in ("../secret.md", str(tree.parent / "secret.md"), "link-out.md"):
            refused = await session.call_tool("crystallize_skill", {"topic": "JWT", "skill_paths": [bad]})
            assert refused.is_error and "hunter2" not in refused.content[0].text, refused.content
