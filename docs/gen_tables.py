"""The tool and profile tables of README.md and docs/*.md, generated from the tool declarations.

``python docs/gen_tables.py`` rewrites every block between ``<!-- tools:begin NAME -->`` and
``<!-- tools:end -->``; ``python docs/gen_tables.py --check`` changes nothing and exits 1 naming each
file whose committed text differs from what the declarations give (tests/test_generated_docs.py runs
the same check).  The declarations are the only source: ``kg_neo4j.server.app.ALL_TOOLS`` (name,
description, profiles, annotations, the example call when one is declared) and ``profile_tools``,
with the schema-generated tools of the shipped example schemas on top.

Blocks (NAME):

* ``default-tools``: the tools of the ``default`` profile, one line each;
* ``profile-counts``: each profile with its tool count and what it is for;
* ``profile-lists``: each profile with every tool it lists;
* ``tool-reference``: every built-in tool: profiles, the grant scope it needs (docs/team.md),
  annotations, its one-line summary;
* ``schema-tools``: the tools the shipped example schemas generate;
* ``tool-examples``: the example call of each tool that declares one.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The files that may hold generated blocks (a block elsewhere is not rewritten).
FILES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

BLOCK = re.compile(r"(<!-- tools:begin ([\w-]+) -->\n)(.*?)(<!-- tools:end -->)", re.DOTALL)

#: What each profile is for (the prose of the profile tables; the names and counts are generated).
PROFILE_PURPOSE = {
    "reference": "a strict drop-in for the reference memory server: its 9 tools and schemas",
    "default": "the reference's tools with paging and `asOf`, plus recall, traversal and history",
    "memorymesh": "MemoryMesh's dialect: its static tools and 3 tools per node schema",
    "knowledge": "the apprenticeship knowledge layer: trust, decay, experiences, maintenance",
    "all": "everything (MemoryMesh's three reads renamed `*_nodes_graph`)",
}


#: A first sentence longer than this is cut before its first top-level ": " (what follows is detail).
LONG = 120


def _top_level(text: str) -> Iterator[int]:
    """The indexes of ``text``'s characters outside brackets and double quotes (an initial such as
    "A. Smith" inside a quoted example ends no sentence)."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted:
            depth += (ch in "({[") - (ch in ")}]")
            if depth == 0:
                yield i


def _before_colon(sentence: str) -> str:
    for i in _top_level(sentence):
        if sentence[i] == ":" and sentence[i + 1 : i + 2] == " ":
            return sentence[:i]
    return sentence


def _first_sentence(text: str) -> str:
    for i in _top_level(text):
        if text[i] in ".!?" and re.match(r"\s+[A-Z`(]|$", text[i + 1 :]):
            return text[: i + 1]
    return text


def _summary(description: str) -> str:
    """The first sentence of a tool's description, as one table cell."""
    text = " ".join(description.split())
    first = _first_sentence(text)
    if len(first) > LONG:
        first = _before_colon(first)
    if not first.endswith((".", "!", "?")):
        first += "."
    return first.replace("|", "\\|")


def _annotations(spec: Any) -> str:
    if spec.read_only:
        return "read-only"
    marks = [m for m, on in (("destructive", spec.destructive), ("idempotent", spec.idempotent)) if on]
    return ", ".join(marks)


def _schemas() -> list[Any]:
    from kg_neo4j.schemas import load_schemas
    from kg_neo4j.server.app import BUILTIN_TOOL_NAMES

    return load_schemas(reserved=BUILTIN_TOOL_NAMES)


def _profiles() -> Sequence[str]:
    from kg_neo4j.settings import PROFILES

    return PROFILES


def _listed(profile: str) -> list[Any]:
    from kg_neo4j.server.app import profile_tools

    return profile_tools(profile, _schemas())


def _generated_names() -> set[str]:
    return {n for s in _schemas() for n in s.tool_names}


def default_tools() -> str:
    lines = [f"- `{s.name}`: {_summary(s.description)}" for s in _listed("default")]
    return "\n".join(lines)


def _per_profile() -> list[tuple[str, list[str], int]]:
    """(profile, the names it lists, how many of them the node schemas generate) for every profile."""
    generated = _generated_names()
    out = []
    for p in _profiles():
        names = [s.name for s in _listed(p)]
        out.append((p, names, sum(n in generated for n in names)))
    return out


def profile_counts() -> str:
    rows = ["| profile | tools | of which schema-generated | what it is for |", "| --- | --- | --- | --- |"]
    rows += [
        f"| `{p}` | {len(names)} | {made} | {PROFILE_PURPOSE.get(p, '')} |"
        for p, names, made in _per_profile()
    ]
    return "\n".join(rows)


def profile_lists() -> str:
    generated = _generated_names()
    rows = ["| profile | count | built-in tools | schema-generated |", "| --- | --- | --- | --- |"]
    for p, names, made in _per_profile():
        built = ", ".join(f"`{n}`" for n in names if n not in generated) or "none"
        rows.append(f"| `{p}` | {len(names)} | {built} | {made or 'none'} |")
    return "\n".join(rows)


def tool_reference() -> str:
    from kg_neo4j.server.app import ALL_TOOLS

    rows = [
        "| tool | profiles | scope | annotations | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in ALL_TOOLS:
        profiles = ", ".join(s.profiles)
        rows.append(
            f"| `{s.name}` | {profiles} | {s.scope} | {_annotations(s)} | {_summary(s.description)} |"
        )
    return "\n".join(rows)


def schema_tools() -> str:
    rows = ["| node type | tools |", "| --- | --- |"]
    for schema in _schemas():
        rows.append(f"| `{schema.node_type}` | {', '.join(f'`{n}`' for n in schema.tool_names)} |")
    return "\n".join(rows)


def tool_examples() -> str:
    from kg_neo4j.server.app import ALL_TOOLS

    rows = []
    for s in ALL_TOOLS:
        example = getattr(s, "example", None)
        if example is not None:
            call = json.dumps(example, ensure_ascii=False)
            rows.append(f"- `{s.name}` ({', '.join(s.profiles)}): `{call}`")
    return "\n".join(rows) or "No tool declares an example call yet."


BLOCKS: dict[str, Callable[[], str]] = {
    "default-tools": default_tools,
    "profile-counts": profile_counts,
    "profile-lists": profile_lists,
    "tool-reference": tool_reference,
    "schema-tools": schema_tools,
    "tool-examples": tool_examples,
}


def render(text: str, where: str = "") -> str:
    """``text`` with every generated block rewritten; an unknown block name is an error naming it."""
    cache: dict[str, str] = {}

    def fill(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in BLOCKS:
            raise SystemExit(f"{where}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        if name not in cache:
            cache[name] = BLOCKS[name]()
        return f"{m.group(1)}{cache[name]}\n{m.group(4)}"

    return BLOCK.sub(fill, text)


def drifted() -> list[Path]:
    """The files whose committed text differs from the generated."""
    out = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        if render(text, str(path)) != text:
            out.append(path)
    return out


def main(argv: Sequence[str]) -> int:
    if importlib.util.find_spec("kg_neo4j") is None:  # run from a checkout without installing it
        sys.path.insert(0, str(ROOT))
    if "--check" in argv:
        stale = drifted()
        for path in stale:
            print(f"{path.relative_to(ROOT)}: generated tables differ; run python docs/gen_tables.py")
        return 1 if stale else 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        new = render(text, str(path))
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
