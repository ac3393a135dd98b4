"""Pure parts of the lifecycle: forgetting policy, compression, Hebb, clock."""

from __future__ import annotations

import math

import pytest

from ucma.config import ForgettingConfig
from ucma.errors import ValidationError
from ucma.lifecycle.clock import FunctionClock, SimulatedClock, SystemClock, as_clock
from ucma.lifecycle.consolidation import compression_threshold, hebbian_weight
from ucma.lifecycle.dedup import values_of
from ucma.lifecycle.forgetting import assess, retention_threshold
from ucma.memory.retention import SECONDS_PER_DAY, initial_stability
from ucma.types import MemoryKind, MemoryVitals

CFG = ForgettingConfig()
NOW = 1_700_000_000.0


def vitals(**overrides: object) -> MemoryVitals:
    fields: dict[str, object] = {
        "memory_id": "m",
        "kind": MemoryKind.EPISODIC,
        "temporal_level": 1,
        "effective_salience": 0.5,
        "created_at": 0.0,  # stored long ago: disuse counts from the last review
        "stability": initial_stability(1),
        "last_reviewed": NOW,
    }
    fields.update(overrides)
    return MemoryVitals(**fields)  # type: ignore[arg-type]


def days_ago(days: float) -> float:
    return NOW - days * SECONDS_PER_DAY


def test_level_one_is_forgotten_after_about_22_days_without_review() -> None:
    # exp(-t / 9.49) < 0.10  <=>  t > 9.49 * ln 10 = 21.85 days
    assert not assess(vitals(last_reviewed=days_ago(21.5)), NOW, CFG, node_count=1000).forget
    verdict = assess(vitals(last_reviewed=days_ago(22.5)), NOW, CFG, node_count=1000)
    assert verdict.forget and "retention" in verdict.reason
    assert verdict.retention == pytest.approx(math.exp(-22.5 / initial_stability(1)))


def test_level_four_is_never_pruned() -> None:
    old = vitals(temporal_level=4, effective_salience=0.0, last_reviewed=days_ago(10**6))
    verdict = assess(old, NOW, CFG, node_count=1000)
    assert not verdict.forget and "level 4" in verdict.reason


def test_fact_threshold_scales_with_confidence() -> None:
    shaky = vitals(kind=MemoryKind.SEMANTIC, confidence=0.3)
    assert retention_threshold(shaky, CFG) == pytest.approx(0.10 / 0.3)
    assert retention_threshold(vitals(kind=MemoryKind.SEMANTIC, confidence=0.01), CFG) == 1.0
    # 15 days: retention 0.206 keeps a sure fact, forgets a shaky one.
    sure = vitals(kind=MemoryKind.SEMANTIC, confidence=1.0, last_reviewed=days_ago(15))
    assert not assess(sure, NOW, CFG, node_count=1000).forget
    assert assess(
        vitals(kind=MemoryKind.SEMANTIC, confidence=0.3, last_reviewed=days_ago(15)),
        NOW,
        CFG,
        node_count=1000,
    ).forget


def test_protections() -> None:
    stale = {"last_reviewed": days_ago(400), "effective_salience": 0.01}
    good_procedure = vitals(kind=MemoryKind.PROCEDURAL, status="active", success_rate=0.6, **stale)
    bad_procedure = vitals(kind=MemoryKind.PROCEDURAL, status="active", success_rate=0.5, **stale)
    draft = vitals(kind=MemoryKind.PROCEDURAL, status="draft", success_rate=0.9, **stale)
    valid = vitals(kind=MemoryKind.LEARNING, validated=True, confidence=0.61, **stale)
    unproven = vitals(kind=MemoryKind.LEARNING, validated=False, confidence=0.9, **stale)
    assert not assess(good_procedure, NOW, CFG, node_count=1000).forget
    assert assess(bad_procedure, NOW, CFG, node_count=1000).forget
    assert assess(draft, NOW, CFG, node_count=1000).forget
    assert not assess(valid, NOW, CFG, node_count=1000).forget
    assert assess(unproven, NOW, CFG, node_count=1000).forget


