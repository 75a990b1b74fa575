"""OAuth resource server (docs/team.md#oauth): JWT access tokens checked against the issuer's JWKS,
the principal and its grants from the subject and groups claims, the protected-resource metadata.

No identity provider is reachable here: the keys are made in the test with ``cryptography``, tokens
are signed with PyJWT, the JWKS is a real local file (and, once, a real loopback HTTP endpoint).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, HMACAlgorithm, OKPAlgorithm, RSAAlgorithm

from kg_neo4j.auth import (
    Authenticator,
    AuthError,
    JwtVerifier,
    Principal,
    parse_grant,
    protected_resource_metadata,
    resource_metadata_url,
)
from kg_neo4j.auth.oauth import LEEWAY_SECONDS
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings

ISSUER = "https://login.example.com/realms/team"
PUBLIC = "https://memory.example.com"


class Keys:
    """Private keys by kid, and the JWKS of their public halves."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.ed = ed25519.Ed25519PrivateKey.generate()

    def jwks(self, **extra: Any) -> dict[str, Any]:
        keys = [
            {**json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key())), "kid": "r1", "use": "sig"},
            {**json.loads(ECAlgorithm.to_jwk(self.ec.public_key())), "kid": "e1"},
            {**json.loads(OKPAlgorithm.to_jwk(self.ed.public_key())), "kid": "d1"},
        ]
        return {"keys": keys, **extra}


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture
def jwks_file(tmp_path: Path, keys: Keys) -> Path:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(keys.jwks()))
    return path


def claims(**over: Any) -> dict[str, Any]:
    now = int(time.time())
    base: dict[str, Any] = {"iss": ISSUER, "aud": PUBLIC, "sub": "alice", "exp": now + 300, "iat": now}
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def sign(key: Any, alg: str = "RS256", kid: str | None = "r1", **over: Any) -> str:
    headers = {"kid": kid} if kid is not None else None
    return jwt.encode(claims(**over), key, algorithm=alg, headers=headers)


def settings(jwks: Path | str, **over: Any) -> Settings:
    return Settings(oauth_issuer=ISSUER, oauth_jwks=str(jwks), public_url=PUBLIC, **over)


def verifier(jwks: Path | str) -> JwtVerifier:
    verifier = Authenticator.from_settings(settings(jwks)).verifier
    assert verifier is not None
    return verifier


@pytest.mark.unit
@pytest.mark.parametrize(
    ("alg", "key_of", "kid"),
    [
        ("RS256", "rsa", "r1"),
        ("RS512", "rsa", "r1"),
        ("PS256", "rsa", "r1"),  # an RSA JWK without "alg" serves every RSA algorithm
        ("ES256", "ec", "e1"),
        ("EdDSA", "ed", "d1"),
    ],
)
async def test_a_valid_token_gives_its_subject_and_groups(
    jwks_file: Path, keys: Keys, alg: str, key_of: str, kid: str
) -> None:
    token = sign(getattr(keys, key_of), alg, kid, groups=["eng", "ops"])
    identity = await verifier(jwks_file).verify(token)
    assert (identity.subject, identity.groups) == ("alice", ("eng", "ops"))


def hs256_with_public_key(keys: Keys) -> str:
    """The key-confusion attack: HS256 'signed' with the issuer's public key (PEM) as the secret."""
    pem = keys.rsa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    segments = [
        jwt.utils.base64url_encode(json.dumps(part).encode())
        for part in ({"alg": "HS256", "typ": "JWT", "kid": "r1"}, claims())
    ]
    signing_input = b".".join(segments)
    signature = HMACAlgorithm(HMACAlgorithm.SHA256).sign(signing_input, pem)  # PyJWT's encode refuses a PEM
    return (signing_input + b"." + jwt.utils.base64url_encode(signature)).decode()


