"""Grants (docs/team.md#grants-file): the NS:SCOPE syntax, what a principal may do on a namespace,
and the grants file as the server reads it (tokens by hash, re-read on change, fail closed).

No Neo4j, no server, no network: real files in tmp_path.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from kg_neo4j.auth import SCOPES, Authenticator, AuthError, Grant, GrantsFile, Principal, allows, parse_grant
from kg_neo4j.auth import grants_file as gf
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import MAX_NAMESPACE_CHARS, Settings

pytestmark = pytest.mark.unit


# --- parse_grant ---


@pytest.mark.parametrize(
    ("text", "pattern", "scope", "prefix", "namespace"),
    [
        ("shared:read", "shared", "read", False, "shared"),
        ("team-a/*:write", "team-a/*", "write", True, "team-a/"),
        ("ops:admin", "ops", "admin", False, "ops"),
        ("a/b/c:read", "a/b/c", "read", False, "a/b/c"),  # '/' inside an exact name
        ("urn:x:y:write", "urn:x:y", "write", False, "urn:x:y"),  # split at the LAST ':'
        ("my team:read", "my team", "read", False, "my team"),  # spaces
        ("stars\\*:read", "stars\\*", "read", False, "stars*"),  # escaped literal '*'
        ("a/\\*:read", "a/\\*", "read", False, "a/*"),  # a namespace really named 'a/*'
        ("a*b:read", "a*b", "read", False, "a*b"),  # a '*' inside a name is literal
        ("/*:read", "/*", "read", True, "/"),
        ("é/ü/*:write", "é/ü/*", "write", True, "é/ü/"),
    ],
)
def test_parse_grant_reads_exact_prefix_and_escaped_names(
    text: str, pattern: str, scope: str, prefix: bool, namespace: str
) -> None:
    grant = parse_grant(text)
    assert (grant.pattern, grant.scope, grant.is_prefix, grant.namespace) == (
        pattern,
        scope,
        prefix,
        namespace,
    )
    assert str(grant) == text  # written back as read
    assert parse_grant(str(grant)) == grant


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("shared", ["has no ':SCOPE'", "read, write, admin"]),
        ("", ["has no ':SCOPE'"]),
        (":read", ["namespace before ':' is empty", "prefix ending in /*"]),
        ("shared:", ["scope '' is not one of read, write, admin"]),
        ("shared:owner", ["scope 'owner' is not one of read, write, admin"]),
        ("shared:READ", ["scope 'READ'"]),  # not lower-cased silently
        ("shared:read ", ["scope 'read '"]),  # not stripped silently
        ("shared:read:", ["scope ''"]),  # the last ':' splits
        ("team*:read", ["must follow '/'", "escaped as '\\*'"]),
        ("*:read", ["must follow '/'"]),
        ("x" * (MAX_NAMESPACE_CHARS + 1) + ":read", [f"longer than {MAX_NAMESPACE_CHARS} characters"]),
    ],
)
def test_parse_grant_refuses_bad_text_naming_the_part(text: str, fragments: list[str]) -> None:
    with pytest.raises(ValueError) as err:
        parse_grant(text)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_a_namespace_of_the_maximum_length_is_a_grant() -> None:
    name = "n" * MAX_NAMESPACE_CHARS
    assert parse_grant(f"{name}:read").namespace == name


@pytest.mark.parametrize("namespace", ["plain", "ends*", "a/*", "x\\*", "we:ird", "sp ace"])
def test_grant_exact_covers_exactly_its_namespace_whatever_its_characters(namespace: str) -> None:
    grant = Grant.exact(namespace, "write")
    assert not grant.is_prefix
    assert grant.covers(namespace)
    assert parse_grant(str(grant)) == grant  # the text form reads back as the same grant
    for other in (namespace + "x", namespace[:-1], namespace + "/y"):
        assert not grant.covers(other)


@pytest.mark.parametrize(
    ("grant", "namespace", "covered"),
    [
        ("team-a/*:read", "team-a/x", True),
        ("team-a/*:read", "team-a/x/y", True),
        ("team-a/*:read", "team-a/", True),
        ("team-a/*:read", "team-a", False),  # the prefix is 'team-a/', not 'team-a'
        ("team-a/*:read", "team-ab/x", False),
        ("team-a/*:read", "TEAM-A/x", False),  # case matters
        ("team-a:read", "team-a", True),
        ("team-a:read", "team-a/x", False),
        ("stars\\*:read", "stars*", True),
        ("stars\\*:read", "starsX", False),
        ("stars\\*:read", "stars\\*", False),
    ],
)
def test_grant_covers(grant: str, namespace: str, covered: bool) -> None:
    assert parse_grant(grant).covers(namespace) is covered


# --- scopes and principals ---


@pytest.mark.parametrize("have", [None, *SCOPES])
@pytest.mark.parametrize("need", SCOPES)
def test_allows_orders_admin_over_write_over_read(have: str | None, need: str) -> None:
    order = {None: -1, "read": 0, "write": 1, "admin": 2}
    assert allows(have, need) is (order[have] >= order[need])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("grants", "namespace", "scope"),
    [
        ([], "a", None),
        (["a:read"], "a", "read"),
        (["a:read"], "b", None),
        (["a:read", "a:write"], "a", "write"),
        (["a:admin", "a:read"], "a", "admin"),  # the highest, whatever the order
        (["team/*:read", "team/x:write"], "team/x", "write"),
        (["team/*:admin", "team/x:read"], "team/x", "admin"),
        (["team/*:read", "team/x:write"], "team/y", "read"),
        (["team/*:read", "team/x:write"], "team", None),
    ],
)
def test_principal_scope_on_is_the_highest_covering_grant(
    grants: list[str], namespace: str, scope: str | None
) -> None:
    principal = Principal("p", tuple(parse_grant(g) for g in grants))
    assert principal.scope_on(namespace) == scope


# --- the grants file, as the server reads it ---


def write_file(path: Path, text: str) -> None:
    """Write as an editor would (in place), then move mtime so the change shows even within one tick."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def principal_toml(name: str, token: str, *grants: str) -> str:
    return f'[principals."{name}"]\ntoken_sha256 = "{gf.hash_token(token)}"\ngrants = {list(grants)!r}\n'.replace(
        "'", '"'
    )


