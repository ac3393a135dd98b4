"""Seed 003's salience maths (R10, R15 to R18), as pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.config import SalienceConfig
from ucma.errors import ValidationError
from ucma.learning.salience import (
    attributions,
    bounded_update,
    normalise_scores,
    salience_delta,
    temporal_dampening,
)

CFG = SalienceConfig()


def test_seed_worked_example_redis_memory() -> None:
    """Base 0.6, contribution 0.8, quality +0.8, level 2 -> delta 0.032, effective 0.632."""
    delta = salience_delta(0.8, 0.8, 2, CFG)
    assert delta == pytest.approx(0.032)
    step = bounded_update(delta, 0.0, 0.6, CFG)
    assert step.applied == pytest.approx(0.032)
    assert 0.6 + step.new_adjustment == pytest.approx(0.632)


def test_dampening_table_wins_over_one_over_level() -> None:
    assert [temporal_dampening(level, CFG) for level in (1, 2, 3, 4)] == [1.0, 0.5, 0.25, 0.1]
    # R15's 1/level would give 1/3 and 1/4 at levels 3 and 4.
    assert salience_delta(1.0, 1.0, 3, CFG) == pytest.approx(0.025)
    assert salience_delta(1.0, 1.0, 4, CFG) == pytest.approx(0.01)


def test_single_update_is_capped_at_point_one() -> None:
    wide = SalienceConfig(learning_rate=0.5)
    raw = salience_delta(1.0, 1.0, 1, wide)
    assert raw == pytest.approx(0.5)
    assert bounded_update(raw, 0.0, 0.5, wide).applied == pytest.approx(0.1)
    assert bounded_update(-raw, 0.0, 0.5, wide).applied == pytest.approx(-0.1)


def test_cumulative_adjustment_stays_within_half() -> None:
    adjustment = 0.0
    for _ in range(20):
        adjustment = bounded_update(0.08, adjustment, 0.3, CFG).new_adjustment
    assert adjustment == pytest.approx(0.5)
    for _ in range(40):
        adjustment = bounded_update(-0.08, adjustment, 0.7, CFG).new_adjustment
    assert adjustment == pytest.approx(-0.5)


def test_effective_salience_stays_within_zero_and_one() -> None:
    high = bounded_update(0.1, 0.05, 0.95, CFG)
    assert 0.95 + high.new_adjustment == pytest.approx(1.0)
    assert high.applied == pytest.approx(0.0)
    low = bounded_update(-0.1, 0.0, 0.04, CFG)
    assert 0.04 + low.new_adjustment == pytest.approx(0.0)
    assert low.applied == pytest.approx(-0.04)


@given(
    raw=st.floats(-1, 1),
    previous=st.floats(-0.5, 0.5),
    base=st.floats(0, 1),
)
def test_bounds_hold_for_any_input(raw: float, previous: float, base: float) -> None:
    previous = max(-base, min(1 - base, previous))
    step = bounded_update(raw, previous, base, CFG)
    assert abs(step.applied) <= 0.1 + 1e-12
    assert -0.5 - 1e-12 <= step.new_adjustment <= 0.5 + 1e-12
    assert -1e-12 <= base + step.new_adjustment <= 1 + 1e-12
    assert step.new_adjustment == pytest.approx(previous + step.applied)


def test_scores_are_normalised_with_a_floor() -> None:
    assert normalise_scores([0.8, 0.2]) == pytest.approx([0.8, 0.2])
    assert normalise_scores([3.0, 1.0]) == pytest.approx([0.75, 0.25])
    shares = normalise_scores([1000.0, 1.0, 0.0])
    assert sum(shares) == pytest.approx(1.0)
    assert min(shares) == pytest.approx(0.01)
    assert normalise_scores([0.0, 0.0]) == [0.5, 0.5]


@pytest.mark.parametrize("bad", [[], [-1.0], [float("nan")], [1.0] * 101])
def test_bad_scores_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValidationError):
        normalise_scores(bad)


def test_attribution_is_bounded() -> None:
    assert attributions({"a": 0.001, "b": 1.0}, CFG) == {"a": 0.01, "b": 1.0}


def test_salient_ranking_uses_the_learned_adjustment() -> None:
    from ucma.config import RetrievalConfig
    from ucma.retrieval.ranking import RankInputs, rank_score

    cfg = RetrievalConfig()
    plain = RankInputs(relevance=0.9, salience=0.5, age_days=None, retention=None)
    assert rank_score("salient", plain, cfg) == pytest.approx(0.9)  # no outcome yet
    # A misleading memory (adjustment -0.24, effective 0) falls behind a
    # helpful one that is 20% less relevant; with salience_weight alone it would not.
    misleading = RankInputs(
        relevance=1.0, salience=0.0, age_days=None, retention=None, outcome_adjustment=-0.24
    )
    helpful = RankInputs(relevance=0.8, salience=0.24, age_days=None, retention=None)
    assert rank_score("salient", misleading, cfg) < rank_score("salient", helpful, cfg)
    weak = RetrievalConfig(outcome_weight=0.0, salience_weight=0.2)
    assert rank_score("salient", misleading, weak) > rank_score("salient", helpful, weak)