REFUSALS: list[tuple[str, Any, str]] = [
    ("expired", lambda k: sign(k.rsa, exp=int(time.time()) - LEEWAY_SECONDS - 60), "token expired"),
    (
        "not yet valid",
        lambda k: sign(k.rsa, nbf=int(time.time()) + LEEWAY_SECONDS + 60),
        "token not yet valid",
    ),
    ("issued in the future", lambda k: sign(k.rsa, iat=int(time.time()) + 3600), "token not yet valid"),
    ("wrong audience", lambda k: sign(k.rsa, aud="https://other.example.com"), "wrong audience"),
    ("audience of another path", lambda k: sign(k.rsa, aud=PUBLIC + "/mcp/team"), "wrong audience"),
    ("wrong issuer", lambda k: sign(k.rsa, iss="https://evil.example.com/realms/team"), "wrong issuer"),
    ("bad signature", lambda k: sign(k.other_rsa, kid="r1"), "bad signature"),
    ("alg none", lambda k: sign(None, "none", kid="r1"), "unsupported algorithm 'none'"),
    ("HS256 with the public key", hs256_with_public_key, "unsupported algorithm 'HS256'"),
    ("unknown kid", lambda k: sign(k.rsa, kid="k2"), "unknown key id 'k2'"),
    ("no kid, several keys", lambda k: sign(k.rsa, kid=None), "token has no key id"),
    (
        "EC key named for RS256",
        lambda k: sign(k.rsa, "RS256", kid="e1"),
        "key 'e1' is not for algorithm RS256",
    ),
    (
        "RSA key named for ES256",
        lambda k: sign(k.ec, "ES256", kid="r1"),
        "key 'r1' is not for algorithm ES256",
    ),
    ("missing sub", lambda k: sign(k.rsa, sub=None), "missing claim 'sub'"),
    ("missing exp", lambda k: sign(k.rsa, exp=None), "missing claim 'exp'"),
    ("missing iss", lambda k: sign(k.rsa, iss=None), "missing claim 'iss'"),
    ("missing aud", lambda k: sign(k.rsa, aud=None), "missing claim 'aud'"),
    ("empty sub", lambda k: sign(k.rsa, sub=""), "claim 'sub' must be a non-empty string"),
    ("numeric sub", lambda k: sign(k.rsa, sub=42), "claim 'sub' must be a non-empty string"),
    ("groups not strings", lambda k: sign(k.rsa, groups=[1, 2]), "claim 'groups' must be a list of strings"),
    ("not a JWT", lambda k: "a.b.c", "malformed token"),
    ("garbage header", lambda k: "eyJ!!.e30.sig", "malformed token"),
]


@pytest.mark.unit
@pytest.mark.parametrize(("case", "make", "reason"), REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_an_invalid_token_is_refused_with_a_reason_and_never_echoed(
    jwks_file: Path, keys: Keys, case: str, make: Any, reason: str
) -> None:
    token = make(keys)
    auth = Authenticator.from_settings(settings(jwks_file))
    with pytest.raises(AuthError) as err:
        await auth.authenticate(token)
    assert str(err.value) == reason
    for part in token.split("."):
        assert len(part) < 4 or part not in str(err.value)


@pytest.mark.unit
async def test_the_leeway_tolerates_a_small_clock_skew(jwks_file: Path, keys: Keys) -> None:
    now = int(time.time())
    skewed = sign(keys.rsa, exp=now - LEEWAY_SECONDS // 2, nbf=now + LEEWAY_SECONDS // 2)
    assert (await verifier(jwks_file).verify(skewed)).subject == "alice"


@pytest.mark.unit
async def test_a_single_key_jwks_takes_a_token_without_kid(tmp_path: Path, keys: Keys) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"keys": [json.loads(RSAAlgorithm.to_jwk(keys.rsa.public_key()))]}))
    assert (await verifier(path).verify(sign(keys.rsa, kid=None))).subject == "alice"


@pytest.mark.unit
async def test_a_jwk_that_declares_its_alg_serves_only_that_one(tmp_path: Path, keys: Keys) -> None:
    path = tmp_path / "alg.json"
    jwk = {**json.loads(RSAAlgorithm.to_jwk(keys.rsa.public_key())), "kid": "r1", "alg": "RS256"}
    path.write_text(json.dumps({"keys": [jwk]}))
    v = verifier(path)
    assert (await v.verify(sign(keys.rsa, "RS256"))).subject == "alice"
    with pytest.raises(AuthError, match="key 'r1' is not for algorithm PS256"):
        await v.verify(sign(keys.rsa, "PS256"))


