"""``kg-neo4j token add|list|revoke``: the principals of a grants file (docs/team.md#grants-file).

``add`` prints a new token once, as the last line of stdout (everything else goes to stderr, so
``TOKEN=$(kg-neo4j token add alice --grant team-a/*:write)`` captures just the token); the file keeps
only its SHA-256.  ``list`` never shows a token or a hash.  A running server sees every change at its
next request.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

from kg_neo4j.auth import grants_file
from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    path = settings.grants_file
    if path is None:
        raise ConfigError("no grants file: give --grants FILE or set KG_NEO4J_GRANTS_FILE")
    if args.token_command == "add":
        return _add(args, path)
    if args.token_command == "list":
        return _list(path)
    return _revoke(args, path)


def _check_name(name: str, what: str) -> None:
    if not name.strip() or name != name.strip() or any(unicodedata.category(c) == "Cc" for c in name):
        raise ConfigError(
            f"{what} name {name!r} must be non-empty, without leading or trailing spaces or control characters"
        )


def _add(args: argparse.Namespace, path: Path) -> int:
    what = "group" if args.group else "principal"
    _check_name(args.name, what)
    grants = ", ".join(str(g) for g in args.grants)
    if args.group:
        new = grants_file.add_group(path, args.name, args.grants)
        _say(f"{'added' if new else 'updated'} group {args.name!r} in {path}: grants {grants}")
        return 0
    token, new = grants_file.add_principal(
        path, args.name, args.grants, rotate=args.rotate, token=not args.no_token
    )
    _say(f"{'added' if new else 'updated'} principal {args.name!r} in {path}: grants {grants}")
    if token is None:
        _say(
            "no token: known only by its OAuth subject"
            if args.no_token
            else "it keeps its token (--rotate gives it a new one)"
        )
        return 0
    _say("its token, shown once (the file keeps only its SHA-256):")
    print(token, flush=True)
    return 0


def _list(path: Path) -> int:
    if not path.exists():
        raise ConfigError(f"no grants file at {path} (kg-neo4j token add creates it)")
    data = grants_file.read(path)
    for name, entry in data.principals.items():
        how = "token" if entry.token_sha256 else "OAuth subject only"
        print(f"principal {name} ({how}): {', '.join(str(g) for g in entry.grants) or '(no grants)'}")
    for name, grants in data.groups.items():
        print(f"group {name}: {', '.join(str(g) for g in grants) or '(no grants)'}")
    if not data.principals and not data.groups:
        _say(f"{path} has no principals and no groups")
    return 0


def _revoke(args: argparse.Namespace, path: Path) -> int:
    what = "group" if args.group else "principal"
    if not path.exists():
        raise ConfigError(f"no grants file at {path}")
    if not grants_file.revoke(path, args.name, group=args.group):
        raise ConfigError(f"no {what} {args.name!r} in {path} (kg-neo4j token list shows them)")
    effect = "its grants no longer apply" if args.group else "its token is refused"
    _say(f"revoked {what} {args.name!r} in {path}: at a running server's next request, {effect}")
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
