"""kg_neo4j.knowledge: the pure rules of docs/knowledge-model.md (decay and growth, levels, expiry,
memory score, anti-fabrication).  No database, no mocks, time passed in explicitly."""

from __future__ import annotations

import inspect
import math
from datetime import UTC, datetime, timedelta

import pytest

from kg_neo4j.errors import ValidationError
from kg_neo4j.knowledge import decay
from kg_neo4j.knowledge.decay import (
    GRADE_MULTIPLIER,
    MAX_STABILITY_DAYS,
    MEMORY_SCORE_MAX,
    MIN_STABILITY_DAYS,
    W_FAST,
    W_SLOW,
    MemoryState,
    days_until_retention,
    elapsed_days,
    expiry_due,
    grow_stability,
    half_lives,
    initial_half_lives,
    initial_stability,
    is_fading,
    level_at,
    memory_level,
    memory_score,
    new_memory,
    record_access,
    retention,
    retention_at,
    retention_components,
    should_expire,
    stability_gain,
)
from kg_neo4j.knowledge.trust import (
    check_edge_source,
    check_level_keeps_trust,
    check_trust_change,
    require_quote,
)
from kg_neo4j.knowledge.vocabulary import (
    AccessGrade,
    Category,
    EdgeType,
    KnowledgeType,
    MemoryLevel,
    Trust,
    parse,
)

#: No Neo4j, no server process, no network: the fast tier (pytest -m unit).
pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CREATIVE = Category.CREATIVE
FUNDAMENTAL = Category.FUNDAMENTAL
ONE_SECOND = 1 / 86400


def days(n: float) -> timedelta:
    return timedelta(days=n)


# --- vocabulary -----------------------------------------------------------------------


def test_vocabulary_is_the_specs() -> None:
    assert {t.value for t in KnowledgeType} == {
        "rule",
        "procedure",
        "observation",
        "insight",
        "core",
        "preference",
    }
    assert {t.value for t in Trust} == {"principle", "pattern", "inference"}
    assert Trust.PRINCIPLE.rank > Trust.PATTERN.rank > Trust.INFERENCE.rank
    assert {c.value for c in Category} == {"fundamental", "creative"}
    assert {e.value for e in EdgeType} == {
        "must_precede",
        "requires_reading",
        "refines",
        "contradicts",
        "reason_for",
        "causes",
        "implies",
        "aligns_to",
        "tends_to",
        "observed_in",
    }
    assert (AccessGrade.APPLIED, AccessGrade.ACCESSED, AccessGrade.CORRECTED) == (4, 3, 1)
    assert [int(level) for level in MemoryLevel] == [1, 2, 3, 4]


def test_parse_accepts_values_and_names_the_allowed_ones() -> None:
    assert parse(Trust, "pattern", field="trust") is Trust.PATTERN
    assert parse(AccessGrade, 4, field="grade") is AccessGrade.APPLIED
    with pytest.raises(ValidationError, match="principle, pattern, inference") as err:
        parse(Trust, "expert", field="trust")
    assert err.value.field == "trust"
    for bad in (2, True, "3"):
        with pytest.raises(ValidationError, match="grade must be one of 4, 3, 1"):
            parse(AccessGrade, bad, field="grade")


# --- growth on access: the source's figures ------------------------------------------------


@pytest.mark.parametrize(("r", "figure"), [(0.9, 1.11), (0.3, 2.01)])
def test_stability_gain_reproduces_the_source_figures(r: float, figure: float) -> None:
    # "R = 0.9 (just accessed) → 1.11× growth", "R = 0.3 (almost forgotten) → 2.01× growth"
    assert GRADE_MULTIPLIER[AccessGrade.ACCESSED] == 1.0
    assert stability_gain(r, AccessGrade.ACCESSED) == pytest.approx(figure, abs=0.01)
    assert grow_stability(10.0, r, 3) == pytest.approx(10.0 * figure, abs=0.1)