@pytest.mark.unit
async def test_the_audience_defaults_to_the_public_url_with_or_without_slash(
    jwks_file: Path, keys: Keys
) -> None:
    v = verifier(jwks_file)
    assert (await v.verify(sign(keys.rsa, aud=PUBLIC + "/"))).subject == "alice"
    assert (await v.verify(sign(keys.rsa, aud=["https://x.example.com", PUBLIC]))).subject == "alice"
    # no public URL: http://host:port; an explicit audience replaces the default
    local = Authenticator.from_settings(
        Settings(oauth_issuer=ISSUER, oauth_jwks=str(jwks_file), host="127.0.0.1", port=8123)
    )
    assert local.verifier is not None
    assert (await local.verifier.verify(sign(keys.rsa, aud="http://127.0.0.1:8123"))).subject == "alice"
    api = Authenticator.from_settings(settings(jwks_file, oauth_audience="api://kg"))
    assert api.verifier is not None
    assert (await api.verifier.verify(sign(keys.rsa, aud="api://kg"))).subject == "alice"
    with pytest.raises(AuthError, match="wrong audience"):
        await api.verifier.verify(sign(keys.rsa))


@pytest.mark.unit
async def test_grants_come_from_the_subject_and_its_groups(
    tmp_path: Path, jwks_file: Path, keys: Keys
) -> None:
    grants = tmp_path / "grants.toml"
    grants.write_text(
        '[principals.alice]\ngrants = ["alice/*:admin"]\n'
        '[groups.eng]\ngrants = ["team-a/*:write"]\n'
        '[groups."/readers"]\ngrants = ["shared:read"]\n'
    )
    auth = Authenticator.from_settings(settings(jwks_file, grants_file=grants))
    assert auth.enabled and auth.oauth
    alice = await auth.authenticate(sign(keys.rsa, groups=["eng", "/readers", "nope"]))
    assert alice.name == "alice"
    assert [alice.scope_on(ns) for ns in ("alice/x", "team-a/y", "shared", "other")] == [
        "admin",
        "write",
        "read",
        None,
    ]
    bob = await auth.authenticate(sign(keys.rsa, sub="bob", groups="eng"))  # one group as a string
    assert bob == Principal("bob", (parse_grant("team-a/*:write"),))
    # a valid token whose subject and groups have no grant: a principal with none (the HTTP side: 403)
    assert await auth.authenticate(sign(keys.rsa, sub="carol")) == Principal("carol", ())
    # without a grants file, every OAuth principal has no grant
    bare = Authenticator.from_settings(settings(jwks_file))
    assert await bare.authenticate(sign(keys.rsa, groups=["eng"])) == Principal("alice", ())


@pytest.mark.unit
async def test_configured_subject_and_groups_claims(tmp_path: Path, jwks_file: Path, keys: Keys) -> None:
    grants = tmp_path / "grants.toml"
    grants.write_text(
        '[principals."alice@example.com"]\ngrants = ["a:read"]\n[groups.admins]\ngrants = ["a:admin"]\n'
    )
    auth = Authenticator.from_settings(
        settings(
            jwks_file,
            grants_file=grants,
            oauth_subject_claim="email",
            oauth_groups_claim="roles",
        )
    )
    user = await auth.authenticate(sign(keys.rsa, email="alice@example.com", groups=["admins"]))
    assert user == Principal("alice@example.com", (parse_grant("a:read"),))  # "groups" is not the claim now
    boss = await auth.authenticate(sign(keys.rsa, email="alice@example.com", roles=["admins"]))
    assert boss.scope_on("a") == "admin"
    with pytest.raises(AuthError, match="missing claim 'email'"):
        await auth.authenticate(sign(keys.rsa))


@pytest.mark.unit
async def test_a_rotated_jwks_file_is_read_again(tmp_path: Path, keys: Keys) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(keys.jwks()))
    v = verifier(path)
    new_key = ec.generate_private_key(ec.SECP256R1())
    rotated = {"keys": [{**json.loads(ECAlgorithm.to_jwk(new_key.public_key())), "kid": "e2"}]}
    path.write_text(json.dumps(rotated))
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))  # a new mtime even within one tick
    assert (await v.verify(sign(new_key, "ES256", kid="e2"))).subject == "alice"
    with pytest.raises(AuthError, match="unknown key id 'r1'"):  # the old key is gone
        await v.verify(sign(keys.rsa))


