"""``kg-neo4j dedupe``: the namespace's groups of probable duplicates (docs/entities.md#finding-duplicates).

``--dry-run`` lists them as JSON on stdout (a progress bar on stderr unless ``--no-progress``);
``--out FILE`` also writes them as the reviewable file ``--apply --reviewed FILE`` reads::

    {"version": 1, "namespace": "...", "threshold": 0.8,
     "groups": [{"keep": "...", "names": ["...", ...], "score": 0.93, "reasons": [...]}]}

A reviewer deletes the groups (or names of a group) they reject.  ``--apply`` merges: the groups of a
reviewed file, or those at or above the threshold, with ``kg_neo4j/commands/dedupe_apply.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from kg_neo4j.commands.dedupe_apply import apply_groups
from kg_neo4j.errors import ConfigError
from kg_neo4j.resolution import AUTO_MERGE_THRESHOLD
from kg_neo4j.runtime import open_resources
from kg_neo4j.settings import Settings
from kg_neo4j.store.progress import stderr_bars

#: The reviewable file's format version.
FILE_VERSION = 1


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


async def dry_run(settings: Settings, *, threshold: float, progress: bool = True) -> dict[str, Any]:
    """The groups of ``settings.namespace`` at or above ``threshold``, as the reviewable file's content."""
    from kg_neo4j.embeddings.model_files import resolve_model
    from kg_neo4j.store.duplicates import duplicate_groups

    info = resolve_model(settings.embedding_model)  # the vectors of this model count; none: model off
    with stderr_bars(progress, "entity") as bars:
        async with open_resources(settings, bootstrap="schema") as rt:
            groups = await duplicate_groups(
                rt.graph_store(),
                model=info.name if info is not None else None,
                min_score=threshold,
                progress=bars,
            )
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
    if args.reviewed is not None:
        groups = read_groups_file(args.reviewed, settings.namespace)
    else:
        groups = asyncio.run(dry_run(settings, threshold=threshold, progress=args.progress))["groups"]
    with stderr_bars(args.progress, "entity") as bars:
        report = asyncio.run(apply_groups(settings, groups, bars))
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0