@pytest.mark.parametrize(("r", "figure"), [(0.9, 1.11), (0.3, 2.01)])
def test_the_figures_hold_for_an_access_at_that_retention(r: float, figure: float) -> None:
    before = new_memory(Trust.PATTERN, CREATIVE, now=T0)
    when = T0 + days(days_until_retention(r, before.stability))
    assert retention_at(before, when) == pytest.approx(r, abs=1e-9)
    after = record_access(before, grade=AccessGrade.ACCESSED, now=when, session="s1")
    assert after.stability / before.stability == pytest.approx(figure, abs=0.01)
    assert (after.access_count, after.last_access, after.sessions) == (1, when, ("s1",))
    assert retention_at(after, when) == 1.0  # the decay clock restarts at the access


def test_grade_multipliers_order_and_a_correction_never_strengthens() -> None:
    m = GRADE_MULTIPLIER
    assert m[AccessGrade.APPLIED] > m[AccessGrade.ACCESSED] == 1.0 > m[AccessGrade.CORRECTED] > 0
    for i in range(101):
        r = i / 100
        assert stability_gain(r, AccessGrade.CORRECTED) < 1.0
        assert stability_gain(r, AccessGrade.APPLIED) > stability_gain(r, AccessGrade.ACCESSED) >= 1.0


def test_a_fading_memory_gains_more_than_a_fresh_one() -> None:
    gains = [stability_gain(i / 100, 3) for i in range(101)]
    assert all(a > b for a, b in zip(gains, gains[1:], strict=False))
    assert gains[-1] == 1.0  # R = 1: no desirable difficulty, no growth


def test_stability_is_capped_at_365_days() -> None:
    assert MAX_STABILITY_DAYS == 365.0
    assert grow_stability(300.0, 0.3, AccessGrade.APPLIED) == 365.0
    assert grow_stability(365.0, 0.0, AccessGrade.APPLIED) == 365.0
    state = new_memory(Trust.PRINCIPLE, CREATIVE, now=T0)
    now = T0
    for _ in range(40):  # recall each time it has faded to R = 0.3
        now += days(days_until_retention(0.3, state.stability))
        state = record_access(state, grade=AccessGrade.APPLIED, now=now)
        assert state.stability <= 365.0
    assert state.stability == 365.0
    with pytest.raises(ValueError):
        MemoryState(category=CREATIVE, stability=365.5, created_at=T0)


def test_repeated_corrections_keep_stability_positive() -> None:
    s = 3.0
    for _ in range(1000):
        s = grow_stability(s, 1.0, AccessGrade.CORRECTED)
    assert s == MIN_STABILITY_DAYS > 0


# --- initial stability and half-lives per knowledge type ------------------------------------

# The source's table: "Knowledge Type | Initial S | Fast Half-Life | Slow Half-Life"
CREATIVE_TABLE = [
    (Trust.PRINCIPLE, 30.0, 30.0, 300.0),  # "Expert's creative choice | 30 days | 30d | 300d"
    (Trust.PATTERN, 7.0, 7.0, 70.0),  # "Observed pattern | 7 days | 7d | 70d"
    (Trust.INFERENCE, 3.0, 3.0, 30.0),
]  # "AI inference | 3 days | 3d | 30d"


@pytest.mark.parametrize(("trust", "s", "fast", "slow"), CREATIVE_TABLE)
def test_initial_stability_and_half_lives_of_creative_knowledge(
    trust: Trust, s: float, fast: float, slow: float
) -> None:
    assert initial_stability(trust, CREATIVE) == s
    assert initial_half_lives(trust, "creative") == (fast, slow)
    assert new_memory(trust, CREATIVE, now=T0).stability == s


