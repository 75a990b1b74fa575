"""Capture graphs written BY THE REAL PEER PACKAGES, for tests/test_peer_import.py (rerunnable).

For each peer, its pinned package is installed into a throwaway environment under
``~/.cache/kg-neo4j-peers/`` (never kg-neo4j's venv, never CI's), run against a *scratch* local Neo4j
(``kg-neo4j neo4j start`` under another home and ports: the peers create their own indexes and
constraints, and Memento's ``saveGraph`` deletes every node of its database), made to write a small but
varied graph through its own API, and what it wrote (labels, properties, relationships) is dumped to
``tests/data/peers/<peer>.json``:

* ``mcp-neo4j-memory`` (PyPI, ``NEO4J_MEMORY_VERSION``): its MCP tools over stdio;
* ``graphiti`` (PyPI graphiti-core, ``GRAPHITI_VERSION``): ``graphiti_writer.py`` in its venv (its own
  ``EntityNode`` / ``EntityEdge`` / ``EpisodicNode`` / ``EpisodicEdge`` ``.save(driver)``, a
  deterministic local embedder: no LLM is reachable);
* ``memento`` (npm ``@gannonh/memento-mcp``, ``MEMENTO_VERSION``): its MCP tools over stdio with
  ``MOCK_EMBEDDINGS=true`` (it runs without an embedding service; its vectors are then random).

Dump format: ``{"peer", "package", "version", "nodes": [{"id", "labels", "properties"}],
"relationships": [{"type", "start", "end", "properties"}]}``, values encoded like the full export
(``kg_neo4j/store/value_codec.py``: ``{"$datetime": ...}``), ids local to the file.

    python -m benchmarks.peer_graphs.capture                # all three
    python -m benchmarks.peer_graphs.capture --peers graphiti --stop
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from neo4j import GraphDatabase

from benchmarks.harness import ROOT, Server, mcp_session, own_neo4j, structured
from kg_neo4j.store.value_codec import encode_value

OUT = ROOT / "tests" / "data" / "peers"
CACHE = Path.home() / ".cache" / "kg-neo4j-peers"
NEO4J_MEMORY_VERSION = "0.4.5"
GRAPHITI_VERSION = "0.31.2"
MEMENTO_VERSION = "0.3.9"
SCRATCH_HOME = CACHE / "neo4j"
SCRATCH_BOLT, SCRATCH_HTTP, SCRATCH_GUIDE = 7707, 7494, 7498
PEERS = ("mcp-neo4j-memory", "graphiti", "memento")


def log(msg: str) -> None:
    print(f"capture: {msg}", file=sys.stderr, flush=True)


def scratch_neo4j(command: str) -> dict[str, str]:
    """``kg-neo4j neo4j start|stop|env`` for the scratch Neo4j (never the project's)."""
    return own_neo4j(command, SCRATCH_HOME, (SCRATCH_BOLT, SCRATCH_HTTP, SCRATCH_GUIDE), "512m", "256m")


def venv_with(name: str, *requirements: str) -> Path:
    venv = CACHE / name
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *requirements], check=True, stdout=sys.stderr)
    return venv


def memento_entry() -> Path:
    prefix = CACHE / f"memento-{MEMENTO_VERSION}"
    js = prefix / "node_modules" / "@gannonh" / "memento-mcp" / "dist" / "index.js"
    if not js.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                f"@gannonh/memento-mcp@{MEMENTO_VERSION}",
            ],
            check=True,
            stdout=sys.stderr,
        )
    return js


