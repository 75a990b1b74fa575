"""The only code that talks to Neo4j.  It never imports the server or the CLI."""

from kg_neo4j.store.connection import connect, resolve_connection
from kg_neo4j.store.graph import GraphStore

__all__ = ["GraphStore", "connect", "resolve_connection"]
