"""One HTTP server for a team (docs/team.md): namespaces by URL, principals with grants,
401/403 at the door, read grants that list no write tool, revocation without a restart, the single
token kept, stateless replicas' refusals.  Every server here is a real ``kg-neo4j serve`` process and
every tool call goes through a real MCP client session."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from support.kg import INIT
from support.kg import MCP_HEADERS as HEADERS
from support.servers import Neo4jInfo, http_server, http_session

WRITE_TOOLS = {"create_entities", "create_relations", "add_observations", "delete_entities"}


def write_grants(path: Path, principals: dict[str, list[str]]) -> dict[str, str]:
    """A grants file with a fresh token per principal (only its SHA-256 in the file); the tokens."""
    tokens = {name: secrets.token_urlsafe(32) for name in principals}
    lines = []
    for name, grants in principals.items():
        digest = hashlib.sha256(tokens[name].encode()).hexdigest()
        lines += [f'[principals."{name}"]', f'token_sha256 = "{digest}"', f"grants = {grants!r}", ""]
    path.write_text("\n".join(lines).replace("'", '"'), encoding="utf-8")
    return tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ns_path(namespace: str) -> str:
    return "/mcp/" + quote(namespace, safe="")


@pytest.fixture
def team(tmp_path: Path, neo4j_info: Neo4jInfo) -> Iterator[tuple[str, dict[str, str], str]]:
    """A server with a grants file: ``alice`` writes ``<p>/a`` and reads ``<p>/shared``, ``bob`` reads
    everything under ``<p>/``, ``root`` is admin under ``<p>/``.  Yields (url, tokens, prefix)."""
    prefix = f"team-{uuid.uuid4().hex[:8]}"
    grants = tmp_path / "grants.toml"
    tokens = write_grants(
        grants,
        {
            "alice": [f"{prefix}/a:write", f"{prefix}/shared:read"],
            "bob": [f"{prefix}/*:read"],
            "root": [f"{prefix}/*:admin"],
        },
    )
    with http_server(
        neo4j_info, "--namespace", f"{prefix}/default", "--grants", str(grants), "--tools", "all"
    ) as url:
        yield url, tokens, prefix


async def post_init(url: str, path: str, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(f"{url}{path}", json=INIT, headers={**HEADERS, **headers})


async def test_namespaces_by_url_are_separate(team: tuple[str, dict[str, str], str]) -> None:
    url, tokens, prefix = team
    async with http_session(url, bearer(tokens["root"]), path=ns_path(f"{prefix}/a")) as a:
        assert not (await a.call_tool("create_entities", {"entities": [_entity("only-in-a")]})).is_error
    async with http_session(url, bearer(tokens["root"]), path=ns_path(f"{prefix}/b")) as b:
        graph = await b.call_tool("read_graph", {})
        assert graph.structured_content["entities"] == []
    async with http_session(url, bearer(tokens["bob"]), path=ns_path(f"{prefix}/a")) as a:
        graph = await a.call_tool("read_graph", {})
        assert [e["name"] for e in graph.structured_content["entities"]] == ["only-in-a"]


@pytest.mark.parametrize("name", ["with/slash", "star*", "colon:name", "with space", "ünï cödé"])
async def test_encoded_namespace_names(team: tuple[str, dict[str, str], str], name: str) -> None:
    url, tokens, prefix = team
    namespace = f"{prefix}/{name}"
    async with http_session(url, bearer(tokens["root"]), path=ns_path(namespace)) as s:
        assert not (await s.call_tool("create_entities", {"entities": [_entity("x")]})).is_error
    # bob reads it under its exact name; the entity is not in the default namespace
    async with http_session(url, bearer(tokens["bob"]), path=ns_path(namespace)) as s:
        assert [e["name"] for e in (await s.call_tool("read_graph", {})).structured_content["entities"]] == [
            "x"
        ]
    async with http_session(url, bearer(tokens["bob"])) as s:
        assert (await s.call_tool("read_graph", {})).structured_content["entities"] == []


async def test_unknown_or_missing_token_is_401(team: tuple[str, dict[str, str], str]) -> None:
    url, _, prefix = team
    for headers in ({}, bearer("not-a-token"), {"Authorization": "Basic abc"}):
        response = await post_init(url, ns_path(f"{prefix}/a"), headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        body = response.json()
        assert body["error"] and "Traceback" not in response.text


async def test_no_grant_on_the_namespace_is_403_naming_it(team: tuple[str, dict[str, str], str]) -> None:
    url, tokens, prefix = team
    for namespace in (f"{prefix}/b", f"{prefix}-other", "default"):
        response = await post_init(url, ns_path(namespace), bearer(tokens["alice"]))
        assert response.status_code == 403
        body = response.json()
        assert body["namespace"] == namespace and body["needed"] == "read"
        assert "alice" in body["error"] and "Traceback" not in response.text


async def test_read_grant_lists_no_write_tool_and_refuses_one(team: tuple[str, dict[str, str], str]) -> None:
    url, tokens, prefix = team
    shared = ns_path(f"{prefix}/shared")
    async with http_session(url, bearer(tokens["root"]), path=shared) as s:
        assert not (await s.call_tool("create_entities", {"entities": [_entity("kept")]})).is_error
    async with http_session(url, bearer(tokens["alice"]), path=shared) as s:
        listed = {t.name for t in (await s.list_tools()).tools}
        assert "read_graph" in listed and "search_nodes" in listed
        assert not listed & WRITE_TOOLS and "maintain_graph" not in listed
        refused = await s.call_tool("create_entities", {"entities": [_entity("sneaked")]})
        assert refused.is_error
        text = refused.content[0].text
        assert "'write'" in text and "'read'" in text and "nothing was written" in text
        refused = await s.call_tool("delete_entities", {"entityNames": ["kept"]})
        assert refused.is_error
        graph = await s.call_tool("read_graph", {})
        assert [e["name"] for e in graph.structured_content["entities"]] == ["kept"]


async def test_write_grant_has_no_admin_tools(team: tuple[str, dict[str, str], str]) -> None:
    url, tokens, prefix = team
    async with http_session(url, bearer(tokens["alice"]), path=ns_path(f"{prefix}/a")) as s:
        listed = {t.name for t in (await s.list_tools()).tools}
        assert WRITE_TOOLS <= listed and "maintain_graph" not in listed
        refused = await s.call_tool("maintain_graph", {})
        assert refused.is_error and "'admin'" in refused.content[0].text
    async with http_session(url, bearer(tokens["root"]), path=ns_path(f"{prefix}/a")) as s:
        assert "maintain_graph" in {t.name for t in (await s.list_tools()).tools}


async def test_a_revoked_principal_stops_at_its_next_request(
    tmp_path: Path, neo4j_info: Neo4jInfo, namespace: str
) -> None:
    grants = tmp_path / "grants.toml"
    tokens = write_grants(grants, {"carol": [f"{namespace}:write"], "dave": [f"{namespace}:read"]})
    with http_server(neo4j_info, "--namespace", namespace, "--grants", str(grants)) as url:
        async with http_session(url, bearer(tokens["carol"])) as s:
            assert not (await s.call_tool("read_graph", {})).is_error
        assert (await post_init(url, "/mcp", bearer(tokens["carol"]))).status_code == 200
        # carol is removed (an atomic rewrite, as `kg-neo4j token revoke` does): no restart, her next
        # request is refused and dave's still works
        write_grants_keep(grants, tokens, {"dave": [f"{namespace}:read"]})
        refused = await post_init(url, "/mcp", bearer(tokens["carol"]))
        assert refused.status_code == 401 and "Traceback" not in refused.text
        assert (await post_init(url, "/mcp", bearer(tokens["dave"]))).status_code == 200


def write_grants_keep(path: Path, tokens: dict[str, str], principals: dict[str, list[str]]) -> None:
    """Rewrite the grants file with ``principals`` only, keeping their tokens (a revocation)."""
    lines = []
    for name, grants in principals.items():
        digest = hashlib.sha256(tokens[name].encode()).hexdigest()
        lines += [f'[principals."{name}"]', f'token_sha256 = "{digest}"', f"grants = {grants!r}", ""]
    tmp = path.with_suffix(".new")
    tmp.write_text("\n".join(lines).replace("'", '"'), encoding="utf-8")
    tmp.replace(path)


async def test_the_single_token_writes_the_configured_namespace_only(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    with http_server(neo4j_info, "--namespace", namespace, "--auth-token", "s3cret") as url:
        async with http_session(url, bearer("s3cret")) as s:
            assert not (await s.call_tool("create_entities", {"entities": [_entity("A")]})).is_error
        async with http_session(url, bearer("s3cret"), path=ns_path(namespace)) as s:
            graph = await s.call_tool("read_graph", {})
            assert [e["name"] for e in graph.structured_content["entities"]] == ["A"]
        response = await post_init(url, ns_path(f"{namespace}-elsewhere"), bearer("s3cret"))
        assert response.status_code == 403


async def test_a_session_belongs_to_its_namespace(team: tuple[str, dict[str, str], str]) -> None:
    url, tokens, prefix = team
    headers = {**HEADERS, **bearer(tokens["root"])}
    async with httpx.AsyncClient() as client:
        started = await client.post(f"{url}{ns_path(f'{prefix}/a')}", json=INIT, headers=headers)
        session = started.headers["mcp-session-id"]
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        other = await client.post(
            f"{url}{ns_path(f'{prefix}/b')}", json=listed, headers={**headers, "mcp-session-id": session}
        )
    assert other.status_code in (400, 404)


@pytest.mark.parametrize("path", ["/mcp/a/b", "/mcp/%FF"])
async def test_a_path_that_names_no_namespace_is_404(
    team: tuple[str, dict[str, str], str], path: str
) -> None:
    url, tokens, _ = team
    response = await post_init(url, path, bearer(tokens["root"]))
    assert response.status_code == 404 and response.json()["error"]


async def test_stateless_server_refuses_subscriptions_saying_why(
    neo4j_info: Neo4jInfo, namespace: str
) -> None:
    with http_server(neo4j_info, "--namespace", namespace, "--stateless") as url:
        async with http_session(url) as s:
            assert not (await s.call_tool("create_entities", {"entities": [_entity("S")]})).is_error
            graph = await s.call_tool("read_graph", {})
            assert [e["name"] for e in graph.structured_content["entities"]] == ["S"]
            with pytest.raises(MCPError) as refused:
                await s.subscribe_resource("memory://graph")  # type: ignore[arg-type]
            assert "stateless" in str(refused.value)


def _entity(name: str) -> dict[str, Any]:
    return {"name": name, "entityType": "thing", "observations": [f"{name} exists"]}


async def test_one_process_serves_a_bounded_number_of_namespaces(
    neo4j_info: Neo4jInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A principal with a prefix grant cannot grow the process without bound: past the limit a new
    namespace is refused (503 at the door) and the served ones keep working."""
    import anyio
    from test_runtime import settings_for

    from kg_neo4j.server import http
    from kg_neo4j.server.app import open_runtimes

    monkeypatch.setattr(http, "MAX_SERVED_NAMESPACES", 2)
    async with open_runtimes(settings_for(neo4j_info)) as runtimes, anyio.create_task_group() as tasks:
        served = http.Namespaces(runtimes, tasks, stateless=True)
        first = await served.manager("ns-1")
        await served.manager("ns-2")
        with pytest.raises(http.TooManyNamespaces, match="ns-3"):
            await served.manager("ns-3")
        assert await served.manager("ns-1") is first
        tasks.cancel_scope.cancel()