@pytest.mark.unit
@pytest.mark.parametrize(
    ("over", "fragment"),
    [
        ({"oauth_issuer": ISSUER}, "KG_NEO4J_OAUTH_JWKS must be set with KG_NEO4J_OAUTH_ISSUER"),
        ({"oauth_jwks": "/x.json"}, "KG_NEO4J_OAUTH_ISSUER must be set with KG_NEO4J_OAUTH_JWKS"),
        ({"oauth_issuer": ISSUER, "oauth_jwks": "{missing}"}, "cannot read the JWKS file"),
        ({"oauth_issuer": ISSUER, "oauth_jwks": "{bad}"}, "not a JWKS with a usable key"),
        ({"oauth_issuer": ISSUER, "oauth_jwks": "{hmac}"}, "not a JWKS with a usable key"),
    ],
)
def test_bad_oauth_settings_are_config_errors(tmp_path: Path, over: dict[str, str], fragment: str) -> None:
    (tmp_path / "bad.json").write_text('{"keys": "nope"}')
    (tmp_path / "hmac.json").write_text('{"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}]}')
    paths = {"missing": str(tmp_path / "missing.json"), "bad": str(tmp_path / "bad.json")}
    paths["hmac"] = str(tmp_path / "hmac.json")
    given = {k: v.format(**paths) for k, v in over.items()}
    with pytest.raises(ConfigError) as err:
        Authenticator.from_settings(Settings(**given))  # type: ignore[arg-type]
    assert fragment in str(err.value)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("public_url", "resource", "where"),
    [
        (PUBLIC, PUBLIC, PUBLIC + "/.well-known/oauth-protected-resource"),
        (PUBLIC + "/", PUBLIC, PUBLIC + "/.well-known/oauth-protected-resource"),
        (PUBLIC + "/kg", PUBLIC + "/kg", PUBLIC + "/.well-known/oauth-protected-resource/kg"),
        (None, "http://127.0.0.1:8000", "http://127.0.0.1:8000/.well-known/oauth-protected-resource"),
    ],
)
def test_the_protected_resource_metadata_document(public_url: str | None, resource: str, where: str) -> None:
    s = Settings(oauth_issuer=ISSUER, oauth_jwks="/unused.json", public_url=public_url)
    doc = protected_resource_metadata(s)
    assert doc == {
        "resource": resource,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write", "admin"],
    }
    assert resource_metadata_url(s) == where


class JwksEndpoint:
    """The JWKS served over HTTP on loopback (as an issuer's certs endpoint is); counts its fetches."""

    def __init__(self, body: bytes) -> None:
        endpoint = self
        self.fetches = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                endpoint.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/certs"


@pytest.fixture
def jwks_endpoint(keys: Keys) -> Iterator[JwksEndpoint]:
    endpoint = JwksEndpoint(json.dumps(keys.jwks()).encode())
    thread = threading.Thread(target=endpoint.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()


@pytest.mark.line_independent
async def test_jwks_from_a_url_is_fetched_once_and_cached(jwks_endpoint: JwksEndpoint, keys: Keys) -> None:
    v = verifier(jwks_endpoint.url)
    for alg, key, kid in (("RS256", keys.rsa, "r1"), ("ES256", keys.ec, "e1"), ("RS256", keys.rsa, "r1")):
        assert (await v.verify(sign(key, alg, kid))).subject == "alice"
    assert jwks_endpoint.fetches == 1
    with pytest.raises(AuthError, match="unknown key id 'zz'"):
        await v.verify(sign(keys.rsa, kid="zz"))
    with pytest.raises(AuthError, match="unknown key id 'zy'"):
        await v.verify(sign(keys.rsa, kid="zy"))
    with pytest.raises(AuthError, match="bad signature"):
        await v.verify(sign(keys.other_rsa, kid="r1"))
    # unknown kids re-fetch at most once per PyJWT's cooldown: random kids cannot hammer the issuer
    assert jwks_endpoint.fetches == 1


@pytest.mark.line_independent
async def test_an_unreachable_jwks_url_refuses_without_leaking(keys: Keys) -> None:
    from support.servers import free_port

    v = verifier(f"http://127.0.0.1:{free_port()}/certs")
    token = sign(keys.rsa)
    with pytest.raises(AuthError) as err:
        await v.verify(token)
    assert str(err.value) == "the server cannot fetch the issuer's keys"
