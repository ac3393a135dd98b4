"""Seed 000's composition patterns 3 and 4, pure: the help-seeking decision and the
ranking of learning priorities.

Pattern 3, competence-aware help-seeking, with the seed's numbers::

    score    = 0.30 competence + 0.25 past success rate
             + 0.25 best strategy's success rate + 0.20 simulated success
    adjusted = score - 0.1 per known failure mode that applies to the task
    adjusted > 0.75: attempt;  > 0.5: attempt with a caveat;  > 0.25: ask for help;
    otherwise decline.

The comparisons are strict, as in the seed: exactly 0.75 attempts with a caveat.
Weighted sums of decimal fractions carry binary rounding (0.3 x 0.75 + ... is
0.7500000000000001), so the adjusted score is rounded to 9 decimal places before it
is compared: a score that is a threshold in decimal arithmetic is that threshold.

Pattern 4, proactive gap detection: candidates from every source are ranked by impact,
highest first, and the top 10 kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from ucma.paradigms.predictive_records import HelpDecision, LearningPriority

__all__ = [
    "FAILURE_MODE_PENALTY",
    "PRIORITY_LIMIT",
    "THRESHOLDS",
    "WEIGHTS",
    "help_decision",
    "rank_priorities",
]

WEIGHTS: dict[str, float] = {
    "competence": 0.30,
    "past_success_rate": 0.25,
    "strategy_success_rate": 0.25,
    "simulated_success": 0.20,
}
"""Seed 000 pattern 3's weights of the four inputs (they sum to 1)."""

FAILURE_MODE_PENALTY = 0.1
THRESHOLDS: tuple[tuple[float, HelpDecision], ...] = (
    (0.75, HelpDecision.ATTEMPT),
    (0.5, HelpDecision.ATTEMPT_WITH_CAVEAT),
    (0.25, HelpDecision.ASK_FOR_HELP),
)
PRIORITY_LIMIT = 10

_PLACES = 9


def help_decision(
    inputs: dict[str, float], applicable_failure_modes: int
) -> tuple[float, float, HelpDecision]:
    """(score, adjusted score, decision) from the four inputs, each in [0, 1], and the
    number of known failure modes that apply."""
    if set(inputs) != set(WEIGHTS):
        raise ValueError(f"inputs must be exactly {sorted(WEIGHTS)}, got {sorted(inputs)}")
    for name, value in inputs.items():
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    if applicable_failure_modes < 0:
        raise ValueError("applicable_failure_modes must be >= 0")
    score = round(sum(WEIGHTS[name] * inputs[name] for name in WEIGHTS), _PLACES)
    adjusted = round(score - FAILURE_MODE_PENALTY * applicable_failure_modes, _PLACES)
    for threshold, decision in THRESHOLDS:
        if adjusted > threshold:
            return score, adjusted, decision
    return score, adjusted, HelpDecision.DECLINE


def rank_priorities(
    candidates: Iterable[LearningPriority], limit: int = PRIORITY_LIMIT
) -> list[LearningPriority]:
    """The ``limit`` candidates of highest impact, highest first (ties by type and
    description, so the order is stable)."""
    ranked = sorted(candidates, key=lambda p: (-p.impact, p.type, p.description))
    return ranked[:limit]