async def call_tools(
    command: str, args: list[str], env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    async with mcp_session(Server(command, args, env)) as s:
        for name, arguments in calls:
            structured(await s.call_tool(name, arguments), name)
            log(f"{name}: ok")


def peer_env(conn: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_", "OPENAI"))}
    env.update(
        NEO4J_URI=conn["NEO4J_URI"],
        NEO4J_URL=conn["NEO4J_URI"],
        NEO4J_USERNAME=conn["NEO4J_USERNAME"],
        NEO4J_PASSWORD=conn["NEO4J_PASSWORD"],
        NEO4J_DATABASE="neo4j",
    )
    return env


def write_neo4j_memory(conn: dict[str, str]) -> None:
    venv = venv_with(f"mcp-neo4j-memory-{NEO4J_MEMORY_VERSION}", f"mcp-neo4j-memory=={NEO4J_MEMORY_VERSION}")
    entities = [
        {"name": "Alice Smith", "type": "person", "observations": ["Software engineer", "Lives in Munich"]},
        {"name": "Acme Corp", "type": "organization", "observations": ["Builds rockets"]},
        {"name": "Project Apollo", "type": "project", "observations": []},
        {"name": "Bob Jones", "type": "person", "observations": ["Alice's manager", "Likes chess"]},
        {"name": "Munich", "type": "city", "observations": ["Capital of Bavaria"]},
    ]
    relations = [
        {"source": "Alice Smith", "target": "Acme Corp", "relationType": "WORKS_AT"},
        {"source": "Alice Smith", "target": "Project Apollo", "relationType": "WORKS_ON"},
        {"source": "Bob Jones", "target": "Alice Smith", "relationType": "MANAGES"},
        {"source": "Alice Smith", "target": "Munich", "relationType": "LIVES_IN"},
        {"source": "Acme Corp", "target": "Project Apollo", "relationType": "RUNS"},
    ]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_entities", {"entities": entities}),
        ("create_relations", {"relations": relations}),
        (
            "add_observations",
            {
                "observations": [
                    {"entityName": "Project Apollo", "observations": ["Started in 2024", "Reusable launcher"]}
                ]
            },
        ),
    ]
    asyncio.run(call_tools(str(venv / "bin" / "mcp-neo4j-memory"), [], peer_env(conn), calls))


def write_graphiti(conn: dict[str, str]) -> None:
    # graphiti-core 0.31.2 imports httpx without declaring it: installed beside it
    venv = venv_with(f"graphiti-core-{GRAPHITI_VERSION}", f"graphiti-core=={GRAPHITI_VERSION}", "httpx")
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            str(Path(__file__).with_name("graphiti_writer.py")),
            conn["NEO4J_URI"],
            conn["NEO4J_USERNAME"],
            conn["NEO4J_PASSWORD"],
            "neo4j",
        ],
        check=True,
    )


def write_memento(conn: dict[str, str]) -> None:
    js = memento_entry()
    env = peer_env(conn) | {"MOCK_EMBEDDINGS": "true", "NEO4J_VECTOR_DIMENSIONS": "1536"}
    entities = [
        {
            "name": "Alice Smith",
            "entityType": "person",
            "observations": ["Software engineer", "Lives in Berlin"],
        },
        {"name": "Acme Corp", "entityType": "organization", "observations": ["Builds rockets"]},
        {"name": "Project Apollo", "entityType": "project", "observations": ["Reusable launcher"]},
        {"name": "Bob Jones", "entityType": "person", "observations": []},
    ]
    relations = [
        {
            "from": "Alice Smith",
            "to": "Acme Corp",
            "relationType": "works_at",
            "strength": 0.9,
            "confidence": 0.8,
            "metadata": {"source": "chat"},
        },
        {"from": "Alice Smith", "to": "Project Apollo", "relationType": "works_on", "strength": 0.7},
        {"from": "Bob Jones", "to": "Alice Smith", "relationType": "manages"},
        {"from": "Acme Corp", "to": "Project Apollo", "relationType": "runs", "confidence": 0.95},
    ]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_entities", {"entities": entities}),
        ("create_relations", {"relations": relations}),
        # a new version of Alice (Memento versions an entity on every observation change)
        (
            "add_observations",
            {"observations": [{"entityName": "Alice Smith", "contents": ["Moved to Munich"]}]},
        ),
        (
            "delete_observations",
            {"deletions": [{"entityName": "Alice Smith", "observations": ["Lives in Berlin"]}]},
        ),
        # a new version of a relation (strength changed)
        (
            "update_relation",
            {
                "relation": {
                    "from": "Alice Smith",
                    "to": "Project Apollo",
                    "relationType": "works_on",
                    "strength": 0.4,
                    "metadata": {"source": "review"},
                }
            },
        ),
    ]
    asyncio.run(call_tools("node", [str(js)], env, calls))


