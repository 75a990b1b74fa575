"""``kg-neo4j``: serve, manage a local Neo4j, import and export, maintain, agent hooks.

The grammar (every command and flag) is :mod:`kg_neo4j.cli_parsers`; here the settings are checked,
the command run and its errors reported.  Flags override the environment (``Settings``).  Logs and progress go to stderr;
stdout carries only command output (and, under ``serve`` over stdio, the protocol).

A failure is one line on stderr, never a traceback (docs/configuration.md): exit 2 for a
bad flag or setting (it names the flag or variable, the value and what is allowed) and
other errors the user can fix, 1 for runtime failures (Neo4j unreachable, port taken).
``kg-neo4j hook`` always exits 0: Claude Code blocks the prompt on exit 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kg_neo4j.cli_parsers import UsageError, build_parser, setting_flags
from kg_neo4j.errors import CypherFileError, KgError, Neo4jUnavailableError, SettingError, ValidationError
from kg_neo4j.settings import Settings, env_name, load

log = logging.getLogger("kg_neo4j")

#: The settings a flag sets, and the flag (errors name the flag when the value came from it).
FLAGS = setting_flags(build_parser())


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
