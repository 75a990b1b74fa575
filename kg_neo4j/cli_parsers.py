"""The command line's grammar: every ``kg-neo4j`` command and flag (argparse), the checks of flag
values that need no settings, and the settings the flags set.  :mod:`kg_neo4j.cli` parses with it,
checks the settings and runs the command; team service (``serve`` flags, ``token``: docs/team.md),
entity resolution (``dedupe``: docs/entities.md) and moving over (``import --from``:
docs/moving-over.md) are here with the rest."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, NoReturn

from kg_neo4j import __version__
from kg_neo4j.commands import ACTIONS
from kg_neo4j.commands.namespace import DEFAULT_BATCH as NAMESPACE_DELETE_BATCH
from kg_neo4j.formats import EXPORT_FORMATS, IMPORT_FORMATS
from kg_neo4j.hooks import HOOKS
from kg_neo4j.settings import PROFILES, Settings

DESCRIPTION = "``kg-neo4j``: serve, manage a local Neo4j, import and export, maintain, agent hooks."

#: ``import --from``: the peer systems whose graphs in Neo4j kg-neo4j imports (kg_neo4j.peers.PEERS;
#: here so the CLI parses without loading the peers; tests/test_single_source.py holds them equal).
PEER_SYSTEMS = ("mcp-neo4j-memory", "graphiti", "memento")


#: ``maintain --min-similarity``: the same range as ``maintain_graph``'s ``minSimilarity``.
MIN_SIMILARITY = (0.5, 1.0)


class UsageError(Exception):
    """A command line argparse rejects; the message is one line naming the argument."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument raises :class:`UsageError` (one line, no usage block)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--namespace", help="graph namespace to use (default: 'default')")
    p.add_argument(
        "--log-level", dest="log_level", help="DEBUG, INFO, WARNING, ERROR or CRITICAL (default INFO)"
    )


def _embedding_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--embedding-runtime",
        dest="embedding_runtime",
        help="auto (numpy where it runs the model exactly, else sentence-transformers), numpy, "
        "sentence-transformers",
    )


