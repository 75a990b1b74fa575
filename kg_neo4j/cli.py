"""``kg-neo4j``: serve, manage a local Neo4j, import and export, maintain, agent hooks.

Flags override the environment (``Settings``).  Logs and progress go to stderr;
stdout carries only command output (and, under ``serve`` over stdio, the protocol).

A failure is one line on stderr, never a traceback (docs/configuration.md): exit 2 for a
bad flag or setting (it names the flag or variable, the value and what is allowed) and
other errors the user can fix, 1 for runtime failures (Neo4j unreachable, port taken).
``kg-neo4j hook`` always exits 0: Claude Code blocks the prompt on exit 2.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from kg_neo4j import __version__, cli_parsers
from kg_neo4j.commands import ACTIONS
from kg_neo4j.commands import namespace as namespace_command
from kg_neo4j.errors import CypherFileError, KgError, Neo4jUnavailableError, SettingError, ValidationError
from kg_neo4j.formats import EXPORT_FORMATS, IMPORT_FORMATS
from kg_neo4j.hooks import HOOKS
from kg_neo4j.settings import PROFILES, Settings, env_name, load

log = logging.getLogger("kg_neo4j")

#: The settings a flag sets, and the flag (errors name the flag when the value came from it).
FLAGS = {
    "namespace": "--namespace",
    "log_level": "--log-level",
    "transport": "--transport",
    "host": "--host",
    "port": "--port",
    "tools": "--tools",
    "auth_token": "--auth-token",
    "allowed_origins": "--allowed-origin",
    "max_answer_bytes": "--max-answer-bytes",
    "embedding_model": "--embedding-model",
    "embedding_runtime": "--embedding-runtime",
    "fulltext_analyzer": "--fulltext-analyzer",
    "schemas_dir": "--schemas",
    "skills_dir": "--skills-dir",
    "session_id": "--session-id",
    **cli_parsers.SERVE_FLAGS,
}
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
    parser = _Parser(prog="kg-neo4j", description=__doc__.splitlines()[0] if __doc__ else None)
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
    cli_parsers.add_serve_flags(serve)
    cli_parsers.add_team_and_entity_commands(sub, _common)
    namespace_command.add_parser(sub, lambda p: p.add_argument("--log-level", dest="log_level"))

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
    cli_parsers.add_peer_import_flags(imp)

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
        help="comma-separated: prune,merge,validate,orphans (default: all)",
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


def _settings(args: argparse.Namespace) -> Settings:
    """The environment with the flags of ``args`` on top; a bad value raises :class:`SettingError`."""
    settings = load({k: getattr(args, k, None) for k in FLAGS}, FLAGS)

    def source(field: str) -> tuple[str, bool]:  # the flag or variable a value came from
        from_flag = getattr(args, field, None) is not None
        return (FLAGS[field] if from_flag else env_name(field)), from_flag

    batch = getattr(args, "batch_size", None)
    if args.command in ("import", "import-skills") and batch is not None and batch > settings.max_batch_items:
        raise SettingError(
            "--batch-size",
            repr(str(batch)),
            f"an integer from 1 to {settings.max_batch_items} (KG_NEO4J_MAX_BATCH_ITEMS)",
            from_flag=True,
        )
    if args.command == "import-skills":  # name the flag, not only the field (the rules live in skills)
        from kg_neo4j.skills import check_import_labels

        try:
            check_import_labels(args.knowledge_type, args.trust, args.category)
        except ValidationError as exc:
            raise UsageError(f"kg-neo4j import-skills: error: argument --{exc.field}: {exc}") from exc
    if args.command == "serve" and settings.schemas_dir is not None:
        _check_dir(settings.schemas_dir, *source("schemas_dir"))
    if args.command in ("serve", "import", "import-skills", "reembed"):
        from kg_neo4j.embeddings.model_files import resolve_model  # reads the model's files: no torch

        try:
            info = resolve_model(settings.embedding_model)
        except KgError as exc:
            name, from_flag = source("embedding_model")
            why = str(exc).removeprefix(f"embedding model {settings.embedding_model!r} ")
            raise SettingError(
                name,
                repr(settings.embedding_model),
                f"a model this machine has (this one {why})",
                from_flag=from_flag,
            ) from exc
        if info is not None and settings.embedding_runtime == "numpy":
            from kg_neo4j.embeddings.numpy_support import Unsupported, check_model

            try:
                check_model(info.path)
            except Unsupported as exc:
                name, from_flag = source("embedding_runtime")
                raise SettingError(
                    name,
                    "'numpy'",
                    f"a runtime that can run the model {info.name!r} "
                    f"(numpy cannot: {exc}; use auto or sentence-transformers)",
                    from_flag=from_flag,
                ) from exc
    if settings.local_bolt_port == settings.local_http_port:
        raise SettingError(
            env_name("local_bolt_port"),
            repr(str(settings.local_bolt_port)),
            f"a port other than {env_name('local_http_port')}'s ({settings.local_http_port})",
            from_flag=False,
        )
    # The local server's version, sizes and retention are checked where they are used; check them
    # now so that a bad value stops every command, not only those that start or find that server.
    from kg_neo4j.localdb import LocalNeo4j

    LocalNeo4j(settings)
    return settings


def _check_dir(directory: Path, name: str, from_flag: bool) -> None:
    """A directory that exists and can be listed (Path.glob skips one it cannot list: the server
    would start with no schemas, silently)."""
    try:
        os.listdir(directory)
    except OSError as exc:
        raise SettingError(
            name,
            repr(str(directory)),
            f"an existing directory this user can read ({exc.strerror})",
            from_flag=from_flag,
        ) from exc


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr, level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("neo4j").setLevel(logging.WARNING)
    # the driver logs this just before raising it (ServiceUnavailable), which we report: one line, not two
    logging.getLogger("neo4j.pool").addFilter(
        lambda record: record.getMessage() != "Unable to retrieve routing information"
    )
    logging.getLogger("mcp").setLevel(logging.WARNING)


def _say(line: str) -> None:
    """One line on stderr, whatever newlines the message carries (driver errors have some)."""
    print(" ".join(part.strip() for part in line.splitlines()), file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        _say(str(exc))
        return 0 if argv[:1] == ["hook"] else 2
    if args.command == "hook":
        return _hook(args)
    settings: Settings | None = None
    try:
        settings = _settings(args)
        _setup_logging(settings.log_level)
        return _dispatch(args, settings)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - one line; the traceback only with --log-level DEBUG
        return _report(exc, args.command, settings)


def _report(exc: BaseException, command: str, settings: Settings | None) -> int:
    """Print ``exc`` as one line on stderr; return the exit code (see the module docstring)."""
    prefix = f"kg-neo4j {command}: error: "
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:  # from a task group
        exc = exc.exceptions[0]
    if isinstance(exc, UsageError):
        _say(str(exc))
        return 2
    if isinstance(exc, BrokenPipeError):  # e.g. `kg-neo4j neo4j status | head`
        sys.stderr.close()
        return 0
    if isinstance(exc, Neo4jUnavailableError | CypherFileError | OSError):  # not fixed by other input
        _say(f"{prefix}{exc}")
        return 1
    if isinstance(exc, KgError):
        _say(f"{prefix}{exc}")
        return 2
    if getattr(exc, "code", None) == "Neo.ClientError.Database.DatabaseNotFound" and settings is not None:
        _say(
            f"{prefix}Neo4j has no database {settings.neo4j_database!r}: set NEO4J_DATABASE to one "
            "that exists (SHOW DATABASES lists them)"
        )
        return 2
    log.debug("unexpected error", exc_info=exc)
    _say(f"{prefix}{type(exc).__name__}: {exc} (KG_NEO4J_LOG_LEVEL=DEBUG shows the traceback)")
    return 1


def _hook(args: argparse.Namespace) -> int:
    from kg_neo4j.commands import hook

    return hook.run(args, _settings, _say, _setup_logging)


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    from kg_neo4j.commands import dispatch

    return dispatch(args, settings)


if __name__ == "__main__":
    raise SystemExit(main())
