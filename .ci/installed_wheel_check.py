"""Drive the *installed* kg-neo4j the way a user gets it (run by .ci/run with the python of a
second venv, outside the clone, into which only the built wheel was installed).

    <venv>/bin/python installed_wheel_check.py --clone /path/to/clone

Over a real MCP stdio session with the installed ``kg-neo4j serve --tools all``: tools/list (the
tools the installed package's declarations give for ``all``), create_entities and create_relations (embedded with the default, packaged model),
search_memory finds them by meaning, traverse_graph walks them.  Then the installed
``kg-neo4j export`` and ``kg-neo4j import`` (into another namespace) round-trip that data,
checked through a second session on the imported namespace.  torch and sentence-transformers must not be
installed (the default install runs the packaged model on numpy).  Both namespaces are deleted at the
end.  Any failure is an AssertionError (exit 1).  Neo4j: the environment's NEO4J_* or the local
server of ``kg-neo4j neo4j start``, as for the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

VENV = Path(sys.prefix)
KG = VENV / "bin" / "kg-neo4j"

ENTITIES = [
    {
        "name": "Ada",
        "entityType": "person",
        "observations": ["adopted a greyhound from the shelter last spring", "teaches the violin in Lyon"],
    },
    {"name": "Bob", "entityType": "person", "observations": ["plays chess every Sunday morning"]},
    {"name": "Lyon", "entityType": "city", "observations": ["on the Rhone and the Saone"]},
]
RELATIONS = [
    {"from": "Bob", "to": "Ada", "relationType": "knows"},
    {"from": "Ada", "to": "Lyon", "relationType": "lives_in"},
]


def say(msg: str) -> None:
    print(f"    {msg}", flush=True)


def inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def check_installed(clone: Path) -> None:
    """This process, and so the server it starts, run the wheel installed in this venv."""
    import kg_neo4j
    from kg_neo4j.cypher import default_cypher_dir, queries

    assert sys.prefix != sys.base_prefix, f"not a venv: {sys.prefix}"
    assert not inside(VENV, clone), f"the venv {VENV} is inside the clone {clone}"
    assert not inside(Path.cwd(), clone), f"cwd {Path.cwd()} is inside the clone {clone}"
    assert "PYTHONPATH" not in os.environ, "PYTHONPATH is set: it could import the clone"
    pkg = Path(kg_neo4j.__file__)
    assert inside(pkg, VENV) and not inside(pkg, clone), f"kg_neo4j imported from {pkg}, not from {VENV}"
    cypher = Path(str(default_cypher_dir()))
    assert cypher == pkg.parent / "_cypher", f"statements read from {cypher}, not the wheel's _cypher/"
    from importlib.metadata import distribution

    dist = distribution("kg-neo4j")
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    assert not direct.get("dir_info", {}).get("editable"), f"kg-neo4j is an editable install: {direct}"
    for pth in pkg.parent.parent.glob("*.pth"):
        assert str(clone.resolve()) not in pth.read_text(), f"{pth} points into the clone"
    assert KG.is_file(), f"no {KG}"
    # The default install carries no torch (docs/install.md#what-it-weighs): the packaged model runs on numpy.
    import importlib.util

    for heavy in ("torch", "sentence_transformers"):
        assert importlib.util.find_spec(heavy) is None, f"{heavy} is installed by the default install"
    say("torch and sentence-transformers: not installed (the default model runs on numpy)")
    say(
        f"kg_neo4j {kg_neo4j.__version__} from {pkg.parent}; {len(queries().names())} statements "
        f"from {cypher}; cwd {Path.cwd()}"
    )


def children_running(exe: Path) -> list[tuple[list[str], str]]:
    """(command line, cwd) of this process's children running ``exe``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if ppid != os.getpid():
                continue
            cmd = (stat.parent / "cmdline").read_bytes().decode().split("\0")
            cwd = os.readlink(stat.parent / "cwd")
        except (OSError, ValueError, IndexError):
            continue  # the process ended while being read
        if str(exe) in cmd:
            found.append((cmd, cwd))
    return found


def all_profile_tools() -> list[str]:
    """The names ``--tools all`` lists, from the installed package's declarations (its built-in tools
    and those its shipped node schemas generate)."""
    from kg_neo4j.schemas import load_schemas
    from kg_neo4j.server.app import BUILTIN_TOOL_NAMES, profile_tools

    return [s.name for s in profile_tools("all", load_schemas(reserved=BUILTIN_TOOL_NAMES))]


def server(namespace: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return StdioServerParameters(
        command=str(KG),
        args=["serve", "--tools", "all", "--namespace", namespace],
        env=env,
        cwd=str(Path.cwd()),
    )


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, args)
    assert isinstance(result, CallToolResult), f"{tool}: {result!r}"
    assert not result.is_error, f"{tool} failed: {result.content}"
    return result.structured_content


