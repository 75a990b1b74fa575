"""**Crystallize** (``crystallize``): which knowledge about a topic the given skill files do
not reflect yet.  Candidates are the ``search_memory`` hits for the topic (vector +
fulltext + graph, restricted to the knowledge types and then to nodes that really are
knowledge), best first, up to ``limit`` distinct nodes.  With an embedding model the vector
channel returns nearest neighbours however far they are, so a candidate that shares no
content word with the topic must be at least ``TOPIC_MIN_SIMILARITY`` (0.15) cosine-similar
to it to count as being about the topic.  Each skill file is split into
sections as above; an item is *reflected* when some section contains at least
``LEXICAL_THRESHOLD`` (60%) of the item's content words (lower-cased word tokens without
stop words, with a light suffix folding so ``keys``/``key`` and ``signing``/``sign`` match),
or, when the store has an embedding model, when its content's cosine similarity to a
section is at least ``SEMANTIC_THRESHOLD`` (0.8).  Everything else is *unsynced*, reported
with its best-matching section (``bestMatch``) so the skill file can be updated there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import KnowledgeType
from kg_neo4j.models import (
    MAX_SEARCH_LIMIT,
    KnowledgeItem,
)
from kg_neo4j.skills.limits import (
    DEFAULT_CRYSTALLIZE_LIMIT,
    LEXICAL_THRESHOLD,
    MAX_CRYSTALLIZE_LIMIT,
    MAX_EMBEDDED_SECTIONS,
    MAX_SKILL_CHARS_PER_CALL,
    MAX_SKILL_PATHS,
    SEMANTIC_THRESHOLD,
    TOPIC_MIN_SIMILARITY,
)
from kg_neo4j.skills.markdown import Section, split_sections
from kg_neo4j.skills.paths import read_skill_file, skills_root
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from kg_neo4j.text import STOPWORDS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _fold(word: str) -> str:
    """A light suffix folding, the same on both sides of a comparison: keys/key, signing/sign,
    rotated/rotate/rotating."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text``: lower-cased word tokens without stop words and
    one-letter words (digits are kept), suffix-folded."""
    return frozenset(
        _fold(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())
    )


def coverage(item_words: frozenset[str], section_words: frozenset[str]) -> float:
    """Share of an item's content words found in a section (1.0 for an item without any)."""
    if not item_words:
        return 1.0
    return len(item_words & section_words) / len(item_words)


class BestMatch(BaseModel):
    path: str = Field(description="Skill file (relative to the skills directory)")
    section: str = Field(description="Heading path of the section ('' for text before the first heading)")
    line: int = Field(description="Line of the section's heading")
    coverage: float = Field(description="Share of the knowledge's content words found in the section")
    similarity: float | None = Field(
        default=None, description="Cosine similarity of the embeddings (only with an embedding model)"
    )


class SkillFileInfo(BaseModel):
    path: str
    sections: int
    chars: int


class ReflectedKnowledge(BaseModel):
    name: str
    type: str
    trust: str
    bestMatch: BestMatch


class UnsyncedKnowledge(BaseModel):
    name: str
    type: str
    trust: str
    category: str
    content: str
    quote: str | None = None
    source: str | None = None
    bestMatch: BestMatch | None = None


class CrystallizeResult(BaseModel):
    topic: str
    files: list[SkillFileInfo]
    reflected: list[ReflectedKnowledge] = Field(
        description="Relevant knowledge the skill files already reflect"
    )
    unsynced: list[UnsyncedKnowledge] = Field(
        description="Relevant knowledge not yet in the skill files, most "
        "relevant first: update the skill files with these"
    )
    method: str = Field(description="'lexical' or 'lexical+semantic' (with an embedding model)")
    lexicalThreshold: float = LEXICAL_THRESHOLD
    semanticThreshold: float | None = None


@dataclass(frozen=True)
class _SkillSection:
    path: str
    section: Section
    words: frozenset[str]

    @property
    def text(self) -> str:
        return f"{self.section.heading_path}\n\n{self.section.body}".strip()


def _load_skill_sections(
    root: Path, skill_paths: Sequence[str]
) -> tuple[list[SkillFileInfo], list[_SkillSection]]:
    if not skill_paths:
        raise ValidationError("give at least one skill path", field="skill_paths")
    if len(skill_paths) > MAX_SKILL_PATHS:
        raise ValidationError(
            f"{len(skill_paths)} skill paths; at most {MAX_SKILL_PATHS} in one call", field="skill_paths"
        )
    base = skills_root(root)
    read: list[tuple[Path, str]] = []
    total = 0
    for rel in skill_paths:  # every path is checked before any work
        read.append(read_skill_file(base, rel))
        total += len(read[-1][1])
        if total > MAX_SKILL_CHARS_PER_CALL:
            raise ValidationError(
                f"the skill files hold more than {MAX_SKILL_CHARS_PER_CALL} characters together; "
                "check fewer files per call",
                field="skill_paths",
            )
    files: list[SkillFileInfo] = []
    sections: list[_SkillSection] = []
    seen: set[Path] = set()
    for real, text in read:
        if real in seen:
            continue
        seen.add(real)
        path = real.relative_to(base).as_posix()
        found = [s for s in split_sections(text) if s.body or s.headings]
        files.append(SkillFileInfo(path=path, sections=len(found), chars=len(text)))
        sections.extend(_SkillSection(path, s, content_words(f"{s.heading_path}\n{s.body}")) for s in found)
    return files, sections