@pytest.fixture
def grants_path(tmp_path: Path) -> Path:
    return tmp_path / "grants.toml"


def test_lookup_by_token_finds_the_principal_and_only_by_its_token(grants_path: Path) -> None:
    write_file(
        grants_path,
        principal_toml("alice", "tok-a", "team-a/*:write", "shared:read")
        + principal_toml("bob", "tok-b", "b:read")
        + '[principals.carol]\ngrants = ["c:admin"]\n',  # OAuth subject only: no token at all
    )
    grants = GrantsFile.open(grants_path)
    alice = grants.by_token("tok-a")
    assert alice == Principal("alice", (parse_grant("team-a/*:write"), parse_grant("shared:read")))
    assert alice.scope_on("team-a/notes") == "write" and alice.scope_on("shared") == "read"
    assert grants.by_token("tok-b") == Principal("bob", (parse_grant("b:read"),))
    for wrong in ("tok-c", "", "TOK-A", "tok-a ", gf.hash_token("tok-a")):  # the hash is not the token
        assert grants.by_token(wrong) is None


def test_subject_gets_its_own_grants_and_its_groups(grants_path: Path) -> None:
    write_file(
        grants_path,
        '[principals.alice]\ngrants = ["a:write"]\n'
        '[groups.eng]\ngrants = ["team/*:read", "a:write"]\n'
        '[groups.ops]\ngrants = ["ops:admin"]\n',
    )
    grants = GrantsFile.open(grants_path)
    alice = grants.by_subject("alice", ["eng", "unknown-group"])
    assert alice.name == "alice"
    assert [str(g) for g in alice.grants] == ["a:write", "team/*:read"]  # no duplicate
    assert grants.by_subject("dave", ["ops"]).scope_on("ops") == "admin"
    nobody = grants.by_subject("erin", [])
    assert nobody == Principal("erin", ())  # a valid subject with no grants: the HTTP side answers 403
    assert nobody.scope_on("a") is None