@pytest.mark.parametrize("trust", list(Trust))
def test_fundamentals_start_at_365_days_and_core(trust: Trust) -> None:
    # "Fundamental (has right/wrong) | 365 days"; level "4 Core | Fundamental, or ..."
    assert initial_stability(trust, FUNDAMENTAL) == 365.0
    assert initial_half_lives(trust, FUNDAMENTAL) == (math.inf, math.inf)
    state = new_memory(trust, FUNDAMENTAL, now=T0)
    assert (state.stability, state.memory_level) == (365.0, MemoryLevel.CORE)


@pytest.mark.parametrize(("trust", "s", "fast", "slow"), CREATIVE_TABLE)
def test_each_component_halves_over_its_half_life(trust: Trust, s: float, fast: float, slow: float) -> None:
    # The source's definition: "Fast decay (half-life = S days)", "Slow decay (half-life = S×10 days)":
    # each component halves over its own half-life, from any starting time.
    assert half_lives(s) == (fast, slow)
    assert retention_components(0.0, s) == (W_FAST, W_SLOW)
    assert retention_components(fast, s)[0] == pytest.approx(W_FAST / 2, rel=1e-12)
    assert retention_components(slow, s)[1] == pytest.approx(W_SLOW / 2, rel=1e-12)
    for t0 in (0.0, 0.5, s, 3 * s):
        assert retention_components(t0 + fast, s)[0] == pytest.approx(retention_components(t0, s)[0] / 2)
        assert retention_components(t0 + slow, s)[1] == pytest.approx(retention_components(t0, s)[1] / 2)
    # so R itself at the half-lives is exactly:
    assert retention(fast, s, category=CREATIVE) == pytest.approx(W_FAST / 2 + W_SLOW * 2**-0.1, rel=1e-12)
    assert retention(slow, s, category=CREATIVE) == pytest.approx(W_FAST * 2**-10 + W_SLOW / 2, rel=1e-12)


def test_weights_sum_to_one_and_fresh_knowledge_is_fully_retained() -> None:
    assert W_FAST + W_SLOW == 1.0 and W_FAST > W_SLOW > 0
    for s in (0.5, 3.0, 30.0, 365.0):
        assert retention(0.0, s, category=CREATIVE) == 1.0


@pytest.mark.parametrize("s", [3.0, 7.0, 30.0])
def test_two_component_shape_keeps_a_long_tail(s: float) -> None:
    single = 2**-10  # one exponential with half-life S, at t = 10 S
    r = retention(10 * s, s, category=CREATIVE)
    assert r > 100 * single
    assert r == pytest.approx(W_SLOW / 2, abs=0.001)
    # and early on it forgets faster than the slow curve alone would
    assert retention(s, s, category=CREATIVE) < 2**-0.1


@pytest.mark.parametrize("t", [0.0, 1.0, 365.0, 10_000.0, 1e9])
def test_fundamentals_never_decay(t: float) -> None:
    for s in (MIN_STABILITY_DAYS, 3.0, 365.0):
        assert retention(t, s, category=FUNDAMENTAL) == 1.0
    state = new_memory(Trust.INFERENCE, FUNDAMENTAL, now=T0)
    later = T0 + days(min(t, 1e6))
    assert retention_at(state, later) == 1.0
    assert not expiry_due(state, later)


# --- monotonicity -------------------------------------------------------------------------


def test_retention_decreases_in_time_and_increases_in_stability() -> None:
    ts = [0.0, 0.1, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 365.0, 1000.0]
    ss = [MIN_STABILITY_DAYS, 0.5, 1.0, 3.0, 7.0, 30.0, 100.0, 365.0]
    for s in ss:
        rs = [retention(t, s, category=CREATIVE) for t in ts]
        assert all(0.0 <= r <= 1.0 for r in rs)
        assert all(a > b for a, b in zip(rs, rs[1:], strict=False))
    for t in ts[1:]:
        rs = [retention(t, s, category=CREATIVE) for s in ss]
        assert all(a < b for a, b in zip(rs, rs[1:], strict=False))


