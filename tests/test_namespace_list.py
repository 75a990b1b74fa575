"""Issue 39 item 1: ``kg-neo4j namespace list`` gives each namespace's entities, observations (current and
retired), relations and last write, as a table or ``--json``.  Only the test's own namespaces are asserted:
other tests' come and go on the shared Neo4j."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from support.namespaces import SEEDED, list_rows, namespace_cli, seed
from support.servers import Neo4jInfo, stdio_session

#: the server's and this process's clocks are one machine's, read a moment apart
TOLERANCE = timedelta(seconds=2)


async def test_list_counts_each_namespace(neo4j_info: Neo4jInfo, namespace: str) -> None:
    full, small = f"{namespace}-full", f"{namespace}-small"
    start = datetime.now(UTC)
    await seed(neo4j_info, full)
    async with stdio_session(neo4j_info, "--namespace", small) as s:
        done = await s.call_tool(
            "create_entities",
            {"entities": [{"name": "Solo", "entityType": "thing", "observations": ["one", "two"]}]},
        )
        assert not done.is_error
    end = datetime.now(UTC)

    rows = list_rows(neo4j_info, [full, small])
    assert set(rows) == {full, small}
    for row in rows.values():
        last = datetime.fromisoformat(row.pop("last_write"))
        assert start - TOLERANCE <= last <= end + TOLERANCE
    assert rows[full] == {"namespace": full, **SEEDED}
    assert rows[small] == {
        "namespace": small,
        "entities": 1,
        "observations": 2,
        "retired_observations": 0,
        "relations": 0,
        "placeholders": 0,
        "aliases": 0,
        "expired": 0,
        "merges": 0,
        "nodes": 1,
    }

    table = namespace_cli(neo4j_info, "list")
    assert table.returncode == 0, table.stderr
    lines = {line.split()[0]: line.split() for line in table.stdout.splitlines()[1:]}
    assert table.stdout.splitlines()[0].split()[:5] == [
        "namespace",
        "entities",
        "observations",
        "retired",
        "relations",
    ]
    assert lines[full][1:5] == ["5", "19", "3", "3"] and lines[small][1:5] == ["1", "2", "0", "0"]


async def test_an_erased_namespace_is_not_listed(neo4j_info: Neo4jInfo, namespace: str) -> None:
    await asyncio.gather(seed(neo4j_info, namespace), seed(neo4j_info, f"{namespace}-kept"))
    assert set(list_rows(neo4j_info, [namespace, f"{namespace}-kept"])) == {namespace, f"{namespace}-kept"}
    done = namespace_cli(neo4j_info, "delete", namespace, "--yes", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress bar
    assert set(list_rows(neo4j_info, [namespace, f"{namespace}-kept"])) == {f"{namespace}-kept"}
