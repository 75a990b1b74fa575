"""The grants file (docs/team.md#grants-file): principals, the SHA-256 of their tokens, their grants,
and the grants of OAuth groups.

```toml
[principals.alice]
token_sha256 = "<hex sha256 of the token>"   # absent for a principal known only by OAuth subject
grants = ["team-a/*:write", "shared:read"]

[groups.engineers]
grants = ["team-a/*:read"]
```

The server reads it through :class:`GrantsFile` (re-read when it changes, fail closed while broken);
``kg-neo4j token`` changes it with :func:`add_principal`, :func:`add_group`, :func:`revoke`, each a
read-modify-write under a lock, written atomically with mode 0600.  Only a token's hash is stored:
the token itself is shown once, by ``token add``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from kg_neo4j.auth.grants import Grant, Principal, parse_grant
from kg_neo4j.auth.watched import Unreadable, WatchedFile
from kg_neo4j.errors import ConfigError

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
#: The bytes of randomness in a new token: 256 bits.
TOKEN_BYTES = 32


@dataclass(frozen=True)
class Entry:
    """One ``[principals.NAME]`` table."""

    token_sha256: str | None = None
    grants: tuple[Grant, ...] = ()


@dataclass(frozen=True)
class GrantsData:
    principals: Mapping[str, Entry] = field(default_factory=dict)
    groups: Mapping[str, tuple[Grant, ...]] = field(default_factory=dict)


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# --- reading ---


def parse(text: str) -> GrantsData:
    """The file's text as :class:`GrantsData`; a ValueError names the key at fault and what is allowed."""
    doc = tomllib.loads(text)
    _only_keys(doc, ("principals", "groups"), "the top level")
    principals: dict[str, Entry] = {}
    seen: dict[str, str] = {}
    for name, table in _table(doc, "principals").items():
        where = f"principals.{_key(name)}"
        if not isinstance(table, dict):
            raise ValueError(f"{where} must be a table ([{where}])")
        _only_keys(table, ("token_sha256", "grants"), where)
        digest = table.get("token_sha256")
        if digest is not None:
            if not isinstance(digest, str) or not _SHA256_HEX.fullmatch(digest):
                raise ValueError(f"{where}.token_sha256 must be 64 lower-case hex digits (a SHA-256)")
            if digest in seen:
                raise ValueError(f"{where} has the same token_sha256 as principals.{_key(seen[digest])}")
            seen[digest] = name
        principals[name] = Entry(digest, _grants(table, where))
    groups: dict[str, tuple[Grant, ...]] = {}
    for name, table in _table(doc, "groups").items():
        where = f"groups.{_key(name)}"
        if not isinstance(table, dict):
            raise ValueError(f"{where} must be a table ([{where}])")
        _only_keys(table, ("grants",), where)
        groups[name] = _grants(table, where)
    return GrantsData(principals, groups)


def _indexed(text: str) -> tuple[GrantsData, dict[str, str]]:
    """The file and its principals' names by token hash (what each request looks up)."""
    data = parse(text)
    return data, {e.token_sha256: n for n, e in data.principals.items() if e.token_sha256 is not None}


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"{key} must be a table of tables ([{key}.NAME])")
    return value


