"""The answer cap (``--max-answer-bytes`` / ``KG_NEO4J_MAX_ANSWER_BYTES``): the one place that checks it.

A read that could be huge asks Neo4j for at most ``max_rows + 1`` rows (a cheap guard: no answer under
the byte cap can hold more), then the answer's JSON size is checked; past either, the tool fails with
a message that says how to page or narrow it (docs/input-validation.md#limits)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kg_neo4j.errors import TooLargeError
from kg_neo4j.models import KnowledgeGraph

DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class AnswerCap:
    max_bytes: int = DEFAULT_MAX_ANSWER_BYTES

    @property
    def max_rows(self) -> int:
        return max(1, self.max_bytes // 16)

    def check(
        self,
        tool: str,
        *,
        rows: tuple[int, ...] = (),
        text: str | None = None,
        graph: KnowledgeGraph | None = None,
    ) -> None:
        """Raise when any row count passes ``max_rows`` or the answer (its ``text``, or ``graph`` in the
        reference JSON) passes ``max_bytes``."""
        if any(n > self.max_rows for n in rows):
            raise self.too_large(tool)
        if graph is not None:
            text = json.dumps(graph.reference(), ensure_ascii=False)
        if text is not None and len(text.encode()) > self.max_bytes:
            raise self.too_large(tool)

    def too_large(self, tool: str) -> TooLargeError:
        return TooLargeError(
            f"{tool}: the answer would exceed this server's cap of {self.max_bytes} bytes "
            "(--max-answer-bytes / KG_NEO4J_MAX_ANSWER_BYTES). Page with read_graph's `limit` and `cursor`, "
            "narrow the query (search_nodes with a longer query, open_nodes with fewer names), "
            "or use `kg-neo4j export` for the whole graph."
        )
