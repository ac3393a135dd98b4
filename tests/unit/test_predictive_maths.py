"""The predictive paradigm's pure maths: posteriors, the world model's context weights
and simulation, the self-model's calibration, and seed 000 pattern 3's decision at
its thresholds."""

from __future__ import annotations

import pytest

from ucma.config import PredictiveConfig
from ucma.paradigms.help_seeking import WEIGHTS, help_decision, rank_priorities
from ucma.paradigms.posterior import beta_estimate, dirichlet_estimates, unseen_probability
from ucma.paradigms.predictive_records import (
    Competence,
    HelpDecision,
    LearningPriority,
    Transition,
)
from ucma.paradigms.self_model import (
    calibration_error,
    estimate,
    is_weak,
    mode_applies,
    with_attempt,
)
from ucma.paradigms.world_model import (
    context_key,
    context_weight,
    pattern_fact,
    promotable,
    simulate,
    success_probability,
)


def _inputs(value: float) -> dict[str, float]:
    return dict.fromkeys(WEIGHTS, value)


def test_weights_are_the_seeds() -> None:
    assert WEIGHTS == {
        "competence": 0.30,
        "past_success_rate": 0.25,
        "strategy_success_rate": 0.25,
        "simulated_success": 0.20,
    }


@pytest.mark.parametrize(
    ("value", "decision"),
    [
        (0.75, HelpDecision.ATTEMPT_WITH_CAVEAT),  # exactly 0.75 is not above it
        (0.750000001, HelpDecision.ATTEMPT),
        (0.5, HelpDecision.ASK_FOR_HELP),
        (0.500000001, HelpDecision.ATTEMPT_WITH_CAVEAT),
        (0.25, HelpDecision.DECLINE),
        (0.250000001, HelpDecision.ASK_FOR_HELP),
        (0.0, HelpDecision.DECLINE),
        (1.0, HelpDecision.ATTEMPT),
    ],
)
def test_thresholds_at_their_boundaries(value: float, decision: HelpDecision) -> None:
    score, adjusted, chosen = help_decision(_inputs(value), 0)
    assert score == adjusted == pytest.approx(value)
    assert chosen is decision


def test_each_applicable_failure_mode_takes_a_tenth() -> None:
    # 0.85 with one mode is 0.75: a caveat; with none it attempts.
    assert help_decision(_inputs(0.85), 0)[2] is HelpDecision.ATTEMPT
    score, adjusted, decision = help_decision(_inputs(0.85), 1)
    assert (score, adjusted, decision) == (0.85, 0.75, HelpDecision.ATTEMPT_WITH_CAVEAT)
    assert help_decision(_inputs(0.85), 6)[1:] == (pytest.approx(0.25), HelpDecision.DECLINE)


def test_the_weighted_sum_mixes_the_inputs() -> None:
    inputs = {
        "competence": 1.0,
        "past_success_rate": 0.0,
        "strategy_success_rate": 1.0,
        "simulated_success": 0.0,
    }
    assert help_decision(inputs, 0)[:2] == (0.55, 0.55)
    with pytest.raises(ValueError):
        help_decision({"competence": 1.0}, 0)
    with pytest.raises(ValueError):
        help_decision(_inputs(1.5), 0)


def test_priorities_rank_by_impact_and_keep_ten() -> None:
    items = [LearningPriority("recurring_failure", f"p{i}", i / 20) for i in range(15)]
    ranked = rank_priorities(items)
    assert len(ranked) == 10 and [p.description for p in ranked[:2]] == ["p14", "p13"]


def test_beta_estimate_widens_with_little_evidence() -> None:
    none = beta_estimate(0, 0)
    assert none.mean == 0.5 and none.low == pytest.approx(0.025) and none.high == 0.975
    few, many = beta_estimate(2, 1), beta_estimate(200, 100)
    assert few.mean == pytest.approx(0.6) and many.mean == pytest.approx(201 / 302)
    assert few.width > 0.6 > 0.11 > many.width
    assert few.low < few.mean < few.high