async def _candidates(graph: GraphStore, topic: str, limit: int) -> list[KnowledgeItem]:
    """The knowledge ``search_memory`` finds for ``topic``, most relevant first (up to twice
    ``limit``, so that the relevance filter of ``crystallize`` still leaves ``limit``)."""
    hits = await graph.search_memory(
        topic, limit=min(MAX_SEARCH_LIMIT, max(2 * limit, 10)), entity_types=[k.value for k in KnowledgeType]
    )
    names = list(dict.fromkeys(h.name for h in hits.hits))
    if not names:
        return []
    items = {k.name: k for k in await KnowledgeStore(graph).get(names)}  # only what really is knowledge
    return [items[n] for n in names if n in items]


async def crystallize(
    graph: GraphStore,
    root: Path,
    topic: str,
    skill_paths: Sequence[str],
    *,
    limit: int = DEFAULT_CRYSTALLIZE_LIMIT,
) -> CrystallizeResult:
    """Which knowledge relevant to ``topic`` the skill files ``skill_paths`` (relative to
    ``root``) do not reflect yet (see the module docstring for how both are decided).
    Read-only: it records no access."""
    if not topic.strip():
        raise ValidationError("topic must not be empty", field="topic")
    if not 1 <= limit <= MAX_CRYSTALLIZE_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_CRYSTALLIZE_LIMIT}", field="limit")
    files, sections = _load_skill_sections(root, skill_paths)
    items = await _candidates(graph, topic, limit)
    texts = [it.content or it.name for it in items]

    similarity: Any = None  # items x sections cosine matrix, with an embedding model
    if graph.embedder is not None and items:
        embed_sections = len(sections) <= MAX_EMBEDDED_SECTIONS
        vectors = await graph.embed([topic, *texts, *([s.text for s in sections] if embed_sections else [])])
        if vectors:
            import numpy as np  # with the embedder only (a dependency of sentence-transformers)

            matrix = np.asarray(vectors, dtype=np.float32)
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            topic_vec, item_vecs, section_vecs = (
                matrix[0],
                matrix[1 : 1 + len(items)],
                matrix[1 + len(items) :],
            )
            # vector search returns nearest neighbours however far: keep what is about the topic
            topic_words = content_words(topic)
            keep = [
                i
                for i in range(len(items))
                if float(item_vecs[i] @ topic_vec) >= TOPIC_MIN_SIMILARITY
                or not topic_words.isdisjoint(content_words(texts[i]))
            ][:limit]
            items, texts = [items[i] for i in keep], [texts[i] for i in keep]
            if embed_sections and sections and keep:
                similarity = (item_vecs[keep] @ section_vecs.T).tolist()
    items = items[:limit]

    reflected: list[ReflectedKnowledge] = []
    unsynced: list[UnsyncedKnowledge] = []
    for i, item in enumerate(items):
        words = content_words(texts[i])
        best: tuple[bool, float] | None = None
        match: BestMatch | None = None
        for j, sec in enumerate(sections):
            cov = coverage(words, sec.words)
            sim = similarity[i][j] if similarity is not None else None
            key = (
                cov >= LEXICAL_THRESHOLD or (sim is not None and sim >= SEMANTIC_THRESHOLD),
                max(cov, sim or 0.0),
            )
            if best is None or key > best:
                best = key
                match = BestMatch(
                    path=sec.path,
                    section=sec.section.heading_path,
                    line=sec.section.line,
                    coverage=round(cov, 3),
                    similarity=None if sim is None else round(sim, 3),
                )
        if best is not None and best[0] and match is not None:
            reflected.append(
                ReflectedKnowledge(name=item.name, type=item.type, trust=item.trust, bestMatch=match)
            )
        else:
            unsynced.append(
                UnsyncedKnowledge(
                    name=item.name,
                    type=item.type,
                    trust=item.trust,
                    category=item.category,
                    content=item.content or "",
                    quote=item.quote,
                    source=item.source,
                    bestMatch=match,
                )
            )
    return CrystallizeResult(
        topic=topic,
        files=files,
        reflected=reflected,
        unsynced=unsynced,
        method="lexical+semantic" if similarity is not None else "lexical",
        semanticThreshold=SEMANTIC_THRESHOLD if similarity is not None else None,
    )
