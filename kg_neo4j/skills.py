"""Skill markdown and the knowledge graph (spec 004, "Import Existing Knowledge",
"Integration", "KG-Skill Synchronization").

Three parts:

**Safe paths.** ``resolve_skill_path(root, rel)`` is the only way a skill file is found:
``rel`` must be a relative path (no ``..`` component, no drive, no NUL) to an existing
regular ``.md`` file of at most ``MAX_SKILL_FILE_BYTES`` whose real path (symlinks
resolved) lies inside the real ``root``.  Anything else is a ``ValidationError`` naming
the path as given (never where a link points).  ``read_skill_file`` opens the resolved
file without following a link in its last component and reads at most the cap, so
nothing outside the root is ever read.  As in spec 004's example
(``skill_paths=["skills/coding/..."]``), a path that starts with the root directory's own
name (``skills/...`` for a root called ``skills``) is also tried without that first part.

**Markdown to knowledge** (``split_sections`` / ``skill_knowledge``).  A file is cut at
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

**import-skills** (``run_import_skills``): every ``.md`` file under the directory (sorted;
hidden files and directories left out, directory links not followed, each file read through
``read_skill_file`` so a file link leading out of the directory is reported and skipped),
stored in batches (one transaction each) with ``existing="skip"``: a name already taken is
skipped, so running it again stores only sections that are new.  A section whose text
changed keeps its stored content (change it with ``update_knowledge``).  The configured
embedding model embeds what is stored, as the server does.

**Crystallize** (``crystallize``): which knowledge about a topic the given skill files do
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

import hashlib
import logging
import os
import re
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field
from tqdm import tqdm

from kg_neo4j.clock import Clock, SystemClock
from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import Category, KnowledgeType, Trust, parse
from kg_neo4j.models import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SEARCH_LIMIT,
    KnowledgeIn,
    KnowledgeItem,
)
from kg_neo4j.store import GraphStore
from kg_neo4j.store.knowledge import KnowledgeStore
from kg_neo4j.text import STOPWORDS

if TYPE_CHECKING:
    from kg_neo4j.settings import Settings

log = logging.getLogger(__name__)

#: a skill file larger than this is refused (skill files are hand-written prose)
MAX_SKILL_FILE_BYTES = 1024 * 1024
#: a knowledge item's content is at most this long (longer sections are split into parts)
MAX_CONTENT_CHARS = MAX_OBSERVATION_CHARS
#: at most this many characters of a path the caller gives
MAX_PATH_CHARS = 1024
SKILL_SUFFIX = ".md"
SOURCE_PREFIX = "skills/"
HEADING_JOIN = " > "

#: crystallize: share of an item's content words a section must contain for the item to count as reflected
LEXICAL_THRESHOLD = 0.6
#: crystallize with an embedding model: cosine similarity at which a section reflects an item
SEMANTIC_THRESHOLD = 0.8
#: crystallize with an embedding model: knowledge less similar to the topic than this (and sharing no content
#: word with it) is not about the topic (all-MiniLM-L6-v2: unrelated sentences score below 0.1, "authentication"
#: against "Rotate the JWT signing keys every 90 days" 0.23)
TOPIC_MIN_SIMILARITY = 0.15
#: crystallize: at most this many skill files in one call, and sections embedded at most
MAX_SKILL_PATHS = 50
MAX_EMBEDDED_SECTIONS = 2000
#: crystallize: at most this many characters of skill files in one call
MAX_SKILL_CHARS_PER_CALL = 4 * 1024 * 1024
DEFAULT_CRYSTALLIZE_LIMIT = 20
MAX_CRYSTALLIZE_LIMIT = 100

#: the trust an import may give (a principle needs the expert's exact quote)
IMPORT_TRUSTS = (Trust.PATTERN, Trust.INFERENCE)


# ---------------------------------------------------------------------------
# safe paths
# ---------------------------------------------------------------------------


def skills_root(root: Path | str) -> Path:
    """``root`` resolved (symlinks and all); a ValidationError when it is not a directory."""
    try:
        real = Path(root).expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValidationError(f"skills directory {str(root)!r} does not exist", field="skills_dir") from exc
    if not real.is_dir():
        raise ValidationError(f"skills directory {str(root)!r} is not a directory", field="skills_dir")
    return real


def _relative_parts(rel: object) -> tuple[str, ...]:
    """The components of a caller's relative path, or a ValidationError saying why it is refused."""
    if not isinstance(rel, str):
        raise ValidationError(f"a skill path must be a string, got {type(rel).__name__}", field="skill_paths")
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    if not rel.strip():
        raise ValidationError("a skill path must not be empty", field="skill_paths")
    if len(rel) > MAX_PATH_CHARS:
        raise ValidationError(f"skill path {shown!r} is longer than {MAX_PATH_CHARS} characters", field="skill_paths")
    if "\x00" in rel:
        raise ValidationError(f"skill path {shown!r} contains a NUL character", field="skill_paths")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        raise ValidationError(f"skill path {shown!r} is absolute; give a path relative to the skills directory",
                              field="skill_paths")
    parts = tuple(p for p in re.split(r"[/\\]", rel) if p not in ("", "."))
    if ".." in parts:
        raise ValidationError(f"skill path {shown!r} contains '..'; only paths inside the skills directory "
                              "are read", field="skill_paths")
    if not parts:
        raise ValidationError(f"skill path {shown!r} names the skills directory itself, not a .md file",
                              field="skill_paths")
    return parts


