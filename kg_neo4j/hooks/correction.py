"""``kg-neo4j hook correction`` (UserPromptSubmit, beside recall): when the user corrects the agent
(kg_neo4j.hooks.detect), the knowledge recall showed for the previous prompt of the same session
gets a ``corrected`` access (grade 1), once.  ``KG_NEO4J_HOOK_CORRECTIONS=false`` turns it off.

Claude Code runs both UserPromptSubmit hooks in parallel, so recall may or may not have recorded
the current prompt yet: the detector grades the latest turn of *another* prompt."""

from __future__ import annotations

from typing import Any

from kg_neo4j.hooks.common import clip, prompt_key, text_of
from kg_neo4j.hooks.context import Answer, HookContext
from kg_neo4j.hooks.detect import is_correction
from kg_neo4j.knowledge.vocabulary import AccessGrade


async def correction(ctx: HookContext) -> Answer:
    prompt = text_of(ctx.payload, "prompt")
    if not ctx.config.hook_corrections or not ctx.session_id or not is_correction(prompt):
        return Answer()
    key = prompt_key(prompt)

    def grade(data: dict[str, Any]) -> list[str]:
        turns = [t for t in data["turns"] if t.get("prompt") != key]
        if not turns or turns[-1].get("graded"):
            return []
        turns[-1]["graded"] = "corrected"
        return list(turns[-1].get("names") or [])

    names: list[str] = ctx.state.update(ctx.session_id, grade)
    if not names:
        return Answer()
    text = clip(
        "kg-neo4j: the user is correcting you. The knowledge recalled for your previous answer was marked "
        f"corrected (grade 1): {', '.join(names)}. If the correction teaches a rule, store it with "
        "store_knowledge (trust principle, the user's words as quote) and update_knowledge or "
        "forget_knowledge what it contradicts.",
        ctx.budget,
    )

    async def after() -> None:
        await ctx.record(names, int(AccessGrade.CORRECTED))

    return Answer(text, [after])