def test_a_change_is_seen_at_the_next_lookup_and_a_revocation_too(grants_path: Path, tmp_path: Path) -> None:
    token, _ = gf.add_principal(grants_path, "alice", [parse_grant("a:read")])
    assert token is not None
    grants = GrantsFile.open(grants_path)
    assert grants.by_token(token) == Principal("alice", (parse_grant("a:read"),))

    gf.add_principal(grants_path, "alice", [parse_grant("b:write")])  # same token, one more grant
    assert grants.by_token(token) == Principal("alice", (parse_grant("a:read"), parse_grant("b:write")))

    new, _ = gf.add_principal(grants_path, "alice", [], rotate=True)
    assert new is not None and new != token
    assert grants.by_token(token) is None  # the old token stops working at once
    assert grants.by_token(new) is not None

    assert gf.revoke(grants_path, "alice")
    assert grants.by_token(new) is None  # no restart, no wait: the next lookup

    # an edit in place of the same size is seen too (mtime and inode, not only the size)
    write_file(grants_path, principal_toml("bob", "tok-1", "x:read"))
    assert grants.by_token("tok-1") is not None
    write_file(grants_path, principal_toml("bob", "tok-2", "x:read"))
    assert grants.by_token("tok-1") is None and grants.by_token("tok-2") is not None


