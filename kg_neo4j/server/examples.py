"""The seed graph the tools' example calls act on (each declaration's ``example=``, server/declare.py).

A few entities and relations (the reference tools, relations over time, history), MemoryMesh nodes and
edges, knowledge and an experience, one skill file, and for each node schema a node to update and one to
delete.  Every example call is valid against this graph, and each write example acts on targets of its
own, so the examples can run in any order, once each, on one seeded namespace (tests/test_input_sweep.py
does; the docs show the calls).  :func:`write_seed` writes the seed through the tools themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from kg_neo4j.schemas import NodeSchema

#: Skill files (relative to a skills directory) that ``crystallize_skill``'s example reads.
SKILL_FILES: dict[str, str] = {
    "coding/elements/testing/workflow.md": (
        "# Testing workflow\n\n- Run the tests before merging a branch.\n- Keep each commit small.\n"
    ),
}
SKILL_FILE = next(iter(SKILL_FILES))

#: The seed, as the tool calls that write it (the ``all`` profile lists every one of these tools).
SEED: list[tuple[str, dict[str, Any]]] = [
    (
        "create_entities",
        {
            "entities": [
                {
                    "name": "Ada Lovelace",
                    "entityType": "person",
                    "observations": [
                        "wrote the first published program",
                        "liked horses",
                        "lives in Marylebone",
                    ],
                },
                {
                    "name": "Charles Babbage",
                    "entityType": "person",
                    "observations": ["designed the Analytical Engine"],
                },
                {
                    "name": "Analytical Engine",
                    "entityType": "machine",
                    "observations": ["a general-purpose mechanical computer"],
                },
                {"name": "Draft Notes", "entityType": "document", "observations": []},
                # merge_entities' example merges it into Ada Lovelace
                {
                    "name": "A. A. Lovelace",
                    "entityType": "person",
                    "observations": ["signed her notes A.A.L."],
                },
                # merged into Charles Babbage below: unmerge_entities' example undoes it
                {"name": "C. Babbage", "entityType": "person", "observations": ["a Lucasian Professor"]},
            ]
        },
    ),
    ("merge_entities", {"into": "Charles Babbage", "names": ["C. Babbage"]}),
    (
        "create_relations",
        {
            "relations": [
                {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "worked_with"},
                {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "corresponded_with"},
                {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "wrote_about"},
                {"from": "Charles Babbage", "to": "Analytical Engine", "relationType": "built"},
            ]
        },
    ),
    (
        "add_nodes",
        {
            "nodes": [
                {"name": name, "nodeType": "npc", "metadata": ["Role: innkeeper", "Rumour: hides a map"]}
                for name in ("Elara", "Brom", "Old Hermit")
            ]
        },
    ),
    (
        "add_edges",
        {
            "edges": [
                {"from": "Elara", "to": "Brom", "edgeType": edge_type}
                for edge_type in ("trusts", "owes_money_to")
            ]
        },
    ),
    (
        "store_knowledge",
        {
            "name": "Test before merging",
            "content": "run the tests before merging a branch",
            "type": "rule",
            "trust": "pattern",
        },
    ),
    (
        "store_knowledge",
        {
            "name": "Small commits",
            "content": "keep each commit small and focused",
            "type": "rule",
            "trust": "pattern",
        },
    ),
    (
        "store_knowledge",
        {
            "name": "Tabs over spaces",
            "content": "indent with tabs",
            "type": "rule",
            "trust": "inference",
        },
    ),
    (
        "record_experience",
        {
            "name": "Flaky test fixed",
            "context": "a test failed only under load",
            "outcome": "it waits on a condition instead of sleeping",
        },
    ),
]


def node_example(schema: NodeSchema, name: str) -> dict[str, Any]:
    """A valid ``add_<type>`` object named ``name``: every property of the schema filled."""
    obj: dict[str, Any] = {}
    for prop in schema.properties.values():
        if prop.type == "array":
            obj[prop.name] = [prop.enum[0]] if prop.enum else ["example item"]
        else:
            obj[prop.name] = prop.enum[0] if prop.enum else "example value"
    obj["name"] = name
    return obj


def new_node_name(schema: NodeSchema) -> str:
    return f"New {schema.node_type}"


def updated_node_name(schema: NodeSchema) -> str:
    return f"{schema.node_type} to update"


def deleted_node_name(schema: NodeSchema) -> str:
    return f"{schema.node_type} to delete"


def seed_calls(schemas: Sequence[NodeSchema]) -> list[tuple[str, dict[str, Any]]]:
    """The seed's tool calls: :data:`SEED`, then per node schema the node its update and delete
    examples act on."""
    calls = list(SEED)
    for schema in schemas:
        add = schema.tool_names[0]
        for name in (updated_node_name(schema), deleted_node_name(schema)):
            calls.append((add, {schema.node_type: node_example(schema, name)}))
    return calls


def write_skill_files(root: Path) -> Path:
    """The skill files of :data:`SKILL_FILES` under ``root`` (a skills directory); ``root``."""
    for rel, text in SKILL_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


async def write_seed(
    call: Callable[[str, dict[str, Any]], Awaitable[Any]], schemas: Sequence[NodeSchema]
) -> None:
    """Write the seed through the tools: ``call(tool, arguments)`` calls one tool (e.g. an MCP
    session's ``call_tool``, of a server with the ``all`` profile and these node schemas) and
    fails if the tool does."""
    for name, args in seed_calls(schemas):
        await call(name, args)
