"""Helpers shared by the MCP-level test modules (not a test module itself).

Everything here talks to a real ``ClientSession``; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import json
import select
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

DELETE_MESSAGES = {
    "delete_entities": "Entities deleted successfully",
    "delete_observations": "Observations deleted successfully",
    "delete_relations": "Relations deleted successfully",
}

#: Where each write tool's list result sits in structuredContent (the text carries the bare list).
LIST_WRAPPERS = {
    "create_entities": "entities",
    "create_relations": "relations",
    "add_observations": "results",
}


def dumps(obj: Any) -> str:
    """The reference server's text: ``JSON.stringify(x, null, 2)``."""
    return json.dumps(obj, indent=2, ensure_ascii=False)


def type_key_paths(obj: Any, path: str = "$") -> list[str]:
    """Every path at which a dict carries a ``"type"`` key (the reference never returns one)."""
    found: list[str] = []
    if isinstance(obj, dict):
        if "type" in obj:
            found.append(path)
        for k, v in obj.items():
            found.extend(type_key_paths(v, f"{path}.{k}"))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found.extend(type_key_paths(v, f"{path}[{i}]"))
    return found


def text_of(result: Any) -> str:
    assert len(result.content) == 1, f"expected one content block, got {result.content!r}"
    block = result.content[0]
    assert block.type == "text", f"expected a text block, got {block!r}"
    return str(block.text)


async def ok(session: Any, tool: str, args: dict[str, Any] | None = None) -> Any:
    """Call ``tool``; assert success, reference-exact text, structuredContent present and no ``type`` keys.

    Returns the parsed JSON (or the confirmation text for the three deletes).
    """
    result = await session.call_tool(tool, args if args is not None else {})
    text = text_of(result)
    assert not result.is_error, f"{tool}({args!r}) failed: {text}"
    assert result.structured_content is not None, f"{tool}: structuredContent missing"
    assert type_key_paths(result.structured_content) == [], f"{tool}: 'type' key in structuredContent"
    if tool in DELETE_MESSAGES:
        assert text == DELETE_MESSAGES[tool], f"{tool}: text {text!r}"
        return text
    data = json.loads(text)
    assert text == dumps(data), f"{tool}: text is not json.dumps(x, indent=2, ensure_ascii=False)"
    assert type_key_paths(data) == [], f"{tool}: 'type' key in {type_key_paths(data)}"
    wrapper = LIST_WRAPPERS.get(tool)
    if wrapper is not None and isinstance(data, dict):  # the list with more beside it (create_entities' hint)
        assert result.structured_content == data, f"{tool}: structuredContent disagrees with text"
    elif wrapper is not None:
        assert result.structured_content.get(wrapper) == data, (
            f"{tool}: structuredContent disagrees with text"
        )
    else:
        sc = {k: v for k, v in result.structured_content.items() if k in ("entities", "relations")}
        assert sc == {k: data[k] for k in ("entities", "relations")}, f"{tool}: structuredContent disagrees"
    return data


async def err(session: Any, tool: str, args: dict[str, Any] | None = None) -> str:
    """Call ``tool`` and assert it is an MCP tool error (isError); return its message."""
    result = await session.call_tool(tool, args if args is not None else {})
    text = text_of(result)
    assert result.is_error, f"{tool}({str(args)[:200]}) should have failed but returned {text[:500]}"
    return text


