"""OAuth against a real identity provider (issue #37, docs/team.md#example-keycloak): a Keycloak
started once per test run imports tests/data/keycloak-realm.json (users ``alice`` in ``engineers`` and
``bob`` in ``auditors``; client ``kg-agents`` with an audience mapper that puts kg-neo4j's public URL in
``aud`` and a groups mapper), and issues the tokens itself by the password grant.  A ``kg-neo4j serve
--transport http`` trusting the realm (its keys fetched from Keycloak's JWKS URL) is driven through a
real MCP client with them: grants by subject (``preferred_username``) and by group, 403 outside them,
401 for a token of another realm, writes recorded as the user's, a realm key rotated, and no Keycloak
token in the server's log.

Keycloak is ``org.keycloak:keycloak-quarkus-dist`` from Maven Central, kept in ``~/.m2`` like the
Neo4j jars and unpacked into a temporary directory per run; it runs on the machine's Java (17+).  It
is never skipped: a Keycloak that cannot be had fails the test.  ``.ci/run`` runs this file (marker
``keycloak``) on one Neo4j line only."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from test_team_http import ns_path
from test_token_logs import access_lines, secret_parts

from support.kg import INIT
from support.kg import MCP_HEADERS as HEADERS
from support.servers import Neo4jInfo, free_port, http_server, http_session, server_env

pytestmark = pytest.mark.keycloak

VERSION = "26.7.3"
ARTIFACT = f"org.keycloak:keycloak-quarkus-dist:{VERSION}:zip"
REALM_FILE = Path(__file__).parent / "data" / "keycloak-realm.json"
PUBLIC_URL = "https://memory.example.com"  # the realm's audience mapper puts it in aud
CLIENT = "kg-agents"
PASSWORDS = {"alice": "alice-password", "bob": "bob-password"}
#: realms imported from the one realm file: "team" for the grants; "other" for a token of another
#: realm and for the key rotation (its keys change: no test depends on which key signs its tokens)
REALMS = ("team", "other")
START_SECONDS = 600  # a first start builds Keycloak (about a minute on a busy 2-core machine)


def keycloak_zip() -> Path:
    """The distribution from ~/.m2 (fetched there by Maven the first time)."""
    group, artifact, version, ext = ARTIFACT.split(":")
    repo = Path.home() / ".m2" / "repository"
    path = repo / group.replace(".", "/") / artifact / version / f"{artifact}-{version}.{ext}"
    if not path.is_file():
        got = subprocess.run(
            ["mvn", "-q", "-B", "dependency:get", f"-Dartifact={ARTIFACT}", "-Dtransitive=false"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert got.returncode == 0 and path.is_file(), f"cannot get {ARTIFACT}: {got.stdout}{got.stderr}"
    return path


@dataclass
class Keycloak:
    url: str
    admin_password: str

    def issuer(self, realm: str) -> str:
        return f"{self.url}/realms/{realm}"

    def jwks(self, realm: str) -> str:
        return f"{self.issuer(realm)}/protocol/openid-connect/certs"

    def token(self, user: str, realm: str = "team") -> str:
        """An access token Keycloak issues to ``user`` by the password grant."""
        response = httpx.post(
            f"{self.issuer(realm)}/protocol/openid-connect/token",
            data={
                "grant_type": "password",
                "client_id": CLIENT,
                "username": user,
                "password": PASSWORDS[user],
            },
            timeout=60,
        )
        assert response.status_code == 200, response.text
        return str(response.json()["access_token"])

    def admin(self) -> httpx.Client:
        """A client of Keycloak's admin REST API, as the bootstrap admin."""
        response = httpx.post(
            f"{self.issuer('master')}/protocol/openid-connect/token",
            data={
                "grant_type": "password",
                "client_id": "admin-cli",
                "username": "admin",
                "password": self.admin_password,
            },
            timeout=60,
        )
        assert response.status_code == 200, response.text
        token = response.json()["access_token"]
        return httpx.Client(
            base_url=f"{self.url}/admin/realms", headers={"Authorization": f"Bearer {token}"}, timeout=60
        )


