"""The parsers of ``kg-neo4j token`` (docs/team.md) and ``kg-neo4j dedupe`` (docs/entities.md), the
peer-import flags of ``kg-neo4j import --from`` (docs/moving-over.md) and ``serve``'s flags for a team
service and entity resolution; :mod:`kg_neo4j.cli` adds them to its own."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: ``import --from``: the peer systems whose graphs in Neo4j kg-neo4j imports.
PEER_SYSTEMS = ("mcp-neo4j-memory", "graphiti", "memento")


#: The settings the flags of :func:`add_serve_flags` set, and the flag (errors name the flag).
SERVE_FLAGS = {
    "grants_file": "--grants",
    "http_stateless": "--stateless",
    "public_url": "--public-url",
    "actor": "--actor",
    "resolve_writes": "--resolve-writes",
    "duplicate_hint": "--duplicate-hint",
}


def add_serve_flags(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--grants", dest="grants_file", type=Path, help="grants file (TOML) of principals over HTTP"
    )
    serve.add_argument(
        "--stateless",
        dest="http_stateless",
        action="store_const",
        const=True,
        help="no server-side MCP sessions over HTTP (replicas behind a load balancer)",
    )
    serve.add_argument("--public-url", dest="public_url", help="this server's public base URL (OAuth)")
    serve.add_argument("--actor", help="who stdio writes are recorded as (default: the OS user)")
    serve.add_argument(
        "--resolve-writes",
        dest="resolve_writes",
        action="store_const",
        const=True,
        help="create_entities/add_observations naming an alias attach to the entity it names (not in reference)",
    )
    serve.add_argument(
        "--duplicate-hint",
        dest="duplicate_hint",
        action="store_const",
        const=True,
        help="create_entities names the existing entity each new one probably duplicates (not in reference)",
    )


def add_team_and_entity_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    token = sub.add_parser("token", help="add, list or revoke the principals of a grants file")
    tsub = token.add_subparsers(dest="token_command", required=True)
    add = tsub.add_parser("add", help="add a principal (or grants to one); prints its new token last")
    add.add_argument("name")
    add.add_argument(
        "--grant",
        dest="grants",
        action="append",
        required=True,
        type=_grant,
        help="NS:SCOPE, SCOPE one of read, write, admin; NS a namespace or a prefix ending in /* (repeatable)",
    )
    kind = add.add_mutually_exclusive_group()
    kind.add_argument(
        "--rotate",
        action="store_true",
        help="give an existing principal a new token (the old one stops working)",
    )
    kind.add_argument(
        "--no-token",
        dest="no_token",
        action="store_true",
        help="no token: a principal known only by its OAuth subject",
    )
    kind.add_argument(
        "--group", action="store_true", help="NAME is an OAuth group (the groups claim), not a principal"
    )
    lst = tsub.add_parser("list", help="list the principals and their grants (never a token)")
    rev = tsub.add_parser("revoke", help="remove a principal: its token stops working")
    rev.add_argument("name")
    rev.add_argument("--group", action="store_true", help="NAME is an OAuth group, not a principal")
    for p in (add, lst, rev):
        p.add_argument(
            "--grants",
            dest="grants_file",
            type=Path,
            help="the grants file (default: KG_NEO4J_GRANTS_FILE)",
        )

    dedupe = sub.add_parser(
        "dedupe", help="find entities that are probably one (--dry-run) and merge them (--apply)"
    )
    common(dedupe)
    mode = dedupe.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--dry-run", dest="dry_run", action="store_true", help="list the groups; change nothing"
    )
    mode.add_argument("--apply", action="store_true", help="merge the groups at or above the threshold")
    dedupe.add_argument("--out", type=Path, help="--dry-run: write the groups to FILE (JSON) for review")
    dedupe.add_argument(
        "--reviewed", type=Path, help="--apply: merge the groups listed in FILE (written by --dry-run --out)"
    )
    dedupe.add_argument("--threshold", type=float, default=None, help="the score a group needs (0 to 1)")
    dedupe.add_argument("--no-progress", dest="progress", action="store_false")
    dedupe.add_argument("--embedding-model", dest="embedding_model")


def _grant(text: str) -> Any:
    """``--grant``'s check: argparse names the flag in the one-line error (exit 2)."""
    from kg_neo4j.auth.grants import parse_grant  # only when the flag is given: `hook` stays light

    try:
        return parse_grant(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_peer_import_flags(imp: argparse.ArgumentParser) -> None:
    imp.add_argument(
        "--from",
        dest="source_system",
        choices=PEER_SYSTEMS,
        help="import a peer's graph from a Neo4j database instead of a file",
    )
    imp.add_argument("--source-uri", dest="source_uri", help="--from: the source Neo4j's Bolt URI")
    imp.add_argument("--source-database", dest="source_database", help="--from: the source database")
    imp.add_argument(
        "--dry-run", dest="dry_run", action="store_true", help="--from: count what would come; write nothing"
    )