def ent(name: str, entity_type: str = "thing", observations: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": list(observations or [])}


def rel(a: str, b: str, rtype: str = "knows") -> dict[str, str]:
    return {"from": a, "to": b, "relationType": rtype}


def rel_keys(graph_or_list: Any) -> list[tuple[str, str, str]]:
    rels = graph_or_list["relations"] if isinstance(graph_or_list, dict) else graph_or_list
    return sorted((r["from"], r["to"], r["relationType"]) for r in rels)


def names(graph_or_list: Any) -> list[str]:
    ents = graph_or_list["entities"] if isinstance(graph_or_list, dict) else graph_or_list
    return sorted(e["name"] for e in ents)


def by_name(graph: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in graph["entities"]}


async def reset(session: Any) -> None:
    """Delete everything the session's namespace holds (entities and relation ends), then check it is empty."""
    graph = await ok(session, "read_graph")
    doomed = {e["name"] for e in graph["entities"]}
    doomed |= {r["from"] for r in graph["relations"]} | {r["to"] for r in graph["relations"]}
    if doomed:
        await ok(session, "delete_entities", {"entityNames": sorted(doomed)})
    assert await ok(session, "read_graph") == {"entities": [], "relations": []}


@contextlib.asynccontextmanager
async def session(transport: str, info: Any, namespace: str, *serve_args: str) -> AsyncIterator[Any]:
    """``support.servers.mcp_session`` with readable failures: an assertion inside the session is re-raised
    as itself instead of wrapped in the client's nested ExceptionGroups."""
    from support.servers import mcp_session

    try:
        async with mcp_session(transport, info, namespace, *serve_args) as s:
            yield s
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if leaf is group:
            raise
        raise leaf from None


def dedupe(
    info: Any, namespace: str, *args: str, actor: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``kg-neo4j dedupe --namespace NAMESPACE ARGS`` on the test Neo4j, as ``actor`` when given
    (``KG_NEO4J_ACTOR``)."""
    from support.servers import KG, server_env

    env = server_env(info, **({"KG_NEO4J_ACTOR": actor} if actor else {}))
    return subprocess.run(
        [KG, "dedupe", "--namespace", namespace, *args], env=env, capture_output=True, text=True, timeout=120
    )


async def seeded(
    info: Any, namespace: str, entities: list[dict[str, Any]], relations: list[dict[str, str]]
) -> None:
    """Write ``entities``, then ``relations``, into ``namespace`` through a stdio session (no model)."""
    from support.servers import stdio_session

    async with stdio_session(info, "--namespace", namespace, "--embedding-model", "none") as s:
        await ok(s, "create_entities", {"entities": entities})
        await ok(s, "create_relations", {"relations": relations})


class RawStdio:
    """``kg-neo4j serve`` over stdio, written to and read from line by line."""

    def __init__(self, info: Any, namespace: str, *args: str) -> None:
        from support.servers import KG, server_env

        self.proc = subprocess.Popen(
            [KG, "serve", "--namespace", namespace, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(info),
        )

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(
            (line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line) + b"\n"
        )
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout} s"
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        return dict(json.loads(line))

    def close(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=20)
        return err.decode(errors="replace")


def retention_apart(got: Any, expected: Any, where: str) -> tuple[Any, Any]:
    """``got`` and ``expected`` without their knowledge ``retention`` values, which are compared here
    within 1e-4: retention decays with the reading moment itself, and a read through a ``kg-neo4j serve``
    process (whose clock a test cannot set) runs a few milliseconds away from the ``asOf`` it is compared
    with (a day-scale decay moves it about 1e-6 in that time).  Everything else the caller compares exactly."""

    def strip(x: Any, out: list[float]) -> Any:
        if isinstance(x, dict):
            return {
                k: strip(v, out) for k, v in x.items() if not (k == "retention" and out.append(v) is None)
            }
        if isinstance(x, (list, tuple)):
            return type(x)(strip(v, out) for v in x)
        return x

    a: list[float] = []
    b: list[float] = []
    got, expected = strip(got, a), strip(expected, b)
    assert len(a) == len(b) and all(abs(x - y) <= 1e-4 for x, y in zip(a, b, strict=True)), (
        f"{where}: retention {a} asOf, {b} then"
    )
    return got, expected


def user_docs() -> list[Path]:
    """The user documentation: README.md and the docs site's pages (docs/), README first."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def doc_after(marker: str) -> str:
    """The text after ``marker`` in the one user-docs page that holds it (which page a section lives on
    is the docs' business; what it states is the tests')."""
    pages = [p for p in user_docs() if marker in p.read_text(encoding="utf-8")]
    assert pages, f"no page of README.md or docs/ holds {marker!r}"
    return pages[0].read_text(encoding="utf-8").split(marker, 1)[1]


#: A raw JSON-RPC ``initialize`` request, and the headers streamable HTTP wants (tests that speak the wire).
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
