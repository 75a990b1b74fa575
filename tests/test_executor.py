"""store/executor.py, the one way the store runs a named statement, against the real Neo4j: the shared
parameters, reads and writes inside one transaction (all or nothing), and the race retry (a transaction
that lost a race wrote nothing and runs again; any other error is raised at once)."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from neo4j import AsyncDriver

from kg_neo4j.clock import ManualClock
from kg_neo4j.cypher import Queries
from kg_neo4j.store.executor import RACE_RETRIES, Executor, Shared
from support.servers import Neo4jInfo

pytestmark = pytest.mark.asyncio

STATEMENTS = """\
// name: echo_shared
// The shared parameters as the statement sees them.
RETURN $ns AS ns, $now AS now, $at AS at, $model AS model, $w_fast AS w_fast

// name: make_node
// One KgNode of namespace $ns named $name (the (namespace, name) key is unique).
CREATE (n:KgNode {namespace: $ns, name: $name})
RETURN n.name AS name

// name: count_nodes
// How many KgNodes namespace $ns holds.
MATCH (n:KgNode {namespace: $ns})
RETURN count(n) AS n

// name: drop_nodes
// Remove namespace $ns's KgNodes.
MATCH (n:KgNode {namespace: $ns})
DETACH DELETE n
"""


@pytest.fixture
def executor(driver: AsyncDriver, neo4j_info: Neo4jInfo, namespace: str, tmp_path: Path) -> Executor:
    (tmp_path / "test.cypher").write_text(STATEMENTS)
    x = Executor(
        driver,
        neo4j_info.database,
        Shared(namespace=namespace, clock=ManualClock(), reads_at=True, model="m", constants={"w_fast": 0.5}),
    )
    x.q = Queries(tmp_path)
    return x


async def test_every_statement_gets_the_shared_parameters_unless_given(
    executor: Executor, namespace: str
) -> None:
    row = (await executor.read("echo_shared"))[0]
    assert (row["ns"], row["model"], row["w_fast"]) == (namespace, "m", 0.5)
    assert row["at"] == row["now"]  # a read of now unless the caller names a moment
    given = (await executor.read("echo_shared", ns="other", w_fast=1.0, at=None))[0]
    assert (given["ns"], given["w_fast"], given["at"]) == ("other", 1.0, given["now"])
    bare = Executor(executor.driver, executor.database)
    bare.q = executor.q
    with pytest.raises(
        neo4j.exceptions.ClientError, match="ns"
    ):  # no shared parameters: the statement lacks $ns
        await bare.read("echo_shared")


async def test_a_transaction_lands_whole_or_not_at_all(executor: Executor) -> None:
    async def two(tx: neo4j.AsyncManagedTransaction) -> int:
        x = executor.bound(tx)
        await x.write("make_node", name="a")
        await x.write("make_node", name="b")
        return int((await x.read("count_nodes"))[0]["n"])  # the read sees the transaction's own writes

    assert await executor.transaction(two) == 2

    async def failing(tx: neo4j.AsyncManagedTransaction) -> None:
        await executor.bound(tx).write("make_node", name="c")
        raise RuntimeError("the work failed")

    with pytest.raises(RuntimeError):
        await executor.transaction(failing)
    assert (await executor.read("count_nodes"))[0]["n"] == 2
    await executor.write("drop_nodes")


async def test_a_lost_race_runs_the_transaction_again_other_errors_do_not(executor: Executor) -> None:
    await executor.write("make_node", name="taken")
    attempts = []

    async def clash(tx: neo4j.AsyncManagedTransaction) -> None:
        attempts.append(1)
        await executor.bound(tx).write(
            "make_node", name="taken"
        )  # the key is taken: ConstraintValidationFailed

    with pytest.raises(neo4j.exceptions.ConstraintError):
        await executor.transaction(clash)
    assert len(attempts) == RACE_RETRIES + 1
    attempts.clear()

    async def wrong(tx: neo4j.AsyncManagedTransaction) -> None:
        attempts.append(1)
        await executor.bound(tx).write("make_node")  # $name missing: a client error that is no race

    with pytest.raises(neo4j.exceptions.ClientError):
        await executor.transaction(wrong)
    assert len(attempts) == 1
    await executor.write("drop_nodes")
