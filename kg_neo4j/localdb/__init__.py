"""A local Neo4j Community server without Docker: 5.26 LTS or the 2025.x+ calendar line.

The jars come from Maven Central (kg_neo4j/localdb/install.py), run with a JDK the version
supports (kg_neo4j/localdb/java.py); kg_neo4j/localdb/server.py starts, stops and describes
the server.  Nothing here writes to stdout: it may be the MCP protocol channel.
"""

from kg_neo4j.localdb.install import CURRENT_VERSION, ENTRY_POINTS, LTS_VERSION, entry_point
from kg_neo4j.localdb.java import JavaChoice, choose_java, java_requirement, parse_java_major
from kg_neo4j.localdb.server import LocalNeo4j

__all__ = [
    "CURRENT_VERSION",
    "ENTRY_POINTS",
    "LTS_VERSION",
    "JavaChoice",
    "LocalNeo4j",
    "choose_java",
    "entry_point",
    "java_requirement",
    "parse_java_major",
]