def resolve_skill_path(root: Path, rel: str) -> Path:
    """The real path of the skill file ``rel`` under ``root``; ValidationError unless it is an
    existing regular ``.md`` file of at most MAX_SKILL_FILE_BYTES inside ``root`` (after
    resolving symlinks).  Reads nothing: only resolves and stats."""
    base = skills_root(root)
    parts = _relative_parts(rel)
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    candidates = [parts]
    if len(parts) > 1 and parts[0] == base.name:  # spec 004 writes skill_paths=["skills/coding/..."]
        candidates.append(parts[1:])
    found: Path | None = None
    for cand in candidates:
        path = base.joinpath(*cand)
        if path.exists() or path.is_symlink():
            found = path
            break
    if found is None:
        raise ValidationError(f"skill path {shown!r}: no such file in the skills directory", field="skill_paths")
    if not found.name.lower().endswith(SKILL_SUFFIX):
        raise ValidationError(f"skill path {shown!r} is not a markdown file (only {SKILL_SUFFIX} files are read)",
                              field="skill_paths")
    try:
        real = found.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # dangling or looping link
        raise ValidationError(f"skill path {shown!r} is a broken link", field="skill_paths") from exc
    if real != base and not real.is_relative_to(base):
        raise ValidationError(f"skill path {shown!r} leads outside the skills directory (through a symbolic "
                              "link); only files inside it are read", field="skill_paths")
    if not real.name.lower().endswith(SKILL_SUFFIX):
        raise ValidationError(f"skill path {shown!r} links to a file that is not a {SKILL_SUFFIX} file",
                              field="skill_paths")
    st = real.stat()
    if stat.S_ISDIR(st.st_mode):
        raise ValidationError(f"skill path {shown!r} is a directory; name a {SKILL_SUFFIX} file", field="skill_paths")
    if not stat.S_ISREG(st.st_mode):
        raise ValidationError(f"skill path {shown!r} is not a regular file", field="skill_paths")
    if st.st_size > MAX_SKILL_FILE_BYTES:
        raise ValidationError(f"skill path {shown!r} is {st.st_size} bytes; skill files of at most "
                              f"{MAX_SKILL_FILE_BYTES} bytes are read", field="skill_paths")
    return real


def read_skill_file(root: Path, rel: str) -> tuple[Path, str]:
    """``(real path, text)`` of the skill file ``rel`` under ``root`` (see resolve_skill_path).

    The file is opened without following a link in its last component and at most
    MAX_SKILL_FILE_BYTES + 1 bytes are read, so a file swapped after the check cannot make
    this read outside the root or read without bound."""
    real = resolve_skill_path(root, rel)
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise ValidationError(f"skill path {shown!r} cannot be opened: {exc.strerror}", field="skill_paths") from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValidationError(f"skill path {shown!r} is not a regular file", field="skill_paths")
        data = fh.read(MAX_SKILL_FILE_BYTES + 1)
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise ValidationError(f"skill path {shown!r} is larger than {MAX_SKILL_FILE_BYTES} bytes",
                              field="skill_paths")
    if b"\x00" in data:
        raise ValidationError(f"skill path {shown!r} is not a text file", field="skill_paths")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"skill path {shown!r} is not UTF-8 text (byte {exc.start})",
                              field="skill_paths") from exc
    return real, text


def list_skill_files(root: Path) -> list[str]:
    """Relative POSIX paths of the ``.md`` files under ``root``, sorted; hidden (``.``) files
    and directories are left out and directory links are not followed (a file link is
    listed, and resolve_skill_path decides whether it may be read)."""
    base = skills_root(root)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = Path(dirpath).relative_to(base)
        found.extend((rel_dir / name).as_posix() for name in filenames
                     if not name.startswith(".") and name.lower().endswith(SKILL_SUFFIX))
    return sorted(found)


