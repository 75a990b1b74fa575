"""Issue 39 item 1: ``kg-neo4j namespace delete NS`` erases everything of one namespace (entities, observations
current and retired, history, aliases, merge records, relations, placeholders, forgotten knowledge, embeddings,
its write-order counter) in bounded transactions, leaves every other namespace as it was (a fingerprint of the
test's own other namespaces before and after), resumes a run stopped half-way, and refuses without ``--yes``
after printing what it would erase."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kg_neo4j.store.executor import Executor
from kg_neo4j.store.namespaces import Stopped, erase_namespace
from support.namespaces import SEEDED, anything_of, fingerprint, namespace_cli, seed
from support.servers import Neo4jInfo, stdio_session


def counts(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in SEEDED}


@pytest.mark.parametrize("batch", [3, 5000])
async def test_delete_erases_the_namespace_only_and_resumes(
    batch: int, neo4j_info: Neo4jInfo, sync_driver: Any, driver: Any, namespace: str
) -> None:
    # the victim's name is a prefix of another namespace's: nothing is matched by prefix
    victim, others = f"{namespace}-x", [f"{namespace}-x-2", f"{namespace}-y"]
    await asyncio.gather(
        seed(neo4j_info, victim, model=True),
        seed(neo4j_info, others[0], model=True),
        seed(neo4j_info, others[1]),
    )
    db = neo4j_info.database
    before = {ns: fingerprint(sync_driver, db, ns) for ns in others}
    held = anything_of(sync_driver, db, victim)
    assert held == len(fingerprint(sync_driver, db, victim)) > 0

    # stopped after one transaction: part of it erased, the rest still there
    with pytest.raises(Stopped):
        await erase_namespace(Executor(driver, db), victim, batch=batch, max_transactions=1)
    assert 0 < anything_of(sync_driver, db, victim) < held

    done = namespace_cli(neo4j_info, "delete", victim, "--yes", "--batch-size", str(batch))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["namespace"] == victim and report["complete"] is True and report["left"] is None
    assert report["transactions"] >= 2 if batch == 3 else report["transactions"] >= 1
    assert f"delete {victim}" in done.stderr  # the progress bar
    assert anything_of(sync_driver, db, victim) == 0
    assert {ns: fingerprint(sync_driver, db, ns) for ns in others} == before

    again = namespace_cli(neo4j_info, "delete", victim, "--yes")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["erased"] is None and "nothing to erase" in again.stderr


async def test_delete_refuses_without_yes(neo4j_info: Neo4jInfo, sync_driver: Any, namespace: str) -> None:
    await seed(neo4j_info, namespace)
    db = neo4j_info.database
    held = fingerprint(sync_driver, db, namespace)

    refused = namespace_cli(neo4j_info, "delete", namespace)
    assert refused.returncode == 2, refused.stderr
    assert counts(json.loads(refused.stdout)["would_erase"]) == SEEDED
    assert "--yes" in refused.stderr and "5 entities" in refused.stderr
    assert fingerprint(sync_driver, db, namespace) == held

    bad = namespace_cli(neo4j_info, "delete", namespace, "--yes", "--batch-size", "0")
    assert bad.returncode == 2 and "--batch-size" in bad.stderr
    blank = namespace_cli(neo4j_info, "delete", " ", "--yes")
    assert blank.returncode == 2 and "NS" in blank.stderr
    assert fingerprint(sync_driver, db, namespace) == held


async def test_a_run_stopped_after_its_last_node_is_finished(
    neo4j_info: Neo4jInfo, sync_driver: Any, driver: Any, namespace: str
) -> None:
    """No merge records: once the nodes are gone only the write-order counter is left, which no count shows."""
    async with stdio_session(neo4j_info, "--namespace", namespace) as s:
        done = await s.call_tool(
            "create_entities", {"entities": [{"name": "A", "entityType": "t", "observations": []}]}
        )
        assert not done.is_error
        done = await s.call_tool(
            "add_observations", {"observations": [{"entityName": "A", "contents": ["x"]}]}
        )
        assert not done.is_error
    with pytest.raises(Stopped):
        await erase_namespace(Executor(driver, neo4j_info.database), namespace, max_transactions=1)
    assert anything_of(sync_driver, neo4j_info.database, namespace) == 1  # the counter (KgMeta 'turns:<ns>')

    again = namespace_cli(neo4j_info, "delete", namespace, "--yes")
    assert again.returncode == 0, again.stderr
    assert anything_of(sync_driver, neo4j_info.database, namespace) == 0
