"""Loads the named Cypher statements kept in ``cypher/*.cypher``.

File format (one statement per block)::

    // name: create_entities
    // Create the entities of one batch, skipping names that already exist.
    UNWIND $rows AS row
    ...

A block starts at a ``// name: <identifier>`` line, must be followed by a one-line
``//`` comment that says what it does, and runs until the next header.  A malformed
file raises :class:`~kg_neo4j.errors.CypherFileError` with ``file:line``.
Python code calls statements by name: ``queries["create_entities"]``.

The top-level ``cypher/`` directory of the repository is the only copy.  Distributions carry it
as ``kg_neo4j/_cypher/`` (the mapping is in ``pyproject.toml``), read here through
``importlib.resources`` so an installed wheel, a zip and a checkout all work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from kg_neo4j.errors import CypherFileError

_HEADER = re.compile(r"^//\s*name:\s*(?P<name>\S*)\s*$")
_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Statement:
    name: str
    doc: str
    text: str
    file: str
    line: int

    def __str__(self) -> str:  # pragma: no cover - debugging aid
        return f"{self.name} ({self.file}:{self.line})"


def default_cypher_dir() -> Traversable:
    """The statements: ``kg_neo4j/_cypher/`` inside an installed wheel or sdist build (a plain
    directory or a zip), else ``cypher/`` of the checkout the package is imported from
    (editable installs and source trees, where ``_cypher/`` does not exist)."""
    packaged = resources.files("kg_neo4j").joinpath("_cypher")
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / "cypher"
    if checkout.is_dir():
        return checkout
    raise CypherFileError(
        f"no Cypher statements: neither {packaged} (installed) nor {checkout} (checkout) exists"
    )


def parse_file(path: Traversable) -> list[Statement]:
    lines = path.read_text(encoding="utf-8").splitlines()
    statements: list[Statement] = []
    current: dict[str, object] | None = None
    body: list[str] = []

    def close(end_line: int) -> None:
        if current is None:
            return
        text = "\n".join(body).strip()
        if not text:
            raise CypherFileError(
                f"{path}:{current['line']}: statement {current['name']!r} has no Cypher body"
            )
        if text.endswith(";"):
            text = text[:-1].rstrip()
        statements.append(
            Statement(str(current["name"]), str(current["doc"]), text, str(path), int(str(current["line"])))
        )

    i = 0
    while i < len(lines):
        raw = lines[i]
        lineno = i + 1
        m = _HEADER.match(raw.strip())
        if m:
            close(lineno)
            name = m.group("name")
            if not _IDENT.match(name):
                raise CypherFileError(f"{path}:{lineno}: bad statement name {name!r} (use lower_snake_case)")
            doc_line = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if not doc_line.startswith("//") or _HEADER.match(doc_line) or not doc_line.lstrip("/").strip():
                raise CypherFileError(
                    f"{path}:{lineno + 1}: statement {name!r} needs a one-line // comment after its header"
                )
            current = {"name": name, "doc": doc_line.lstrip("/").strip(), "line": lineno}
            body = []
            i += 2
            continue
        if current is None:
            if raw.strip() and not raw.strip().startswith("//"):
                raise CypherFileError(
                    f"{path}:{lineno}: Cypher outside a named block (start blocks with '// name: ...')"
                )
        else:
            body.append(raw)
        i += 1
    close(len(lines))
    return statements


class Queries:
    """All named statements of a directory, looked up by name."""

    def __init__(self, directory: Traversable | None = None) -> None:
        self.directory = directory or default_cypher_dir()
        self._by_name: dict[str, Statement] = {}
        # iterdir, not glob: a directory inside a zip is a Traversable, which has no glob
        files = sorted(
            (f for f in self.directory.iterdir() if f.name.endswith(".cypher") and f.is_file()),
            key=lambda f: f.name,
        )
        if not files:
            raise CypherFileError(f"{self.directory}: no .cypher files")
        for path in files:
            for st in parse_file(path):
                if st.name in self._by_name:
                    other = self._by_name[st.name]
                    raise CypherFileError(
                        f"{st.file}:{st.line}: statement {st.name!r} is already defined at {other.file}:{other.line}"
                    )
                self._by_name[st.name] = st

    def __getitem__(self, name: str) -> str:
        return self._by_name[name].text

    def statement(self, name: str) -> Statement:
        return self._by_name[name]

    def names(self) -> list[str]:
        return sorted(self._by_name)


_QUERIES: Queries | None = None


def queries() -> Queries:
    """The project's statements, loaded once (at first use, which is at import of the store)."""
    global _QUERIES
    if _QUERIES is None:
        _QUERIES = Queries()
    return _QUERIES