def test_dirichlet_keeps_mass_for_the_unseen() -> None:
    one = dirichlet_estimates({"a": 1})
    assert one["a"].mean == pytest.approx(2 / 3)
    assert unseen_probability({"a": 1}) == pytest.approx(1 / 3)
    two = dirichlet_estimates({"a": 3, "b": 1, "c": 0})
    assert set(two) == {"a", "b"}
    assert two["a"].mean + two["b"].mean + unseen_probability({"a": 3, "b": 1}) == pytest.approx(1)
    with pytest.raises(ValueError):
        dirichlet_estimates({"a": -1})


def test_context_weight_counts_agreement_and_refuses_contradiction() -> None:
    assert context_weight({"a": "1"}, {"a": "1"}) == 1.0
    assert context_weight({"a": "1"}, {"a": "2"}) == 0.0
    assert context_weight({}, {"a": "1"}) == 0.5  # says less: half
    assert context_weight({"a": "1", "b": "2"}, {"a": "1"}) == pytest.approx(2 / 3)
    assert context_key({"B": "x", " a ": "Y"}) == "a=y; b=x"


def _transition(outcome: str, confirmations: int, errors: int = 0, **context: str) -> Transition:
    return Transition(
        id=f"tr_{outcome}_{len(context)}",
        user_id="u",
        action="submit",
        context=context,
        outcome=outcome,
        confirmations=confirmations,
        errors=errors,
        created_at=0.0,
        updated_at=0.0,
    )


def test_simulate_pools_compatible_contexts() -> None:
    transitions = [
        _transition("success", 4, 2, site="shop"),
        _transition("failure", 2, 4, site="shop"),
        _transition("failure", 9, 0, site="bank"),
    ]
    shop = simulate("submit", {"site": "shop"}, transitions)
    assert shop.predicted == "success" and shop.exact_support == 6
    assert shop.probability_of("success") == pytest.approx(5 / 9)
    assert success_probability(shop) == pytest.approx(5 / 8)
    assert len(shop.evidence) == 2  # the bank's contradicts the asked context
    anywhere = simulate("submit", {}, transitions)
    assert anywhere.predicted == "failure" and anywhere.support == pytest.approx(7.5)
    assert success_probability(simulate("submit", {}, [])) == 0.5


def test_promotion_needs_reliability_above_and_support() -> None:
    assert not promotable(_transition("ok", 9), 0.9, 10)  # 10/11 but 9 observations
    assert promotable(_transition("ok", 10), 0.9, 10)
    assert not promotable(_transition("ok", 8), 0.9, 8)  # 0.9 exactly
    assert pattern_fact(_transition("ok", 1, site="shop")) == (
        "submit",
        "leads to",
        "ok when site = shop",
    )


def test_calibration_error_and_weak_domains() -> None:
    config = PredictiveConfig()
    competence = Competence(id="c", user_id="u", capability="sql", created_at=0, updated_at=0)
    for success, predicted in ((True, 0.9), (False, 0.9), (True, 0.2), (False, 0.2)):
        competence, _ = with_attempt(competence, success, predicted, "test", None, 1.0, config)
    # Bin 0.9: predicted 0.9, half succeeded (0.4 off); bin 0.2: predicted 0.2, half (0.3 off).
    assert calibration_error(competence.bins) == pytest.approx(0.5 * 0.4 + 0.5 * 0.3)
    assert competence.brier_sum == pytest.approx(0.01 + 0.81 + 0.64 + 0.04)
    assert calibration_error([[0, 0, 0]]) is None
    assert estimate(3, 4).mean == pytest.approx(4 / 6)
    assert not is_weak(0, 4, config) and is_weak(1, 5, config) and not is_weak(3, 5, config)


def test_failure_modes_apply_when_most_of_their_words_are_in_the_task() -> None:
    assert mode_applies("recursive queries", "Write a recursive SQL query")
    assert not mode_applies("recursive queries", "Write an SQL query")
    assert mode_applies("timeouts", "the export timeout again")
    assert not mode_applies("the", "the task")  # no content words: never applies