WRITERS = {"mcp-neo4j-memory": write_neo4j_memory, "graphiti": write_graphiti, "memento": write_memento}
PACKAGES = {
    "mcp-neo4j-memory": ("mcp-neo4j-memory (PyPI)", NEO4J_MEMORY_VERSION),
    "graphiti": ("graphiti-core (PyPI)", GRAPHITI_VERSION),
    "memento": ("@gannonh/memento-mcp (npm)", MEMENTO_VERSION),
}


def dump(conn: dict[str, str], peer: str) -> dict[str, Any]:
    with GraphDatabase.driver(
        conn["NEO4J_URI"], auth=(conn["NEO4J_USERNAME"], conn["NEO4J_PASSWORD"])
    ) as drv:
        nodes, _, _ = drv.execute_query(
            "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props ORDER BY id"
        )
        rels, _, _ = drv.execute_query(
            "MATCH (a)-[r]->(b) RETURN type(r) AS type, elementId(a) AS a, elementId(b) AS b, properties(r) AS props"
        )
    index = {r["id"]: i for i, r in enumerate(nodes)}

    def props(p: dict[str, Any]) -> dict[str, Any]:
        return {k: encode_value(v) for k, v in sorted(p.items())}

    out_rels = [
        {"type": r["type"], "start": index[r["a"]], "end": index[r["b"]], "properties": props(r["props"])}
        for r in rels
    ]
    out_rels.sort(
        key=lambda r: (r["start"], r["end"], r["type"], json.dumps(r["properties"], sort_keys=True))
    )
    package, version = PACKAGES[peer]
    return {
        "peer": peer,
        "package": package,
        "version": version,
        "nodes": [
            {"id": index[r["id"]], "labels": sorted(r["labels"]), "properties": props(r["props"])}
            for r in nodes
        ],
        "relationships": out_rels,
    }


def wipe(conn: dict[str, str]) -> None:
    """Empty the SCRATCH database (its URI is checked against the scratch port first)."""
    if not conn["NEO4J_URI"].endswith(f":{SCRATCH_BOLT}"):
        raise SystemExit(f"refusing to wipe {conn['NEO4J_URI']}: not the scratch Neo4j")
    with GraphDatabase.driver(
        conn["NEO4J_URI"], auth=(conn["NEO4J_USERNAME"], conn["NEO4J_PASSWORD"])
    ) as drv:
        drv.execute_query("MATCH (n) DETACH DELETE n")
        for rec in drv.execute_query("SHOW CONSTRAINTS YIELD name").records:
            drv.execute_query(f"DROP CONSTRAINT `{rec['name']}`")
        for rec in drv.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'").records:
            drv.execute_query(f"DROP INDEX `{rec['name']}`")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", nargs="+", choices=PEERS, default=list(PEERS))
    ap.add_argument("--stop", action="store_true", help="stop the scratch Neo4j at the end")
    a = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    scratch_neo4j("start")  # a no-op (and a note on stderr) when it already runs
    conn = {k: v.strip("'\"") for k, v in scratch_neo4j("env").items()}
    try:
        for peer in a.peers:
            wipe(conn)
            log(f"{peer}: writing through {PACKAGES[peer][0]} {PACKAGES[peer][1]}")
            WRITERS[peer](conn)
            data = dump(conn, peer)
            OUT.mkdir(parents=True, exist_ok=True)
            path = OUT / f"{peer}.json"
            path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
            log(f"{peer}: {len(data['nodes'])} nodes, {len(data['relationships'])} relationships -> {path}")
        wipe(conn)
    finally:
        if a.stop:
            scratch_neo4j("stop")


if __name__ == "__main__":
    main()