@pytest.fixture(scope="session")
def keycloak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keycloak]:
    """A Keycloak in dev mode (its own H2 database) on free ports, with the realms imported; stopped,
    its whole process group, at the end of the run."""
    root = tmp_path_factory.mktemp("keycloak")
    with zipfile.ZipFile(keycloak_zip()) as z:
        z.extractall(root)
    home = root / f"keycloak-{VERSION}"
    imports = home / "data" / "import"
    imports.mkdir(parents=True)
    realm = json.loads(REALM_FILE.read_text())
    for name in REALMS:
        (imports / f"{name}.json").write_text(json.dumps({**realm, "realm": name}))
    port = free_port()
    admin_password = uuid.uuid4().hex
    env = {
        **os.environ,
        "KC_BOOTSTRAP_ADMIN_USERNAME": "admin",
        "KC_BOOTSTRAP_ADMIN_PASSWORD": admin_password,
    }
    log = (root / "keycloak.log").open("w+b")
    proc = subprocess.Popen(  # bash: zipfile does not keep the scripts' executable bit
        [
            "bash",
            str(home / "bin" / "kc.sh"),
            "start-dev",
            "--import-realm",
            "--http-host=127.0.0.1",
            f"--http-port={port}",
            f"--http-management-port={free_port()}",
        ],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # kc.sh runs Java as its child: the group is stopped as one
    )
    try:
        kc = Keycloak(f"http://127.0.0.1:{port}", admin_password)
        deadline = time.monotonic() + START_SECONDS
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(
                    f"Keycloak exited ({proc.returncode}): {log.read().decode(errors='replace')[-4000:]}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if all(httpx.get(kc.jwks(name), timeout=5).status_code == 200 for name in REALMS):
                    break
            if time.monotonic() > deadline:
                log.seek(0)
                raise AssertionError(
                    f"Keycloak did not serve its JWKS within {START_SECONDS} s: "
                    f"{log.read().decode(errors='replace')[-4000:]}"
                )
            time.sleep(1)
        yield kc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        with contextlib.suppress(ProcessLookupError):  # Java, should it outlive kc.sh
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(home, ignore_errors=True)  # 190 MB; its log stays in the run's temporary directory


@dataclass
class Team:
    url: str
    prefix: str
    log: Path


def grants_file(path: Path, prefix: str) -> Path:
    """alice (by her name) writes ``<p>/alice``; engineers write ``<p>/eng``; auditors read ``<p>/eng``."""
    path.write_text(
        f'[principals.alice]\ngrants = ["{prefix}/alice:write"]\n\n'
        f'[groups.engineers]\ngrants = ["{prefix}/eng:write"]\n\n'
        f'[groups.auditors]\ngrants = ["{prefix}/eng:read"]\n'
    )
    return path


def realm_env(
    neo4j_info: Neo4jInfo, keycloak: Keycloak, realm: str, grants: Path, **extra: str
) -> dict[str, str]:
    """The settings docs/team.md gives for Keycloak, for ``realm`` of this Keycloak."""
    return server_env(
        neo4j_info,
        KG_NEO4J_PUBLIC_URL=PUBLIC_URL,
        KG_NEO4J_OAUTH_ISSUER=keycloak.issuer(realm),
        KG_NEO4J_OAUTH_JWKS=keycloak.jwks(realm),
        KG_NEO4J_OAUTH_SUBJECT_CLAIM="preferred_username",
        KG_NEO4J_GRANTS_FILE=str(grants),
        **extra,
    )


@pytest.fixture(scope="module")
def team(
    keycloak: Keycloak, neo4j_info: Neo4jInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Team]:
    """A kg-neo4j serving the realm ``team``, its stderr in a file."""
    tmp = tmp_path_factory.mktemp("keycloak-team")
    prefix = f"kc-{uuid.uuid4().hex[:8]}"
    env = realm_env(neo4j_info, keycloak, "team", grants_file(tmp / "grants.toml", prefix))
    log = tmp / "server.log"
    with http_server(neo4j_info, "--namespace", f"{prefix}/default", env=env, log=log) as url:
        yield Team(url, prefix, log)


async def initialize(url: str, namespace: str, token: str, **params: str) -> httpx.Response:
    """An MCP initialize with ``token`` as a bearer token (or, given ``params``, none)."""
    headers = {**HEADERS} if params else {**HEADERS, "Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=60) as client:
        return await client.post(f"{url}{ns_path(namespace)}", params=params, json=INIT, headers=headers)


def test_keycloak_tokens_carry_the_claims_the_docs_name(keycloak: Keycloak) -> None:
    """What the docs' settings rely on, as Keycloak writes it (the signature is checked by the server)."""
    claims = {
        user: jwt.decode(keycloak.token(user), options={"verify_signature": False}) for user in PASSWORDS
    }
    for user, group in (("alice", "engineers"), ("bob", "auditors")):
        c = claims[user]
        assert c["iss"] == keycloak.issuer("team")
        assert sorted(c["aud"]) == sorted([PUBLIC_URL, "account"])  # a list: the account roles add theirs
        assert c["azp"] == CLIENT
        assert c["preferred_username"] == user
        assert c["groups"] == [group]  # the groups mapper, Full group path off
        assert "offline_access" in c["realm_access"]["roles"]  # present, and not used for grants
    header = jwt.get_unverified_header(keycloak.token("alice"))
    kids = {k["kid"] for k in httpx.get(keycloak.jwks("team"), timeout=30).json()["keys"]}
    assert header["alg"] == "RS256" and header["kid"] in kids


async def test_grants_by_subject_and_by_group_with_writes_attributed(keycloak: Keycloak, team: Team) -> None:
    alice = {"Authorization": f"Bearer {keycloak.token('alice')}"}
    bob = {"Authorization": f"Bearer {keycloak.token('bob')}"}
    entity = {"name": "Svc", "entityType": "service", "observations": ["runs on Neo4j"]}
    for namespace in (f"{team.prefix}/alice", f"{team.prefix}/eng"):  # by her name, by her group
        async with http_session(team.url, alice, path=ns_path(namespace)) as s:
            created = await s.call_tool("create_entities", {"entities": [entity]})
            assert not created.is_error, created
    async with http_session(team.url, bob, path=ns_path(f"{team.prefix}/eng")) as s:  # auditors read
        assert "create_entities" not in {t.name for t in (await s.list_tools()).tools}
        graph = await s.call_tool("read_graph", {})
        assert [e["name"] for e in graph.structured_content["entities"]] == ["Svc"]
        history = await s.call_tool("entity_history", {"name": "Svc"})
        assert {e["by"] for e in history.structured_content["events"]} == {"alice"}


async def test_outside_the_grants_is_403(keycloak: Keycloak, team: Team) -> None:
    response = await initialize(team.url, f"{team.prefix}/alice", keycloak.token("bob"))
    assert response.status_code == 403
    assert response.json()["namespace"] == f"{team.prefix}/alice"


async def test_a_token_of_another_realm_is_401(keycloak: Keycloak, team: Team) -> None:
    token = keycloak.token("alice", realm="other")  # same users, same client, another realm's keys
    response = await initialize(team.url, f"{team.prefix}/alice", token)
    assert response.status_code == 401
    assert token not in response.text


async def test_no_keycloak_token_in_the_log_of_refused_requests(keycloak: Keycloak, team: Team) -> None:
    """A real token in the query string, and as a bearer token outside its grants: both refused, and
    neither in any line the server wrote (its access log included)."""
    namespace = f"{team.prefix}/log-check"  # only this test's requests go there
    in_query, outside = keycloak.token("alice"), keycloak.token("bob")
    assert (await initialize(team.url, namespace, "", access_token=in_query)).status_code == 401
    assert (await initialize(team.url, namespace, outside)).status_code == 403
    secrets = [*secret_parts(in_query), *secret_parts(outside)]
    mine = access_lines(team.log, namespace, 2)
    lines = team.log.read_text().splitlines()
    assert sum(f'"POST /mcp/{namespace}? HTTP/1.1" 401' in line for line in mine) == 1, mine
    assert [line for line in lines if any(s in line for s in secrets)] == []


def poll_status(call: Callable[[], Any], wanted: int, within: float) -> float:
    """Seconds until ``call()`` answers ``wanted`` (it is called again until then); fails after ``within``."""
    start = time.monotonic()
    while True:
        status = call()
        if status == wanted:
            return time.monotonic() - start
        assert time.monotonic() - start < within, f"still {status} after {within} s, wanted {wanted}"
        time.sleep(0.2)


def test_realm_key_rotation(keycloak: Keycloak, neo4j_info: Neo4jInfo, tmp_path: Path) -> None:
    """A key added to the realm signs new tokens, which pass at once (their unknown kid fetches the
    JWKS again); once the old key is removed, its tokens are refused when the kept keys expire
    (KG_NEO4J_OAUTH_JWKS_LIFESPAN, shortened here to 2 s on one server)."""
    prefix = f"kc-rot-{uuid.uuid4().hex[:8]}"
    namespace = f"{prefix}/alice"
    grants = grants_file(tmp_path / "grants.toml", prefix)
    lifespan = 2

    def status(url: str, token: str) -> int:
        response = httpx.post(
            f"{url}{ns_path(namespace)}",
            json=INIT,
            headers={**HEADERS, "Authorization": f"Bearer {token}"},
            timeout=60,
        )
        return response.status_code

    with (
        keycloak.admin() as admin,
        http_server(neo4j_info, env=realm_env(neo4j_info, keycloak, "other", grants)) as kept,
        http_server(
            neo4j_info,
            env=realm_env(neo4j_info, keycloak, "other", grants, KG_NEO4J_OAUTH_JWKS_LIFESPAN=str(lifespan)),
        ) as brief,
    ):
        old_token = keycloak.token("alice", "other")
        old_kid = jwt.get_unverified_header(old_token)["kid"]
        assert status(kept, old_token) == 200 and status(brief, old_token) == 200  # both keep the old JWKS

        realm_id = admin.get("/other").json()["id"]
        added = admin.post(
            "/other/components",
            json={
                "name": "rsa-rotated",
                "providerId": "rsa-generated",
                "providerType": "org.keycloak.keys.KeyProvider",
                "parentId": realm_id,
                "config": {
                    "priority": ["200"],
                    "keySize": ["2048"],
                    "active": ["true"],
                    "enabled": ["true"],
                    "algorithm": ["RS256"],
                },
            },
        )
        assert added.status_code == 201, added.text
        new_token = keycloak.token("alice", "other")
        assert jwt.get_unverified_header(new_token)["kid"] != old_kid  # the new key signs now
        # The default lifespan (300 s) is far from over: only the unknown kid's new fetch lets the token
        # in (PyJWT lets one happen 30 s after the last fetch at the earliest, so a fresh server waits).
        poll_status(lambda: status(kept, new_token), 200, within=120)
        poll_status(lambda: status(brief, new_token), 200, within=60)
        assert status(kept, old_token) == 200  # both keys are in the JWKS

        keys = admin.get("/other/keys").json()["keys"]
        old_provider = next(k["providerId"] for k in keys if k["kid"] == old_kid)
        assert admin.delete(f"/other/components/{old_provider}").status_code == 204
        assert old_kid not in {k["kid"] for k in httpx.get(keycloak.jwks("other"), timeout=30).json()["keys"]}
        # refused once the kept keys expire: 2 s, with a stated tolerance for a busy machine
        took = poll_status(lambda: status(brief, old_token), 401, within=lifespan + 30)
        assert status(brief, new_token) == 200
        assert status(kept, old_token) == 200, (
            f"the old key is trusted until the 300 s lifespan ends ({took:.1f} s)"
        )
