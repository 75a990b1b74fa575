"""``kg-neo4j neo4j start|stop|status|env`` and ``kg-neo4j browser``: the local (no-Docker) Neo4j
server and its Browser (docs/install.md#a-local-neo4j-without-docker,
docs/neo4j-versions.md#neo4j-browser)."""

from __future__ import annotations

import argparse
import json

from kg_neo4j.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "browser":
        from kg_neo4j.browser.cli import run_browser

        return run_browser(settings, args.export)
    from kg_neo4j.localdb import LocalNeo4j

    local = LocalNeo4j(settings)
    if args.action == "start":
        local.start()
        from kg_neo4j.browser import endpoint

        endpoint.ensure_running(local.home, settings.local_guide_port)
        print(
            f"Neo4j is running at {local.bolt_uri} (Browser: http://127.0.0.1:{settings.local_http_port}/browser/)"
        )
    elif args.action == "stop":
        from kg_neo4j.browser import endpoint

        endpoint.stop(local.home)
        was = local.stop()
        print("Neo4j stopped" if was else "Neo4j was not running")
    elif args.action == "status":
        status = local.status()
        print(json.dumps(status, indent=2, default=str))
        return 0 if status.get("running") else 1
    else:
        print("\n".join(local.env_lines()))
    return 0