@pytest.mark.parametrize("target", [0.9, 0.5, 0.3, 0.02, 0.001])
def test_days_until_retention_inverts_retention(target: float) -> None:
    for s in (3.0, 7.0, 30.0):
        t = days_until_retention(target, s)
        assert retention(t, s, category=CREATIVE) == pytest.approx(target, rel=1e-7)
    assert days_until_retention(1.0, 3.0) == 0.0


# --- memory levels --------------------------------------------------------------------------


def level(
    *, access: int = 0, sessions: int = 0, age: float = 0.0, category: Category = CREATIVE
) -> MemoryLevel:
    return memory_level(category=category, access_count=access, session_count=sessions, age_days=age)


def test_level_1_is_the_default() -> None:
    assert level() is MemoryLevel.NEW
    assert new_memory(Trust.PRINCIPLE, CREATIVE, now=T0, session="s").memory_level is MemoryLevel.NEW


def test_level_2_at_three_sessions_not_two() -> None:
    # "2 Verifying | Accessed across 3+ sessions"
    assert level(access=40, sessions=2, age=13.9) is MemoryLevel.NEW
    assert level(access=3, sessions=3) is MemoryLevel.VERIFYING


def test_level_3_at_14_days_and_5_accesses_not_before() -> None:
    # "3 Consolidated | 14 days + access ≥ 5"
    assert level(access=5, age=14.0) is MemoryLevel.CONSOLIDATED
    assert level(access=4, age=14.0) is MemoryLevel.NEW
    assert level(access=5, age=14.0 - ONE_SECOND) is MemoryLevel.NEW
    assert level(access=49, sessions=1, age=10_000.0) is MemoryLevel.CONSOLIDATED


def test_level_4_at_50_accesses_not_49_or_fundamental() -> None:
    # "4 Core | Fundamental, or access ≥ 50"
    assert level(access=49, sessions=49, age=13.0) is MemoryLevel.VERIFYING
    assert level(access=50) is MemoryLevel.CORE
    assert level(category=FUNDAMENTAL) is MemoryLevel.CORE


def test_promotions_through_accesses_at_their_thresholds() -> None:
    state = new_memory(Trust.INFERENCE, CREATIVE, now=T0, session="s1")
    state = record_access(state, grade=3, now=T0 + days(1), session="s1")
    state = record_access(state, grade=3, now=T0 + days(2), session="s2")
    assert state.memory_level is MemoryLevel.NEW  # two sessions
    state = record_access(state, grade=3, now=T0 + days(3), session="s2")
    assert (state.memory_level, len(state.sessions)) == (MemoryLevel.NEW, 2)  # same session again
    state = record_access(state, grade=3, now=T0 + days(4), session="s3")
    assert state.memory_level is MemoryLevel.VERIFYING  # third session
    fifth_early = record_access(state, grade=3, now=T0 + days(14) - timedelta(seconds=1))
    assert (fifth_early.access_count, fifth_early.memory_level) == (5, MemoryLevel.VERIFYING)
    fifth = record_access(state, grade=3, now=T0 + days(14))
    assert (fifth.access_count, fifth.memory_level) == (5, MemoryLevel.CONSOLIDATED)
    # age alone completes the condition: the sweep's level_at sees it without an access
    assert level_at(fifth_early, T0 + days(14) - timedelta(seconds=1)) is MemoryLevel.VERIFYING
    assert level_at(fifth_early, T0 + days(14)) is MemoryLevel.CONSOLIDATED


def test_an_inference_accessed_50_times_is_core() -> None:
    # "An inference node accessed 50 times reaches level 4 — as durable as a fundamental principle."
    state = new_memory(Trust.INFERENCE, CREATIVE, now=T0)
    for i in range(1, 50):
        state = record_access(state, grade=3, now=T0 + timedelta(hours=i), session="only")
    assert (state.access_count, state.memory_level) == (49, MemoryLevel.NEW)
    state = record_access(state, grade=3, now=T0 + timedelta(hours=50), session="only")
    assert (state.access_count, state.memory_level) == (50, MemoryLevel.CORE)


