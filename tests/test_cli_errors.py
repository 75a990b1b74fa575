"""Clean CLI failures, through the real ``kg-neo4j`` executable.

A bad setting (environment variable) or flag is ONE line on stderr that names the variable or
the flag, the bad value and what is allowed; exit code 2; no traceback; for every subcommand.
``kg-neo4j hook`` prints that line too but exits 0 (Claude Code blocks the prompt on exit 2).
Runtime failures (Neo4j unreachable, a port taken) are one line with exit code 1.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kg_neo4j import __version__
from support.servers import KG, Neo4jInfo, free_port, server_env

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """Valid inputs, so that the setting under test is the only thing wrong."""
    data = tmp_path / "in.jsonl"
    data.write_text(
        json.dumps({"type": "entity", "name": "A", "entityType": "t", "observations": ["o"]}) + "\n"
    )
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "s.md").write_text("# Skill\n\nDo the thing.\n")
    return {"IN": str(data), "OUT": str(tmp_path / "out.jsonl"), "SKILLS": str(skills), "TMP": str(tmp_path)}


@pytest.fixture
def run(neo4j_info: Neo4jInfo, files: dict[str, str], tmp_path: Path) -> Run:
    """Run ``kg-neo4j ARGS`` on the test Neo4j, in a namespace of its own, with ``env`` on top."""
    namespace = f"test-cli-errors-{uuid.uuid4().hex[:8]}"

    def _run(
        *args: str, env: dict[str, str] | None = None, stdin: str = ""
    ) -> subprocess.CompletedProcess[str]:
        argv = [a.format(**files) for a in args]
        full = server_env(neo4j_info, **{"KG_NEO4J_NAMESPACE": namespace, **(env or {})})
        return subprocess.run(
            [KG, *argv], env=full, input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path
        )

    return _run


def one_line(result: subprocess.CompletedProcess[str], code: int, *fragments: str) -> str:
    """The single stderr line of a failed run, checked for its exit code and fragments."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.returncode == code, (result.returncode, result.stderr)
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@dataclass(frozen=True)
class Bad:
    """A bad environment variable: the command, and what the line must say is allowed."""

    var: str
    value: str
    allowed: str
    args: tuple[str, ...] = ("serve",)
    shown: str = ""  # how the value appears in the line (default: quoted whole)
    extra: dict[str, str] = field(default_factory=dict)


