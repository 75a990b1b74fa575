"""The knowledge layer's words (docs/knowledge-model.md#knowledge-types-and-categories), as enums.

Values are exactly the source's spelling, so they can be stored and sent as they are.
``parse`` turns user input into one of them or raises ``ValidationError`` that lists
the allowed values.
"""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum
from typing import TypeVar

from kg_neo4j.errors import ValidationError


class KnowledgeType(StrEnum):
    """Node ``type``: "rule / procedure / observation / insight / core / preference"."""

    RULE = "rule"
    PROCEDURE = "procedure"
    OBSERVATION = "observation"
    INSIGHT = "insight"
    CORE = "core"
    PREFERENCE = "preference"


class Trust(StrEnum):
    """Node ``trust``, a source label (who said it), not a rank that grows:
    "principle (expert-taught) / pattern (observed) / inference (AI-guessed)"."""

    PRINCIPLE = "principle"
    PATTERN = "pattern"
    INFERENCE = "inference"

    @property
    def rank(self) -> int:
        """The source's order "principle (expert-taught) > pattern (observed) > inference
        (AI-guessed)": a higher rank is an upgrade."""
        return _TRUST_RANK[self]


_TRUST_RANK = {Trust.INFERENCE: 1, Trust.PATTERN: 2, Trust.PRINCIPLE: 3}


class Category(StrEnum):
    """``metadata.category``: "fundamental (has right/wrong) / creative (no right/wrong)".
    Fundamentals never decay (spec 004, "Fundamentals vs Creative Space")."""

    FUNDAMENTAL = "fundamental"
    CREATIVE = "creative"


class EdgeType(StrEnum):
    """The 10 semantic edge types (spec 004, "Data Model: Edges")."""

    MUST_PRECEDE = "must_precede"  # A must come before B
    REQUIRES_READING = "requires_reading"  # must read B before operating on A
    REFINES = "refines"  # A refines/extends B
    CONTRADICTS = "contradicts"  # A contradicts B
    REASON_FOR = "reason_for"  # A is the reason for B
    CAUSES = "causes"
    IMPLIES = "implies"
    ALIGNS_TO = "aligns_to"
    TENDS_TO = "tends_to"
    OBSERVED_IN = "observed_in"


class AccessGrade(IntEnum):
    """How an access went (docs/knowledge-model.md#access-grades)."""

    APPLIED = 4  # "Successfully applied (Auto-Capture detects no correction)"
    ACCESSED = 3  # "Normal access"
    CORRECTED = 1  # "Corrected by expert"


class MemoryLevel(IntEnum):
    """Benna-Fusi durability (docs/knowledge-model.md#memory-levels)."""

    NEW = 1
    VERIFYING = 2
    CONSOLIDATED = 3
    CORE = 4


E = TypeVar("E", bound=Enum)


def parse(kind: type[E], value: object, *, field: str) -> E:
    """``value`` as a member of ``kind``, else ``ValidationError`` naming the allowed values."""
    if isinstance(value, kind):
        return value
    if not isinstance(value, bool):  # True == 1 would pass as an int enum
        try:
            return kind(value)
        except ValueError:
            pass
    allowed = ", ".join(str(m.value) for m in kind)
    raise ValidationError(f"{field} must be one of {allowed}; got {value!r}", field=field)