def graph_key(graph: dict[str, Any]) -> tuple[list[str], list[str]]:
    """read_graph's answer as sorted JSON lines (order is not part of the round trip)."""
    return (
        sorted(json.dumps(e, sort_keys=True) for e in graph["entities"]),
        sorted(json.dumps(r, sort_keys=True) for r in graph["relations"]),
    )


async def first_session(namespace: str, clone: Path) -> dict[str, Any]:
    async with stdio_client(server(namespace)) as (read, write), ClientSession(read, write) as session:
        t = time.perf_counter()
        await session.initialize()
        say(f"initialize: {time.perf_counter() - t:.1f}s")
        running = children_running(KG)
        assert running, f"no child process runs {KG}"
        for cmd, cwd in running:
            assert not inside(Path(cwd), clone), f"the server runs in {cwd}, inside the clone"
            assert Path(cmd[0]).parent == VENV / "bin", f"the server runs {cmd[0]}, not this venv's python"

        tools = [tool.name for tool in (await session.list_tools()).tools]
        declared = all_profile_tools()
        assert tools == declared and len(set(tools)) == len(tools), (
            f"tools/list of --tools all: {tools}; the declarations give {declared}"
        )
        say(f"tools/list --tools all: {len(tools)} tools")

        t = time.perf_counter()
        created = await call(session, "create_entities", {"entities": ENTITIES})
        assert [e["name"] for e in created["entities"]] == [e["name"] for e in ENTITIES], created
        say(f"create_entities (first write, default model): {time.perf_counter() - t:.1f}s")
        await call(session, "create_relations", {"relations": RELATIONS})

        # No word of the question is in the observation: only the embedding finds it.
        found = await call(session, "search_memory", {"query": "who has a pet dog?", "limit": 3})
        assert found["mode"] == "hybrid", found
        top = found["hits"][0]
        assert top["name"] == "Ada" and "greyhound" in (top["observation"] or ""), found["hits"]
        say(f"search_memory: top hit {top['name']}: {top['observation']!r}")

        walk = await call(session, "traverse_graph", {"start": ["Bob"], "direction": "out", "maxDepth": 2})
        depths = {e["name"]: e["depth"] for e in walk["entities"]}
        assert depths == {"Bob": 0, "Ada": 1, "Lyon": 2}, walk
        assert ["Bob", "Ada", "Lyon"] in [p["nodes"] for p in walk["paths"]], walk["paths"]
        say(f"traverse_graph from Bob: {depths}")
        graph: dict[str, Any] = await call(session, "read_graph", {})
        return graph


async def imported_session(namespace: str, original: dict[str, Any]) -> None:
    async with stdio_client(server(namespace)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        graph = await call(session, "read_graph", {})
        assert graph_key(graph) == graph_key(original), f"imported {graph} != exported {original}"
        found = await call(session, "search_memory", {"query": "who has a pet dog?", "limit": 3})
        assert found["hits"][0]["name"] == "Ada", f"import did not embed: {found['hits']}"
        say(
            f"imported namespace: same graph ({len(graph['entities'])} entities, "
            f"{len(graph['relations'])} relations), search_memory finds Ada"
        )


async def delete(namespace: str) -> None:
    async with stdio_client(server(namespace)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await call(session, "delete_entities", {"entityNames": [e["name"] for e in ENTITIES]})
        left = await call(session, "read_graph", {})
        assert left["entities"] == [] and left["relations"] == [], left


def cli(*args: str) -> None:
    done = subprocess.run([str(KG), *args, "--no-progress"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"kg-neo4j {' '.join(args)}: exit {done.returncode}\n{done.stderr}"


def export_lines(namespace: str, path: Path) -> list[str]:
    cli("export", str(path), "--namespace", namespace)
    return sorted(path.read_text(encoding="utf-8").splitlines())


async def main(clone: Path) -> None:
    check_installed(clone)
    run = uuid.uuid4().hex[:12]
    ns, ns_imported = f"ci-wheel-{run}", f"ci-wheel-{run}-imported"
    passed = False
    try:
        t = time.perf_counter()
        original = await first_session(ns, clone)
        say(f"stdio session: {time.perf_counter() - t:.1f}s")

        t = time.perf_counter()
        exported = export_lines(ns, Path("export.jsonl"))
        assert len(exported) == len(ENTITIES) + len(RELATIONS), exported
        cli("import", "export.jsonl", "--namespace", ns_imported)
        assert export_lines(ns_imported, Path("reexport.jsonl")) == exported, "export of the import differs"
        say(
            f"kg-neo4j export, import into {ns_imported}, export again: identical "
            f"({len(exported)} lines, {time.perf_counter() - t:.1f}s)"
        )
        await imported_session(ns_imported, original)
        passed = True
    finally:
        for namespace in (ns, ns_imported):
            try:
                await delete(namespace)
            except Exception:
                if passed:
                    raise
                say(f"(could not delete namespace {namespace} after the failure below)")
    say("installed wheel: OK")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clone", type=Path, required=True, help="the checkout the wheel was built from")
    asyncio.run(main(parser.parse_args().clone))