# ---------------------------------------------------------------------------
# markdown sections
# ---------------------------------------------------------------------------

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
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):]:
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
        recipe recipes instructions runbook runbooks playbook playbooks operation operations setup""".split()),
    KnowledgeType.RULE: frozenset(
        """principle principles rule rules gotcha gotchas pitfall pitfalls guideline guidelines constraint
        constraints caveat caveats warning warnings dont donts never must antipattern antipatterns
        criteria requirements""".split()),
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


def infer_type(rel: str, headings: Sequence[str], default: KnowledgeType | str | None = None) -> KnowledgeType:
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


def check_import_labels(knowledge_type: str | None, trust: str, category: str
                        ) -> tuple[KnowledgeType | None, Trust, Category]:
    """Parse the import's type / trust / category; a principle is refused (no quote to give)."""
    kind = parse(KnowledgeType, knowledge_type, field="type") if knowledge_type is not None else None
    t = parse(Trust, trust, field="trust")
    if t not in IMPORT_TRUSTS:
        raise ValidationError(
            "import-skills stores sections as trust 'pattern' (default) or 'inference': a 'principle' needs the "
            "expert's exact words as a quote, and a skill file does not say whose words it holds; store an "
            "expert's principle with store_knowledge and its quote", field="trust")
    return kind, t, parse(Category, category, field="category")


def skill_knowledge(rel: str, text: str, *, knowledge_type: KnowledgeType | str | None = None,
                    trust: Trust | str = Trust.PATTERN, category: Category | str = Category.CREATIVE
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
            names = [knowledge_name(rel, path, "" if i == 1 else f" (part {i})") for i in range(1, len(parts) + 1)]
            if used.isdisjoint(names):
                break
            n += 1
            path = f"{section.heading_path} ({n})"
        used.update(names)
        kind = infer_type(rel, section.headings, knowledge_type)
        items.extend(KnowledgeIn(name=name, content=part, type=kind, trust=t, category=cat, source=source)
                     for name, part in zip(names, parts, strict=True))
    return items


# ---------------------------------------------------------------------------
# import-skills
# ---------------------------------------------------------------------------

MAX_REPORTED_FILES = 20


async def import_skill_tree(ks: KnowledgeStore, directory: Path, *, knowledge_type: str | None = None,
                            trust: str = "pattern", category: str = "creative", batch_size: int = 200,
                            progress: bool = True) -> dict[str, Any]:
    """Store every section of the ``.md`` files under ``directory`` (sorted) as knowledge, in
    batches of ``batch_size`` items (one transaction each) with ``existing="skip"``: a name
    already taken is counted as skipped, so running it again stores nothing new.

    A file that cannot be read safely (a link leading out, over the size cap, not UTF-8) is
    reported in ``rejected_files`` and the others are imported."""
    kind, t, cat = check_import_labels(knowledge_type, trust, category)
    if batch_size < 1:
        raise ValidationError("batch size must be at least 1", field="batch_size")
    root = skills_root(directory)
    files = list_skill_files(root)
    report: dict[str, Any] = {"directory": str(root), "namespace": ks.graph.namespace, "files": 0,
                              "sections": 0, "stored": 0, "skipped": 0, "rejected": 0, "rejected_files": []}
    batch: list[KnowledgeIn] = []
    names: set[str] = set()

    async def flush() -> None:
        if batch:
            stored = await ks.store(batch, existing="skip")
            report["stored"] += len(stored)
            report["skipped"] += len(batch) - len(stored)
            batch.clear()

    with tqdm(total=len(files), desc="import skills", unit="file", file=sys.stderr, disable=not progress,
              dynamic_ncols=True) as bar:
        for rel in files:
            try:
                _, text = read_skill_file(root, rel)
            except ValidationError as exc:
                report["rejected"] += 1
                if len(report["rejected_files"]) < MAX_REPORTED_FILES:
                    report["rejected_files"].append({"path": rel, "error": str(exc)})
                log.warning("import-skills: %s", exc)
                bar.update(1)
                continue
            items = skill_knowledge(rel, text, knowledge_type=kind, trust=t, category=cat)
            report["files"] += 1
            report["sections"] += len(items)
            for item in items:
                if item.name in names:  # only a file named like another's heading path can do this
                    report["skipped"] += 1
                    continue
                names.add(item.name)
                batch.append(item)
                if len(batch) >= batch_size:
                    await flush()
            bar.update(1)
        await flush()
    return report


async def run_import_skills(settings: Settings, directory: Path | str, *, knowledge_type: str | None = None,
                            trust: str = "pattern", category: str = "creative", batch_size: int = 200,
                            progress: bool = True, clock: Clock | None = None) -> dict[str, Any]:
    """``kg-neo4j import-skills DIR``: import the skill files under ``directory`` into
    ``settings.namespace`` as knowledge (embedded with the configured model); returns the
    report the CLI prints: ``{directory, namespace, files, sections, stored, skipped,
    rejected, rejected_files, seconds}``."""
    started = time.monotonic()
    check_import_labels(knowledge_type, trust, category)
    if not 1 <= batch_size <= settings.max_batch_items:
        raise ValidationError(f"batch size must be between 1 and {settings.max_batch_items}", field="batch_size")
    skills_root(directory)
    from kg_neo4j.server.app import open_runtime  # here: the server imports this module

    # connect, bootstrap and a GraphStore with the configured embedder, exactly as the server opens its store
    async with open_runtime(settings, clock or SystemClock()) as runtime:
        report = await import_skill_tree(KnowledgeStore(runtime.store), Path(directory),
                                         knowledge_type=knowledge_type, trust=trust, category=category,
                                         batch_size=batch_size, progress=progress)
    report["seconds"] = round(time.monotonic() - started, 3)
    log.info("import-skills %s: %d files, %d sections, %d stored, %d skipped, %d files rejected",
             report["directory"], report["files"], report["sections"], report["stored"], report["skipped"],
             report["rejected"])
    return report


# ---------------------------------------------------------------------------
# crystallize_skill
# ---------------------------------------------------------------------------

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
    return frozenset(_fold(w) for w in _WORD.findall(text.lower())
                     if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))


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
    similarity: float | None = Field(default=None, description="Cosine similarity of the embeddings "
                                                               "(only with an embedding model)")


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
    reflected: list[ReflectedKnowledge] = Field(description="Relevant knowledge the skill files already reflect")
    unsynced: list[UnsyncedKnowledge] = Field(description="Relevant knowledge not yet in the skill files, most "
                                                          "relevant first: update the skill files with these")
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


