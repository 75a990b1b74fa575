"""Streamable HTTP: bearer token (401), Origin check (403), loopback-only without a token."""

from __future__ import annotations

import subprocess

import httpx

from support.kg import INIT
from support.kg import MCP_HEADERS as HEADERS
from support.servers import KG, Neo4jInfo, free_port, http_server, http_session, server_env


async def test_token_required_and_checked(neo4j_info: Neo4jInfo, namespace: str) -> None:
    with http_server(neo4j_info, "--namespace", namespace, "--auth-token", "s3cret") as url:
        async with httpx.AsyncClient() as client:
            missing = await client.post(f"{url}/mcp", json=INIT, headers=HEADERS)
            wrong = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Authorization": "Bearer nope"}
            )
            ok = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Authorization": "Bearer s3cret"}
            )
        assert missing.status_code == 401 and wrong.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        assert ok.status_code == 200
        # A real MCP client with the token works end to end.
        async with http_session(url, headers={"Authorization": "Bearer s3cret"}) as session:
            created = await session.call_tool(
                "create_entities", {"entities": [{"name": "A", "entityType": "t", "observations": []}]}
            )
            assert not created.is_error
            graph = await session.call_tool("read_graph", {})
            assert graph.structured_content["entities"][0]["name"] == "A"


async def test_foreign_origin_is_forbidden(neo4j_info: Neo4jInfo, namespace: str) -> None:
    with http_server(
        neo4j_info, "--namespace", namespace, "--allowed-origin", "https://app.example.org"
    ) as url:
        async with httpx.AsyncClient() as client:
            evil = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Origin": "https://evil.example"}
            )
            rebinding = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Origin": "http://attacker.localhost.evil"}
            )
            local = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Origin": "http://localhost:3000"}
            )
            listed = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Origin": "https://app.example.org"}
            )
            none = await client.post(f"{url}/mcp", json=INIT, headers=HEADERS)
        assert evil.status_code == 403 and rebinding.status_code == 403
        assert local.status_code == 200 and listed.status_code == 200 and none.status_code == 200


async def test_a_rebound_host_name_is_forbidden_on_loopback(neo4j_info: Neo4jInfo, namespace: str) -> None:
    with http_server(neo4j_info, "--namespace", namespace) as url:
        port = url.rsplit(":", 1)[1]
        async with httpx.AsyncClient() as client:
            rebound = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Host": f"evil.example:{port}"}
            )
            by_name = await client.post(
                f"{url}/mcp", json=INIT, headers={**HEADERS, "Host": f"localhost:{port}"}
            )
            by_ip6 = await client.post(f"{url}/mcp", json=INIT, headers={**HEADERS, "Host": f"[::1]:{port}"})
        assert rebound.status_code == 403 and "loopback" in rebound.text
        assert by_name.status_code == 200 and by_ip6.status_code == 200


def test_non_loopback_bind_needs_a_token(neo4j_info: Neo4jInfo) -> None:
    proc = subprocess.run(
        [KG, "serve", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=server_env(neo4j_info),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--auth-token" in proc.stderr and proc.stdout == ""


def test_stdio_keeps_stdout_for_the_protocol(neo4j_info: Neo4jInfo, namespace: str) -> None:
    """Everything the server logs goes to stderr; stdout carries only JSON-RPC messages."""
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    )
    # stdin stays open until both answers are in (closing it early may end the server before it answers)
    proc = subprocess.Popen(
        [KG, "serve", "--namespace", namespace, "--log-level", "DEBUG"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(neo4j_info),
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(request)
    proc.stdin.flush()
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    rest, stderr = proc.communicate(timeout=60)
    lines += [line for line in rest.splitlines() if line.strip()]
    assert len(lines) == 2
    assert all('"jsonrpc":"2.0"' in line.replace(" ", "") for line in lines)
    assert '"tools"' in lines[1]
    assert "kg-neo4j" in stderr  # the startup log line went to stderr
