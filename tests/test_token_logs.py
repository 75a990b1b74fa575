"""No token in any log (issue #37, docs/team.md#attribution): a ``kg-neo4j serve --transport http``
at log level DEBUG is sent tokens every way a client may misuse them (in the query string under the
names clients use, a bad bearer token, a valid one without grants, an opaque one no grants file knows,
Basic credentials) and one way it may use them (a valid bearer token, a real MCP session); every line
it writes to stderr (uvicorn's access log, its error log, kg-neo4j's own lines) is read, and no token
appears in any of them.  The access log still records each request, without its query string."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from test_team_http import ns_path
from test_team_oauth_http import oauth_env
from test_team_oauth_http import sign as sign_claims

from support.kg import INIT
from support.kg import MCP_HEADERS as HEADERS
from support.servers import Neo4jInfo, http_server, http_session


def sign(key: rsa.RSAPrivateKey, sub: str) -> str:
    return sign_claims(key, sub=sub, jti=uuid.uuid4().hex)  # jti: each token is different


def secret_parts(token: str) -> list[str]:
    """What must never be logged: the token, and for a JWT its payload and signature (the header,
    ``eyJhbGciOi...``, is the same for every token and names nothing)."""
    return [token, *token.split(".")[1:]] if token.count(".") == 2 else [token]


@pytest.fixture
def server(tmp_path: Path, neo4j_info: Neo4jInfo) -> Iterator[tuple[str, str, Path, rsa.RSAPrivateKey]]:
    """A server trusting a key of its own, at log level DEBUG, its stderr in a file; ``writer`` may write
    ``<prefix>/ns``.  Yields (url, namespace, log file, key)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    namespace = f"logs-{uuid.uuid4().hex[:8]}/ns"
    grants = f'[principals.writer]\ngrants = ["{namespace}:write"]\n'
    env = oauth_env(tmp_path, neo4j_info, key, grants, KG_NEO4J_LOG_LEVEL="DEBUG")
    log = tmp_path / "server.log"
    with http_server(neo4j_info, "--namespace", namespace, env=env, log=log) as url:
        yield url, namespace, log, key


def access_lines(log: Path, namespace: str, count: int) -> list[str]:
    """The access log's POST lines for ``namespace``, once there are ``count`` of them (polled: the
    server writes them after it answers).  The access log writes the path decoded."""
    deadline = time.monotonic() + 30
    while True:
        lines = [line for line in log.read_text().splitlines() if f'"POST /mcp/{namespace}' in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


async def test_no_token_in_the_log_of_refused_requests(
    server: tuple[str, str, Path, rsa.RSAPrivateKey],
) -> None:
    url, namespace, log, key = server
    path = ns_path(namespace)
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    in_query = {name: sign(key, "writer") for name in ("access_token", "token", "code", "key")}
    bad_signature = sign(other_key, "writer")
    no_grants = sign(key, "stranger")
    opaque = f"kgtok-{uuid.uuid4().hex}"
    basic = base64.b64encode(f"writer:{uuid.uuid4().hex}".encode()).decode()
    valid = sign(key, "writer")
    refused: list[tuple[dict[str, Any], dict[str, str], int]] = [
        *(({name: token}, {}, 401) for name, token in in_query.items()),
        ({}, {"Authorization": f"Bearer {bad_signature}"}, 401),
        ({}, {"Authorization": f"Bearer {no_grants}"}, 403),
        ({}, {"Authorization": f"Bearer {opaque}"}, 401),
        ({}, {"Authorization": f"Basic {basic}"}, 401),
    ]
    async with httpx.AsyncClient() as client:
        for params, headers, status in refused:
            response = await client.post(
                f"{url}{path}", params=params, json=INIT, headers={**HEADERS, **headers}
            )
            assert response.status_code == status, (params, headers, response.text)
    async with http_session(url, {"Authorization": f"Bearer {valid}"}, path=path) as s:
        assert not (await s.call_tool("read_graph", {})).is_error

    lines = access_lines(log, namespace, len(refused) + 1)
    assert len(lines) >= len(refused) + 1, lines
    # the query string is gone from the access log, the request is not
    assert sum(f'"POST /mcp/{namespace}? HTTP/1.1" 401' in line for line in lines) == len(in_query)
    text = log.read_text()
    secrets = [
        *(
            part
            for token in [*in_query.values(), bad_signature, no_grants, valid]
            for part in secret_parts(token)
        ),
        opaque,
        basic,
    ]
    leaked = [line for line in text.splitlines() if any(secret in line for secret in secrets)]
    assert leaked == [], leaked
    assert "Authorization" not in text and "authorization" not in text
