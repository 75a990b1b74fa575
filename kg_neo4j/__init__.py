"""kg-neo4j: knowledge-graph memory for AI agents, served over MCP, stored in Neo4j."""

__version__ = "0.2.0"
