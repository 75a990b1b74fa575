"""cypher/*.cypher: every statement loads by name, plans on the real Neo4j, and a
malformed file is reported with file:line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import neo4j
import pytest

from kg_neo4j.cypher import Queries, default_cypher_dir, parse_file, queries
from kg_neo4j.errors import CypherFileError

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.unit
def test_every_statement_has_a_name_and_a_comment() -> None:
    q = queries()
    assert len(q.names()) >= 15
    for name in q.names():
        st = q.statement(name)
        assert st.doc, name
        assert st.text.strip(), name
        assert Path(st.file).parent == default_cypher_dir()


def _cypher25(sync_driver) -> bool:  # type: ignore[no-untyped-def]
    """Whether the server runs Cypher 25; if so, with the filtered vector indexes its SEARCH statements
    plan against (a SEARCH plans only against an index that exists; the bootstrap makes these)."""
    records, _, _ = sync_driver.execute_query(
        "CALL dbms.components() YIELD name, versions RETURN name, versions"
    )
    cypher25 = any(r["name"] == "Cypher" and "25" in r["versions"] for r in records)
    if cypher25:
        q = queries()
        for name in ("schema_observation_vector_filtered", "schema_entity_vector_filtered"):
            sync_driver.execute_query(q[name], dimension=384)
    return cypher25


def test_every_statement_plans_on_neo4j(sync_driver) -> None:  # type: ignore[no-untyped-def]
    q = queries()
    cypher25 = _cypher25(sync_driver)
    planned = refused = 0
    for name in q.names():
        if name.startswith("schema_"):
            continue  # schema commands cannot be EXPLAINed; the bootstrap runs them
        if q[name].startswith("CYPHER 25") and not cypher25:
            with pytest.raises(neo4j.exceptions.ClientError, match="25"):
                sync_driver.execute_query("EXPLAIN " + q[name])
            refused += 1
            continue
        sync_driver.execute_query("EXPLAIN " + q[name])
        planned += 1
    assert planned >= 10
    assert refused == (
        0
        if cypher25
        else sum(q[n].startswith("CYPHER 25") and not n.startswith("schema_") for n in q.names())
    )
    assert cypher25 or refused > 0  # the 2026 statements are checked to be refused on 5.26


def _operators(plan: dict[str, object]) -> list[tuple[str, str]]:
    args = plan.get("args")
    details = str(args.get("Details", "")) if isinstance(args, dict) else ""
    children = plan.get("children")
    out = [(str(plan.get("operatorType", "")).split("@")[0], details)]
    for child in children if isinstance(children, list) else []:
        out += _operators(child)
    return out


def test_a_statement_of_one_namespace_never_reads_every_namespace(sync_driver) -> None:  # type: ignore[no-untyped-def]
    """A statement scoped to one namespace (``$ns``, never null) reaches its nodes through an index that
    starts with the namespace, not by scanning a label over every namespace: its cost then grows with its
    own namespace, not with the database (issue 39: find_duplicates 2.2x slower beside 1M observations,
    the entity count read all 105,000 entities).  Database-wide sweeps take ``$ns IS NULL`` for "all"."""
    q = queries()
    cypher25 = _cypher25(sync_driver)
    checked = 0
    scans: dict[str, list[str]] = {}
    for name in q.names():
        text = q[name]
        if name.startswith("schema_") or "$ns" not in text or "$ns IS NULL" in text:
            continue
        if text.startswith("CYPHER 25") and not cypher25:
            continue
        with sync_driver.session() as session:
            plan = session.run("EXPLAIN " + text).consume().plan
        found = [
            f"{op} {details}"
            for op, details in _operators(plan)
            if "NodeByLabel" in op or op == "AllNodesScan"
        ]
        if found:
            scans[name] = found
        checked += 1
    assert checked >= 50
    assert scans == {}


_RUNNERS = {"run", "read", "write", "auto"}  # store/executor.py's methods (and the driver's run)


def _called_statements(tree: ast.AST) -> set[str]:
    """Statement names a module calls: the literal first argument of ``.read/.write/.auto/.run(...)``,
    ``q["..."]``, the strings of its dispatch tables (module-level names containing ``STATEMENT``) and
    the names a ``VectorStatements(...)`` plan is made of."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (isinstance(node.func, ast.Attribute) and node.func.attr in _RUNNERS)
        ):
            names.add(node.args[0].value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "VectorStatements"
        ):
            names |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "q"
            and isinstance(node.slice, ast.Constant)
        ):
            names.add(str(node.slice.value))
    for stmt in getattr(tree, "body", []):
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and "STATEMENT" in t.id for t in targets) and stmt.value is not None:
            table = (
                stmt.value.values if isinstance(stmt.value, ast.Dict) else [stmt.value]
            )  # a dict: its values
            names |= {
                c.value
                for v in table
                if v is not None
                for c in ast.walk(v)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    return {n for n in names if re.fullmatch(r"[a-z][a-z0-9_]*", n)}


def _computed_names(tree: ast.AST, *, store: bool) -> list[int]:
    """Lines where a statement name is built from pieces (an f-string, a concatenation, a format call)
    instead of being a literal or a dispatch-table entry the test above can see."""

    def built(arg: ast.expr) -> bool:  # an f-string, or a name piece glued on with +
        return (
            isinstance(arg, ast.JoinedStr)
            or isinstance(arg, ast.BinOp)
            and any(
                isinstance(side, ast.Constant)
                and isinstance(side.value, str)
                and re.fullmatch(r"_?[a-z0-9_]+_?", side.value)
                and "_" in side.value
                for side in (arg.left, arg.right)
            )
        )

    lines = []
    for node in ast.walk(tree):
        # an f-string that can only make an identifier such as f"{kind}_edges_find", wherever it is assigned
        if (
            store
            and isinstance(node, ast.JoinedStr)
            and node.values
            and all(
                isinstance(v, ast.FormattedValue)
                or isinstance(v, ast.Constant)
                and isinstance(v.value, str)
                and re.fullmatch(r"[a-z0-9_]*_[a-z0-9_]*", v.value)
                for v in node.values
            )
            and any(isinstance(v, ast.Constant) for v in node.values)
        ):
            lines.append(node.lineno)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _RUNNERS
            and node.args
            and built(node.args[0])
        ):
            lines.append(node.lineno)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, (ast.Name, ast.Attribute))
            and getattr(node.value, "id", getattr(node.value, "attr", "")) == "q"
            and built(node.slice)
        ):
            lines.append(node.lineno)
    return lines


