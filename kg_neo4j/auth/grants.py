"""Grants: which namespaces a principal may use, and how much (docs/team.md#grants-file).

A grant is written ``NS:SCOPE``, split at the LAST ``:`` (namespaces may hold ``:``, scopes never do).
``NS`` is an exact namespace, or a prefix ending in ``/*`` (``team-a/*``: every namespace whose name
starts with ``team-a/``); a namespace whose name really ends in ``*`` is written with that ``*``
escaped, ``\\*``.  A bare ``*`` at the end that is neither is refused: it reads like a wildcard but
would be a literal, and a grant that means something else than it reads is a security bug.

Pure values and rules: no I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from kg_neo4j.settings import MAX_NAMESPACE_CHARS

Scope = Literal["read", "write", "admin"]
#: Lowest to highest: each scope includes the ones before it.
SCOPES: tuple[Scope, ...] = get_args(Scope)

#: What a grant's text must be (the end of every parse error).
GRANT_SYNTAX = (
    "NS:SCOPE with SCOPE one of read, write, admin and NS a namespace or a prefix ending in /* "
    "(a literal * at the end of a namespace is written \\*)"
)


class AuthError(Exception):
    """The bearer token is unknown, expired or invalid (HTTP 401).

    ``str(exc)`` is the reason, safe to show to the caller: it never contains the token.
    """


@dataclass(frozen=True)
class Grant:
    """One grant.  ``pattern`` is the grant's namespace part as written: an exact namespace (a final
    ``*`` escaped as ``\\*``), or a prefix ending in ``/*``.  Build one from a namespace with
    :meth:`exact` (it escapes) or from text with :func:`parse_grant` (it checks)."""

    pattern: str
    scope: Scope

    @classmethod
    def exact(cls, namespace: str, scope: Scope) -> Grant:
        """The grant of ``scope`` on exactly ``namespace``, whatever characters its name holds."""
        return cls(namespace[:-1] + "\\*" if namespace.endswith("*") else namespace, scope)

    @property
    def is_prefix(self) -> bool:
        return self.pattern.endswith("/*") and not self.pattern.endswith("\\*")

    @property
    def namespace(self) -> str:
        """The exact namespace (escape removed), or for a prefix grant the prefix (``team-a/``)."""
        if self.is_prefix:
            return self.pattern[:-1]
        return self.pattern[:-2] + "*" if self.pattern.endswith("\\*") else self.pattern

    def covers(self, namespace: str) -> bool:
        if self.is_prefix:
            return namespace.startswith(self.namespace)
        return namespace == self.namespace

    def __str__(self) -> str:
        """The grant as it is written in the grants file and on the command line."""
        return f"{self.pattern}:{self.scope}"


def parse_grant(text: str) -> Grant:
    """``"NS:SCOPE"`` as a :class:`Grant`; a ValueError names the bad part and what is allowed."""
    ns, colon, scope = text.rpartition(":")
    if not colon:
        raise ValueError(f"grant {text!r} has no ':SCOPE'; write {GRANT_SYNTAX}")
    if scope not in SCOPES:
        raise ValueError(f"grant {text!r}: scope {scope!r} is not one of {', '.join(SCOPES)}")
    if not ns:
        raise ValueError(f"grant {text!r}: the namespace before ':' is empty; write {GRANT_SYNTAX}")
    if ns.endswith("*") and not ns.endswith(("/*", "\\*")):
        raise ValueError(
            f"grant {text!r}: a '*' at the end of a namespace must follow '/' (a prefix, e.g. team-a/*) "
            "or be escaped as '\\*' (a namespace whose name ends in '*')"
        )
    grant = Grant(ns, scope)
    if len(grant.namespace) > MAX_NAMESPACE_CHARS:
        raise ValueError(
            f"grant {text[:40]!r}...: the namespace is longer than {MAX_NAMESPACE_CHARS} characters"
        )
    return grant


def allows(have: Scope | None, need: Scope) -> bool:
    """Whether scope ``have`` (None: no grant) includes ``need``: admin > write > read."""
    return have is not None and SCOPES.index(have) >= SCOPES.index(need)


@dataclass(frozen=True)
class Principal:
    """Who is calling (a grants-file name, ``token`` for the single ``--auth-token``, or an OAuth
    subject) and their grants."""

    name: str
    grants: tuple[Grant, ...]

    def scope_on(self, namespace: str) -> Scope | None:
        """The highest scope any grant gives on ``namespace``; None when no grant covers it."""
        best: Scope | None = None
        for grant in self.grants:
            if grant.covers(namespace) and not allows(best, grant.scope):
                best = grant.scope
        return best
