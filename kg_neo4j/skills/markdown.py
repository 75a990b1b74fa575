"""**Markdown to knowledge** (``split_sections`` / ``skill_knowledge``).  A file is cut at
its ATX headings of levels 1-3 (``#``, ``##``, ``###``; deeper headings, and ``#`` lines
inside fenced code blocks, stay in the text).  Every section whose body (the text under
its heading up to the next heading of level 1-3) is not blank becomes one knowledge item:

- name: ``<relative path>#<heading path>``, the heading path being the enclosing
  headings joined by `` > `` (``coding/auth/workflow.md#Auth Workflow > Operation Steps``);
  text before the first heading (YAML front matter included, without its ``---`` fences)
  is named by the path alone.  A heading path that repeats in one file gets `` (2)``,
  `` (3)``...  Names longer than 1024 characters are cut and end in ``~`` plus 8 hex
  digits of the full name's SHA-1, so they stay unique and stable;
- content: the body, trimmed.  A body over 8000 characters (the content limit) is split
  into parts at paragraph breaks (else line breaks, else hard): the first part keeps the
  section's name, the next ones are ``<name> (part 2)``, ``(part 3)``..., so no text is
  lost and names stay stable when a long section grows;
- type: inferred from words of the heading path (innermost heading first), then the file
  name, then the directories (innermost first); the first word that names a type wins
  (``TYPE_WORDS``: workflow / steps / checklist / procedure... -> procedure; principles /
  rules / gotchas / pitfalls / guidelines... -> rule; insights / lessons -> insight;
  preferences / style -> preference; observations / notes -> observation).  Where no
  word says, ``--type`` (else ``observation``);
- trust ``pattern`` (or ``inference``).  ``principle`` is refused: it needs the expert's
  exact quote, and a file does not say whose words it holds;
- category ``creative`` (or ``fundamental``), source ``skills/<relative path>``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import Category, KnowledgeType, Trust, parse
from kg_neo4j.models import (
    MAX_NAME_CHARS,
    KnowledgeIn,
)
from kg_neo4j.skills.limits import HEADING_JOIN, IMPORT_TRUSTS, MAX_CONTENT_CHARS, SOURCE_PREFIX

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)[ \t]*$")
MAX_SPLIT_LEVEL = 3


@dataclass(frozen=True)
class Section:
    """One section of a skill file: the headings above it (outermost first) and its body."""

    headings: tuple[str, ...]
    body: str
    line: int  # 1-based line of its heading (1 for the preamble)

    @property
    def heading_path(self) -> str:
        return HEADING_JOIN.join(self.headings)


def _heading_text(raw: str | None) -> str:
    text = _CLOSING_HASHES.sub("", raw or "").strip()
    text = re.sub(r"\s+", " ", text)
    return text or "(untitled)"


def split_sections(text: str) -> list[Section]:
    """The sections of a markdown text, in order, including ones with a blank body.

    Cut at ATX headings of level 1-3 outside fenced code; the text before the first
    heading is the preamble (headings ``()``), with YAML front matter's ``---`` fences
    dropped and its lines kept."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[0].strip() == "---":  # YAML front matter
        for i in range(1, len(lines)):
            if _FRONT_MATTER_END.match(lines[i]):
                lines[0] = lines[i] = ""  # drop the fences, keep the line numbers
                break
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    heading_line = 1
    fence: str | None = None

    def close() -> None:
        sections.append(Section(tuple(h for _, h in stack), "\n".join(body).strip(), heading_line))

    for no, line in enumerate(lines, start=1):
        m = _FENCE.match(line)
        if fence is not None:
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= len(fence)
                and not line.strip()[len(m.group(1)) :]
            ):
                fence = None
            body.append(line)
            continue
        if m:
            fence = m.group(1)
            body.append(line)
            continue
        h = _ATX.match(line)
        if h and len(h.group(1)) <= MAX_SPLIT_LEVEL:
            close()
            level = len(h.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _heading_text(h.group(2))))
            body = []
            heading_line = no
            continue
        body.append(line)
    close()
    return sections


def _split_long(text: str, limit: int = MAX_CONTENT_CHARS) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, cut at paragraph breaks where it can,
    else at line breaks, else at spaces, else hard."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = -1
        for sep in ("\n\n", "\n", " "):
            cut = window.rfind(sep)
            if cut > limit // 4:
                break
            cut = -1
        if cut <= 0:
            cut = limit
        head, rest = rest[:cut].strip(), rest[cut:].strip()
        if head:
            parts.append(head)
    if rest.strip():
        parts.append(rest.strip())
    return parts


def _fit(text: str) -> str:
    """``text`` if at most MAX_NAME_CHARS long, else cut and ended by ``~`` + 8 hex digits of
    its SHA-1 (unique and stable)."""
    if len(text) <= MAX_NAME_CHARS:
        return text
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return text[: MAX_NAME_CHARS - 9] + "~" + digest


