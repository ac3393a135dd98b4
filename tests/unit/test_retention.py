"""Retention maths: Ebbinghaus curve, spacing effect, R19 initial stability, R20 activity."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.errors import ValidationError
from ucma.memory.retention import (
    DECAY_RATES,
    MIN_STABILITY_DAYS,
    SECONDS_PER_DAY,
    RetentionState,
    after_outcome,
    decay_rate_table,
    initial_stability,
    outcome_stability,
    reinforced_stability,
    retention,
    reviewed,
)
from ucma.types import RetentionInfo

T0 = 1_700_000_000.0


def test_retention_formula() -> None:
    assert retention(1.0, 0.0) == 1.0
    assert retention(1.0, 1.0) == pytest.approx(math.exp(-1.0))
    assert retention(7.0, 7.0) == pytest.approx(math.exp(-1.0))
    assert retention(2.0, 1.0) == pytest.approx(math.exp(-0.5))
    assert retention(5.0, -3.0) == 1.0  # elapsed clamped to 0
    assert retention(0.0, 1e-7) == pytest.approx(math.exp(-1e-7 / MIN_STABILITY_DAYS))
    assert retention(-4.0, 0.0) == 1.0
    assert retention(1.0, math.inf) == 0.0


def test_reinforced_stability_formula() -> None:
    assert reinforced_stability(2.0, 0.2, 0.5) == pytest.approx(2.5)  # within a day: base boost
    assert reinforced_stability(2.0, 5.0, 0.5) == pytest.approx(4.5)
    assert reinforced_stability(2.0, -1.0, 0.5) == pytest.approx(2.5)
    assert reinforced_stability(2.0, 5.0, 0.0) == pytest.approx(2.0)


def test_spacing_effect_a_late_review_boosts_more() -> None:
    state = RetentionState("m", stability=3.0, last_reviewed=T0)
    immediate = state.reinforced(T0 + 60.0)
    spaced = state.reinforced(T0 + 5 * SECONDS_PER_DAY)
    assert immediate.stability == pytest.approx(3.5)
    assert spaced.stability == pytest.approx(5.5)
    assert spaced.stability > immediate.stability
    assert spaced.review_count == immediate.review_count == 1
    assert spaced.last_reviewed == T0 + 5 * SECONDS_PER_DAY
    assert state.stability == 3.0  # transitions return new states


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_initial_stability_reproduces_r19(level: int) -> None:
    period, rate = DECAY_RATES[level]
    assert retention(initial_stability(level), period) == pytest.approx(1.0 - rate, abs=1e-9)
    state = RetentionState.initial("m", level, T0)
    assert state.retention_at(T0 + period * SECONDS_PER_DAY) == pytest.approx(1.0 - rate, abs=1e-9)


def test_decay_rate_table_is_r19_and_a_copy() -> None:
    table = decay_rate_table()
    assert table == {1: (1.0, 0.10), 2: (7.0, 0.05), 3: (30.0, 0.02), 4: (365.0, 0.01)}
    table[1] = (0.0, 0.0)
    assert decay_rate_table()[1] == (1.0, 0.10)
    stabilities = [initial_stability(level) for level in (1, 2, 3, 4)]
    assert stabilities == sorted(stabilities)
    assert stabilities[0] == pytest.approx(9.491221581, abs=1e-6)


def test_retention_state_over_time_and_clock_skew() -> None:
    state = RetentionState("m", stability=2.0, last_reviewed=T0)
    assert state.retention_at(T0) == 1.0
    assert state.retention_at(T0 + 2 * SECONDS_PER_DAY) == pytest.approx(math.exp(-1.0))
    assert state.retention_at(T0 - SECONDS_PER_DAY) == 1.0
    skewed = state.reinforced(T0 - SECONDS_PER_DAY)
    assert skewed.last_reviewed == T0
    assert skewed.stability == pytest.approx(2.5)


def test_invalid_arguments_raise_validation_error() -> None:
    for level in (0, 5, True, 2.0, "1"):
        with pytest.raises(ValidationError):
            initial_stability(level)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        retention(math.nan, 1.0)
    with pytest.raises(ValidationError):
        retention(math.inf, 1.0)
    with pytest.raises(ValidationError):
        reinforced_stability(1.0, 1.0, -0.5)
    with pytest.raises(ValidationError):
        RetentionState("m", stability=0.0, last_reviewed=T0)
    with pytest.raises(ValidationError):
        RetentionState("", stability=1.0, last_reviewed=T0)
    with pytest.raises(ValidationError):
        RetentionState("m", stability=1.0, last_reviewed=T0, review_count=-1)


stabilities = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
elapsed = st.floats(min_value=-10.0, max_value=1e6, allow_nan=False)


@given(stabilities, elapsed)
def test_retention_is_a_probability(stability: float, days: float) -> None:
    value = retention(stability, days)
    assert 0.0 <= value <= 1.0
    if max(days, 0.0) / max(stability, MIN_STABILITY_DAYS) < 700.0:
        assert value > 0.0


@given(stabilities, elapsed, elapsed)
def test_retention_never_increases_with_time(stability: float, a: float, b: float) -> None:
    earlier, later = sorted((a, b))
    assert retention(stability, earlier) >= retention(stability, later)


@given(
    st.floats(min_value=MIN_STABILITY_DAYS, max_value=1e5),
    st.floats(min_value=0.0, max_value=1e4),
    st.floats(min_value=0.0, max_value=1e4),
)
def test_reinforcement_never_lowers_stability(stability: float, a: float, b: float) -> None:
    shorter, longer = sorted((a, b))
    assert reinforced_stability(stability, shorter) >= stability
    assert reinforced_stability(stability, longer) >= reinforced_stability(stability, shorter)


def test_outcomes_extend_and_shorten_stability_by_weight() -> None:
    assert outcome_stability(10.0, 1.0) == pytest.approx(15.0)
    assert outcome_stability(10.0, -1.0) == pytest.approx(10.0 / 1.5)
    assert outcome_stability(10.0, 0.8, 0.5) == pytest.approx(12.0)
    assert outcome_stability(10.0, 1.0, 0.1) == pytest.approx(10.5)  # identity level: R17's 0.1
    assert outcome_stability(10.0, 0.0, 1.0) == 10.0
    assert outcome_stability(10.0, 1.0, 1.0, gain=0.0) == 10.0
    with pytest.raises(ValidationError):
        outcome_stability(10.0, 2.0)
    with pytest.raises(ValidationError):
        outcome_stability(10.0, 0.5, 1.0, gain=-1.0)


@given(
    st.floats(0.01, 1e5),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_opposite_outcomes_cancel(stability: float, quality: float, weight: float) -> None:
    there = outcome_stability(stability, quality, weight)
    assert outcome_stability(there, -quality, weight) == pytest.approx(stability)
    assert there >= stability


def test_review_and_outcome_transitions_of_a_stored_state() -> None:
    state = RetentionInfo("m", 3.0, T0, 2)
    later = reviewed(state, T0 + 5 * SECONDS_PER_DAY)
    assert later == RetentionInfo("m", reinforced_stability(3.0, 5.0), T0 + 5 * SECONDS_PER_DAY, 3)
    assert reviewed(state, T0 - SECONDS_PER_DAY).last_reviewed == T0  # the clock never goes back
    good = after_outcome(state, 1.0, 1.0)
    assert good == RetentionInfo("m", 4.5, T0, 2)  # not a review: clock and count stay
    assert after_outcome(state, -1.0, 1.0).stability == pytest.approx(2.0)
