"""cypher/*.cypher: every statement loads by name, plans on the real Neo4j, and a
malformed file is reported with file:line."""

from __future__ import annotations

import re
from pathlib import Path

import neo4j
import pytest

from kg_neo4j.cypher import Queries, default_cypher_dir, parse_file, queries
from kg_neo4j.errors import CypherFileError

ROOT = Path(__file__).resolve().parent.parent


def test_every_statement_has_a_name_and_a_comment() -> None:
    q = queries()
    assert len(q.names()) >= 15
    for name in q.names():
        st = q.statement(name)
        assert st.doc, name
        assert st.text.strip(), name
        assert Path(st.file).parent == default_cypher_dir()


def test_every_statement_plans_on_neo4j(sync_driver) -> None:  # type: ignore[no-untyped-def]
    q = queries()
    records, _, _ = sync_driver.execute_query("CALL dbms.components() YIELD name, versions RETURN name, versions")
    cypher25 = any(r["name"] == "Cypher" and "25" in r["versions"] for r in records)
    if cypher25:  # a SEARCH plans only against an index that exists (the bootstrap makes these)
        for name in ("schema_observation_vector_filtered", "schema_entity_vector_filtered"):
            sync_driver.execute_query(q[name], dimension=384)
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
    assert refused == (0 if cypher25 else sum(q[n].startswith("CYPHER 25") and not n.startswith("schema_")
                                                     for n in q.names()))
    assert cypher25 or refused > 0  # the 2026 statements are checked to be refused on 5.26

def test_every_statement_the_code_calls_exists() -> None:
    called: set[str] = set()
    for path in (ROOT / "kg_neo4j").rglob("*.py"):
        text = path.read_text()
        called |= set(re.findall(r'\.run\(\s*"([a-z_]+)"', text))
        called |= set(re.findall(r'q\["([a-z_]+)"\]', text))
    assert called, "found no statement names in the code"
    missing = called - set(queries().names())
    assert not missing


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


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.cypher").write_text("// name: same\n// first\nRETURN 1\n")
    (tmp_path / "b.cypher").write_text("\n// name: same\n// second\nRETURN 2\n")
    with pytest.raises(CypherFileError) as info:
        Queries(tmp_path)
    assert f"{tmp_path / 'b.cypher'}:2:" in str(info.value)
    assert "already defined" in str(info.value)


def test_statements_are_parameterised_not_formatted() -> None:
    """No Python code builds Cypher text: statements come only from cypher/ by name."""
    offenders = []
    pattern = re.compile(r"""f["'][^"']*\b(MATCH|MERGE|CREATE|DELETE|SET|WHERE|UNWIND)\b""")
    for path in (ROOT / "kg_neo4j").rglob("*.py"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path}:{i}")
    assert offenders == []
