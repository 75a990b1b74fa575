"""``kg-neo4j namespace list|delete``: the namespaces of the database, for the operator of a team service
(docs/team.md#namespaces-of-a-team-service; the store side: kg_neo4j/store/namespaces.py).

``delete NS`` without ``--yes`` prints what it would erase and refuses (exit 2).  With it, the namespace is
erased in bounded transactions with a progress bar on stderr; a run stopped anywhere is finished by the
next.  There is no MCP tool for this (why: the docs page above).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from kg_neo4j.errors import ConfigError
from kg_neo4j.settings import Settings

#: ``namespace delete --batch-size``: nodes and relationships per transaction.
DEFAULT_BATCH = 5000
#: the table's columns: (heading, field of NamespaceCounts)
COLUMNS = (
    ("namespace", "namespace"),
    ("entities", "entities"),
    ("observations", "observations"),
    ("retired", "retired_observations"),
    ("relations", "relations"),
    ("last write", "last_write"),
)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.namespace_command == "list":
        return asyncio.run(_list(settings, as_json=args.json))
    if not args.name or args.name != args.name.strip():
        raise ConfigError(f"NS {args.name!r} must be a non-empty namespace name without surrounding spaces")
    return asyncio.run(
        _delete(settings, args.name, yes=args.yes, batch=args.batch_size, progress=args.progress)
    )


async def _list(settings: Settings, *, as_json: bool) -> int:
    from kg_neo4j.runtime import open_resources
    from kg_neo4j.store.executor import Executor
    from kg_neo4j.store.namespaces import list_namespaces

    async with open_resources(settings, bootstrap=None) as rt:
        rows = [c.as_dict() for c in await list_namespaces(Executor(rt.driver, rt.database))]
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(_table(rows))
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    cells = [[h for h, _ in COLUMNS]] + [
        ["-" if r[f] is None else str(r[f]) for _, f in COLUMNS] for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = []
    for row in cells:
        # the name left, the counts right, the moment left
        parts = [row[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1], strict=True)]
        parts.append(row[-1])
        lines.append("  ".join(parts))
    return "\n".join(lines)


async def _delete(settings: Settings, namespace: str, *, yes: bool, batch: int, progress: bool) -> int:
    from tqdm import tqdm

    from kg_neo4j.runtime import open_resources
    from kg_neo4j.store.executor import Executor
    from kg_neo4j.store.namespaces import erase_namespace, namespace_counts

    async with open_resources(settings, bootstrap=None) as rt:
        x = Executor(rt.driver, rt.database)
        before = await namespace_counts(x, namespace)
        if before.empty:
            # what a run stopped after its last node may have left: the metadata nodes, counted by nobody
            await erase_namespace(x, namespace, batch=batch)
            print(json.dumps({"namespace": namespace, "erased": None, "complete": True}))
            _say(f"namespace {namespace!r} holds nothing: nothing to erase")
            return 0
        if not yes:
            print(json.dumps({"namespace": namespace, "would_erase": before.as_dict()}, indent=2))
            _say(
                f"kg-neo4j namespace delete: refused: this would erase namespace {namespace!r} "
                f"({_summary(before.as_dict())}); run it again with --yes to erase it"
            )
            return 2
        total = before.nodes + before.observations + before.retired_observations
        with tqdm(
            total=total, unit="node", desc=f"delete {namespace}", file=sys.stderr, disable=not progress
        ) as bar:
            done = await erase_namespace(x, namespace, batch=batch, on_progress=bar.update)
        after = await namespace_counts(x, namespace)
    report = {
        "namespace": namespace,
        "erased": before.as_dict(),
        "transactions": done.transactions,
        "complete": after.empty,
        "left": None if after.empty else after.as_dict(),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if not after.empty:  # another client wrote to it while it was erased
        _say(f"namespace {namespace!r} was written to during the erasure: {_summary(after.as_dict())} left")
        return 1
    return 0


def _summary(c: dict[str, Any]) -> str:
    return (
        f"{c['entities']} entities, {c['observations']} observations and {c['retired_observations']} retired, "
        f"{c['relations']} relations, {c['aliases']} aliases, {c['merges']} merge records, "
        f"{c['placeholders']} placeholders, {c['expired']} forgotten"
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