ENV_CASES = {
    "port-not-int": Bad("KG_NEO4J_PORT", "abc", "an integer from 1 to 65535"),
    "port-too-big": Bad("KG_NEO4J_PORT", "70000", "an integer from 1 to 65535"),
    "port-zero": Bad("KG_NEO4J_PORT", "0", "an integer from 1 to 65535", ("serve", "--transport", "http")),
    "tools-unknown": Bad("KG_NEO4J_TOOLS", "x", "one of reference, default, memorymesh, knowledge, all"),
    "transport-ftp": Bad("KG_NEO4J_TRANSPORT", "ftp", "one of stdio, http"),
    "origins-not-json": Bad("KG_NEO4J_ALLOWED_ORIGINS", "not json", "a JSON list of origins"),
    "origins-with-path": Bad(
        "KG_NEO4J_ALLOWED_ORIGINS", '["https://app.example.com/"]', "scheme://host[:port]"
    ),
    "origins-not-list": Bad(
        "KG_NEO4J_ALLOWED_ORIGINS", '"https://app.example.com"', "a JSON list of origins"
    ),
    "host-empty": Bad("KG_NEO4J_HOST", "", "a non-empty host name"),
    "jwks-lifespan-zero": Bad("KG_NEO4J_OAUTH_JWKS_LIFESPAN", "0", "a number of seconds from 1 to 86400"),
    "jwks-lifespan-day-and-more": Bad(
        "KG_NEO4J_OAUTH_JWKS_LIFESPAN", "86401", "a number of seconds from 1 to 86400"
    ),
    "jwks-lifespan-words": Bad(
        "KG_NEO4J_OAUTH_JWKS_LIFESPAN",
        "5 minutes",
        "a number of seconds from 1 to 86400",
        ("serve", "--transport", "http"),
    ),
    "max-answer-negative": Bad("KG_NEO4J_MAX_ANSWER_BYTES", "-1", "an integer >= 1"),
    "max-answer-not-int": Bad("KG_NEO4J_MAX_ANSWER_BYTES", "8MB", "an integer >= 1", ("export", "{OUT}")),
    "max-batch-zero": Bad("KG_NEO4J_MAX_BATCH_ITEMS", "0", "an integer >= 1", ("import", "{IN}")),
    "log-level-loud": Bad("KG_NEO4J_LOG_LEVEL", "LOUD", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    "log-level-notset": Bad("KG_NEO4J_LOG_LEVEL", "NOTSET", "one of DEBUG, INFO", ("export", "{OUT}")),
    "namespace-empty": Bad(
        "KG_NEO4J_NAMESPACE", "", "a non-empty string of at most 255 characters", ("export", "{OUT}")
    ),
    "namespace-300": Bad(
        "KG_NEO4J_NAMESPACE",
        "n" * 300,
        "at most 255 characters",
        ("import", "{IN}"),
        shown="(300 characters)",
    ),
    "embedding-runtime-bogus": Bad(
        "KG_NEO4J_EMBEDDING_RUNTIME", "torchless", "one of auto, numpy, sentence-transformers", ("serve",)
    ),
    "hook-budget-negative": Bad("KG_NEO4J_HOOK_BUDGET_CHARS", "-5", "an integer >= 1", ("maintain",)),
    "embedding-model-missing": Bad(
        "KG_NEO4J_EMBEDDING_MODEL", "/nonexistent/model", "a model this machine has"
    ),
    "schemas-dir-missing": Bad("KG_NEO4J_SCHEMAS_DIR", "/nonexistent/schemas", "an existing directory"),
    "schemas-dir-is-file": Bad("KG_NEO4J_SCHEMAS_DIR", "{IN}", "an existing directory", shown="in.jsonl"),
    "local-bolt-port-not-int": Bad(
        "KG_NEO4J_LOCAL_BOLT_PORT", "x", "an integer from 1 to 65535", ("neo4j", "status")
    ),
    "local-http-port-too-big": Bad(
        "KG_NEO4J_LOCAL_HTTP_PORT", "99999", "an integer from 1 to 65535", ("export", "{OUT}")
    ),
    "local-ports-equal": Bad(
        "KG_NEO4J_LOCAL_BOLT_PORT",
        "7474",
        "a port other than KG_NEO4J_LOCAL_HTTP_PORT",
        ("neo4j", "env"),
        extra={"KG_NEO4J_LOCAL_HTTP_PORT": "7474"},
    ),
    "local-retention-bogus": Bad(
        "KG_NEO4J_LOCAL_TX_LOG_RETENTION", "bogus", "retention policy like '256M size'", ("export", "{OUT}")
    ),
    "local-heap-lots": Bad("KG_NEO4J_LOCAL_HEAP", "lots", "a size like 512m or 1g", ("neo4j", "status")),
    "local-pagecache-zero": Bad("KG_NEO4J_LOCAL_PAGECACHE", "0", "a size like 512m or 1g", ("reembed",)),
    "local-version-newest": Bad(
        "KG_NEO4J_LOCAL_NEO4J_VERSION",
        "newest",
        "a Neo4j version like 5.26.30",
        ("import-skills", "{SKILLS}"),
    ),
    "neo4j-uri-http": Bad("NEO4J_URI", "http://127.0.0.1:7474", "bolt://, bolt+s://, bolt+ssc://, neo4j://"),
    "neo4j-uri-no-scheme": Bad("NEO4J_URI", "127.0.0.1:7687", "URI with a host", ("export", "{OUT}")),
    "neo4j-uri-bad-port": Bad("NEO4J_URI", "bolt://127.0.0.1:port", "port 1-65535", ("import", "{IN}")),
    "neo4j-uri-bolt-query": Bad("NEO4J_URI", "bolt://127.0.0.1:7687?region=x", "a ?query only after neo4j"),
}


@pytest.mark.parametrize("case", ENV_CASES.values(), ids=list(ENV_CASES))
def test_bad_environment_variable(run: Run, case: Bad, files: dict[str, str]) -> None:
    value = case.value.format(**files)
    result = run(*case.args, env={case.var: value, **case.extra})
    line = one_line(result, 2, case.var, case.allowed, case.shown or repr(value))
    assert line.startswith(f"kg-neo4j {case.args[0]}: error: ")
    assert result.stdout == ""


def test_a_password_in_the_uri_is_not_echoed(run: Run) -> None:
    result = run("export", "{OUT}", env={"NEO4J_URI": "bolt://neo4j:s3cret-pw@127.0.0.1:7687"})
    line = one_line(result, 2, "NEO4J_URI", "no user:password@", "bolt://***@127.0.0.1:7687")
    assert "s3cret" not in line


def test_a_lower_case_variable_is_named_as_spelt(run: Run) -> None:
    """pydantic-settings reads variables case-insensitively; the line names the one that is set."""
    one_line(run("serve", env={"kg_neo4j_port": "abc"}), 2, "kg_neo4j_port must be an integer", "'abc'")


def test_several_bad_variables_still_one_line(run: Run) -> None:
    line = one_line(
        run("serve", env={"KG_NEO4J_PORT": "abc", "KG_NEO4J_TOOLS": "x"}),
        2,
        "KG_NEO4J_PORT",
        "'abc'",
        "KG_NEO4J_TOOLS",
        "'x'",
    )
    assert "; also " in line


#: Every subcommand, with one bad variable: the same line, the same exit code (a hook: 0).
SUBCOMMANDS = {
    "serve": (("serve",), 2),
    "serve-http": (("serve", "--transport", "http"), 2),
    "neo4j-status": (("neo4j", "status"), 2),
    "neo4j-env": (("neo4j", "env"), 2),
    "neo4j-start": (("neo4j", "start"), 2),
    "neo4j-stop": (("neo4j", "stop"), 2),
    "import": (("import", "{IN}"), 2),
    "export": (("export", "{OUT}"), 2),
    "reembed": (("reembed",), 2),
    "maintain": (("maintain", "--apply"), 2),
    "import-skills": (("import-skills", "{SKILLS}"), 2),
    "hook-session-start": (("hook", "session-start"), 0),
    "hook-recall": (("hook", "recall"), 0),
    "hook-post-compact": (("hook", "post-compact"), 0),
}


@pytest.mark.parametrize(("args", "code"), SUBCOMMANDS.values(), ids=list(SUBCOMMANDS))
def test_every_subcommand_names_the_bad_variable(run: Run, args: tuple[str, ...], code: int) -> None:
    result = run(*args, env={"KG_NEO4J_TOOLS": "everything"}, stdin='{"prompt": "hello"}')
    one_line(result, code, f"kg-neo4j {args[0]}: error: KG_NEO4J_TOOLS must be one of", "got 'everything'")
    assert result.stdout == ""


#: Bad flags: (args, the fragments the line must hold: the flag, the value, what is allowed).
FLAG_CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "port-not-int": (("serve", "--port", "abc"), ("argument --port:", "1 to 65535", "'abc'")),
    "port-too-big": (("serve", "--port", "70000"), ("argument --port:", "1 to 65535", "'70000'")),
    "port-zero": (("serve", "--port", "0"), ("argument --port:", "1 to 65535", "'0'")),
    "tools-unknown": (("serve", "--tools", "x"), ("argument --tools:", "'x'", "'reference', 'default'")),
    "transport-ftp": (("serve", "--transport", "ftp"), ("argument --transport:", "'ftp'", "'stdio', 'http'")),
    "max-answer-zero": (
        ("serve", "--max-answer-bytes", "0"),
        ("argument --max-answer-bytes:", ">= 1", "'0'"),
    ),
    "max-answer-not-int": (
        ("serve", "--max-answer-bytes", "lots"),
        ("argument --max-answer-bytes:", ">= 1", "'lots'"),
    ),
    "namespace-empty": (
        ("export", "{OUT}", "--namespace", ""),
        ("argument --namespace:", "non-empty string of at most 255", "got ''"),
    ),
    "log-level-loud": (
        ("import", "{IN}", "--log-level", "LOUD"),
        ("argument --log-level:", "DEBUG", "'LOUD'"),
    ),
    "host-empty": (("serve", "--host", ""), ("argument --host:", "non-empty host", "got ''")),
    "allowed-origin-path": (
        ("serve", "--allowed-origin", "https://app.example.com/x"),
        ("argument --allowed-origin:", "scheme://host[:port]", "https://app.example.com/x"),
    ),
    "schemas-missing": (
        ("serve", "--schemas", "/nonexistent/schemas"),
        ("argument --schemas:", "an existing directory", "'/nonexistent/schemas'"),
    ),
    "schemas-is-file": (
        ("serve", "--schemas", "{IN}"),
        ("argument --schemas:", "an existing directory", "in.jsonl"),
    ),
    "embedding-model-missing": (
        ("import", "{IN}", "--embedding-model", "/nonexistent/model"),
        ("argument --embedding-model:", "a model this machine has", "'/nonexistent/model'"),
    ),
    "import-batch-zero": (("import", "{IN}", "--batch-size", "0"), ("argument --batch-size:", ">= 1", "'0'")),
    "import-batch-too-big": (
        ("import", "{IN}", "--batch-size", "20000"),
        ("argument --batch-size:", "1 to 10000", "KG_NEO4J_MAX_BATCH_ITEMS", "'20000'"),
    ),
    "import-batch-not-int": (
        ("import", "{IN}", "--batch-size", "many"),
        ("argument --batch-size:", "'many'"),
    ),
    "import-format": (("import", "{IN}", "--format", "xml"), ("argument --format:", "'xml'", "'jsonl'")),
    "import-no-path": (("import",), ("required: path",)),
    "export-format": (("export", "{OUT}", "--format", "xml"), ("argument --format:", "'xml'", "'full'")),
    "reembed-batch-zero": (("reembed", "--batch-size", "0"), ("argument --batch-size:", ">= 1", "'0'")),
    "maintain-batch-zero": (("maintain", "--batch-size", "0"), ("argument --batch-size:", ">= 1", "'0'")),
    "maintain-similarity-low": (
        ("maintain", "--min-similarity", "0.2"),
        ("argument --min-similarity:", "0.5 to 1.0", "'0.2'"),
    ),
    "maintain-similarity-nan": (
        ("maintain", "--min-similarity", "nan"),
        ("argument --min-similarity:", "0.5 to 1.0", "'nan'"),
    ),
    "maintain-actions": (
        ("maintain", "--actions", "prune,bogus"),
        ("argument --actions:", "prune, merge, validate, orphans", "'prune,bogus'"),
    ),
    "skills-batch-zero": (
        ("import-skills", "{SKILLS}", "--batch-size", "0"),
        ("argument --batch-size:", ">= 1", "'0'"),
    ),
    "skills-trust": (
        ("import-skills", "{SKILLS}", "--trust", "bogus"),
        ("argument --trust:", "pattern", "'bogus'"),
    ),
    "skills-type": (
        ("import-skills", "{SKILLS}", "--type", "bogus"),
        ("argument --type:", "rule", "'bogus'"),
    ),
    "skills-category": (
        ("import-skills", "{SKILLS}", "--category", "bogus"),
        ("argument --category:", "fundamental", "'bogus'"),
    ),
    "neo4j-action": (("neo4j", "restart"), ("argument action:", "'restart'", "'start'")),
    "no-command": ((), ("required: command",)),
    "unknown-command": (("frobnicate",), ("'frobnicate'", "'serve'")),
    "unknown-flag": (("serve", "--bogus"), ("unrecognized arguments: --bogus",)),
}


