"""``kg-neo4j hook NAME``: an agent lifecycle hook (docs/hooks.md).  Always exits 0 and logs only at
DEBUG.  A bad setting or flag is one line on stderr (it will not fix itself); any other failure
prints nothing.  Kept light: the hooks import the driver only when they read the graph, and never torch."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable

from kg_neo4j.errors import KgError
from kg_neo4j.settings import Settings


def run(
    args: argparse.Namespace,
    load_settings: Callable[[argparse.Namespace], Settings],
    say: Callable[[str], None],
    setup_logging: Callable[[str], None],
) -> int:
    """``load_settings``, ``say`` and ``setup_logging`` are the CLI's (kg_neo4j.cli): the same checks
    and the same one-line errors as every other command."""
    try:
        settings = load_settings(args)
    except KgError as exc:  # a bad setting: say so, it will not fix itself
        say(f"kg-neo4j hook: error: {exc}")
        return 0
    except BaseException:  # noqa: BLE001 - a hook never blocks the user
        return 0
    try:
        if settings.log_level.upper() == "DEBUG":
            setup_logging("DEBUG")
        else:
            logging.disable(logging.CRITICAL)
        from kg_neo4j.hooks import main as hook_main

        return hook_main(args.hook, settings)
    except BaseException:  # noqa: BLE001 - a hook never blocks the user
        return 0
