"""Outcome-weighted salience (seed 003 R10, R15 to R18). Pure functions.

The update of one memory after one outcome is R15's

    delta = outcome_quality x attribution x learning_rate x temporal_dampening

with **R17's dampening table** (level 1: 1.0, 2: 0.5, 3: 0.25, 4: 0.1,
``SalienceConfig.temporal_dampening``), not R15's ``1 / temporal_level``: the
seed states both, they differ at levels 3 and 4 (1/3 and 1/4 against 0.25 and
0.1), and the table is the more specific rule with its own rationale ("higher
level memories should be more stable"). At level 2 both give 0.5, so seed
003's worked example (Redis, base 0.6, attribution 0.8, quality +0.8) is
0.8 x 0.8 x 0.1 x 0.5 = 0.032 either way.

R16's bounds then apply in order: a single update is at most
``max_single_adjustment`` (0.1) in size; the cumulative adjustment stays within
+-``max_cumulative_adjustment`` (0.5); and the adjustment is also kept where
``base + adjustment`` lies in [0, 1], so the effective salience never leaves
[0, 1] and no invisible headroom builds up beyond the clamp (a memory at
effective 1.0 responds to the next bad outcome at once).

R20's retention half (an outcome lengthens or shortens a memory's stability) is
``ucma.memory.retention.outcome_stability``, weighted by the same attribution and
dampening as the salience update here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ucma.config import SalienceConfig
from ucma.errors import ValidationError

__all__ = [
    "BoundedDelta",
    "attributions",
    "bounded_update",
    "normalise_scores",
    "salience_delta",
    "temporal_dampening",
]


def normalise_scores(scores: Sequence[float], minimum: float = 0.01) -> list[float]:
    """R10: contributions normalised to sum 1 with no share below ``minimum``.

    Shares under the minimum are raised to it and the rest rescaled to fill
    what remains, repeated until stable. All-zero scores mean "no idea which
    mattered": equal shares. Raises ``ValidationError`` for negative or
    non-finite scores, or more memories than ``1 / minimum``.
    """
    values = [float(s) for s in scores]
    if not values:
        raise ValidationError("a decision needs at least one memory score")
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValidationError("memory scores must be finite numbers >= 0")
    if len(values) * minimum > 1.0 + 1e-12:
        raise ValidationError(
            f"at most {int(1 / minimum)} memories per decision (minimum share {minimum})"
        )
    total = sum(values)
    if total <= 0:
        return [1.0 / len(values)] * len(values)
    shares = [v / total for v in values]
    floored: set[int] = set()
    while True:
        low = {i for i, s in enumerate(shares) if s < minimum and i not in floored}
        if not low:
            return shares
        floored |= low
        free = [i for i in range(len(values)) if i not in floored]
        mass = 1.0 - minimum * len(floored)
        free_total = sum(values[i] for i in free)
        shares = [
            minimum
            if i in floored
            else (values[i] / free_total * mass if free_total > 0 else mass / len(free))
            for i in range(len(values))
        ]


def attributions(memory_scores: Mapping[str, float], config: SalienceConfig) -> dict[str, float]:
    """R18: each memory's credit is its normalised score, within [min, 1]."""
    return {
        memory_id: min(1.0, max(config.min_attribution, score))
        for memory_id, score in memory_scores.items()
    }


def temporal_dampening(level: int, config: SalienceConfig) -> float:
    """R17's table (it wins over R15's 1/level; see the module docstring)."""
    table = config.temporal_dampening
    if level in table:
        return table[level]
    return table[max(1, min(max(table), int(level)))]


def salience_delta(quality: float, attribution: float, level: int, config: SalienceConfig) -> float:
    """R15 before bounds: quality x attribution x learning rate x dampening."""
    return quality * attribution * config.learning_rate * temporal_dampening(level, config)


@dataclass(frozen=True, slots=True)
class BoundedDelta:
    raw: float
    applied: float
    new_adjustment: float


def bounded_update(
    raw_delta: float, previous_adjustment: float, base_salience: float, config: SalienceConfig
) -> BoundedDelta:
    """R16: the single-update cap, the cumulative range and the effective range."""
    cap = config.max_single_adjustment
    step = max(-cap, min(cap, raw_delta))
    limit = config.max_cumulative_adjustment
    low = max(-limit, -base_salience)
    high = min(limit, 1.0 - base_salience)
    target = previous_adjustment + step
    if low <= high:
        target = max(low, min(high, target))
    return BoundedDelta(raw_delta, target - previous_adjustment, target)