def knowledge_name(rel: str, heading_path: str, suffix: str = "") -> str:
    """``<rel>#<heading path><suffix>`` (``<rel><suffix>`` for the preamble), at most
    MAX_NAME_CHARS (see ``_fit``)."""
    return _fit((f"{rel}#{heading_path}" if heading_path else rel) + suffix)


# --- type inference ------------------------------------------------------------

#: words (after lower-casing and splitting on anything not a letter or digit) that name a knowledge type
TYPE_WORDS: dict[KnowledgeType, frozenset[str]] = {
    KnowledgeType.PROCEDURE: frozenset(
        """workflow workflows step steps checklist checklists procedure procedures process processes howto preflight
        recipe recipes instructions runbook runbooks playbook playbooks operation operations setup""".split()
    ),
    KnowledgeType.RULE: frozenset(
        """principle principles rule rules gotcha gotchas pitfall pitfalls guideline guidelines constraint
        constraints caveat caveats warning warnings dont donts never must antipattern antipatterns
        criteria requirements""".split()
    ),
    KnowledgeType.INSIGHT: frozenset("insight insights lesson lessons learnings retrospective".split()),
    KnowledgeType.PREFERENCE: frozenset("preference preferences style taste".split()),
    KnowledgeType.OBSERVATION: frozenset("observation observations notes".split()),
}
#: word pairs that name a type (checked before single words)
TYPE_PHRASES: dict[str, KnowledgeType] = {
    "how to": KnowledgeType.PROCEDURE,
    "anti pattern": KnowledgeType.RULE,
    "anti patterns": KnowledgeType.RULE,
    "do not": KnowledgeType.RULE,
    "best practices": KnowledgeType.RULE,
    "lessons learned": KnowledgeType.INSIGHT,
}
_TYPE_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _type_of_words(text: str) -> KnowledgeType | None:
    words = _TYPE_TOKEN.findall(text.lower().replace("'", ""))
    for i in range(len(words) - 1):
        hit = TYPE_PHRASES.get(f"{words[i]} {words[i + 1]}")
        if hit:
            return hit
    for w in words:
        for kind, vocab in TYPE_WORDS.items():
            if w in vocab:
                return kind
    return None


def infer_type(
    rel: str, headings: Sequence[str], default: KnowledgeType | str | None = None
) -> KnowledgeType:
    """The knowledge type of a section: the first of its headings (innermost first), its file
    name, then its directories (innermost first) whose words name a type; else ``default``,
    else observation."""
    path = PurePosixPath(rel)
    places = [*reversed(headings), path.stem, *reversed(path.parent.parts)]
    for place in places:
        kind = _type_of_words(place)
        if kind is not None:
            return kind
    if default is not None:
        return parse(KnowledgeType, default, field="type")
    return KnowledgeType.OBSERVATION


# --- sections to knowledge -------------------------------------------------------


def check_import_labels(
    knowledge_type: str | None, trust: str, category: str
) -> tuple[KnowledgeType | None, Trust, Category]:
    """Parse the import's type / trust / category; a principle is refused (no quote to give)."""
    kind = parse(KnowledgeType, knowledge_type, field="type") if knowledge_type is not None else None
    t = parse(Trust, trust, field="trust")
    if t not in IMPORT_TRUSTS:
        raise ValidationError(
            "import-skills stores sections as trust 'pattern' (default) or 'inference': a 'principle' needs the "
            "expert's exact words as a quote, and a skill file does not say whose words it holds; store an "
            "expert's principle with store_knowledge and its quote",
            field="trust",
        )
    return kind, t, parse(Category, category, field="category")


def skill_knowledge(
    rel: str,
    text: str,
    *,
    knowledge_type: KnowledgeType | str | None = None,
    trust: Trust | str = Trust.PATTERN,
    category: Category | str = Category.CREATIVE,
) -> list[KnowledgeIn]:
    """The knowledge items of one skill file (``rel``: its path relative to the imported
    directory, POSIX style): one per section with a non-blank body, long bodies in parts."""
    t = parse(Trust, trust, field="trust")
    cat = parse(Category, category, field="category")
    source = _fit(SOURCE_PREFIX + rel)
    used: set[str] = set()
    items: list[KnowledgeIn] = []
    for section in split_sections(text):
        if not section.body:
            continue
        parts = _split_long(section.body)
        path, n = section.heading_path, 1
        while True:  # a heading path seen before in this file gets " (2)", " (3)", ...
            names = [
                knowledge_name(rel, path, "" if i == 1 else f" (part {i})") for i in range(1, len(parts) + 1)
            ]
            if used.isdisjoint(names):
                break
            n += 1
            path = f"{section.heading_path} ({n})"
        used.update(names)
        kind = infer_type(rel, section.headings, knowledge_type)
        items.extend(
            KnowledgeIn(name=name, content=part, type=kind, trust=t, category=cat, source=source)
            for name, part in zip(names, parts, strict=True)
        )
    return items
