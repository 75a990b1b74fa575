"""Anti-fabrication rules: docs/knowledge-model.md#trust-and-anti-fabrication.

| Rule                                 | Mechanism                                               |
| Principle requires quote             | No expert's exact words → rejected                      |
| Inference can't create causal edges  | must_precede / reason_for reject inference nodes        |
| Trust never auto-upgrades            | Inference won't become principle (needs expert           |
|                                      | confirmation + quote)                                   |
| Level is independent of trust        | Inference can consolidate to level 4 but still labeled  |
|                                      | "AI's idea"                                             |

Each rule is a function that returns quietly when the input is allowed and raises
``kg_neo4j.errors.ValidationError`` (with ``field``) saying what to fix otherwise.
Callers run them before anything is written.
"""

from __future__ import annotations

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import EdgeType, MemoryLevel, Trust, parse

# "must_precede / reason_for reject inference nodes": the edges an inference may not originate.
CAUSAL_EDGE_TYPES: frozenset[EdgeType] = frozenset({EdgeType.MUST_PRECEDE, EdgeType.REASON_FOR})


def require_quote(trust: Trust | str, quote: str | None) -> None:
    """A principle needs the expert's exact words ("No expert's exact words → rejected").

    Other trust levels may carry a quote but need none.
    """
    if parse(Trust, trust, field="trust") is Trust.PRINCIPLE and (quote is None or not quote.strip()):
        raise ValidationError(
            "a principle needs the expert's exact words: pass quote with what the expert said, "
            "word for word; if you have no quote, store it as trust 'pattern' (observed) or "
            "'inference' (your own idea)",
            field="quote",
        )


def check_edge_source(relation_type: EdgeType | str, source_trust: Trust | str) -> EdgeType:
    """An inference cannot be the source of must_precede or reason_for ("Inference can't
    create causal edges"); returns the edge type parsed.

    Only the source is checked: a principle or pattern may point at an inference.
    """
    edge = parse(EdgeType, relation_type, field="relationType")
    if edge in CAUSAL_EDGE_TYPES and parse(Trust, source_trust, field="trust") is Trust.INFERENCE:
        raise ValidationError(
            f"an inference (AI's own idea) cannot be the source of a {edge.value} edge: state a "
            "weaker relation such as 'implies' or 'tends_to', or have the expert confirm the "
            "source knowledge (trust 'principle' with their quote) first",
            field="relationType",
        )
    return edge


def check_trust_change(
    current: Trust | str, proposed: Trust | str, *, expert_confirmed: bool, quote: str | None = None
) -> Trust:
    """Trust never upgrades by itself ("Inference won't become principle (needs expert
    confirmation + quote)"); returns the trust to store.

    - unchanged: allowed;
    - lower (e.g. pattern to inference): allowed, a weaker claim fabricates nothing;
    - higher: only with ``expert_confirmed`` (an explicit action by the expert, never
      inferred from use, level or time), and to principle only with the expert's quote.
    """
    cur = parse(Trust, current, field="trust")
    new = parse(Trust, proposed, field="trust")
    if new.rank <= cur.rank:
        return new
    if not expert_confirmed:
        raise ValidationError(
            f"trust never upgrades by itself: this knowledge stays '{cur.value}'; only the expert "
            f"can raise it to '{new.value}', by confirming it explicitly"
            + (" and giving their exact words as quote" if new is Trust.PRINCIPLE else ""),
            field="trust",
        )
    require_quote(new, quote)
    return new


def check_level_keeps_trust(
    *,
    trust_before: Trust | str,
    trust_after: Trust | str,
    level_before: MemoryLevel | int,
    level_after: MemoryLevel | int,
) -> None:
    """Level is independent of trust: a write that changes memory_level leaves trust as it
    was ("Inference can consolidate to level 4 but still labeled 'AI's idea'").

    Any level goes with any trust (an inference at level 4 is fine); what is rejected is a
    promotion or demotion that also relabels the source.  Changing trust is a separate,
    expert-confirmed update (``check_trust_change``).
    """
    before = parse(Trust, trust_before, field="trust")
    after = parse(Trust, trust_after, field="trust")
    changed = parse(MemoryLevel, level_before, field="memory_level") != parse(
        MemoryLevel, level_after, field="memory_level"
    )
    if changed and before is not after:
        raise ValidationError(
            f"memory level and trust are independent: a level change must leave trust "
            f"'{before.value}' as it is (a level-4 inference is still the AI's idea); change trust "
            "in a separate update confirmed by the expert",
            field="trust",
        )
