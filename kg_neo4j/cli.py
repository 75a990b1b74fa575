"""``kg-neo4j``: serve, manage a local Neo4j, import and export, maintain, agent hooks.

Flags override the environment (``Settings``).  Logs and progress go to stderr;
stdout carries only command output (and, under ``serve`` over stdio, the protocol).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg_neo4j import __version__
from kg_neo4j.errors import KgError
from kg_neo4j.settings import PROFILES, Settings

log = logging.getLogger("kg_neo4j")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--namespace", help="graph namespace to use (default: 'default')")
    p.add_argument("--log-level", dest="log_level", help="DEBUG, INFO, WARNING, ERROR")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kg-neo4j", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"kg-neo4j {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    _common(serve)
    serve.add_argument("--transport", choices=["stdio", "http"])
    serve.add_argument("--host", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP port (default 8000)")
    serve.add_argument("--tools", choices=PROFILES, help="tool profile (default: 'default')")
    serve.add_argument("--auth-token", dest="auth_token", help="bearer token required over HTTP")
    serve.add_argument("--allowed-origin", dest="allowed_origins", action="append",
                       help="extra browser Origin allowed over HTTP (repeatable)")
    serve.add_argument("--max-answer-bytes", dest="max_answer_bytes", type=int,
                       help="server-wide cap on one answer's size")
    serve.add_argument("--embedding-model", dest="embedding_model",
                       help="sentence-transformers model name or local path, or 'none' (default all-MiniLM-L6-v2)")
    serve.add_argument("--schemas", dest="schemas_dir", type=Path,
                       help="directory of MemoryMesh *.schema.json files (default: the shipped examples)")
    serve.add_argument("--skills-dir", dest="skills_dir", type=Path,
                       help="the only directory crystallize_skill reads skill markdown from (default: none)")
    serve.add_argument("--session-id", dest="session_id",
                       help="session recorded on knowledge when a call names none (default: the MCP session)")

    reembed = sub.add_parser("reembed", help="re-embed every observation and entity with the configured model "
                                             "(committed batches, resumable)")
    reembed.add_argument("--embedding-model", dest="embedding_model")
    reembed.add_argument("--batch-size", dest="batch_size", type=int, default=256)
    reembed.add_argument("--no-progress", dest="progress", action="store_false")
    reembed.add_argument("--log-level", dest="log_level")

    neo = sub.add_parser("neo4j", help="manage the local (no-Docker) Neo4j server")
    neo.add_argument("action", choices=["start", "stop", "status", "env"])

    imp = sub.add_parser("import", help="import a memory file (reference JSONL, memory.json, Simple Memory, "
                                        "MemoryMesh JSONL, kg-neo4j full export)")
    _common(imp)
    imp.add_argument("path")
    imp.add_argument("--format", dest="fmt", default="auto",
                     choices=["auto", "jsonl", "memory-json", "simple-memory", "memorymesh", "full"])
    imp.add_argument("--batch-size", dest="batch_size", type=int, default=1000)
    imp.add_argument("--no-progress", dest="progress", action="store_false")
    imp.add_argument("--embedding-model", dest="embedding_model")

    mnt = sub.add_parser("maintain", help="maintain the knowledge graph: prune (decay, weak edges), merge "
                                          "near-duplicates, validate, orphans; a dry run unless --apply")
    _common(mnt)
    mnt.add_argument("--apply", action="store_true",
                     help="apply the changes (committed per batch); without it nothing is changed")
    mnt.add_argument("--actions", type=_actions, default=None,
                     help="comma-separated: prune,merge,validate,orphans (default: all)")
    mnt.add_argument("--batch-size", dest="batch_size", type=_positive, default=2000)
    mnt.add_argument("--min-similarity", dest="min_similarity", type=float, default=None,
                     help="merge: cosine similarity a pair needs (default 0.9)")
    mnt.add_argument("--no-progress", dest="progress", action="store_false")

    hook = sub.add_parser("hook", help="agent lifecycle hook: reads the hook's JSON on stdin, prints the text "
                                       "to inject; always exits 0")
    _common(hook)
    hook.add_argument("hook", choices=["session-start", "recall", "post-compact"])

    skills = sub.add_parser("import-skills", help="import skill markdown files under DIR as knowledge")
    _common(skills)
    skills.add_argument("directory", type=Path)
    skills.add_argument("--type", dest="knowledge_type", default=None,
                        help="knowledge type of sections whose headings and path name none (default observation)")
    skills.add_argument("--trust", default="pattern",
                        help="pattern or inference (default pattern; principle needs an expert's quote, which a "
                             "file does not carry)")
    skills.add_argument("--category", default="creative", help="fundamental or creative (default creative)")
    skills.add_argument("--batch-size", dest="batch_size", type=_positive, default=200)
    skills.add_argument("--no-progress", dest="progress", action="store_false")
    skills.add_argument("--embedding-model", dest="embedding_model")

    exp = sub.add_parser("export", help="export a namespace to a file")
    _common(exp)
    exp.add_argument("path")
    exp.add_argument("--format", dest="fmt", default="jsonl", choices=["jsonl", "full"])
    exp.add_argument("--no-progress", dest="progress", action="store_false")
    return parser


ACTIONS = ("prune", "merge", "validate", "orphans")


def _actions(value: str) -> list[str]:
    actions = [a.strip() for a in value.split(",") if a.strip()]
    bad = [a for a in actions if a not in ACTIONS]
    if bad or not actions:
        raise argparse.ArgumentTypeError(f"actions are a comma-separated list of {', '.join(ACTIONS)}; got {value!r}")
    return list(dict.fromkeys(actions))


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1; got {value}")
    return n


def _settings(args: argparse.Namespace) -> Settings:
    keys = ["namespace", "log_level", "transport", "host", "port", "tools", "auth_token", "allowed_origins",
            "max_answer_bytes", "embedding_model", "schemas_dir", "skills_dir", "session_id"]
    overrides: dict[str, Any] = {k: getattr(args, k, None) for k in keys}
    return Settings().with_overrides(**overrides)


def _setup_logging(level: str) -> None:
    logging.basicConfig(stream=sys.stderr, level=level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("neo4j").setLevel(logging.WARNING)
    logging.getLogger("mcp").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "hook":
        return _hook(args)
    try:
        settings = _settings(args)
        _setup_logging(settings.log_level)
        return _dispatch(args, settings)
    except KgError as exc:
        print(f"kg-neo4j: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `kg-neo4j neo4j status | head`
        sys.stderr.close()
        return 0


def _hook(args: argparse.Namespace) -> int:
    """``kg-neo4j hook NAME``: never fails (exit 0, nothing printed) and logs only at DEBUG."""
    try:
        settings = _settings(args)
        if settings.log_level.upper() == "DEBUG":
            _setup_logging("DEBUG")
        else:
            logging.disable(logging.CRITICAL)
        from kg_neo4j.hooks import main as hook_main

        return hook_main(args.hook, settings)
    except BaseException:  # noqa: BLE001 - a hook never blocks the user
        return 0


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        from kg_neo4j.server.app import serve_http, serve_stdio

        if settings.transport == "http":
            from kg_neo4j.server.http import check_bind

            check_bind(settings)
            asyncio.run(serve_http(settings))
        else:
            asyncio.run(serve_stdio(settings))
        return 0
    if args.command == "neo4j":
        from kg_neo4j.localdb import LocalNeo4j

        local = LocalNeo4j(settings)
        if args.action == "start":
            local.start()
            print(f"Neo4j is running at {local.bolt_uri} (Browser: http://127.0.0.1:{settings.local_http_port}/browser/)")
        elif args.action == "stop":
            was = local.stop()
            print("Neo4j stopped" if was else "Neo4j was not running")
        elif args.action == "status":
            status = local.status()
            print(json.dumps(status, indent=2, default=str))
            return 0 if status.get("running") else 1
        else:
            print("\n".join(local.env_lines()))
        return 0
    if args.command == "reembed":
        from kg_neo4j.maintenance import run_reembed

        report = asyncio.run(run_reembed(settings, batch_size=args.batch_size, progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0
    if args.command == "import":
        from kg_neo4j.transfer import run_import

        report = asyncio.run(run_import(settings, args.path, fmt=args.fmt, batch_size=args.batch_size,
                                        progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0 if not report.get("rejected") else 1
    if args.command == "maintain":
        from kg_neo4j.maintenance import run_maintain

        report = asyncio.run(run_maintain(settings, actions=args.actions or list(ACTIONS), apply=args.apply,
                                          batch_size=args.batch_size, progress=args.progress,
                                          min_similarity=args.min_similarity))
        print(json.dumps(report, indent=2, ensure_ascii=False))
        print(report["summary"], file=sys.stderr)
        return 0
    if args.command == "import-skills":
        from kg_neo4j.skills import run_import_skills

        report = asyncio.run(run_import_skills(settings, args.directory, knowledge_type=args.knowledge_type,
                                               trust=args.trust, category=args.category,
                                               batch_size=args.batch_size, progress=args.progress))
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
        return 0 if not report.get("rejected") else 1
    if args.command == "export":
        from kg_neo4j.transfer import run_export

        report = asyncio.run(run_export(settings, args.path, fmt=args.fmt, progress=args.progress))
        print(json.dumps(report, indent=2))
        return 0
    raise AssertionError(args.command)


if __name__ == "__main__":
    raise SystemExit(main())
