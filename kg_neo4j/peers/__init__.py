"""``kg-neo4j import --from mcp-neo4j-memory|graphiti|memento``: a peer memory server's graph, read from a
Neo4j database (possibly kg-neo4j's own), into one namespace (docs/moving-over.md).

One module per peer (:mod:`~kg_neo4j.peers.mcp_neo4j_memory`, :mod:`~kg_neo4j.peers.graphiti`,
:mod:`~kg_neo4j.peers.memento`: its shape, its reads, its mapping, each documented in its docstring) and the
shared run in :mod:`~kg_neo4j.peers.common`:

1. the shape check: the peer's label, the properties it always writes, its relationship's properties; a
   source that does not match is refused naming what is missing (peers record no version: nothing is
   guessed), exit 2, nothing written;
2. the source read in pages (``cypher/peers.cypher``, read transactions, never kg-neo4j's ``:KgNode`` nodes);
3. each page written as one batch (one transaction): entities and observations through ``GraphStore``,
   relations with their validity; ``source`` on every item written names the system and the source's
   element id (``graphiti:4:...:12``).  A second run adds nothing: names are matched by the namespace's
   (namespace, name) key, observations by their text, relations by their ``source`` (or an open copy).

``--dry-run`` reads and counts everything and writes nothing.
"""

from __future__ import annotations

from kg_neo4j.peers import graphiti, mcp_neo4j_memory, memento
from kg_neo4j.peers.common import Peer, PeerReport, PeerShapeError, PeerWriter, import_peer

PEERS: dict[str, Peer] = {p.system: p for p in (mcp_neo4j_memory.PEER, graphiti.PEER, memento.PEER)}

__all__ = ["PEERS", "Peer", "PeerReport", "PeerShapeError", "PeerWriter", "import_peer"]
