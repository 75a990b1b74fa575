"""Learning signals in what the user writes: corrections, explicit "remember"s, decisions with reasons.

A correction (docs/hooks.md, "The correction rule") is a message saying the agent's last answer or
action was wrong or unwanted.  It matches when one of :data:`CORRECTION_PATTERNS` matches the
message's first sentences and none of :data:`NOT_CORRECTION` (courtesies such as "no worries",
"actually, thanks", requests such as "don't forget to ...", questions about what is wrong) does.
English only; a false positive costs real memory (the ``corrected`` grade shrinks stability), so the
patterns prefer missing a correction to inventing one (precision and recall: docs/hooks.md).
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
#: Only the opening of a message is read: a correction comes first ("No, ..."), the rest is detail.
HEAD_CHARS = 240

CORRECTION_PATTERNS = [
    re.compile(p, _I)
    for p in (
        # "No, that's wrong", "nope, use X", "no no, the port is ..."; "hmm, no."
        r"^\W*(?:hmm+\W+|well\W+)?(?:no+|nope|nah)\b(?!\s+(?:worries|problem|rush|need|thanks|idea|matter)\b)"
        r"(?!\W+(?:thanks|thank you)\b)",
        # "that's wrong / not right / incorrect / not what I asked"
        r"\b(?:that|this|it)(?:'s| is|'s not| is not| isn't| was| wasn't)\s+(?:not\s+)?"
        r"(?:wrong|incorrect|right|correct|what i (?:asked|meant|said|wanted)|how (?:we|our|it|this))\b(?<!right)"
        r"|\b(?:that|this|it)(?:'s not| is not| isn't| wasn't| was not)\s+(?:right|correct|quite right)\b",
        r"^\W*(?:wrong|incorrect|not quite|not true)\b",
        # "Actually, it's ...", "actually the tests live ..." (not "actually, thanks", "actually, can you ...")
        r"^\W*actually\b(?!\W+(?:thanks|thank you|that worked|that works|great|perfect|nice|can|could|would|please|also)\b)",
        # "don't / do not / never / stop + doing X" (not "don't forget", "don't worry", "stop the server")
        r"^\W*(?:please\s+)?(?:don't|do not|dont|never|stop)\s+(?!forget|worry|hesitate|bother|mind\b|the\b|it\b)\w+(?:ing)?\b",
        # "you edited the wrong file", "you forgot / missed / misunderstood / shouldn't have"
        r"\byou(?:'ve| have)?\s+(?:\w+\s+)?(?:the\s+)?wrong\b|\byou\s+(?:forgot|missed|misunderstood|misread|broke|"
        r"shouldn't have|should not have|should have|were supposed to)\b",
        r"\bi (?:said|told you|asked for|meant)\b|\bas i said\b",
        # "it should be snake_case, not camelCase", "use tabs, not spaces"
        r"\b(?:should be|use|it's|it is|is|are|we use)\s+[\w.\-/ ]{1,40},?\s+not\s+[\w.\-/]+",
        r"\b(?:undo|revert|roll back)\s+(?:that|this|it|the|your)\b",
    )
]

NOT_CORRECTION = [
    re.compile(p, _I)
    for p in (
        r"\bwhat(?:'s| is| went)\s+wrong\b",
        r"\b(?:anything|something|nothing)\s+(?:is\s+)?wrong\b",
        r"^\W*(?:yes|yep|great|thanks|thank you|perfect)\b",
    )
]

REMEMBER = re.compile(
    r"\b(?:remember|keep in mind|note that|for future reference|from now on|going forward|"
    r"always|never)\b",
    _I,
)
DECISION = re.compile(
    r"\b(?:we|i|let's|let us)\s+(?:have\s+)?(?:decided|chose|choose|will use|'ll use|are going with|"
    r"went with|go with|settled on|picked|prefer)\b[^.\n]{0,200}\b(?:because|since|so that|as it|"
    r"as they|due to)\b",
    _I,
)


def head(text: str) -> str:
    return " ".join(text.split())[:HEAD_CHARS]


def is_correction(text: str) -> bool:
    """Whether a user message corrects the agent (see the module docstring for the rule)."""
    h = head(text)
    if not h or any(p.search(h) for p in NOT_CORRECTION):
        return False
    return any(p.search(h) for p in CORRECTION_PATTERNS)


def signals(text: str) -> list[str]:
    """The learning signals of one user message: ``remember``, ``correction``, ``decision``."""
    found = []
    if REMEMBER.search(text):
        found.append("remember")
    if is_correction(text):
        found.append("correction")
    if DECISION.search(text):
        found.append("decision")
    return found
