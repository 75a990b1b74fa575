"""What the maintenance parts share: their constants, the sweep's report and the store's executor
(store/maintenance.py says how the sweeps run; the parts are store/decay_sweep.py and store/merging.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import neo4j

from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.trust import CAUSAL_EDGE_TYPES
from kg_neo4j.knowledge.vocabulary import EdgeType
from kg_neo4j.store.executor import Executor
from kg_neo4j.store.graph import GraphStore

#: Rows per committed transaction, and the sweep's chunk (names per statement) per batch.
DEFAULT_BATCH_SIZE = 2000
CHUNK_BATCHES = 10
#: How many names a report lists per finding.
SAMPLE = 10
#: prune: semantic edges between knowledge nodes weaker than this are closed
#: (docs/knowledge-model.md#maintenance: edges weaker than 0.3 expire).
WEAK_EDGE_WEIGHT = 0.3
#: Session-start's duplicate report: the source's "vector similarity < 0.25"
#: (docs/knowledge-model.md#maintenance) is a cosine *distance* below 0.25, i.e. cosine above 0.75.
DUPLICATE_REPORT_COSINE = 0.75
#: merge: only pairs at least this close are merged (choice: a near-duplicate, not merely a
#: related idea; the dry run lists the pairs so the threshold can be lowered knowingly).
MERGE_COSINE = 0.9
#: merge: neighbours asked of the vector index per node (the index is database-wide, so it
#: over-fetches and the statement keeps the namespace's own).
MERGE_NEIGHBOURS = 20
#: The semantic edge types, docs/knowledge-model.md#semantic-edges (the only relationships prune and
#: validate look at).
SEMANTIC_TYPES = sorted(t.value for t in EdgeType)
CAUSAL_TYPES = sorted(t.value for t in CAUSAL_EDGE_TYPES)

#: maintain_graph's actions, in the order they run.
ACTIONS = ("prune", "merge", "validate", "orphans")


def cosine_to_score(cosine: float) -> float:
    """Neo4j's cosine score for a cosine similarity: ``(1 + cos) / 2``."""
    return (1.0 + cosine) / 2.0


@dataclass
class SweepReport:
    """What one decay sweep did (``apply=True``) or would do (dry run)."""

    applied: bool
    now: str
    scanned: int = 0
    #: nodes expired (R < 0.02 below level 3), or that a dry run would expire
    expired: int = 0
    #: nodes whose level went up (age-based promotion to 3, ...), or would
    promoted: int = 0
    #: nodes whose stored level was above what they have earned (e.g. category changed), re-levelled down
    demoted: int = 0
    #: nodes fading (R < 0.3) but not expiring
    fading: int = 0
    #: nodes written (0 in a dry run)
    written: int = 0
    #: False when a time budget stopped the sweep before the last chunk (``cursor`` says where)
    complete: bool = True
    cursor: str | None = None
    seconds: float = 0.0
    expire_names: list[str] = field(default_factory=list)
    level_changes: list[dict[str, Any]] = field(default_factory=list)
    #: the most faded of the fading nodes (name, retention), lowest R first
    fading_names: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class MaintenanceBase:
    """Maintenance of one namespace's knowledge: the namespace, clock and executor of ``graph``, with
    the decay constants as shared parameters (cypher/maintenance.cypher)."""

    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph
        # statements in auto-commit sessions (x.auto) are the only place CALL IN TRANSACTIONS may run;
        # no ``at`` default: these statements are of now
        self.x: Executor = graph.x.with_shared(reads_at=False, constants=decay.cypher_params())

    # -- plumbing ---------------------------------------------------------------------------
    async def read(self, name: str, /, **params: Any) -> list[neo4j.Record]:
        """Run a named read statement with this namespace's shared parameters (also used by the hooks)."""
        return await self.x.read(name, **params)

    async def write(self, name: str, /, **params: Any) -> list[neo4j.Record]:
        """Run a named write statement, one transaction, with this namespace's shared parameters."""
        return await self.x.write(name, **params)

    @property
    def _meta_key(self) -> str:
        return f"decay_sweep:{self.graph.namespace}"
