"""``kg-neo4j browser``: where Neo4j Browser is, who logs in, where the password is, and the style and guide."""

from __future__ import annotations

from pathlib import Path

from kg_neo4j.browser import GUIDE_CYPHER_FILE, GUIDE_FILE, STYLE_FILE, guide_cypher, guide_html, style_text
from kg_neo4j.browser.endpoint import base_url
from kg_neo4j.settings import Settings

__all__ = ["run_browser"]


def run_browser(settings: Settings, export: Path | None) -> int:
    """Print how to open the memory in Browser (stdout); with ``export``, also write the three files there."""
    guide_base = base_url(settings.local_guide_port)
    if export is not None:
        export.mkdir(parents=True, exist_ok=True)
        (export / STYLE_FILE).write_text(style_text(), encoding="utf-8")
        (export / GUIDE_FILE).write_text(guide_html(guide_base), encoding="utf-8")
        (export / GUIDE_CYPHER_FILE).write_text(guide_cypher(), encoding="utf-8")
        print(f"wrote {export / STYLE_FILE}, {export / GUIDE_FILE}, {export / GUIDE_CYPHER_FILE}")
    if settings.neo4j_uri:
        print(
            f"Neo4j: {settings.neo4j_uri} (NEO4J_URI), user {settings.neo4j_username or 'neo4j'}, "
            "password: NEO4J_PASSWORD"
        )
        print(
            "Open that server's Browser (or https://browser.neo4j.io), then load the style with "
            f"`:style` followed by the text of {STYLE_FILE} (or drag the file onto Browser). Guides: "
            f"host {GUIDE_FILE} on a host in browser.remote_content_hostname_whitelist and `:play` its URL; "
            f"Aura's query tool runs no custom guides: paste the queries of {GUIDE_CYPHER_FILE} "
            "(`kg-neo4j browser --export DIR` writes the three files)."
        )
        return 0
    from kg_neo4j.localdb import LocalNeo4j

    local = LocalNeo4j(settings)
    status = local.status()
    print(f"Neo4j Browser: {status['browser_url']}")
    print(f"connect to: {status['bolt_uri']}")
    print("user: neo4j")
    print(f'password: the "password" of {status["credentials_file"]} (or `kg-neo4j neo4j env`)')
    print(
        f"style: {guide_base}/{STYLE_FILE} and guide: {guide_base}/{GUIDE_FILE}, applied and played on "
        f"connect; by hand: `:style {guide_base}/{STYLE_FILE}`, `:play {guide_base}/{GUIDE_FILE}`"
    )
    if not status["running"]:
        print("the local Neo4j is not running: start it with `kg-neo4j neo4j start`")
        return 1
    return 0