# --- expiry ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lvl", list(MemoryLevel))
def test_expiry_only_below_level_3_and_below_r_002(lvl: MemoryLevel) -> None:
    # "R < 0.02 and level < 3 → expire"
    assert should_expire(0.0199, lvl) is (lvl < 3)
    assert should_expire(0.0, lvl) is (lvl < 3)
    assert should_expire(0.02, lvl) is False
    assert should_expire(1.0, lvl) is False


def test_untouched_inference_expires_when_r_crosses_002() -> None:
    state = new_memory(Trust.INFERENCE, CREATIVE, now=T0)
    line = days_until_retention(0.02, state.stability)  # about 117 days
    assert 100 < line < 130
    assert not expiry_due(state, T0 + days(line - 0.01))
    assert expiry_due(state, T0 + days(line + 0.01))


def test_consolidated_knowledge_never_expires() -> None:
    state = new_memory(Trust.INFERENCE, CREATIVE, now=T0)
    for i in range(5):
        state = record_access(state, grade=1, now=T0 + days(10 + i))  # corrected: S shrinks
    assert state.memory_level is MemoryLevel.CONSOLIDATED
    much_later = T0 + days(100_000)
    assert retention_at(state, much_later) < 0.02
    assert not expiry_due(state, much_later)


# --- memory score ---------------------------------------------------------------------------


def test_memory_score_is_r_times_01_plus_level_bonus() -> None:
    # "memoryScore | R × 0.1 + levelBonus"
    assert memory_score(0.0, MemoryLevel.NEW) == 0.0
    assert memory_score(1.0, MemoryLevel.NEW) == pytest.approx(0.1)
    assert memory_score(1.0, MemoryLevel.CORE) == pytest.approx(MEMORY_SCORE_MAX) == pytest.approx(0.2)
    for r in (0.0, 0.3, 0.9):
        scores = [memory_score(r, lvl) for lvl in MemoryLevel]
        assert all(a < b for a, b in zip(scores, scores[1:], strict=False))
        assert memory_score(r, 2) - memory_score(r, 1) == pytest.approx(
            decay.LEVEL_BONUS[MemoryLevel.VERIFYING]
        )
    assert memory_score(0.9, 2) > memory_score(0.3, 2)


def test_fading_report_threshold() -> None:
    # "Decay report — show nodes with R < 0.3 (actively decaying)"
    assert is_fading(0.29) and not is_fading(0.3)


# --- input checks -----------------------------------------------------------------------------


def test_bad_numbers_and_naive_datetimes_are_rejected() -> None:
    with pytest.raises(ValidationError, match="t_days"):
        retention(-1.0, 3.0, category=CREATIVE)
    with pytest.raises(ValidationError, match="stability"):
        retention(1.0, 0.0, category=CREATIVE)
    with pytest.raises(ValidationError, match="retention"):
        stability_gain(1.5, 3)
    with pytest.raises(ValidationError, match="retention"):
        should_expire(math.nan, 1)
    with pytest.raises(ValidationError, match="timezone"):
        elapsed_days(datetime(2026, 1, 1), T0)  # naive on purpose
    assert elapsed_days(T0 + days(1), T0) == 0.0  # a clock set back never yields negative time
    assert elapsed_days(T0, T0 + timedelta(hours=36)) == 1.5


# --- anti-fabrication -------------------------------------------------------------------------


@pytest.mark.parametrize("quote", [None, "", "   \n"])
def test_a_principle_without_the_experts_words_is_rejected(quote: str | None) -> None:
    with pytest.raises(ValidationError, match="exact words") as err:
        require_quote(Trust.PRINCIPLE, quote)
    assert err.value.field == "quote"


def test_principles_with_a_quote_and_other_trust_without_one_are_accepted() -> None:
    require_quote("principle", "Always check the tempo map before editing.")
    for trust in (Trust.PATTERN, Trust.INFERENCE):
        require_quote(trust, None)
        require_quote(trust, "an optional quote")