def _fulltext_analyzer(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fulltext-analyzer",
        dest="fulltext_analyzer",
        help="analyzer of the fulltext index, one of Neo4j's (default english; e.g. cjk, german, "
        "standard-no-stop-words); a change needs `kg-neo4j rebuild-fulltext`",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kg-neo4j", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kg-neo4j {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    _common(serve)
    serve.add_argument("--transport", choices=["stdio", "http"])
    serve.add_argument("--host", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument("--port", help="HTTP port (default 8000)")
    serve.add_argument("--tools", choices=PROFILES, help="tool profile (default: 'default')")
    serve.add_argument("--auth-token", dest="auth_token", help="bearer token required over HTTP")
    serve.add_argument(
        "--allowed-origin",
        dest="allowed_origins",
        action="append",
        help="extra browser Origin allowed over HTTP (repeatable)",
    )
    serve.add_argument(
        "--max-answer-bytes", dest="max_answer_bytes", help="server-wide cap on one answer's size"
    )
    _embedding_runtime(serve)
    _fulltext_analyzer(serve)
    serve.add_argument(
        "--embedding-model",
        dest="embedding_model",
        help="sentence-transformers model name or local path, or 'none' (default all-MiniLM-L6-v2)",
    )
    serve.add_argument(
        "--schemas",
        dest="schemas_dir",
        type=Path,
        help="directory of MemoryMesh *.schema.json files (default: the shipped examples)",
    )
    serve.add_argument(
        "--skills-dir",
        dest="skills_dir",
        type=Path,
        help="the only directory crystallize_skill reads skill markdown from (default: none)",
    )
    serve.add_argument(
        "--session-id",
        dest="session_id",
        help="session recorded on knowledge when a call names none (default: the MCP session)",
    )
    _add_serve_flags(serve)
    _add_token(sub)
    _add_dedupe(sub)
    _add_namespace(sub)

    reembed = sub.add_parser(
        "reembed",
        help="re-embed every observation and entity with the configured model (committed batches, resumable)",
    )
    reembed.add_argument("--embedding-model", dest="embedding_model")
    _embedding_runtime(reembed)
    reembed.add_argument("--batch-size", dest="batch_size", type=_positive, default=256)
    reembed.add_argument("--no-progress", dest="progress", action="store_false")
    reembed.add_argument("--log-level", dest="log_level")

    rebuild = sub.add_parser(
        "rebuild-fulltext",
        help="rebuild the fulltext index with the configured analyzer "
        "(Neo4j indexes the existing text again)",
    )
    _fulltext_analyzer(rebuild)
    rebuild.add_argument("--no-progress", dest="progress", action="store_false")
    rebuild.add_argument("--log-level", dest="log_level")

    neo = sub.add_parser("neo4j", help="manage the local (no-Docker) Neo4j server")
    neo.add_argument("action", choices=["start", "stop", "status", "env"])

    brw = sub.add_parser(
        "browser",
        help="where Neo4j Browser is, who logs in, and its style and guide (docs/neo4j-versions.md)",
    )
    brw.add_argument(
        "--export",
        metavar="DIR",
        type=Path,
        default=None,
        help="write the style sheet, the guide and its queries into DIR (to host them yourself)",
    )

    imp = sub.add_parser(
        "import",
        help="import a memory file (reference JSONL, memory.json, Simple Memory, "
        "MemoryMesh JSONL, kg-neo4j full export)",
    )
    _common(imp)
    imp.add_argument("path", nargs="?", help="the file to import (not with --from)")
    imp.add_argument("--format", dest="fmt", default="auto", choices=["auto", *IMPORT_FORMATS])
    imp.add_argument(
        "--batch-size",
        dest="batch_size",
        type=_positive,
        default=1000,
        help="items per transaction, 1 to KG_NEO4J_MAX_BATCH_ITEMS (default 1000)",
    )
    imp.add_argument("--no-progress", dest="progress", action="store_false")
    imp.add_argument("--embedding-model", dest="embedding_model")
    _embedding_runtime(imp)
    _fulltext_analyzer(imp)
    _add_peer_import_flags(imp)

    mnt = sub.add_parser(
        "maintain",
        help="maintain the knowledge graph: prune (decay, weak edges), merge "
        "near-duplicates, validate, orphans; a dry run unless --apply",
    )
    _common(mnt)
    mnt.add_argument(
        "--apply",
        action="store_true",
        help="apply the changes (committed per batch); without it nothing is changed",
    )
    mnt.add_argument(
        "--actions",
        type=_actions,
        default=None,
        help=f"comma-separated: {','.join(ACTIONS)} (default: all)",
    )
    mnt.add_argument("--batch-size", dest="batch_size", type=_positive, default=2000)
    mnt.add_argument(
        "--min-similarity",
        dest="min_similarity",
        type=_similarity,
        default=None,
        help="merge: cosine similarity a pair needs, 0.5 to 1.0 (default 0.9)",
    )
    mnt.add_argument("--no-progress", dest="progress", action="store_false")

    hook = sub.add_parser(
        "hook",
        help="agent lifecycle hook: reads the hook's JSON on stdin, prints what "
        "Claude Code reads (text or a JSON decision); always exits 0",
    )
    _common(hook)
    hook.add_argument("hook", choices=HOOKS)

    skills = sub.add_parser("import-skills", help="import skill markdown files under DIR as knowledge")
    _common(skills)
    skills.add_argument("directory", type=Path)
    skills.add_argument(
        "--type",
        dest="knowledge_type",
        default=None,
        help="knowledge type of sections whose headings and path name none (default observation)",
    )
    skills.add_argument(
        "--trust",
        default="pattern",
        help="pattern or inference (default pattern; principle needs an expert's quote, which a "
        "file does not carry)",
    )
    skills.add_argument("--category", default="creative", help="fundamental or creative (default creative)")
    skills.add_argument("--batch-size", dest="batch_size", type=_positive, default=200)
    skills.add_argument("--no-progress", dest="progress", action="store_false")
    skills.add_argument("--embedding-model", dest="embedding_model")
    _embedding_runtime(skills)
    _fulltext_analyzer(skills)

    exp = sub.add_parser("export", help="export a namespace to a file")
    _common(exp)
    exp.add_argument("path")
    exp.add_argument("--format", dest="fmt", default="jsonl", choices=EXPORT_FORMATS)
    exp.add_argument("--no-progress", dest="progress", action="store_false")
    return parser


def _actions(value: str) -> list[str]:
    actions = [a.strip() for a in value.split(",") if a.strip()]
    bad = [a for a in actions if a not in ACTIONS]
    if bad or not actions:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of {', '.join(ACTIONS)}; got {value!r}"
        )
    return list(dict.fromkeys(actions))


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {value!r}")
    return n


def _similarity(value: str) -> float:
    lo, hi = MIN_SIMILARITY
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not lo <= x <= hi:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number from {lo} to {hi}; got {value!r}")
    return x


def setting_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The settings the flags of ``parser`` (and its commands) set, each with its flag (errors name the
    flag when the value came from it): every argument whose ``dest`` is a ``Settings`` field."""
    flags: dict[str, str] = {}
    fields = Settings.model_fields
    parsers = [parser]
    while parsers:
        p = parsers.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
            elif action.dest in fields and action.option_strings:
                flag = action.option_strings[-1]
                if flags.setdefault(action.dest, flag) != flag:
                    raise ValueError(f"setting {action.dest!r} has two flags: {flags[action.dest]}, {flag}")
    return flags


def _add_serve_flags(serve: argparse.ArgumentParser) -> None:
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
        action=argparse.BooleanOptionalAction,
        help="create_entities names the existing entity each new one probably duplicates (not in reference; "
        "default: on with the embedding model, off without it)",
    )


def _add_token(sub: Any) -> None:
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


def _add_dedupe(sub: Any) -> None:
    dedupe = sub.add_parser(
        "dedupe", help="find entities that are probably one (--dry-run) and merge them (--apply)"
    )
    _common(dedupe)
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


def _add_peer_import_flags(imp: argparse.ArgumentParser) -> None:
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


def _add_namespace(sub: Any) -> None:
    """``namespace list`` and ``namespace delete`` (kg_neo4j/commands/namespace.py)."""
    ns = sub.add_parser("namespace", help="list the namespaces of the database, or erase one")
    nsub = ns.add_subparsers(dest="namespace_command", required=True)
    lst = nsub.add_parser(
        "list", help="each namespace's entities, observations (current, retired), relations and last write"
    )
    lst.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    dele = nsub.add_parser(
        "delete",
        help="erase everything of a namespace (bounded transactions, resumable); refuses without --yes",
    )
    dele.add_argument("name", metavar="NS", help="the namespace to erase")
    dele.add_argument("--yes", action="store_true", help="erase it (without: print what would be erased)")
    dele.add_argument(
        "--batch-size",
        dest="batch_size",
        type=_positive,
        default=NAMESPACE_DELETE_BATCH,
        help=f"nodes and relationships per transaction (default {NAMESPACE_DELETE_BATCH})",
    )
    dele.add_argument("--no-progress", dest="progress", action="store_false")
    for p in (lst, dele):
        p.add_argument("--log-level", dest="log_level")
