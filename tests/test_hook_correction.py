"""The correction detector: its precision and recall on labelled prompts (tests/data/correction_prompts.jsonl),
and ``kg-neo4j hook correction-detector`` end to end: recall shows knowledge in a session, the user's
correction gives that knowledge a ``corrected`` access (grade 1), once; the setting turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neo4j import AsyncDriver

from kg_neo4j.hooks.detect import is_correction
from kg_neo4j.knowledge.decay import GRADE_MULTIPLIER
from kg_neo4j.knowledge.vocabulary import AccessGrade
from support.hooks import (
    DATA,
    DEPLOY,
    hook_env,
    knowledge_node,
    prompt_payload,
    run_hook_cli,
    store_knowledge,
)
from support.servers import Neo4jInfo


def confusion(split: str | None = None) -> tuple[int, int, int, int]:
    """(true positives, false positives, false negatives, prompts) of the detector on the labelled set."""
    rows = [json.loads(x) for x in (DATA / "correction_prompts.jsonl").read_text().splitlines() if x.strip()]
    rows = [r for r in rows if split is None or r["split"] == split]
    tp = sum(1 for r in rows if r["correction"] and is_correction(r["prompt"]))
    fp = sum(1 for r in rows if not r["correction"] and is_correction(r["prompt"]))
    fn = sum(1 for r in rows if r["correction"] and not is_correction(r["prompt"]))
    return tp, fp, fn, len(rows)


@pytest.mark.unit
def test_precision_and_recall_on_labelled_prompts() -> None:
    tp, fp, fn, n = confusion()
    assert n >= 50 and tp + fn >= 20 and n - tp - fn >= 20  # positives and negatives both well represented
    assert tp / (tp + fp) >= 0.9  # a false positive shrinks real memory: precision first
    assert tp / (tp + fn) >= 0.8
    # the held-out part was written after the patterns and never tuned on
    htp, hfp, hfn, hn = confusion("holdout")
    assert hn >= 30 and htp / (htp + hfp) >= 0.9 and htp / (htp + hfn) >= 0.75


@pytest.mark.unit
@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("no worries", False),
        ("Actually, thanks!", False),
        ("don't forget to run tests", False),
        ("No, that's wrong", True),
        ("actually it's the other table", True),
        ("don't mock the database", True),
    ],
)
def test_examples_of_the_issue(prompt: str, expected: bool) -> None:
    assert is_correction(prompt) is expected


def stability_ratio(before: dict[str, object], after: dict[str, object]) -> float:
    return float(after["stability"]) / float(before["stability"])  # type: ignore[arg-type]


async def test_correction_grades_what_recall_showed(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    await store_knowledge(driver, neo4j_info, namespace, DEPLOY)
    env = hook_env(neo4j_info, namespace, tmp_path)
    s0 = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    shown = run_hook_cli("recall", prompt_payload("sess-a", "How do we deploy the database?"), env)
    assert "Deploy checklist" in shown.stdout
    s1 = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    assert s1["access_count"] == s0["access_count"] + 1  # recall's own access (grade 3, R ~ 1: S unchanged)
    assert stability_ratio(s0, s1) == pytest.approx(GRADE_MULTIPLIER[AccessGrade.ACCESSED], rel=1e-3)

    # not corrections, or another session: nothing graded
    for session, prompt in (
        ("sess-a", "no worries"),
        ("sess-a", "Actually, thanks!"),
        ("sess-b", "No, that's wrong."),
    ):
        out = run_hook_cli("correction-detector", prompt_payload(session, prompt), env)
        assert (out.stdout, out.stderr) == ("", "")
    assert await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist") == s1

    correction = "No, that's wrong: on staging the migrations run after the deploy."
    # Claude Code runs recall and the detector in parallel: recall may record this prompt first
    run_hook_cli("recall", prompt_payload("sess-a", correction), env)
    s2 = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    out = run_hook_cli("correction-detector", prompt_payload("sess-a", correction), env)
    assert out.stdout.startswith(
        "kg-neo4j: the user is correcting you. The knowledge recalled for your previous "
        "answer was marked corrected (grade 1): Deploy checklist."
    )
    s3 = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    assert s3["access_count"] == s2["access_count"] + 1
    assert stability_ratio(s2, s3) == pytest.approx(GRADE_MULTIPLIER[AccessGrade.CORRECTED], rel=1e-3)
    assert "sess-a" in s3["sessions"]
    # graded once: the same correction again (Claude Code retrying the hook) changes nothing
    again = run_hook_cli("correction-detector", prompt_payload("sess-a", correction), env)
    assert again.stdout == ""
    assert await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist") == s3


async def test_the_setting_turns_it_off(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    await store_knowledge(driver, neo4j_info, namespace, DEPLOY)
    env = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_CORRECTIONS="false")
    run_hook_cli("recall", prompt_payload("sess-c", "How do we deploy the database?"), env)
    before = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    out = run_hook_cli("correction-detector", prompt_payload("sess-c", "No, that's wrong."), env)
    assert (out.stdout, out.stderr) == ("", "")
    assert await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist") == before

    bad = run_hook_cli(
        "correction-detector",
        prompt_payload("sess-c", "No, that's wrong."),
        hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_HOOK_CORRECTIONS="maybe"),
    )
    assert bad.stdout == ""
    assert (
        bad.stderr.strip()
        == "kg-neo4j hook: error: KG_NEO4J_HOOK_CORRECTIONS must be true or false; got 'maybe'"
    )


async def test_what_a_hook_records_names_the_configured_actor(
    driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path
) -> None:
    """The accesses a hook records are attributed (docs/team.md#attribution) to KG_NEO4J_ACTOR."""
    await store_knowledge(driver, neo4j_info, namespace, DEPLOY)
    env = hook_env(neo4j_info, namespace, tmp_path, KG_NEO4J_ACTOR="hook-runner")
    before = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    shown = run_hook_cli("recall", prompt_payload("sess-x", "How do we deploy the database?"), env)
    assert "Deploy checklist" in shown.stdout
    after = await knowledge_node(driver, neo4j_info, namespace, "Deploy checklist")
    added = list(after["ds_by"])[len(list(before.get("ds_by") or [])) :]
    assert added == ["hook-runner"]