def test_an_edit_within_one_mtime_tick_and_of_the_same_size_is_seen(grants_path: Path) -> None:
    """A coarse file system (FAT: 2 s) can give two writes the same mtime: a young file is read again."""
    write_file(grants_path, principal_toml("bob", "tok-1", "x:read"))
    tick = time.time_ns()
    os.utime(grants_path, ns=(tick, tick))
    grants = GrantsFile.open(grants_path)
    assert grants.by_token("tok-1") is not None
    inode = grants_path.stat().st_ino
    grants_path.write_text(principal_toml("bob", "tok-2", "x:read"))  # in place: same inode, same size
    os.utime(grants_path, ns=(tick, tick))  # and the same mtime
    assert grants_path.stat().st_ino == inode
    assert grants.by_token("tok-1") is None and grants.by_token("tok-2") is not None


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ("[principals.alice\n", "does not parse"),
        (
            '[principals.alice]\ntoken_sha256 = "abc"\n',
            "principals.alice.token_sha256 must be 64 lower-case hex",
        ),
        ('[principals.alice]\ngrants = ["a:owner"]\n', "principals.alice.grants[0]: grant 'a:owner'"),
        ('[principals.alice]\ngrants = "a:read"\n', "principals.alice.grants must be a list"),
        ('[principals.alice]\ngrant = ["a:read"]\n', "unknown key 'grant' in principals.alice"),
        ('[principal.alice]\ngrants = ["a:read"]\n', "unknown key 'principal' in the top level"),
        ('[groups.eng]\ngrants = ["team*:read"]\n', "groups.eng.grants[0]"),
        ('groups = ["x"]\n', "groups must be a table"),
    ],
)
async def test_a_broken_file_fails_closed_logs_once_and_recovers(
    grants_path: Path, broken: str, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_file(grants_path, principal_toml("alice", "tok-a", "a:write"))
    grants = GrantsFile.open(grants_path)
    auth = Authenticator(grants_file=grants)
    assert grants.by_token("tok-a") is not None

    caplog.set_level(logging.ERROR, logger="kg_neo4j.auth")
    write_file(grants_path, broken + principal_toml("zed", "tok-z", "z:read"))
    for _ in range(3):  # no principal resolves, not even the one that was valid before
        with pytest.raises(AuthError, match="grants file is broken"):
            await auth.authenticate("tok-a")
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors  # one line, not one per request
    assert str(grants_path) in errors[0] and problem in errors[0]
    assert "tok-a" not in errors[0]

    write_file(grants_path, principal_toml("alice", "tok-a", "a:write"))  # fixed: used again
    assert grants.by_token("tok-a") == Principal("alice", (parse_grant("a:write"),))


def test_a_missing_file_fails_closed_and_recovers(grants_path: Path) -> None:
    write_file(grants_path, principal_toml("alice", "tok-a", "a:write"))
    grants = GrantsFile.open(grants_path)
    grants_path.unlink()
    with pytest.raises(gf.Unreadable, match="cannot read the grants file"):
        grants.by_token("tok-a")
    write_file(grants_path, principal_toml("alice", "tok-a", "a:write"))
    assert grants.by_token("tok-a") is not None


def test_two_principals_with_one_token_hash_is_an_error(grants_path: Path) -> None:
    write_file(
        grants_path, principal_toml("alice", "same", "a:read") + principal_toml("bob", "same", "b:read")
    )
    with pytest.raises(ConfigError, match="principals.bob has the same token_sha256 as principals.alice"):
        GrantsFile.open(grants_path)


def test_a_missing_file_at_start_is_a_config_error_naming_the_setting(grants_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        Authenticator.from_settings(Settings(grants_file=grants_path))
    assert "KG_NEO4J_GRANTS_FILE" in str(err.value) and str(grants_path) in str(err.value)


# --- the writers (kg-neo4j token uses them) ---


def test_writers_keep_only_hashes_mode_0600_and_other_entries(grants_path: Path) -> None:
    nested = grants_path.parent / "new" / "dir" / "grants.toml"
    token, new = gf.add_principal(nested, "alice", [parse_grant("a:read")])
    assert new and token is not None and len(token) >= 43  # 32 random bytes, base64url
    assert (nested.stat().st_mode & 0o777) == 0o600
    text = nested.read_text()
    assert token not in text and gf.hash_token(token) in text

    none, new = gf.add_principal(nested, "sub-only", [parse_grant("s:read")], token=False)
    assert none is None and new
    assert gf.add_group(nested, "eng", [parse_grant("team/*:read")])
    assert not gf.add_group(nested, "eng", [parse_grant("team/*:read"), parse_grant("x:write")])
    data = gf.read(nested)
    assert data.principals["sub-only"].token_sha256 is None
    assert [str(g) for g in data.groups["eng"]] == ["team/*:read", "x:write"]
    assert data.principals["alice"].token_sha256 == gf.hash_token(token)

    assert gf.revoke(nested, "eng", group=True) and "eng" not in gf.read(nested).groups
    assert not gf.revoke(nested, "nobody")
    assert set(gf.read(nested).principals) == {"alice", "sub-only"}
    assert (nested.stat().st_mode & 0o777) == 0o600
    # no temp file left behind
    assert sorted(p.name for p in nested.parent.iterdir()) == [".grants.toml.lock", "grants.toml"]


@pytest.mark.parametrize("name", ["odd name", "dotted.name", 'quote"d', "ünï"])
def test_any_principal_name_round_trips(grants_path: Path, name: str) -> None:
    token, _ = gf.add_principal(grants_path, name, [parse_grant("n\\*:write")])
    assert token is not None
    found = GrantsFile.open(grants_path).by_token(token)
    assert found is not None and found.name == name and found.scope_on("n*") == "write"


async def test_single_token_principal_writes_on_the_configured_namespace_only() -> None:
    auth = Authenticator.from_settings(Settings(auth_token="s3cret", namespace="proj*"))
    assert auth.enabled and not auth.oauth
    principal = await auth.authenticate("s3cret")
    assert principal.name == "token"
    assert principal.scope_on("proj*") == "write" and principal.scope_on("projX") is None
    for wrong in ("s3cret ", "S3CRET", "", "s3cre"):
        with pytest.raises(AuthError) as err:
            await auth.authenticate(wrong)
        assert str(err.value) == ("no bearer token" if wrong == "" else "unknown token")
    assert not Authenticator.from_settings(Settings()).enabled