@pytest.mark.parametrize("edge", ["must_precede", "reason_for"])
def test_an_inference_cannot_originate_must_precede_or_reason_for(edge: str) -> None:
    with pytest.raises(ValidationError, match=f"inference.*{edge}") as err:
        check_edge_source(edge, Trust.INFERENCE)
    assert err.value.field == "relationType"
    for trust in (Trust.PRINCIPLE, Trust.PATTERN):
        assert check_edge_source(edge, trust) is EdgeType(edge)


def test_an_inference_may_originate_every_other_edge_type() -> None:
    for edge in EdgeType:
        if edge not in (EdgeType.MUST_PRECEDE, EdgeType.REASON_FOR):
            assert check_edge_source(edge.value, "inference") is edge
    with pytest.raises(ValidationError, match="relationType must be one of"):
        check_edge_source("knows", Trust.PRINCIPLE)


@pytest.mark.parametrize(
    ("current", "proposed"),
    [
        (Trust.INFERENCE, Trust.PRINCIPLE),
        (Trust.INFERENCE, Trust.PATTERN),
        (Trust.PATTERN, Trust.PRINCIPLE),
    ],
)
def test_trust_never_upgrades_by_itself(current: Trust, proposed: Trust) -> None:
    with pytest.raises(ValidationError, match="never upgrades by itself") as err:
        check_trust_change(current, proposed, expert_confirmed=False, quote="even with a quote")
    assert err.value.field == "trust"


def test_an_expert_upgrade_to_principle_needs_their_quote() -> None:
    with pytest.raises(ValidationError, match="exact words"):
        check_trust_change(Trust.INFERENCE, Trust.PRINCIPLE, expert_confirmed=True)
    assert (
        check_trust_change(
            Trust.INFERENCE,
            Trust.PRINCIPLE,
            expert_confirmed=True,
            quote="Yes, that is right: bass before drums.",
        )
        is Trust.PRINCIPLE
    )
    assert check_trust_change("inference", "pattern", expert_confirmed=True) is Trust.PATTERN


def test_keeping_or_lowering_trust_needs_no_expert() -> None:
    for cur in Trust:
        assert check_trust_change(cur, cur, expert_confirmed=False) is cur
    assert check_trust_change(Trust.PRINCIPLE, Trust.INFERENCE, expert_confirmed=False) is Trust.INFERENCE
    assert check_trust_change(Trust.PATTERN, Trust.INFERENCE, expert_confirmed=False) is Trust.INFERENCE


def test_level_is_independent_of_trust() -> None:
    # Nothing that computes a level can see trust ...
    assert "trust" not in inspect.signature(memory_level).parameters
    assert "trust" not in MemoryState.model_fields
    # ... a principle starts as new as an inference, and an inference can reach core:
    assert {new_memory(t, CREATIVE, now=T0).memory_level for t in Trust} == {MemoryLevel.NEW}
    check_level_keeps_trust(trust_before="inference", trust_after="inference", level_before=3, level_after=4)
    check_level_keeps_trust(
        trust_before=Trust.PATTERN, trust_after=Trust.PATTERN, level_before=1, level_after=2
    )
    # a write that changes trust without a level change is check_trust_change's business, not this rule's
    check_level_keeps_trust(
        trust_before=Trust.PATTERN, trust_after=Trust.INFERENCE, level_before=2, level_after=2
    )


@pytest.mark.parametrize("after", [Trust.PRINCIPLE, Trust.PATTERN])
def test_a_promotion_that_relabels_trust_is_rejected(after: Trust) -> None:
    with pytest.raises(ValidationError, match="independent") as err:
        check_level_keeps_trust(
            trust_before=Trust.INFERENCE, trust_after=after, level_before=3, level_after=4
        )
    assert err.value.field == "trust"
