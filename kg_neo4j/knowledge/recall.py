"""Trust at recall (docs/knowledge.md#trust-at-recall): what search_memory and traverse_graph show
about a knowledge entity they return, from its stored state, at the read's moment (now or asOf).
Pure: the reads pass the node's properties and the moment."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.decay import elapsed_days, is_fading, retention
from kg_neo4j.models import KnowledgeFacts


def facts_of(state: Any, at: datetime) -> KnowledgeFacts | None:
    """``state`` (``trust, level, quote, category, stability, since``) as shown to the agent; None when
    it is incomplete or invalid (a read never fails on one bad node: it is then shown without facts)."""
    try:
        since = state["since"]
        since = since.to_native() if hasattr(since, "to_native") else since
        r = retention(elapsed_days(since, at), float(state["stability"]), category=state["category"])
        return KnowledgeFacts(
            trust=state["trust"],
            level=int(state["level"]),
            quote=state["quote"],
            retention=round(r, 6),
            fading=is_fading(r),
        )
    except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None
