"""OAuth 2.1 over real HTTP (docs/team.md#oauth): a ``kg-neo4j serve`` acting as a resource
server for JWTs signed with a key this test makes (no identity provider is reachable here), grants
by subject and by group from the grants file, the protected-resource metadata where MCP clients look
for it.  The token checks themselves (expired, wrong audience, ``alg: none``...) are in
tests/test_oauth.py; this file checks what the door does with them."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from test_team_http import ns_path

from support.kg import INIT
from support.kg import MCP_HEADERS as HEADERS
from support.servers import Neo4jInfo, http_server, http_session, server_env

ISSUER = "https://login.example.test/realms/team"
RESOURCE = "https://memory.example.test"
KID = "test-key-1"


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def sign(key: rsa.RSAPrivateKey, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": RESOURCE, "iat": now, "exp": now + 600, **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": KID})


def oauth_env(
    tmp_path: Path, neo4j_info: Neo4jInfo, key: rsa.RSAPrivateKey, grants: str, **extra: str
) -> dict[str, str]:
    """A server's environment trusting ISSUER's ``key`` (a local JWKS file), with ``grants``."""
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]}))
    grants_file = tmp_path / "grants.toml"
    grants_file.write_text(grants)
    return server_env(
        neo4j_info,
        KG_NEO4J_OAUTH_ISSUER=ISSUER,
        KG_NEO4J_OAUTH_JWKS=str(jwks),
        KG_NEO4J_PUBLIC_URL=RESOURCE,
        KG_NEO4J_GRANTS_FILE=str(grants_file),
        **extra,
    )


@pytest.fixture
def oauth_server(tmp_path: Path, neo4j_info: Neo4jInfo, key: rsa.RSAPrivateKey) -> Iterator[tuple[str, str]]:
    """A server trusting ISSUER's key (a local JWKS file); group ``engineers`` writes ``<p>/eng``,
    subject ``auditor-1`` reads it.  Yields (url, prefix)."""
    prefix = f"oauth-{uuid.uuid4().hex[:8]}"
    grants = f'[groups.engineers]\ngrants = ["{prefix}/eng:write"]\n\n[principals."auditor-1"]\ngrants = ["{prefix}/eng:read"]\n'
    env = oauth_env(tmp_path, neo4j_info, key, grants)
    with http_server(neo4j_info, "--namespace", f"{prefix}/default", env=env) as url:
        yield url, prefix


async def test_metadata_document_and_challenge(oauth_server: tuple[str, str]) -> None:
    url, prefix = oauth_server
    async with httpx.AsyncClient() as client:
        metadata = await client.get(f"{url}/.well-known/oauth-protected-resource")
        refused = await client.post(f"{url}{ns_path(f'{prefix}/eng')}", json=INIT, headers=HEADERS)
    assert metadata.status_code == 200
    doc = metadata.json()
    assert doc["resource"] == RESOURCE and doc["authorization_servers"] == [ISSUER]
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer")
    assert f'resource_metadata="{RESOURCE}/.well-known/oauth-protected-resource"' in challenge


async def test_group_grant_writes_and_subject_grant_reads(
    oauth_server: tuple[str, str], key: rsa.RSAPrivateKey
) -> None:
    url, prefix = oauth_server
    path = ns_path(f"{prefix}/eng")
    engineer = sign(key, sub="eng-7", groups=["engineers", "other"])
    async with http_session(url, {"Authorization": f"Bearer {engineer}"}, path=path) as s:
        created = await s.call_tool(
            "create_entities", {"entities": [{"name": "Svc", "entityType": "service", "observations": []}]}
        )
        assert not created.is_error
    auditor = sign(key, sub="auditor-1")
    async with http_session(url, {"Authorization": f"Bearer {auditor}"}, path=path) as s:
        assert "create_entities" not in {t.name for t in (await s.list_tools()).tools}
        graph = await s.call_tool("read_graph", {})
        assert [e["name"] for e in graph.structured_content["entities"]] == ["Svc"]


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"sub": "eng-7", "groups": ["engineers"], "exp": int(time.time()) - 3600}, "expired"),
        ({"sub": "eng-7", "groups": ["engineers"], "aud": "https://elsewhere.test"}, "audience"),
        ({"sub": "eng-7", "groups": ["engineers"], "iss": "https://evil.test"}, "issuer"),
    ],
)
async def test_invalid_tokens_are_401_with_the_reason(
    oauth_server: tuple[str, str], key: rsa.RSAPrivateKey, claims: dict[str, Any], reason: str
) -> None:
    url, prefix = oauth_server
    token = sign(key, **claims)
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{url}{ns_path(f'{prefix}/eng')}",
            json=INIT,
            headers={**HEADERS, "Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 401
    assert reason in response.json()["error"] and token not in response.text


async def test_a_valid_token_without_grants_is_403(
    oauth_server: tuple[str, str], key: rsa.RSAPrivateKey
) -> None:
    url, prefix = oauth_server
    token = sign(key, sub="stranger", groups=["visitors"])
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{url}{ns_path(f'{prefix}/eng')}",
            json=INIT,
            headers={**HEADERS, "Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 403
    assert response.json()["namespace"] == f"{prefix}/eng"
