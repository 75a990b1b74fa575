"""Type labels (kg_neo4j/store/type_labels.py): every path that sets or changes a type keeps the label in step."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_knowledge_tools import call as kcall
from test_memorymesh_tools import mm
from test_transfer import kg

from kg_neo4j.store import text_index
from kg_neo4j.store import type_labels as tl
from support.kg import doc_after, ent, rel, session
from support.servers import ROOT, Neo4jInfo

BASE = {"KgNode", "Entity", "KgText"}


def labels(sync_driver: Any, namespace: str) -> dict[str, set[str]]:
    """Every named node of the namespace: its labels (KgNode, Entity and KgText left out) and stored type_labels."""
    records, _, _ = sync_driver.execute_query(
        "MATCH (n:KgNode) WHERE n.namespace = $ns RETURN n.name AS name, labels(n) AS labels", ns=namespace
    )
    return {r["name"]: set(r["labels"]) - BASE for r in records}


@pytest.mark.unit
def test_the_rules() -> None:
    assert tl.type_labels("person") == ["person"]
    assert tl.type_labels("has space: yes") == ["has space: yes"]
    for internal in sorted(tl.INTERNAL_LABELS):
        assert tl.type_labels(internal) == [f"Type_{internal}"]
    assert tl.type_labels("entity") == ["entity"]  # labels are case-sensitive: not ours
    for blank in ("", " ", "\t\n", None, "a\x00b"):
        assert tl.type_labels(blank) == []
    assert tl.knowledge_labels("rule", "principle") == ["rule", "TrustPrinciple"]
    assert tl.knowledge_labels("", "nonsense") == []


@pytest.mark.unit
def test_every_label_our_cypher_uses_is_internal() -> None:
    """A label added to cypher/*.cypher later is covered by the rule only if it is in INTERNAL_LABELS.  Labels
    of earlier versions are matched only by the start-up migration that moves nodes off them."""
    used: set[str] = set()
    for path in sorted((ROOT / "cypher").glob("*.cypher")):
        if path.name == "text_index.cypher":
            legacy = {n for n in text_index.LEGACY_LABELS if f":{n}" in path.read_text()}
            assert legacy == text_index.LEGACY_LABELS, "the migration no longer matches its legacy labels"
        code = "\n".join(line.split("//")[0] for line in path.read_text().splitlines())
        code = re.sub(r"'[^']*'", "''", code)  # no strings
        code = re.sub(r"\[[^\[\]]*\]", "[]", code)  # no relationship patterns / lists
        for names in re.findall(r"\b[a-z]\w*((?::[A-Z]\w*)+)", code):
            used.update(n for n in names.split(":") if n)
        if path.name == "text_index.cypher":
            used -= text_index.LEGACY_LABELS
    assert used, "no labels found: the scan is broken"
    assert used <= tl.INTERNAL_LABELS, sorted(used - tl.INTERNAL_LABELS)


async def test_reference_tools_and_placeholders(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    async with session("stdio", neo4j_info, namespace) as s:
        await s.call_tool(
            "create_entities",
            {
                "entities": [
                    ent("Alice", "person"),
                    ent("Acme", "organization"),
                    ent("Odd", "Entity"),
                    ent("Blank", "  "),
                    ent("Trusty", "TrustPattern"),
                    ent("Spaced", "big idea"),
                ]
            },
        )
        await s.call_tool("create_relations", {"relations": [rel("Alice", "Bob", "knows")]})
        assert labels(sync_driver, namespace) == {
            "Alice": {"person"},
            "Acme": {"organization"},
            "Odd": {"Type_Entity"},
            "Blank": set(),
            "Trusty": {"Type_TrustPattern"},
            "Spaced": {"big idea"},
            "Bob": {"Placeholder"},
        }
        # the placeholder becomes an entity: it takes the type's label and loses :Placeholder
        await s.call_tool("create_entities", {"entities": [ent("Bob", "person")]})
        # an existing name is skipped by the reference: its label does not follow the ignored type
        await s.call_tool("create_entities", {"entities": [ent("Alice", "robot")]})
        got = labels(sync_driver, namespace)
        assert got["Bob"] == {"person"} and got["Alice"] == {"person"}
        records, _, _ = sync_driver.execute_query(
            "MATCH (n:KgNode {namespace: $ns, name: 'Odd'}) RETURN n.entityType AS t, n.type_labels AS l",
            ns=namespace,
        )
        assert (records[0]["t"], records[0]["l"]) == (
            "Entity",
            ["Type_Entity"],
        )  # the type is stored as given


async def test_memorymesh_and_schema_tools(neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "memorymesh") as s:
        await mm(s, "add_nodes", {"nodes": [{"name": "Shire", "nodeType": "region", "metadata": []}]})
        await mm(
            s,
            "add_npc",
            {
                "npc": {
                    "name": "Gandalf",
                    "role": "Wizard",
                    "status": "Active",
                    "currentLocation": "Rivendell",
                }
            },
        )
        got = labels(sync_driver, namespace)
        assert (
            got["Shire"] == {"region"} and got["Gandalf"] == {"npc"} and got["Rivendell"] == {"Placeholder"}
        )
        await mm(s, "update_nodes", {"nodes": [{"name": "Shire", "nodeType": "location"}]})
        await mm(s, "update_nodes", {"nodes": [{"name": "Gandalf", "nodeType": "Knowledge"}]})
        await mm(s, "add_location", {"location": {"name": "Rivendell", "description": "Elven refuge"}})
        got = labels(sync_driver, namespace)
        assert got["Shire"] == {"location"}  # the old label is gone
        assert got["Gandalf"] == {"Type_Knowledge"}
        assert got["Rivendell"] == {"location"}


async def test_knowledge_trust_labels(neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any) -> None:
    async with session("stdio", neo4j_info, namespace, "--tools", "knowledge") as s:
        await kcall(
            s,
            "store_knowledge",
            {
                "name": "No Friday deploys",
                "content": "Never deploy on Fridays",
                "type": "rule",
                "trust": "principle",
                "quote": "No Friday deploys.",
                "category": "creative",
            },
        )
        await kcall(
            s,
            "store_knowledge",
            {"name": "Pages", "content": "Friday deploys page people", "type": "insight", "trust": "pattern"},
        )
        await kcall(
            s,
            "record_experience",
            {"context": "deploying on a Friday", "steps": ["deploy"], "outcome": "paged", "success": False},
        )
        got = labels(sync_driver, namespace)
        assert got["No Friday deploys"] == {"Knowledge", "rule", "TrustPrinciple"}
        assert got["Pages"] == {"Knowledge", "insight", "TrustPattern"}
        assert [v for k, v in got.items() if k not in ("No Friday deploys", "Pages")] == [
            {"Experience", "experience"}
        ]
        # lowering trust and changing the type move both labels
        await kcall(s, "update_knowledge", {"name": "Pages", "trust": "inference", "type": "rule"})
        assert labels(sync_driver, namespace)["Pages"] == {"Knowledge", "rule", "TrustInference"}


async def test_import_and_full_export_round_trip(
    tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any
) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"type": "entity", "name": "Alice", "entityType": "person", "observations": []},
                {"type": "entity", "name": "Odd", "entityType": "KgMeta", "observations": []},
                {"type": "relation", "from": "Alice", "to": "Bob", "relationType": "knows"},
            ]
        )
        + "\n"
    )
    done = kg(neo4j_info, "import", str(src), "--namespace", namespace, "--no-progress")
    assert done.returncode == 0, done.stderr
    want = {"Alice": {"person"}, "Odd": {"Type_KgMeta"}, "Bob": {"Placeholder"}}
    assert labels(sync_driver, namespace) == want
    full = tmp_path / "full.jsonl"
    done = kg(neo4j_info, "export", str(full), "--format", "full", "--namespace", namespace, "--no-progress")
    assert done.returncode == 0, done.stderr
    nodes = [json.loads(line) for line in full.read_text().splitlines() if '"labels"' in line]
    # derived: neither the type labels nor their record travel in the file
    assert all(
        set(n["labels"]) <= {"Entity", "Placeholder"} and "type_labels" not in n.get("properties", {})
        for n in nodes
        if "name" in n
    ), nodes
    ns2 = f"{namespace}-copy-{uuid.uuid4().hex[:6]}"
    done = kg(neo4j_info, "import", str(full), "--namespace", ns2, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert labels(sync_driver, ns2) == want


async def test_backfill_is_batched_and_resumable(
    neo4j_info: Neo4jInfo, namespace: str, sync_driver: Any, driver: Any, capfd: Any
) -> None:
    async with session("stdio", neo4j_info, namespace) as s:
        await s.call_tool(
            "create_entities",
            {
                "entities": [
                    ent(f"E{i}", t) for i, t in enumerate(["person", "person", "Observation", " ", "city"])
                ]
            },
        )
    want = labels(sync_driver, namespace)
    # a database from before type labels: no label, no record of them
    sync_driver.execute_query(
        "MATCH (n:Entity) WHERE n.namespace = $ns REMOVE n:$(n.type_labels) REMOVE n.type_labels",
        ns=namespace,
    )
    assert set().union(*labels(sync_driver, namespace).values()) == set()
    assert (
        await tl.backfill(driver, neo4j_info.database, namespace, batch=2, max_batches=1) == 2
    )  # interrupted
    partial = labels(sync_driver, namespace)
    assert sum(1 for v in partial.values() if v) in (1, 2)  # the blank type gets none
    assert await tl.backfill(driver, neo4j_info.database, namespace, batch=2) == 3  # resumes with the rest
    assert labels(sync_driver, namespace) == want
    assert "type labels: 3/3" in capfd.readouterr().err  # progress on stderr
    assert await tl.backfill(driver, neo4j_info.database, namespace) == 0


async def test_labels_are_database_wide(neo4j_info: Neo4jInfo, sync_driver: Any) -> None:
    """What the docs' namespaces section says: db.labels() shows the types of every namespace."""
    kind = f"kind{uuid.uuid4().hex[:8]}"
    ns = f"test-labels-wide-{uuid.uuid4().hex[:8]}"
    async with session("stdio", neo4j_info, ns) as s:
        await s.call_tool("create_entities", {"entities": [ent("X", kind)]})
    records, _, _ = sync_driver.execute_query("CALL db.labels() YIELD label RETURN collect(label) AS all")
    assert kind in records[0]["all"]
    assert "db.labels()" in doc_after("\n## Namespaces\n").split("\n## ", 1)[0]
