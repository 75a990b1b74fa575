"""``kg-neo4j token add|list|revoke`` (docs/team.md#grants-file), the real executable as a subprocess.

``add`` prints the token once, as the last line of stdout (all else on stderr); the file keeps only
its SHA-256, mode 0600; ``list`` shows names and grants, never a token or a hash; ``revoke`` removes a
principal; a bad ``--grant`` is one line naming the flag and what is allowed, exit 2.  What the server
will do with the file is checked with the server's own reader (:class:`GrantsFile`).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from kg_neo4j.auth import GrantsFile, Principal, parse_grant
from kg_neo4j.auth.grants_file import hash_token
from support.servers import KG

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit


def kg(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "KG_NEO4J_"))}
    return subprocess.run(
        [KG, "token", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def token_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout  # the token alone on stdout: TOKEN=$(kg-neo4j token add ...)
    return lines[-1]


def test_add_prints_the_token_last_and_the_file_holds_only_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "etc" / "kg" / "grants.toml"  # directories created too
    result = kg("add", "alice", "--grant", "team-a/*:write", "--grant", "shared:read", "--grants", str(path))
    token = token_of(result)
    assert len(token) >= 43 and token not in result.stderr
    assert "alice" in result.stderr and "team-a/*:write" in result.stderr
    text = path.read_text()
    assert token not in text and hash_token(token) in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # the server's reader resolves that token to alice and her grants
    found = GrantsFile.open(path).by_token(token)
    assert found == Principal("alice", (parse_grant("team-a/*:write"), parse_grant("shared:read")))

    second = token_of(kg("add", "bob", "--grant", "b:read", "--grants", str(path)))
    assert second != token
    assert {p.name for p in (GrantsFile.open(path).by_token(t) for t in (token, second)) if p} == {
        "alice",
        "bob",
    }


def test_adding_grants_keeps_the_token_and_rotate_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    token = token_of(kg("add", "alice", "--grant", "a:read", "--grants", str(path)))

    more = kg("add", "alice", "--grant", "b:write", "--grant", "a:read", "--grants", str(path))
    assert more.returncode == 0 and more.stdout == ""  # no new token: none printed
    assert "keeps its token" in more.stderr
    grants = GrantsFile.open(path)
    assert grants.by_token(token) == Principal("alice", (parse_grant("a:read"), parse_grant("b:write")))

    rotated = token_of(kg("add", "alice", "--grant", "c:read", "--rotate", "--grants", str(path)))
    assert rotated != token
    assert grants.by_token(token) is None
    found = grants.by_token(rotated)
    assert found is not None and [str(g) for g in found.grants] == ["a:read", "b:write", "c:read"]


def test_list_shows_names_and_grants_never_a_token_or_hash(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    env = {"KG_NEO4J_GRANTS_FILE": str(path)}  # the environment variable instead of --grants
    token = token_of(kg("add", "alice", "--grant", "team-a/*:write", env=env))
    assert kg("add", "carol", "--grant", "c:admin", "--no-token", env=env).stdout == ""
    assert kg("add", "engineers", "--group", "--grant", "team-a/*:read", env=env).returncode == 0
    listed = kg("list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "principal alice (token): team-a/*:write",
        "principal carol (OAuth subject only): c:admin",
        "group engineers: team-a/*:read",
    ]
    for secret in (token, hash_token(token)):
        assert secret not in listed.stdout + listed.stderr


def test_revoke_removes_the_principal_and_its_token_stops_resolving(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    alice = token_of(kg("add", "alice", "--grant", "a:write", "--grants", str(path)))
    bob = token_of(kg("add", "bob", "--grant", "b:write", "--grants", str(path)))
    grants = GrantsFile.open(path)
    assert grants.by_token(alice) is not None

    revoked = kg("revoke", "alice", "--grants", str(path))
    assert revoked.returncode == 0, revoked.stderr
    assert grants.by_token(alice) is None  # the same reader, no restart: the next lookup
    assert grants.by_token(bob) is not None
    assert kg("list", "--grants", str(path)).stdout.splitlines() == ["principal bob (token): b:write"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    again = kg("revoke", "alice", "--grants", str(path))
    assert again.returncode == 2
    assert (
        again.stderr.strip()
        == f"kg-neo4j token: error: no principal 'alice' in {path} (kg-neo4j token list shows them)"
    )


@pytest.mark.parametrize(
    ("grant", "fragment"),
    [
        ("team-a", "has no ':SCOPE'"),
        ("team-a:owner", "scope 'owner' is not one of read, write, admin"),
        (":read", "the namespace before ':' is empty"),
        ("team*:write", "must follow '/'"),
    ],
)
def test_a_bad_grant_is_one_line_naming_the_flag_and_exit_2(
    tmp_path: Path, grant: str, fragment: str
) -> None:
    path = tmp_path / "grants.toml"
    result = kg("add", "alice", "--grant", "ok:read", "--grant", grant, "--grants", str(path))
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kg-neo4j token add: error: argument --grant: ")
    assert fragment in lines[0]
    assert not path.exists()  # nothing written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["add", "alice", "--grant", "a:read"],
            "no grants file: give --grants FILE or set KG_NEO4J_GRANTS_FILE",
        ),
        (["list", "--grants", "{missing}"], "no grants file at {missing} (kg-neo4j token add creates it)"),
        (
            ["add", " alice", "--grant", "a:read", "--grants", "{file}"],
            "principal name ' alice' must be non-empty",
        ),
        (["add", "x", "--grant", "a:read", "--rotate", "--no-token"], "not allowed with argument"),
        (["add", "alice", "--grants", "{file}"], "the following arguments are required: --grant"),
        (["list", "--grants", "{broken}"], "the grants file {broken} does not parse: unknown key 'grant'"),
    ],
)
def test_usage_and_file_errors_are_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    paths = {
        "missing": str(tmp_path / "missing.toml"),
        "file": str(tmp_path / "grants.toml"),
        "broken": str(tmp_path / "broken.toml"),
    }
    Path(paths["broken"]).write_text('[principals.alice]\ngrant = ["a:read"]\n')
    result = kg(*(a.format(**paths) for a in args))
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message.format(**paths) in result.stderr
    assert "Traceback" not in result.stderr
