"""Experiments, causal analysis and shared patterns: the pure parts."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ucma.errors import PrivacyThresholdError, ValidationError
from ucma.learning.causal import Pattern, counterfactuals, extract_patterns, memory_influence
from ucma.learning.experiments import Experiment, analyse, assign
from ucma.learning.patterns import merge_user_patterns, scrub_terms, share_pattern
from ucma.learning.records import DecisionTrace


def make_trace(n: int, scores: dict[str, float], quality: float | None, kind="rec"):
    return DecisionTrace(
        id=f"t{n}",
        user_id="u",
        memory_scores=scores,
        decision_type=kind,
        summary=f"decision {n}",
        confidence=0.5,
        alternatives_count=1,
        created_at=float(n),
        outcome_quality=quality,
        outcome_at=None if quality is None else float(n) + 1,
    )


# -- experiments --------------------------------------------------------------------


@pytest.mark.anyio
async def test_experiment_finds_a_known_difference() -> None:
    rng = np.random.default_rng(3)
    noise = {i: float(rng.normal(0, 0.1)) for i in range(200)}
    experiment = Experiment(
        "H2 rrf k", lambda t: 0.50 + noise[t], lambda t: 0.60 + noise[t], metric="hit@1"
    )
    result = await experiment.run(list(range(200)))
    assert result.control_n == result.treatment_n == 100
    assert result.treatment_mean - result.control_mean == pytest.approx(0.1, abs=0.04)
    assert result.improvement == pytest.approx(0.2, abs=0.09)
    assert result.p_value < 1e-6
    assert result.significant


@pytest.mark.anyio
async def test_identical_configurations_are_not_significant() -> None:
    rng = np.random.default_rng(4)
    values = {i: float(rng.normal(0.5, 0.2)) for i in range(200)}

    async def same(trial: int) -> float:
        return values[trial]

    result = await Experiment("same", same, same).run(list(range(200)))
    assert not result.significant
    assert result.p_value > 0.05


def test_constant_arms_and_small_samples() -> None:
    assert analyse([1.0, 1.0], [1.0, 1.0]).p_value == 1.0
    different = analyse([0.0, 0.0], [1.0, 1.0])
    assert different.p_value == 0.0 and different.significant
    assert different.improvement is None
    with pytest.raises(ValidationError):
        analyse([1.0], [1.0, 2.0])


def test_assignment_is_balanced_and_seeded() -> None:
    control, treatment = assign(list(range(11)), seed=5)
    assert sorted(control + treatment) == list(range(11))
    assert len(control) == 5 and len(treatment) == 6
    assert assign(list(range(11)), seed=5) == (control, treatment)


# -- causal ---------------------------------------------------------------------------


def test_memory_influence_verdicts() -> None:
    traces = [make_trace(i, {"good": 0.9, "noise": 0.1}, 0.8) for i in range(3)]
    traces += [make_trace(10 + i, {"bad": 1.0}, -0.8) for i in range(3)]
    traces += [make_trace(20, {"rare": 1.0}, 1.0), make_trace(21, {"good": 1.0}, None)]
    verdicts = {m.memory_id: m.verdict for m in memory_influence(traces, min_decisions=3)}
    assert verdicts == {
        "good": "helpful",
        "noise": "helpful",
        "bad": "misleading",
        "rare": "insufficient",
    }


def test_counterfactuals_name_the_differing_memories() -> None:
    failed = make_trace(1, {"a": 0.5, "bad": 0.5}, -0.8)
    better = make_trace(2, {"a": 0.5, "good": 0.5}, 0.9)
    unrelated = make_trace(3, {"z": 1.0}, 0.9, kind="other")
    same_outcome = make_trace(4, {"a": 0.5, "bad": 0.5}, -0.7)
    report = counterfactuals(failed, [better, unrelated, same_outcome, failed])
    assert [a.trace_id for a in report.alternatives] == ["t2"]
    alt = report.alternatives[0]
    assert alt.outcome_difference == pytest.approx(1.7)
    assert (alt.shared_memories, alt.only_in_actual, alt.only_in_alternative) == (
        ["a"],
        ["bad"],
        ["good"],
    )
    assert report.suspects == ["bad"] and report.missing == ["good"]


def test_patterns_cluster_similar_high_performers() -> None:
    traces = [make_trace(i, {m: 1.0}, 0.9) for i, m in enumerate(["x1", "x2", "y1"] * 3)]
    influence = memory_influence(traces, min_decisions=3)
    vectors = {
        "x1": np.array([1.0, 0.05, 0.0]),
        "x2": np.array([0.95, 0.1, 0.0]),
        "y1": np.array([0.0, 0.0, 1.0]),
    }
    contents = {
        "x1": "cache the catalogue in Redis",
        "x2": "cache product pages in Redis",
        "y1": "index the orders table",
    }
    patterns = extract_patterns(influence, contents, vectors, min_decisions=3)
    assert [sorted(p.memory_ids) for p in patterns] == [["x1", "x2"], ["y1"]]
    assert patterns[0].decisions == 6
    assert patterns[0].terms[:2] == ["cache", "redis"]


# -- shared patterns ------------------------------------------------------------------


def pattern(n: int, decisions: int, terms: list[str], direction=(1.0, 0.0)) -> Pattern:
    return Pattern(f"p{n}", "x", terms, [f"m{n}"], decisions, 0.8, np.array(direction))


def test_sharing_needs_instances_and_users() -> None:
    rng = np.random.default_rng(0)
    few_users = merge_user_patterns({f"user{i}": [pattern(i, 30, ["cache"])] for i in range(5)})
    with pytest.raises(PrivacyThresholdError, match="5 users; sharing needs at least 10"):
        share_pattern(few_users[0], epsilon=0.5, rng=rng)
    few_uses = merge_user_patterns({f"user{i}": [pattern(i, 5, ["cache"])] for i in range(12)})
    with pytest.raises(PrivacyThresholdError, match="60 decisions"):
        share_pattern(few_uses[0], epsilon=0.5, rng=rng)


def test_shared_pattern_has_noise_and_no_personal_data() -> None:
    by_user = {
        f"user{i}": [pattern(i, 20, ["cache", "redis", f"alice{i}@mail.com", f"secret{i}"])]
        for i in range(12)
    }
    by_user["user0"].append(pattern(99, 50, ["unrelated"], direction=(0.0, 1.0)))
    candidates = merge_user_patterns(by_user)
    assert len(candidates) == 2
    shared = share_pattern(candidates[0], epsilon=0.5, rng=np.random.default_rng(1))
    assert shared.terms == ["cache", "redis"]
    text = repr(shared.to_dict())
    assert not re.search(r"user\d|alice|@|secret", text)
    draws = {
        share_pattern(candidates[0], epsilon=0.5, rng=np.random.default_rng(s)).instances
        for s in range(20)
    }
    assert len(draws) > 1  # Laplace noise
    assert all(abs(d - 240) < 60 for d in draws)
    with pytest.raises(ValidationError):
        share_pattern(candidates[0], epsilon=0.0, rng=np.random.default_rng(1))


def test_scrub_terms_drops_personal_data() -> None:
    assert scrub_terms(["cache", "bob@x.org", "555-123-4567", "v2", "https://x.io"]) == ["cache"]
