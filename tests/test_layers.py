"""The layer order of ``kg_neo4j`` (docs/development.md, "Layout", "Layers"): a module imports its own layer or a
lower one, never a higher one, whether at the top of the file or inside a function (a lazy import
is still a dependency).  Read from the source with ``ast``: nothing is imported to check it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kg_neo4j"

#: Top to bottom; each layer lists module prefixes (the longest matching prefix places a module).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("entry points", ("kg_neo4j.__main__", "kg_neo4j.cli", "kg_neo4j.cli_parsers", "kg_neo4j.commands")),
    ("MCP server", ("kg_neo4j.server",)),
    ("hooks and browser", ("kg_neo4j.hooks", "kg_neo4j.browser")),
    ("runtime", ("kg_neo4j.runtime",)),
    ("workflows", ("kg_neo4j.skills", "kg_neo4j.transfer", "kg_neo4j.peers")),
    ("store", ("kg_neo4j.store",)),
    (
        "statements, models, embeddings, local server",
        (
            "kg_neo4j.cypher",
            "kg_neo4j.embeddings",
            "kg_neo4j.schemas",
            "kg_neo4j.models",
            "kg_neo4j.input_rules",
            "kg_neo4j.localdb",
            "kg_neo4j.knowledge.recall",
            "kg_neo4j.auth",
        ),
    ),
    (
        "pure rules",
        (
            "kg_neo4j",
            "kg_neo4j.knowledge",
            "kg_neo4j.fusion",
            "kg_neo4j.resolution",
            "kg_neo4j.text",
            "kg_neo4j.clock",
            "kg_neo4j.errors",
            "kg_neo4j.settings",
            "kg_neo4j.json_types",
            "kg_neo4j.events",
            "kg_neo4j.formats",
        ),
    ),
]

#: Import cycles tolerated for now (none): an entry is a cycle someone is removing.
KNOWN_CYCLES: list[set[str]] = []
#: Private names imported from another module, likewise tolerated for now (none).
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[int, str, str | None]]:
    """``(line, module, imported name or None)`` for every import in the file, nested ones included;
    ``from pkg import sub`` counts as importing ``pkg.sub`` when that is a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield (node.lineno, sub, None) if sub in MODULES else (node.lineno, module, alias.name)


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def _graph() -> dict[str, set[str]]:
    return {m: {t for _, t, _ in _imports(m, p) if t in MODULES and t != m} for m, p in MODULES.items()}


def test_every_module_has_a_layer() -> None:
    # "kg_neo4j" itself places every module; a new top-level module must be put in its layer on purpose
    unplaced = [
        m
        for m in MODULES
        if m != "kg_neo4j"
        and m.count(".") == 1
        and not any(m == p or m.startswith(p + ".") for _, ps in LAYERS for p in ps if p != "kg_neo4j")
    ]
    assert unplaced == [], f"add these to a layer in LAYERS and in the README's list: {unplaced}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_imports_only_its_layer_or_lower(module: str) -> None:
    own = _layer(module)
    upward = [
        f"line {line}: {target} ({LAYERS[_layer(target)][0]})"
        for line, target, _ in _imports(module, MODULES[module])
        if target.startswith("kg_neo4j") and _layer(target) < own
    ]
    assert upward == [], f"{module} ({LAYERS[own][0]}) imports a higher layer: {upward}"


def test_no_import_cycles() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert [c for c in cycles if c not in KNOWN_CYCLES] == []


def test_no_private_name_imported_from_another_module() -> None:
    private = {
        (m, target, name)
        for m, p in MODULES.items()
        for _, target, name in _imports(m, p)
        if name and name.startswith("_") and not name.startswith("__") and target.startswith("kg_neo4j")
    }
    assert private - KNOWN_PRIVATE == set()


def test_hooks_stay_out_of_the_server_and_the_embedder() -> None:
    """Hooks answer in about a second: no server, and no embedder (torch) on their path (docs/hooks.md)."""
    bad = [
        (m, t)
        for m, p in MODULES.items()
        if m.startswith("kg_neo4j.hooks")
        for _, t, _ in _imports(m, p)
        if t.startswith(("kg_neo4j.server", "kg_neo4j.embeddings", "torch", "sentence_transformers"))
    ]
    assert bad == []


def test_the_docs_state_the_same_order() -> None:
    """docs/development.md's "Layers" list names the layers of LAYERS, top to bottom, with their modules."""
    readme = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    block = readme.split("Layers, top to bottom", 1)[1].split("\n\n", 2)[1]
    stated = [re.findall(r"`([\w./]+)`", line) for line in block.splitlines() if re.match(r"\s*\d+\.", line)]
    expected = [
        [
            p.removeprefix("kg_neo4j.").replace(".", "/") if p != "kg_neo4j" else "kg_neo4j/__init__"
            for p in prefixes
        ]
        for _, prefixes in LAYERS
    ]
    assert stated == expected