def _load_skill_sections(root: Path, skill_paths: Sequence[str]) -> tuple[list[SkillFileInfo], list[_SkillSection]]:
    if not skill_paths:
        raise ValidationError("give at least one skill path", field="skill_paths")
    if len(skill_paths) > MAX_SKILL_PATHS:
        raise ValidationError(f"{len(skill_paths)} skill paths; at most {MAX_SKILL_PATHS} in one call",
                              field="skill_paths")
    base = skills_root(root)
    read: list[tuple[Path, str]] = []
    total = 0
    for rel in skill_paths:  # every path is checked before any work
        read.append(read_skill_file(base, rel))
        total += len(read[-1][1])
        if total > MAX_SKILL_CHARS_PER_CALL:
            raise ValidationError(f"the skill files hold more than {MAX_SKILL_CHARS_PER_CALL} characters together; "
                                  "check fewer files per call", field="skill_paths")
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
    hits = await graph.search_memory(topic, limit=min(MAX_SEARCH_LIMIT, max(2 * limit, 10)),
                                     entity_types=[k.value for k in KnowledgeType])
    names = list(dict.fromkeys(h.name for h in hits.hits))
    if not names:
        return []
    items = {k.name: k for k in await KnowledgeStore(graph).get(names)}  # only what really is knowledge
    return [items[n] for n in names if n in items]


async def crystallize(graph: GraphStore, root: Path, topic: str, skill_paths: Sequence[str], *,
                      limit: int = DEFAULT_CRYSTALLIZE_LIMIT) -> CrystallizeResult:
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
            topic_vec, item_vecs, section_vecs = matrix[0], matrix[1: 1 + len(items)], matrix[1 + len(items):]
            # vector search returns nearest neighbours however far: keep what is about the topic
            topic_words = content_words(topic)
            keep = [i for i in range(len(items))
                    if float(item_vecs[i] @ topic_vec) >= TOPIC_MIN_SIMILARITY
                    or not topic_words.isdisjoint(content_words(texts[i]))][:limit]
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
            key = (cov >= LEXICAL_THRESHOLD or (sim is not None and sim >= SEMANTIC_THRESHOLD), max(cov, sim or 0.0))
            if best is None or key > best:
                best = key
                match = BestMatch(path=sec.path, section=sec.section.heading_path, line=sec.section.line,
                                  coverage=round(cov, 3), similarity=None if sim is None else round(sim, 3))
        if best is not None and best[0] and match is not None:
            reflected.append(ReflectedKnowledge(name=item.name, type=item.type, trust=item.trust, bestMatch=match))
        else:
            unsynced.append(UnsyncedKnowledge(name=item.name, type=item.type, trust=item.trust,
                                              category=item.category, content=item.content or "", quote=item.quote,
                                              source=item.source, bestMatch=match))
    return CrystallizeResult(topic=topic, files=files, reflected=reflected, unsynced=unsynced,
                             method="lexical+semantic" if similarity is not None else "lexical",
                             semanticThreshold=SEMANTIC_THRESHOLD if similarity is not None else None)

