"""``kg-neo4j dedupe``: the namespace's groups of probable duplicates (docs/entities.md#finding-duplicates).

``--dry-run`` lists them as JSON on stdout (a progress bar on stderr unless ``--no-progress``);
``--out FILE`` also writes them as the reviewable file ``--apply --reviewed FILE`` reads::

    {"version": 1, "namespace": "...", "threshold": 0.8,
     "groups": [{"keep": "...", "names": ["...", ...], "score": 0.93, "reasons": [...]}]}

A reviewer deletes the groups (or names of a group) they reject.  ``--apply`` merges: the groups of a
reviewed file, or those at or above the threshold; it runs ``apply_groups(settings, groups, progress)``
of ``kg_neo4j/commands/dedupe_apply.py`` (the merge's command module).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kg_neo4j.errors import ConfigError
from kg_neo4j.resolution import AUTO_MERGE_THRESHOLD
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings

#: The reviewable file's format version.
FILE_VERSION = 1
APPLY_MODULE = "kg_neo4j.commands.dedupe_apply"

#: A progress reporter: a step's name -> (set its total, advance by n) (store/duplicates.py's Progress).
Bars = Callable[[str], tuple[Callable[[int], None], Callable[[int], None]]]


def run(args: argparse.Namespace, settings: Settings) -> int:
    threshold = check_threshold(args.threshold)
    if args.apply:
        if args.out is not None:
            raise ConfigError("--out goes with --dry-run (it writes the groups for review)")
        return _apply(args, settings, threshold)
    if args.reviewed is not None:
        raise ConfigError("--reviewed goes with --apply (it merges the groups of a reviewed file)")
    report = asyncio.run(dry_run(settings, threshold=threshold, progress=args.progress))
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.out is not None:
        write_groups_file(args.out, text)
    print(text)
    print(
        f"{len(report['groups'])} group(s) at or above {threshold} in namespace {settings.namespace!r}"
        + (f"; written to {args.out}" if args.out is not None else ""),
        file=sys.stderr,
    )
    return 0


def check_threshold(value: float | None) -> float:
    if value is None:
        return AUTO_MERGE_THRESHOLD
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"--threshold must be between 0 and 1, not {value}")
    return value


def _bars(progress: bool, opened: list[tqdm[Any]]) -> Bars:
    def bar(step: str) -> tuple[Callable[[int], None], Callable[[int], None]]:
        b = tqdm(total=0, unit="entity", desc=step, file=sys.stderr, disable=not progress, leave=True)
        opened.append(b)

        def total(n: int) -> None:
            b.total = n
            b.refresh()

        return total, b.update

    return bar


async def dry_run(settings: Settings, *, threshold: float, progress: bool = True) -> dict[str, Any]:
    """The groups of ``settings.namespace`` at or above ``threshold``, as the reviewable file's content."""
    from kg_neo4j.embeddings.model_files import resolve_model
    from kg_neo4j.store.duplicates import duplicate_groups

    info = resolve_model(settings.embedding_model)  # the vectors of this model count; none: model off
    opened: list[tqdm[Any]] = []
    try:
        async with open_resources(settings, bootstrap="schema") as rt:
            groups = await duplicate_groups(
                rt.graph_store(),
                model=info.name if info is not None else None,
                min_score=threshold,
                progress=_bars(progress, opened),
            )
    finally:
        for b in opened:
            b.close()
    return {
        "version": FILE_VERSION,
        "namespace": settings.namespace,
        "threshold": threshold,
        "groups": [g.model_dump() for g in groups],
    }


def write_groups_file(path: Path, text: str) -> None:
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--out {path}: cannot write it ({exc.strerror or exc})") from exc


def read_groups_file(path: Path, namespace: str) -> list[dict[str, Any]]:
    """The groups of a reviewed file (``--dry-run --out``), checked: version, namespace, each group's
    ``keep`` among its ``names``; a ConfigError naming what is wrong otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--reviewed {path}: cannot read it ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--reviewed {path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("version") != FILE_VERSION:
        raise ConfigError(f"--reviewed {path}: not a dedupe file of version {FILE_VERSION}")
    if data.get("namespace") != namespace:
        raise ConfigError(
            f"--reviewed {path}: written for namespace {data.get('namespace')!r}, not {namespace!r}"
        )
    groups = data.get("groups")
    if not isinstance(groups, list):
        raise ConfigError(f"--reviewed {path}: 'groups' must be a list")
    for i, g in enumerate(groups):
        names = g.get("names") if isinstance(g, dict) else None
        if (
            not isinstance(names, list)
            or not all(isinstance(n, str) and n for n in names)
            or not isinstance(g.get("keep"), str)
            or g["keep"] not in names
        ):
            raise ConfigError(
                f"--reviewed {path}: groups[{i}] needs 'names' (a list of entity names) and 'keep' (one of them)"
            )
    return groups


def _apply(args: argparse.Namespace, settings: Settings, threshold: float) -> int:
    if importlib.util.find_spec(APPLY_MODULE) is None:
        raise ConfigError(
            "dedupe --apply is not available in this version yet; use --dry-run --out FILE and "
            "merge_entities for each group"
        )
    if args.reviewed is not None:
        groups = read_groups_file(args.reviewed, settings.namespace)
    else:
        groups = asyncio.run(dry_run(settings, threshold=threshold, progress=args.progress))["groups"]
    apply_groups = importlib.import_module(APPLY_MODULE).apply_groups
    opened: list[tqdm[Any]] = []
    try:
        report = apply_groups(settings, groups, _bars(args.progress, opened))
        if asyncio.iscoroutine(report):  # the merge module may write it as a coroutine
            report = asyncio.run(report)
    finally:
        for b in opened:
            b.close()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0
