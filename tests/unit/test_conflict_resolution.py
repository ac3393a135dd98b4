"""Seed 002's decision tree and the predicate registry, as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ucma.config import ConflictConfig
from ucma.conflicts.predicates import PredicateRegistry, normalise_predicate
from ucma.conflicts.resolution import (
    Belief,
    Side,
    decide_memory_vs_db,
    decide_value_mismatch,
)
from ucma.errors import ConfigError
from ucma.types import ConflictType, FactStatus, ResolutionStrategy

CFG = ConflictConfig()
DAY = 86_400.0


def at(day: int, month: int = 10) -> float:
    return datetime(2024, month, day, tzinfo=UTC).timestamp()


# -- seed 002's worked examples, exact values -----------------------------------


def test_seed_example_1_memory_vs_db_trusts_the_database_and_halves_confidence():
    memory = Belief("in_fulfillment", 0.85, 0, at(1))
    decision = decide_memory_vs_db(memory, "shipped", CFG)
    assert decision.chosen_value == "shipped"
    assert decision.action == "decay_memory"
    assert decision.strategy is ResolutionStrategy.TRUST_DB
    assert decision.conflict_type is ConflictType.MEMORY_VS_DB
    assert decision.loser_status is FactStatus.CONFLICTED
    assert memory.confidence * decision.loser_confidence_factor == 0.425


def test_seed_example_2_newest_more_confident_more_reinforced_supersedes_old():
    thursday = Belief("Thursday", 0.75, 1, at(1))
    friday = Belief("Friday", 0.85, 2, at(10))
    decision = decide_value_mismatch(thursday, friday, CFG)
    assert decision.chosen_value == "Friday"
    assert decision.action == "supersede_old"
    assert decision.winner == Side.NEW
    assert decision.loser_status is FactStatus.SUPERSEDED
    assert decision.loser_confidence_factor == 1.0


def test_seed_example_3_similar_beliefs_ask_the_user():
    thursday = Belief("Thursday", 0.80, 2, at(5))
    friday = Belief("Friday", 0.82, 2, at(8))
    decision = decide_value_mismatch(thursday, friday, CFG)
    assert decision.action == "ask_user"
    assert decision.strategy is ResolutionStrategy.ASK_USER
    assert decision.winner is None and decision.chosen_value is None
    assert "need user input" in decision.rationale


# -- every branch of the tree, at and around its thresholds ----------------------


def test_temporal_gap_over_30_days_keeps_the_newest_even_if_less_confident():
    old = Belief("Berlin", 0.95, 6, at(1, 1))
    new = Belief("Paris", 0.5, 0, at(1, 1) + 31 * DAY)
    decision = decide_value_mismatch(old, new, CFG)
    assert (decision.strategy, decision.winner) == (ResolutionStrategy.KEEP_NEWEST, Side.NEW)
    assert decision.conflict_type is ConflictType.TEMPORAL
    # a late report of an older value loses to the newer one it contradicts
    late = decide_value_mismatch(new, old, CFG)
    assert (late.winner, late.chosen_value) == (Side.EXISTING, "Paris")


def test_exactly_30_days_is_not_a_temporal_gap():
    old = Belief("a", 0.8, 0, 0.0)
    new = Belief("b", 0.8, 0, 30 * DAY)
    assert decide_value_mismatch(old, new, CFG).strategy is ResolutionStrategy.ASK_USER


def test_confidence_gap_over_point_two_keeps_the_higher_and_decays_the_lower():
    old = Belief("a", 0.9, 0, 0.0)
    new = Belief("b", 0.6, 0, DAY)
    decision = decide_value_mismatch(old, new, CFG)
    assert decision.strategy is ResolutionStrategy.KEEP_HIGHEST_CONFIDENCE
    assert (decision.winner, decision.action) == (Side.EXISTING, "decay_lower")
    assert decision.loser_status is FactStatus.CONFLICTED
    assert decision.loser_confidence_factor == 0.8
    assert decision.rationale == "Higher confidence (0.90 vs 0.60)"


def test_a_confidence_gap_of_exactly_point_two_does_not_count():
    old = Belief("a", 0.85, 0, 0.0)
    new = Belief("b", 0.65, 0, DAY)  # 0.85 - 0.65 is 0.19999999999999996 in floats
    assert decide_value_mismatch(old, new, CFG).strategy is ResolutionStrategy.ASK_USER


def test_reinforcement_gap_of_three_keeps_the_more_reinforced():
    old = Belief("a", 0.7, 4, 0.0)
    new = Belief("b", 0.8, 1, DAY)
    decision = decide_value_mismatch(old, new, CFG)
    assert decision.strategy is ResolutionStrategy.KEEP_MOST_REINFORCED
    assert decision.winner == Side.EXISTING and decision.loser_confidence_factor == 1.0
    assert decision.rationale == "More reinforced (4 vs 1)"
    two = decide_value_mismatch(Belief("a", 0.7, 3, 0.0), Belief("b", 0.8, 1, DAY), CFG)
    assert two.strategy is ResolutionStrategy.ASK_USER


def test_below_minimum_confidence_the_new_value_simply_replaces():
    old = Belief("a", 0.35, 9, 0.0)
    new = Belief("b", 0.3, 0, DAY)
    decision = decide_value_mismatch(old, new, CFG)
    assert decision.strategy is ResolutionStrategy.REPLACE_LOW_CONFIDENCE
    assert (decision.winner, decision.loser_status) == (Side.NEW, FactStatus.SUPERSEDED)


def test_agreement_needs_every_signal_strictly_on_one_side():
    base = Belief("a", 0.75, 1, 0.0)
    assert decide_value_mismatch(base, Belief("b", 0.85, 1, DAY), CFG).asks_user
    assert decide_value_mismatch(base, Belief("b", 0.75, 2, DAY), CFG).asks_user
    older_but_stronger = decide_value_mismatch(
        Belief("a", 0.85, 2, 0.0), Belief("b", 0.75, 1, DAY), CFG
    )
    assert older_but_stronger.asks_user


def test_thresholds_come_from_config():
    aggressive = ConflictConfig(confidence_threshold=0.05, temporal_threshold_days=2)
    old = Belief("a", 0.8, 0, 0.0)
    assert decide_value_mismatch(old, Belief("b", 0.7, 0, DAY), aggressive).winner == Side.EXISTING
    far = decide_value_mismatch(old, Belief("b", 0.8, 0, 3 * DAY), aggressive)
    assert far.strategy is ResolutionStrategy.KEEP_NEWEST


def test_config_rejects_bad_factors_and_predicate_lists():
    with pytest.raises(ConfigError):
        ConflictConfig(review_rank_factor=1.5)
    with pytest.raises(ConfigError):
        ConflictConfig(functional_predicates="status")  # type: ignore[arg-type]
    assert ConflictConfig(functional_predicates=["a"]).functional_predicates == ("a",)


# -- predicate registry ------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicate", "functional", "reason"),
    [
        ("status", True, "built-in"),
        ("Delivery Pref", True, "built-in"),
        ("works-at", True, "built-in"),
        ("likes", False, "built-in"),
        ("visited", False, "built-in"),
        ("knows", False, "built-in"),
        ("order_status", True, "heuristic"),
        ("current_project", True, "heuristic"),
        ("preferred_airline", True, "heuristic"),
        ("has_pet", False, "heuristic"),
        ("hobbies", False, "built-in"),
        ("favourite_bands", False, "default"),
        ("programming_languages", False, "heuristic"),
        ("frobnicates", False, "default"),
    ],
)
def test_registry_defaults_and_heuristic(predicate, functional, reason):
    verdict = PredicateRegistry().classify(predicate)
    assert (verdict.functional, verdict.reason) == (functional, reason)


def test_configured_lists_win_and_unknown_default_is_configurable():
    registry = PredicateRegistry.from_config(
        ConflictConfig(
            functional_predicates=("likes", "frobnicates"),
            multi_valued_predicates=("status",),
            unknown_predicates_functional=True,
        )
    )
    assert registry.classify("likes").reason == "configured" and registry.is_functional("likes")
    assert not registry.is_functional("status")
    assert registry.is_functional("zorbs")  # unknown -> configured default
    assert normalise_predicate("  Delivery-Day ") == "delivery_day"
