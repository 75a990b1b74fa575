"""Namespaces seeded with everything kg-neo4j writes for one (entities, observations current and retired,
relations, a placeholder, a merge with its alias and record, forgotten knowledge, an experience, the
write-order counter, embeddings), their fingerprints, and ``kg-neo4j namespace`` run as a user runs it:
shared by test_namespace_list.py and test_namespace_delete.py."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from support.kg import ent, rel, text_of
from support.servers import KG, Neo4jInfo, server_env, stdio_session

#: an entity with more observations than a small --batch-size: erased by trimming transactions
MANY = [f"fact number {i} about the big one" for i in range(12)]


#: what seed() writes, as `namespace list` and `delete` count it: Alice, Acme, Big, the knowledge kept and the
#: experience (Bob merged, Tabs forgotten); retired: Alice's invalidated observation and Bob's two, retired on
#: him by the merge
SEEDED = {
    "entities": 5,
    "observations": 19,
    "retired_observations": 3,
    "relations": 3,
    "placeholders": 1,
    "aliases": 1,
    "expired": 1,
    "merges": 1,
    "nodes": 8,
}


async def seed(info: Neo4jInfo, namespace: str, *, model: bool = False) -> None:
    """Write the namespace through a real MCP session (``model``: with the shipped embedding model)."""
    model_name = "all-MiniLM-L6-v2" if model else "none"
    async with stdio_session(
        info, "--namespace", namespace, "--tools", "all", "--embedding-model", model_name
    ) as s:

        async def ok(_: Any, tool: str, args: dict[str, Any]) -> None:
            result = await s.call_tool(tool, args)
            assert not result.is_error, f"{tool}: {text_of(result)}"

        await ok(
            s,
            "create_entities",
            {
                "entities": [
                    ent("Alice", "person", ["likes tea", "lives in Paris"]),
                    ent("Bob", "person", ["plays chess"]),
                    ent("Acme", "company", []),
                    ent("Big", "thing", MANY),
                ]
            },
        )
        await ok(
            s,
            "create_relations",
            {
                "relations": [
                    rel("Alice", "Acme", "works_at"),
                    rel("Bob", "Alice", "knows"),
                    rel("Alice", "Ghost"),
                ]
            },
        )
        await ok(
            s, "add_observations", {"observations": [{"entityName": "Bob", "contents": ["moved to Rome"]}]}
        )
        await ok(
            s,
            "invalidate_observations",
            {"observations": [{"entityName": "Alice", "observations": ["likes tea"]}]},
        )
        await ok(s, "merge_entities", {"into": "Alice", "names": ["Bob"]})
        knowledge = {"content": "Deploy on Fridays", "type": "rule", "trust": "inference"}
        await ok(s, "store_knowledge", {"name": "Friday deploys", **knowledge})
        await ok(
            s,
            "store_knowledge",
            {"name": "Tabs", "content": "Tabs over spaces", "type": "rule", "trust": "inference"},
        )
        await ok(s, "forget_knowledge", {"names": ["Tabs"]})
        await ok(
            s, "record_experience", {"name": "First deploy", "context": "deploying", "outcome": "it worked"}
        )


def namespace_cli(info: Neo4jInfo, *args: str) -> subprocess.CompletedProcess[str]:
    """``kg-neo4j namespace ARGS`` on the test Neo4j."""
    return subprocess.run(
        [KG, "namespace", *args], env=server_env(info), capture_output=True, text=True, timeout=300
    )


def list_rows(info: Neo4jInfo, namespaces: list[str]) -> dict[str, dict[str, Any]]:
    """``namespace list --json``'s rows of ``namespaces`` (only those: other tests' namespaces come and go)."""
    done = namespace_cli(info, "list", "--json")
    assert done.returncode == 0, done.stderr
    return {r["namespace"]: r for r in json.loads(done.stdout) if r["namespace"] in namespaces}


#: every node of one namespace reachable from its indexed owners, with its observations and relationships
FINGERPRINT = """
CALL () {
  MATCH (n:KgNode) WHERE n.namespace = $ns AND n.name IS NOT NULL RETURN n
  UNION
  MATCH (n:ExpiredKnowledge) WHERE n.namespace = $ns RETURN n
  UNION
  MATCH (n:KgMergeRecord) WHERE n.namespace = $ns RETURN n
  UNION
  MATCH (o:KgNode|ExpiredKnowledge)-[:HAS_OBSERVATION|HAD_OBSERVATION]->(n:Observation)
  WHERE o.namespace = $ns RETURN n
  UNION
  MATCH (n:KgMeta) WHERE n.key IN ['turns:' + $ns, 'decay_sweep:' + $ns] RETURN n
}
CALL (n) {
  OPTIONAL MATCH (n)-[r]->(m)
  RETURN collect([type(r), properties(r), m.name, m.text]) AS out
}
RETURN labels(n) AS labels, properties(n) AS props, out
"""


def fingerprint(sync_driver: Any, database: str, namespace: str) -> list[str]:
    """Everything the namespace holds, each node as one sorted JSON line (its relationships with it)."""
    records, _, _ = sync_driver.execute_query(FINGERPRINT, ns=namespace, database_=database)

    def line(r: Any) -> str:
        out = sorted(json.dumps(x, sort_keys=True, default=str) for x in r["out"])
        return json.dumps([sorted(r["labels"]), r["props"], out], sort_keys=True, default=str)

    return sorted(line(r) for r in records)


def anything_of(sync_driver: Any, database: str, namespace: str) -> int:
    """How many nodes of any label carry the namespace, or are its metadata (a scan of every node: the
    check does not trust the indexes the deletion uses)."""
    records, _, _ = sync_driver.execute_query(
        "MATCH (n) WHERE n.namespace = $ns OR n.key IN ['turns:' + $ns, 'decay_sweep:' + $ns] RETURN count(n) AS n",
        ns=namespace,
        database_=database,
    )
    return int(records[0]["n"])
