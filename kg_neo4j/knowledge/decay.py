"""Decay and growth of knowledge (docs/knowledge-model.md#decay-and-retention, #access-grades,
#memory-levels), with expiry from the session-start maintenance (#maintenance, step 4) and
the memory score from #search-score.

Everything here is a pure function of numbers and datetimes.  ``now`` is always a
parameter (the store passes its clock's time); nothing here reads the clock.

Units: time in days, stability ``S`` in days.  ``t`` is the time since the last access,
or since creation for knowledge never accessed ("newly learned things are easily
forgotten").

Constants the source does not give are marked "choice" with the reason; every other
constant quotes the source line it comes from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge.vocabulary import AccessGrade, Category, MemoryLevel, Trust, parse

# --- retention -----------------------------------------------------------------------
# "R = W_fast × e^(-λ_fast × t) + W_slow × e^(-λ_slow × t)"
# "Fast decay (half-life = S days)" / "Slow decay (half-life = S×10 days)"
SLOW_HALF_LIFE_FACTOR = 10.0
# Choice: the source gives no weights.  It credits CortexGraph for "Two-component decay
# (fast + slow exponential ...)"; CortexGraph (formerly Mnemex) sets the fast
# component's weight to 0.7 by default (MNEMEX_TC_WEIGHT_FAST=0.7,
# https://mnemex.dev/configuration), the slow one takes the rest.  The weights sum to 1
# so R(0) = 1.  With them, knowledge nobody touches crosses the 0.02 expiry line after
# about 117 days (inference, S = 3), 273 days (pattern, S = 7) and 3.2 years (an
# expert's creative choice, S = 30).
W_FAST = 0.7
W_SLOW = 0.3

# --- stability -------------------------------------------------------------------------
# "Stability overflow | Capped at 365 days" (Security)
MAX_STABILITY_DAYS = 365.0
# "Fundamental (has right/wrong) | 365 days" (initial S table)
FUNDAMENTAL_STABILITY_DAYS = 365.0
# Creative knowledge by trust (initial S table):
# "Expert's creative choice | 30 days", "Observed pattern | 7 days", "AI inference | 3 days"
CREATIVE_STABILITY_DAYS: Mapping[Trust, float] = MappingProxyType(
    {Trust.PRINCIPLE: 30.0, Trust.PATTERN: 7.0, Trust.INFERENCE: 3.0}
)
# Choice: a floor so repeated corrections (gain < 1) never drive S to 0, where R would be
# undefined.  One hour: a node corrected that often fades within a day and expires.
MIN_STABILITY_DAYS = 1.0 / 24.0

# --- growth on access -------------------------------------------------------------------
# "stabilityGain = e^(1 - R) × gradeMultiplier"
# m(3) = 1 makes the source's figures hold: "R = 0.9 ... → 1.11× growth" (e^0.1 = 1.105),
# "R = 0.3 ... → 2.01× growth" (e^0.7 = 2.014).
# Choice m(4) = 1.3: the source gives none; 1.3 is the "easy bonus" of the SM-2 family it
# cites (Anki's default easy bonus, 130%).  Knowledge applied without correction earns a
# bit more than knowledge merely read.
# Choice m(1) = 0.3: the source gives none; chosen below 1/e so that a correction never
# raises stability whatever R is (0.3 × e^(1-R) <= 0.3e = 0.82), as in FSRS, where a
# lapse never yields more stability than before.
GRADE_MULTIPLIER: Mapping[AccessGrade, float] = MappingProxyType(
    {AccessGrade.APPLIED: 1.3, AccessGrade.ACCESSED: 1.0, AccessGrade.CORRECTED: 0.3}
)

# --- memory levels (Benna-Fusi cascade) ---------------------------------------------------
# "2 Verifying | Accessed across 3+ sessions"
VERIFYING_MIN_SESSIONS = 3
# "3 Consolidated | 14 days + access ≥ 5"
CONSOLIDATED_MIN_AGE_DAYS = 14.0
CONSOLIDATED_MIN_ACCESSES = 5
# "4 Core | Fundamental, or access ≥ 50"
CORE_MIN_ACCESSES = 50

# --- expiry and reports ------------------------------------------------------------------
# "Memory decay — R < 0.02 and level < 3 → expire"; levels 1-2 "✅ when R < 0.02",
# levels 3-4 "❌ Never".
EXPIRE_BELOW_RETENTION = 0.02
EXPIRE_BELOW_LEVEL = MemoryLevel.CONSOLIDATED
# "Decay report — show nodes with R < 0.3 (actively decaying)"
FADING_BELOW_RETENTION = 0.3

# --- memory score ---------------------------------------------------------------------------
# "memoryScore | R × 0.1 + levelBonus" ("More used = more important")
MEMORY_SCORE_RETENTION_WEIGHT = 0.1
# Choice: the source names levelBonus but gives no values.  Linear in level, from 0 for a
# new node up to 0.1 for core knowledge: durability weighs at most as much as freshness
# (R × 0.1 <= 0.1), and the whole memory score (<= 0.2) never exceeds the smallest
# relevance weight of the source's fusion ("0.2 × keyword"), so it lifts relevant hits but
# cannot outrank a real match on its own.
LEVEL_BONUS: Mapping[MemoryLevel, float] = MappingProxyType(
    {level: (int(level) - 1) / 30 for level in MemoryLevel}  # 0, 1/30, 2/30, 0.1
)
MEMORY_SCORE_MAX = MEMORY_SCORE_RETENTION_WEIGHT + max(LEVEL_BONUS.values())


def _check_days(value: float, field: str) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValidationError(f"{field} must be a finite number of days >= 0; got {value!r}", field=field)
    return float(value)


def _check_stability(stability: float) -> float:
    if not math.isfinite(stability) or stability <= 0:
        raise ValidationError(
            f"stability must be a finite number of days > 0; got {stability!r}", field="stability"
        )
    return float(stability)


def _check_retention(retention: float) -> float:
    if not 0.0 <= retention <= 1.0:  # also rejects NaN
        raise ValidationError(f"retention must lie in [0, 1]; got {retention!r}", field="retention")
    return float(retention)


def elapsed_days(since: datetime, now: datetime) -> float:
    """Days from ``since`` to ``now``, both timezone-aware; 0 if ``since`` is later."""
    for name, value in (("since", since), ("now", now)):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError(f"{name} must carry a timezone (e.g. 2026-01-01T00:00:00Z)", field=name)
    return max(0.0, (now - since).total_seconds() / 86400.0)


# --- retention ---------------------------------------------------------------------------


class HalfLives(NamedTuple):
    """Half-lives in days of the fast and the slow component."""

    fast: float
    slow: float


def half_lives(stability: float) -> HalfLives:
    """The source's half-lives for stability ``S``: fast = S, slow = 10 S.

    A half-life here is the source's: the time over which that component halves, i.e.
    ``retention_components(t + h)[i] == retention_components(t)[i] / 2`` for every t.
    R as a whole halves at neither (at t = S it is 0.35 + 0.3 · 2^-0.1 ≈ 0.63).
    """
    s = _check_stability(stability)
    return HalfLives(s, s * SLOW_HALF_LIFE_FACTOR)


def retention_components(t_days: float, stability: float) -> tuple[float, float]:
    """The weighted fast and slow terms of R: ``(W_FAST e^(-t ln2/S), W_SLOW e^(-t ln2/(10 S)))``."""
    t = _check_days(t_days, "t_days")
    fast, slow = half_lives(stability)
    return W_FAST * math.exp(-t * math.log(2) / fast), W_SLOW * math.exp(-t * math.log(2) / slow)


def retention(t_days: float, stability: float, *, category: Category) -> float:
    """R(t, S) in [0, 1]: 1 for fundamentals ("R = 1.0, never decays"), else the
    two-component sum."""
    if parse(Category, category, field="category") is Category.FUNDAMENTAL:
        _check_days(t_days, "t_days")
        _check_stability(stability)
        return 1.0
    fast, slow = retention_components(t_days, stability)
    return fast + slow


def days_until_retention(target: float, stability: float) -> float:
    """The t at which a creative node with stability ``S`` decays to R = ``target`` (0 < target <= 1).

    E.g. ``days_until_retention(EXPIRE_BELOW_RETENTION, 3.0)``: when an untouched
    inference reaches the expiry line.  Found by bisection (R is strictly decreasing).
    """
    if not 0.0 < target <= 1.0:
        raise ValidationError(f"target retention must lie in (0, 1]; got {target!r}", field="target")
    s = _check_stability(stability)
    if target == 1.0:
        return 0.0
    lo, hi = 0.0, SLOW_HALF_LIFE_FACTOR * s * math.log2(1.0 / target)  # R(hi) <= 2^(-hi/10S) = target
    for _ in range(200):
        mid = (lo + hi) / 2
        if retention(mid, s, category=Category.CREATIVE) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * max(1.0, hi):
            break
    return hi


# --- stability --------------------------------------------------------------------------


def initial_stability(trust: Trust | str, category: Category | str) -> float:
    """Initial S (docs/knowledge-model.md#decay-and-retention): 365 days for any fundamental,
    else 30 / 7 / 3 days for a principle / pattern / inference."""
    t = parse(Trust, trust, field="trust")
    if parse(Category, category, field="category") is Category.FUNDAMENTAL:
        return FUNDAMENTAL_STABILITY_DAYS
    return CREATIVE_STABILITY_DAYS[t]


def initial_half_lives(trust: Trust | str, category: Category | str) -> HalfLives:
    """The table's "Fast Half-Life" / "Slow Half-Life" columns: 30d/300d, 7d/70d, 3d/30d
    for creative knowledge; infinite for fundamentals, which never decay."""
    if parse(Category, category, field="category") is Category.FUNDAMENTAL:
        return HalfLives(math.inf, math.inf)
    return half_lives(initial_stability(trust, category))


def stability_gain(retention: float, grade: AccessGrade | int) -> float:
    """ "stabilityGain = e^(1 - R) × gradeMultiplier": recalling a fading memory (low R)
    strengthens it more than recalling a fresh one."""
    r = _check_retention(retention)
    return math.exp(1.0 - r) * GRADE_MULTIPLIER[parse(AccessGrade, grade, field="grade")]


def grow_stability(stability: float, retention: float, grade: AccessGrade | int) -> float:
    """S after an access at retention R: ``S × stability_gain(R, grade)``, kept within
    [MIN_STABILITY_DAYS, MAX_STABILITY_DAYS] (365 days)."""
    s = _check_stability(stability)
    return min(MAX_STABILITY_DAYS, max(MIN_STABILITY_DAYS, s * stability_gain(retention, grade)))


# --- levels, expiry, score ------------------------------------------------------------------


def memory_level(
    *, category: Category | str, access_count: int, session_count: int, age_days: float
) -> MemoryLevel:
    """The Benna-Fusi level (docs/knowledge-model.md#memory-levels), the highest whose condition holds:

    4 Core: fundamental, or access >= 50;  3 Consolidated: age >= 14 days and access >= 5;
    2 Verifying: accessed in >= 3 distinct sessions;  1 New: otherwise.

    Trust is not an argument: "Trust (source label) stays unchanged; memory_level
    (durability) grows independently".  Every input only grows over time, so a node's
    level only goes up (unless its category is changed from fundamental).
    """
    cat = parse(Category, category, field="category")
    if access_count < 0 or session_count < 0:
        raise ValidationError("access_count and session_count must be >= 0", field="access_count")
    age = _check_days(age_days, "age_days")
    if cat is Category.FUNDAMENTAL or access_count >= CORE_MIN_ACCESSES:
        return MemoryLevel.CORE
    if age >= CONSOLIDATED_MIN_AGE_DAYS and access_count >= CONSOLIDATED_MIN_ACCESSES:
        return MemoryLevel.CONSOLIDATED
    if session_count >= VERIFYING_MIN_SESSIONS:
        return MemoryLevel.VERIFYING
    return MemoryLevel.NEW


def should_expire(retention: float, level: MemoryLevel | int) -> bool:
    """ "R < 0.02 and level < 3 → expire" (expire, i.e. invalidate; never delete)."""
    return _check_retention(retention) < EXPIRE_BELOW_RETENTION and (
        parse(MemoryLevel, level, field="memory_level") < EXPIRE_BELOW_LEVEL
    )


def is_fading(retention: float) -> bool:
    """For the session-start decay report: "nodes with R < 0.3 (actively decaying)"."""
    return _check_retention(retention) < FADING_BELOW_RETENTION


def memory_score(retention: float, level: MemoryLevel | int) -> float:
    """ "memoryScore = R × 0.1 + levelBonus", in [0, MEMORY_SCORE_MAX]; divide by
    MEMORY_SCORE_MAX for the [0, 1] ``prior`` of ``kg_neo4j.fusion``."""
    lvl = parse(MemoryLevel, level, field="memory_level")
    return MEMORY_SCORE_RETENTION_WEIGHT * _check_retention(retention) + LEVEL_BONUS[lvl]


# --- one node's memory state ---------------------------------------------------------------


class MemoryState(BaseModel):
    """What decay and growth keep on a knowledge node.

    Trust is deliberately not here: nothing that decays, grows or promotes a node can
    read or change its trust ("Level is independent of trust").
    """

    model_config = ConfigDict(frozen=True)

    category: Category
    stability: float = Field(gt=0, le=MAX_STABILITY_DAYS, description="FSRS S in days")
    memory_level: MemoryLevel = MemoryLevel.NEW
    access_count: int = Field(default=0, ge=0)
    sessions: tuple[str, ...] = Field(default=(), description="distinct sessions that touched the node")
    created_at: AwareDatetime
    last_access: AwareDatetime | None = None

    @property
    def decay_since(self) -> datetime:
        """When the current decay started: the last access, else creation."""
        return self.last_access or self.created_at


def new_memory(
    trust: Trust | str, category: Category | str, *, now: datetime, session: str | None = None
) -> MemoryState:
    """The state of knowledge stored at ``now``: initial S by trust and category, level
    4 for fundamentals and 1 otherwise, no access yet; ``session`` (if given) is the
    first session that touched it."""
    cat = parse(Category, category, field="category")
    return MemoryState(
        category=cat,
        stability=initial_stability(trust, cat),
        memory_level=memory_level(
            category=cat, access_count=0, session_count=1 if session else 0, age_days=0.0
        ),
        sessions=(session,) if session else (),
        created_at=now,
    )


def retention_at(state: MemoryState, now: datetime) -> float:
    """R of ``state`` at ``now``."""
    return retention(elapsed_days(state.decay_since, now), state.stability, category=state.category)


def level_at(state: MemoryState, now: datetime) -> MemoryLevel:
    """The level ``state`` has earned by ``now`` (age counts even without an access)."""
    return memory_level(
        category=state.category,
        access_count=state.access_count,
        session_count=len(state.sessions),
        age_days=elapsed_days(state.created_at, now),
    )


def record_access(
    state: MemoryState, *, grade: AccessGrade | int, now: datetime, session: str | None = None
) -> MemoryState:
    """The state after one access at ``now``: S grows by the gain at the R the node had
    just before (a fading memory gains more), the count and the sessions grow, the
    decay clock restarts, and the level is recomputed."""
    r = retention_at(state, now)
    sessions = state.sessions if not session or session in state.sessions else (*state.sessions, session)
    access_count = state.access_count + 1
    return state.model_copy(
        update={
            "stability": grow_stability(state.stability, r, grade),
            "access_count": access_count,
            "sessions": sessions,
            "last_access": now,
            "memory_level": memory_level(
                category=state.category,
                access_count=access_count,
                session_count=len(sessions),
                age_days=elapsed_days(state.created_at, now),
            ),
        }
    )


def expiry_due(state: MemoryState, now: datetime) -> bool:
    """Whether the decay sweep at ``now`` expires this node (level as earned by ``now``)."""
    return should_expire(retention_at(state, now), level_at(state, now))


# --- the constants the Cypher that applies these rules needs --------------------------------


def cypher_params() -> dict[str, float | int]:
    """Every constant above, as the ``$parameters`` of the knowledge layer's Cypher
    (``cypher/knowledge.cypher``): the statements compute R, growth, levels and expiry with
    exactly these numbers, and their tests compare what they wrote with the functions here."""
    return {
        "w_fast": W_FAST,
        "w_slow": W_SLOW,
        "slow_factor": SLOW_HALF_LIFE_FACTOR,
        "min_stability": MIN_STABILITY_DAYS,
        "max_stability": MAX_STABILITY_DAYS,
        "verifying_sessions": VERIFYING_MIN_SESSIONS,
        "consolidated_age": CONSOLIDATED_MIN_AGE_DAYS,
        "consolidated_access": CONSOLIDATED_MIN_ACCESSES,
        "core_access": CORE_MIN_ACCESSES,
        "expire_below_retention": EXPIRE_BELOW_RETENTION,
        "expire_below_level": int(EXPIRE_BELOW_LEVEL),
        "fading_below_retention": FADING_BELOW_RETENTION,
        "score_retention_weight": MEMORY_SCORE_RETENTION_WEIGHT,
        "score_max": MEMORY_SCORE_MAX,
    }
