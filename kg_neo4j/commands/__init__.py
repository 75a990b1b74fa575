"""What each ``kg-neo4j`` command does once its arguments are parsed and its settings checked
(:mod:`kg_neo4j.cli` parses and reports errors).  One module per family; each opens Neo4j through
:func:`kg_neo4j.runtime.open_resources`, asking only for what it needs.  The modules are imported
when their command runs, so ``kg-neo4j hook`` loads none of the others."""

from __future__ import annotations

import argparse
import gc
import importlib

from kg_neo4j.settings import Settings

#: ``maintain --actions`` (kg_neo4j.store.maintenance.ACTIONS; here so the CLI parses them without the store).
ACTIONS = ("prune", "merge", "validate", "orphans")

#: command -> the module that runs it (each has ``run(args, settings) -> exit code``).
MODULES = {
    "serve": "serve",
    "neo4j": "neo4j",
    "browser": "neo4j",
    "reembed": "maintenance",
    "rebuild-fulltext": "maintenance",
    "maintain": "maintenance",
    "import": "transfer",
    "export": "transfer",
    "import-skills": "skills",
    "token": "token",
    "dedupe": "dedupe",
    "namespace": "namespace",
}


def dispatch(args: argparse.Namespace, settings: Settings) -> int:
    """Run ``args.command``; returns the exit code."""
    # The command's imports (mcp, neo4j, the tools' pydantic models) make some 300,000 long-lived objects
    # and no garbage, yet triggered hundreds of collections; frozen afterwards, they are walked by none of
    # the collections the command's own work triggers.  Each start takes less CPU (docs/performance.md).
    gc.disable()
    try:
        module = importlib.import_module(f"kg_neo4j.commands.{MODULES[args.command]}")
    finally:
        gc.freeze()
        gc.enable()
    code: int = module.run(args, settings)
    return code