@pytest.mark.unit
def test_every_statement_the_code_calls_exists() -> None:
    called: set[str] = set()
    for path in (ROOT / "kg_neo4j").rglob("*.py"):
        called |= _called_statements(ast.parse(path.read_text()))
    assert called, "found no statement names in the code"
    # the names that are not statements are other .read()/.write() calls' literal arguments
    missing = called - set(queries().names()) - {"r", "w", "rb", "wb"}
    assert not missing
    # every statement the store runs is seen (the dispatch tables included)
    for name in (
        "weak_edges_find",
        "reembed_next_observations",
        "search_memory_fulltext",
        "search_memory_vector_filtered",
        "create_entities",
        "traverse_graph",
    ):
        assert name in called, name


@pytest.mark.unit
def test_statement_names_are_never_built_with_f_strings() -> None:
    """A name built at run time would escape the test above: dispatch tables instead.  In store/ (which
    runs the statements) no f-string may make an identifier at all; elsewhere (tool names are built so)
    none may be passed to a runner."""
    offenders = [
        f"{path}:{line}"
        for path in (ROOT / "kg_neo4j").rglob("*.py")
        for line in _computed_names(ast.parse(path.read_text()), store=path.parent.name == "store")
    ]
    assert offenders == []


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("MATCH (n) RETURN n\n", 1, "outside a named block"),
        ("// name: ok\n// fine\nRETURN 1\n\n// name: Bad-Name\n// x\nRETURN 2\n", 5, "bad statement name"),
        ("// name: no_doc\nRETURN 1\n", 2, "one-line // comment"),
        ("// comment only\n\n// name: empty\n// nothing here\n\n", 3, "no Cypher body"),
    ],
)
def test_malformed_file_reports_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = tmp_path / "bad.cypher"
    path.write_text(text)
    with pytest.raises(CypherFileError) as info:
        parse_file(path)
    assert f"{path}:{line}:" in str(info.value)
    assert fragment in str(info.value)


@pytest.mark.unit
def test_duplicate_names_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.cypher").write_text("// name: same\n// first\nRETURN 1\n")
    (tmp_path / "b.cypher").write_text("\n// name: same\n// second\nRETURN 2\n")
    with pytest.raises(CypherFileError) as info:
        Queries(tmp_path)
    assert f"{tmp_path / 'b.cypher'}:2:" in str(info.value)
    assert "already defined" in str(info.value)


@pytest.mark.unit
def test_statements_are_parameterised_not_formatted() -> None:
    """No Python code builds Cypher text: statements come only from cypher/ by name."""
    offenders = []
    pattern = re.compile(r"""f["'][^"']*\b(MATCH|MERGE|CREATE|DELETE|SET|WHERE|UNWIND)\b""")
    for path in (ROOT / "kg_neo4j").rglob("*.py"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path}:{i}")
    assert offenders == []