def _only_keys(table: dict[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ValueError(f"unknown key {key!r} in {where}; allowed: {', '.join(allowed)}")


def _grants(table: dict[str, Any], where: str) -> tuple[Grant, ...]:
    texts = table.get("grants", [])
    if not isinstance(texts, list):
        raise ValueError(f"{where}.grants must be a list of strings NS:SCOPE")
    grants: list[Grant] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"{where}.grants[{i}] must be a string NS:SCOPE")
        try:
            grants.append(parse_grant(text))
        except ValueError as exc:
            raise ValueError(f"{where}.grants[{i}]: {exc}") from None
    return tuple(grants)


def _key(name: str) -> str:
    """A TOML key as written in a dotted path (quoted unless bare)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else tomli_w.dumps({name: 0}).split(" = ")[0]


class GrantsFile:
    """The server's view of the grants file: looked up on each request, re-read when it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = WatchedFile(path, _indexed, "grants file")

    @classmethod
    def open(cls, path: Path, setting: str = "KG_NEO4J_GRANTS_FILE (--grants)") -> GrantsFile:
        """At server start: a missing or broken file is a ConfigError naming ``setting``."""
        grants_file = cls(path)
        try:
            grants_file.data()
        except Unreadable as exc:
            raise ConfigError(f"{setting}: {exc}") from None
        return grants_file

    def data(self) -> GrantsData:
        """The file as of now; :class:`~kg_neo4j.auth.watched.Unreadable` while missing or broken."""
        return self._file.get()[0]

    def by_token(self, token: str) -> Principal | None:
        """The principal whose token hash matches ``token``'s, else None.

        Found by hash in a dict, then compared in constant time: the dict's timing could only tell
        about the hash of the caller's own token, which says nothing about any stored one (SHA-256
        of 256 random bits), and it keeps a request O(1) in the number of principals."""
        data, names = self._file.get()
        digest = hash_token(token)
        name = names.get(digest)
        if name is None:
            return None
        entry = data.principals[name]
        if entry.token_sha256 is None or not hmac.compare_digest(entry.token_sha256, digest):
            return None
        return Principal(name, entry.grants)

    def by_subject(self, subject: str, groups: Sequence[str] = ()) -> Principal:
        """An OAuth subject: the grants of the principal of that name plus those of each named group
        (no grant at all is a principal with none: the HTTP side answers 403)."""
        data = self.data()
        entry = data.principals.get(subject)
        grants = list(entry.grants if entry else ())
        for group in dict.fromkeys(groups):
            grants.extend(data.groups.get(group, ()))
        return Principal(subject, tuple(dict.fromkeys(grants)))


# --- writing (kg-neo4j token) ---


def read(path: Path) -> GrantsData:
    """The file for a command; missing is empty, broken is a ConfigError naming the file and problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return GrantsData()
    try:
        return parse(text)
    except ValueError as exc:
        raise ConfigError(f"the grants file {path} does not parse: {exc}") from None


def render(data: GrantsData) -> str:
    principals: dict[str, Any] = {}
    for name, entry in data.principals.items():
        table: dict[str, Any] = {}
        if entry.token_sha256 is not None:
            table["token_sha256"] = entry.token_sha256
        table["grants"] = [str(g) for g in entry.grants]
        principals[name] = table
    groups = {name: {"grants": [str(g) for g in grants]} for name, grants in data.groups.items()}
    return tomli_w.dumps({"principals": principals, "groups": groups})


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialises the read-modify-write of two ``token`` commands (the server never takes it)."""
    import fcntl  # POSIX; imported here so that reading the file works everywhere

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def write(path: Path, data: GrantsData) -> None:
    """Atomically (temp file + rename), mode 0600: a server re-reading it sees the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(render(data).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def add_principal(
    path: Path, name: str, grants: Sequence[Grant], *, rotate: bool = False, token: bool = True
) -> tuple[str | None, bool]:
    """Create principal ``name`` with ``grants``, or add ``grants`` to it.  A new principal gets a new
    token (unless ``token`` is False: known only by OAuth subject); an existing one keeps its token
    unless ``rotate``.  Returns (the new token or None, whether the principal is new)."""
    with _locked(path):
        data = read(path)
        old = data.principals.get(name)
        entry = old or Entry()
        new_token_text = new_token() if (token and (old is None or rotate)) else None
        entry = replace(
            entry,
            token_sha256=hash_token(new_token_text) if new_token_text else entry.token_sha256,
            grants=tuple(dict.fromkeys([*entry.grants, *grants])),
        )
        write(path, replace(data, principals={**data.principals, name: entry}))
    return new_token_text, old is None


def add_group(path: Path, name: str, grants: Sequence[Grant]) -> bool:
    """Create OAuth group ``name`` with ``grants`` or add them; returns whether it is new."""
    with _locked(path):
        data = read(path)
        old = data.groups.get(name)
        merged = tuple(dict.fromkeys([*(old or ()), *grants]))
        write(path, replace(data, groups={**data.groups, name: merged}))
    return old is None


def revoke(path: Path, name: str, *, group: bool = False) -> bool:
    """Remove principal (or group) ``name``; returns whether it was there (nothing written if not)."""
    with _locked(path):
        data = read(path)
        if name not in (data.groups if group else data.principals):
            return False
        if group:
            data = replace(data, groups={k: v for k, v in data.groups.items() if k != name})
        else:
            data = replace(data, principals={k: v for k, v in data.principals.items() if k != name})
        write(path, data)
    return True