def test_pagerank_protection_is_relative_to_graph_size() -> None:
    stale = {"last_reviewed": days_ago(400)}
    # Uniform share in a 10-node graph: 0.1 is not "central".
    assert assess(vitals(pagerank=0.1, **stale), NOW, CFG, node_count=10).forget
    verdict = assess(vitals(pagerank=0.35, **stale), NOW, CFG, node_count=10)
    assert not verdict.forget and "PageRank" in verdict.reason
    # In a large graph seed 001's absolute 0.01 applies.
    assert not assess(vitals(pagerank=0.011, **stale), NOW, CFG, node_count=10_000).forget
    assert assess(vitals(pagerank=0.009, **stale), NOW, CFG, node_count=10_000).forget


def test_rules_select_salience_or_retention() -> None:
    low = vitals(effective_salience=0.04)
    assert assess(low, NOW, CFG, node_count=1000, rules={"salience"}).forget
    assert not assess(low, NOW, CFG, node_count=1000, rules={"retention"}).forget
    decayed = vitals(last_reviewed=days_ago(30))
    assert not assess(decayed, NOW, CFG, node_count=1000, rules={"salience"}).forget
    assert not assess(vitals(stability=None), NOW, CFG, node_count=1000).forget


def test_compression_threshold_and_hebb() -> None:
    assert compression_threshold(0, 0.3, 0.4) == pytest.approx(0.3)
    assert compression_threshold(50, 0.3, 0.4) == pytest.approx(0.5)
    assert compression_threshold(500, 0.3, 0.4) == pytest.approx(0.7)
    assert hebbian_weight(0.0, 3, 0.1, 0.9) == pytest.approx(0.3)
    assert hebbian_weight(0.85, 3, 0.1, 0.9) == pytest.approx(0.9)
    assert hebbian_weight(0.95, 1, 0.1, 0.9) == 0.95  # never weakens an existing edge


def test_values_guard() -> None:
    assert values_of("at 3 pm, room 12") == values_of("room 12 at 3 pm")
    assert values_of("standup 3") != values_of("standup 4")
    assert values_of("Tomás climbs on Thursdays.") != values_of("Tomás climbs on Fridays.")
    assert values_of("Happy to help, Dana!") == values_of("happy to help, Dana.")
    assert values_of("I think I love it.") == values_of("I think I love it")


def test_clocks() -> None:
    clock = SimulatedClock(100.0)
    assert clock() == clock.now() == 100.0
    assert clock.advance(days=1, hours=1, seconds=1) == 100.0 + 86_400 + 3_600 + 1
    with pytest.raises(ValidationError):
        clock.advance(seconds=-1)
    with pytest.raises(ValidationError):
        clock.set(0.0)
    assert as_clock(None).__class__ is SystemClock
    assert as_clock(clock) is clock
    wrapped = as_clock(lambda: 42.0)
    assert isinstance(wrapped, FunctionClock) and wrapped.now() == 42.0
    with pytest.raises(ValidationError):
        as_clock(3)  # type: ignore[arg-type]


def test_threshold_is_importance_weighted() -> None:
    # Neutral at salience 0.5; explicit statements (1.0) need only a tenth of the retention.
    assert retention_threshold(vitals(effective_salience=0.5), CFG) == pytest.approx(0.10)
    assert retention_threshold(vitals(effective_salience=1.0), CFG) == pytest.approx(0.01)
    assert retention_threshold(vitals(effective_salience=0.0), CFG) == pytest.approx(0.20)
    explicit = vitals(effective_salience=1.0, last_reviewed=days_ago(30))
    background = vitals(effective_salience=0.2, last_reviewed=days_ago(18))
    assert not assess(explicit, NOW, CFG, node_count=1000).forget
    assert assess(background, NOW, CFG, node_count=1000).forget