@pytest.mark.parametrize(("args", "fragments"), FLAG_CASES.values(), ids=list(FLAG_CASES))
def test_bad_flag(run: Run, args: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    result = run(*args)
    one_line(result, 2, "error:", *fragments)
    assert result.stdout == ""


#: A hook never exits non-zero, even on a bad flag: one line on stderr, nothing on stdout.
HOOK_CASES: dict[str, tuple[tuple[str, ...], dict[str, str], tuple[str, ...]]] = {
    "bad-hook-name": (("hook", "bogus"), {}, ("argument hook:", "'bogus'", "'recall'")),
    "no-hook-name": (("hook",), {}, ("required: hook",)),
    "namespace-flag-empty": (("hook", "recall", "--namespace", ""), {}, ("argument --namespace:", "got ''")),
    "log-level-flag": (
        ("hook", "session-start", "--log-level", "LOUD"),
        {},
        ("argument --log-level:", "'LOUD'"),
    ),
    "budget-env": (
        ("hook", "recall"),
        {"KG_NEO4J_HOOK_BUDGET_CHARS": "-5"},
        ("KG_NEO4J_HOOK_BUDGET_CHARS must be an integer >= 1", "'-5'"),
    ),
    "uri-env": (("hook", "post-compact"), {"NEO4J_URI": "http://127.0.0.1:7474"}, ("NEO4J_URI must be",)),
    "corrections-env": (
        ("hook", "correction-detector"),
        {"KG_NEO4J_HOOK_CORRECTIONS": "maybe"},
        ("KG_NEO4J_HOOK_CORRECTIONS must be true or false", "'maybe'"),
    ),
    "guard-tools-env": (
        ("hook", "search-enforcer"),
        {"KG_NEO4J_HOOK_GUARD_TOOLS": "Edit;Write"},
        ("KG_NEO4J_HOOK_GUARD_TOOLS must be a comma-separated list", "'Edit;Write'"),
    ),
    "search-url-env": (
        ("hook", "recall"),
        {"KG_NEO4J_HOOK_SEARCH_URL": "ftp://x"},
        ("KG_NEO4J_HOOK_SEARCH_URL must be the http(s) URL", "'ftp://x'"),
    ),
}


@pytest.mark.parametrize(("args", "env", "fragments"), HOOK_CASES.values(), ids=list(HOOK_CASES))
def test_hook_with_a_bad_setting_says_so_and_exits_0(
    run: Run, args: tuple[str, ...], env: dict[str, str], fragments: tuple[str, ...]
) -> None:
    result = run(*args, env=env, stdin='{"prompt": "what do we know"}')
    one_line(result, 0, "kg-neo4j hook: error:", *fragments)
    assert result.stdout == ""


@pytest.mark.parametrize("hook", ["session-start", "recall", "post-compact"])
def test_hook_with_neo4j_unreachable_prints_nothing_and_exits_0(run: Run, hook: str) -> None:
    result = run("hook", hook, env={"NEO4J_URI": f"bolt://127.0.0.1:{free_port()}"}, stdin='{"prompt": "x"}')
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


#: Runtime failures and bad input files: (args, env, exit code, fragments).
RUNTIME_CASES: dict[str, tuple[tuple[str, ...], dict[str, str], int, tuple[str, ...]]] = {
    "serve-neo4j-closed-port": (
        ("serve",),
        {"NEO4J_URI": "bolt://127.0.0.1:{CLOSED}"},
        1,
        ("cannot reach Neo4j at bolt://127.0.0.1:{CLOSED}",),
    ),
    "export-neo4j-closed-port": (
        ("export", "{OUT}"),
        {"NEO4J_URI": "bolt://127.0.0.1:{CLOSED}"},
        1,
        ("cannot reach Neo4j",),
    ),
    "import-neo4j-closed-port": (
        ("import", "{IN}"),
        {"NEO4J_URI": "neo4j://127.0.0.1:{CLOSED}"},
        1,
        ("cannot reach Neo4j",),
    ),
    "maintain-neo4j-closed-port": (
        ("maintain",),
        {"NEO4J_URI": "bolt://127.0.0.1:{CLOSED}"},
        1,
        ("cannot reach Neo4j",),
    ),
    "no-such-database": (
        ("export", "{OUT}"),
        {"NEO4J_DATABASE": "nosuchdb"},
        2,
        ("no database 'nosuchdb'", "NEO4J_DATABASE"),
    ),
    "wrong-password": (
        ("export", "{OUT}"),
        {"NEO4J_PASSWORD": "wrong-password"},
        2,
        ("refused the credentials",),
    ),
    "import-missing-file": (("import", "{TMP}/missing.jsonl"), {}, 2, ("missing.jsonl: no such file",)),
    "import-unknown-format": (("import", "{TMP}/garbage.txt"), {}, 2, ("cannot tell the format", "--format")),
    "export-missing-dir": (("export", "{TMP}/no/such/dir/out.jsonl"), {}, 2, ("no such directory",)),
    "import-skills-missing-dir": (("import-skills", "{TMP}/no-skills"), {}, 2, ("does not exist",)),
    "schemas-bad-json": (
        ("serve", "--schemas", "{TMP}/bad-schemas"),
        {},
        2,
        ("x.schema.json", "not valid JSON"),
    ),
    "schemas-unreadable-file": (
        ("serve", "--schemas", "{TMP}/dir-schemas"),
        {},
        2,
        ("y.schema.json", "cannot be read"),
    ),
    "http-port-taken": (
        ("serve", "--transport", "http", "--port", "{TAKEN}"),
        {},
        1,
        ("cannot listen on 127.0.0.1:{TAKEN}", "--port"),
    ),
    "http-public-without-token": (
        ("serve", "--transport", "http", "--host", "0.0.0.0"),
        {},
        2,
        ("without authentication", "--grants", "--auth-token"),
    ),
}


@pytest.mark.parametrize(
    ("args", "env", "code", "fragments"), RUNTIME_CASES.values(), ids=list(RUNTIME_CASES)
)
def test_runtime_failure_is_one_line(
    run: Run,
    files: dict[str, str],
    args: tuple[str, ...],
    env: dict[str, str],
    code: int,
    fragments: tuple[str, ...],
) -> None:
    tmp = Path(files["TMP"])
    (tmp / "garbage.txt").write_text("this is not a memory file\n")
    (tmp / "bad-schemas").mkdir()
    (tmp / "bad-schemas" / "x.schema.json").write_text("{bad")
    (tmp / "dir-schemas" / "y.schema.json").mkdir(parents=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = {"CLOSED": str(free_port()), "TAKEN": str(taken.getsockname()[1])}
        result = run(
            *[a.format(**ports, **files) for a in args], env={k: v.format(**ports) for k, v in env.items()}
        )
    line = one_line(result, code, *(f.format(**ports) for f in fragments))
    assert line.startswith(f"kg-neo4j {args[0]}: error: ")
    assert result.stdout == ""


#: Values that were accepted before must still be (a stdio server on an empty stdin starts and stops).
GOOD_VALUES = {
    "port-bounds": {
        "KG_NEO4J_PORT": "65535",
        "KG_NEO4J_LOCAL_BOLT_PORT": "1",
        "KG_NEO4J_LOCAL_HTTP_PORT": "65535",
    },
    "log-level-lower-warn": {"KG_NEO4J_LOG_LEVEL": "warn"},
    "log-level-debug": {"KG_NEO4J_LOG_LEVEL": "debug"},
    "origins-json": {"KG_NEO4J_ALLOWED_ORIGINS": '["http://localhost:3000", "vscode-webview://abc"]'},
    "origins-empty-list": {"KG_NEO4J_ALLOWED_ORIGINS": "[]"},
    "namespace-255": {"KG_NEO4J_NAMESPACE": "n" * 255},
    "uri-empty-means-local-or-env": {"KG_NEO4J_TOOLS": "all", "KG_NEO4J_TRANSPORT": "stdio"},
    "jwks-lifespan-bounds": {"KG_NEO4J_OAUTH_JWKS_LIFESPAN": "1"},
    "jwks-lifespan-fraction": {"KG_NEO4J_OAUTH_JWKS_LIFESPAN": "2.5"},
    "sizes-one": {
        "KG_NEO4J_MAX_ANSWER_BYTES": "1",
        "KG_NEO4J_HOOK_BUDGET_CHARS": "1",
        "KG_NEO4J_MAX_BATCH_ITEMS": "1",
    },
}


@pytest.mark.parametrize("env", GOOD_VALUES.values(), ids=list(GOOD_VALUES))
def test_valid_values_are_still_accepted(run: Run, env: dict[str, str]) -> None:
    result = run("serve", env=env)
    assert result.returncode == 0, result.stderr
    assert "error:" not in result.stderr and "Traceback" not in result.stderr


def test_a_flag_overrides_a_bad_variable(run: Run) -> None:
    """The flag wins, so the variable it replaces is not in the way."""
    result = run(
        "serve", "--port", "9000", "--tools", "all", env={"KG_NEO4J_PORT": "abc", "KG_NEO4J_TOOLS": "x"}
    )
    assert result.returncode == 0, result.stderr
    assert "error:" not in result.stderr and "Traceback" not in result.stderr


def test_version(run: Run) -> None:
    result = run("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"kg-neo4j {__version__}\n", "")
    assert __version__ == importlib.metadata.version("kg-neo4j")
