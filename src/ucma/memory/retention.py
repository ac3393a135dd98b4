"""Ebbinghaus retention with the spacing effect, and initial stability by temporal level.

Retention (seed 001): ``R = exp(-t / S)`` with ``t`` the days since the last review and ``S``
the stability in days (the time for retention to fall to 1/e). Each review raises stability by
``boost_base * max(1, t)``, so a review after a long gap strengthens a memory more than an
immediate one (the spacing effect).

Initial stability (seed 003 R19): a memory that is never reviewed must lose exactly the R19
fraction of its retention over the R19 period of its temporal level. From
``exp(-period / S) = 1 - rate`` follows ``S = -period / ln(1 - rate)``:

    level 1 (immediate)    10 % per day       S ~= 9.49 days
    level 2 (situational)   5 % per week      S ~= 136.47 days
    level 3 (seasonal)      2 % per 30 days   S ~= 1484.95 days
    level 4 (identity)      1 % per 365 days  S ~= 36317.19 days

A month is taken as 30 days and a year as 365 days.

Activity (seed 003 R20) changes a memory's state in exactly two ways, both defined here and
nowhere else: a retrieval is a review (:func:`reviewed`: the decay clock restarts and stability
grows by the spacing effect), and an outcome of a decision the memory fed moves its stability
(:func:`after_outcome`: a good outcome extends it, a bad one shortens it). The recall path and
the outcome path store what these return.

Everything here is a pure function of its arguments; timestamps are epoch seconds, durations
are days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

from ucma.errors import ValidationError
from ucma.types import RetentionInfo

__all__ = [
    "DECAY_RATES",
    "DEFAULT_BOOST_BASE",
    "DEFAULT_OUTCOME_GAIN",
    "MIN_STABILITY_DAYS",
    "SECONDS_PER_DAY",
    "RetentionState",
    "after_outcome",
    "decay_rate_table",
    "initial_stability",
    "outcome_stability",
    "reinforced_stability",
    "retention",
    "reviewed",
]

SECONDS_PER_DAY = 86_400.0
MIN_STABILITY_DAYS = 1e-6
"""Floor for stability, so a zero or negative stability cannot divide by zero."""

DEFAULT_BOOST_BASE = 0.5
"""Seed 001's ``retention_stability_boost_base``."""

DEFAULT_OUTCOME_GAIN = 0.5
"""R20: the largest relative change of stability from one outcome (``ForgettingConfig``'s
``outcome_stability_gain``)."""

DECAY_RATES: MappingProxyType[int, tuple[float, float]] = MappingProxyType(
    {
        1: (1.0, 0.10),
        2: (7.0, 0.05),
        3: (30.0, 0.02),
        4: (365.0, 0.01),
    }
)
"""Seed 003 R19: temporal level -> (period in days, fraction of retention lost per period)."""


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValidationError(f"{name} must be a real number, got {value!r}")
    return float(value)


def retention(stability_days: float, elapsed_days: float) -> float:
    """Retention in [0, 1] after ``elapsed_days`` at ``stability_days``: ``exp(-t / S)``.

    Stability must be finite and is clamped to at least ``MIN_STABILITY_DAYS``; elapsed time
    is clamped to at least 0 (a review timestamp in the future means "just reviewed").
    Mathematically the result is in (0, 1]; in floating point it underflows to 0.0 once
    ``t / S`` exceeds about 745.
    """
    stability = max(_finite("stability_days", stability_days), MIN_STABILITY_DAYS)
    if math.isinf(stability):
        raise ValidationError("stability_days must be finite")
    elapsed = max(_finite("elapsed_days", elapsed_days), 0.0)
    return math.exp(-elapsed / stability)


def reinforced_stability(
    stability_days: float, elapsed_days: float, boost_base: float = DEFAULT_BOOST_BASE
) -> float:
    """Stability after a review ``elapsed_days`` after the previous one.

    ``S + boost_base * max(1, elapsed_days)``: the boost grows with the gap (the spacing
    effect), and a review within a day still earns the base boost. ``boost_base`` must be
    finite and non-negative.
    """
    stability = max(_finite("stability_days", stability_days), MIN_STABILITY_DAYS)
    elapsed = _finite("elapsed_days", elapsed_days)
    boost = _finite("boost_base", boost_base)
    if boost < 0.0 or math.isinf(boost):
        raise ValidationError(f"boost_base must be finite and >= 0, got {boost_base!r}")
    return stability + boost * max(1.0, elapsed)


def outcome_stability(
    stability_days: float,
    quality: float,
    weight: float = 1.0,
    gain: float = DEFAULT_OUTCOME_GAIN,
) -> float:
    """R20: stability after an outcome of ``quality`` in [-1, 1].

    ``weight`` in [0, 1] is how much of the outcome is this memory's: its attribution (R18)
    times the dampening of its temporal level (R17), the same weight its salience moves by.
    With ``factor = 1 + gain * |quality| * weight`` a good outcome multiplies stability by the
    factor and a bad one divides by it, so equal and opposite outcomes cancel and stability
    stays positive: a perfect, fully attributed outcome on an immediate memory makes it 1.5
    times as stable, a harmful one two thirds as stable.
    """
    stability = max(_finite("stability_days", stability_days), MIN_STABILITY_DAYS)
    q = _finite("quality", quality)
    if not -1.0 <= q <= 1.0:
        raise ValidationError(f"quality must be in [-1, 1], got {quality!r}")
    w = min(1.0, max(0.0, _finite("weight", weight)))
    g = _finite("gain", gain)
    if g < 0.0 or math.isinf(g):
        raise ValidationError(f"gain must be finite and >= 0, got {gain!r}")
    factor = 1.0 + g * abs(q) * w
    return max(stability * factor if q >= 0 else stability / factor, MIN_STABILITY_DAYS)


def reviewed(
    state: RetentionInfo, now: float, boost_base: float = DEFAULT_BOOST_BASE
) -> RetentionInfo:
    """R20's "retrieval resets decay timer": the stored state after a review at ``now``.

    Stability grows by :func:`reinforced_stability` for the time since the last review, the
    clock restarts (never backwards: a ``now`` before ``last_reviewed`` is an immediate
    review) and the review is counted.
    """
    elapsed = max(0.0, (_finite("now", now) - state.last_reviewed) / SECONDS_PER_DAY)
    return RetentionInfo(
        state.memory_id,
        reinforced_stability(state.stability, elapsed, boost_base),
        max(state.last_reviewed, float(now)),
        state.review_count + 1,
    )


def after_outcome(
    state: RetentionInfo, quality: float, weight: float, gain: float = DEFAULT_OUTCOME_GAIN
) -> RetentionInfo:
    """R20's outcome half: the stored state with :func:`outcome_stability` applied. An
    outcome is not a review: the decay clock and the review count stay."""
    return RetentionInfo(
        state.memory_id,
        outcome_stability(state.stability, quality, weight, gain),
        state.last_reviewed,
        state.review_count,
    )


def _check_level(temporal_level: object) -> int:
    if (
        isinstance(temporal_level, bool)
        or not isinstance(temporal_level, int)
        or temporal_level not in DECAY_RATES
    ):
        raise ValidationError(f"temporal_level must be 1, 2, 3 or 4, got {temporal_level!r}")
    return temporal_level


def initial_stability(temporal_level: int) -> float:
    """Stability in days for a new memory of ``temporal_level`` (1 to 4), per seed 003 R19.

    ``-period / ln(1 - rate)``, so ``retention(initial_stability(L), period)`` equals
    ``1 - rate`` for the level's R19 period and rate.
    """
    period, rate = DECAY_RATES[_check_level(temporal_level)]
    return -period / math.log1p(-rate)


def decay_rate_table() -> dict[int, tuple[float, float]]:
    """A copy of R19's table: level -> (period in days, fraction lost per period)."""
    return dict(DECAY_RATES)


@dataclass(frozen=True, slots=True)
class RetentionState:
    """The retention state of one memory; transitions return new states.

    ``stability`` is in days, ``last_reviewed`` in epoch seconds, ``review_count`` counts
    reinforcements (the initial write is not a review).
    """

    memory_id: str
    stability: float
    last_reviewed: float
    review_count: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.memory_id, str) or not self.memory_id:
            raise ValidationError("memory_id must be a non-empty string")
        stability = _finite("stability", self.stability)
        if stability <= 0.0 or math.isinf(stability):
            raise ValidationError(f"stability must be finite and > 0, got {self.stability!r}")
        last_reviewed = _finite("last_reviewed", self.last_reviewed)
        if math.isinf(last_reviewed):
            raise ValidationError("last_reviewed must be a finite epoch timestamp")
        if (
            isinstance(self.review_count, bool)
            or not isinstance(self.review_count, int)
            or self.review_count < 0
        ):
            raise ValidationError(f"review_count must be an int >= 0, got {self.review_count!r}")

    @classmethod
    def initial(cls, memory_id: str, temporal_level: int, now: float) -> RetentionState:
        """A fresh state at ``now`` whose stability reproduces R19 for ``temporal_level``."""
        return cls(
            memory_id=memory_id,
            stability=initial_stability(temporal_level),
            last_reviewed=now,
            review_count=0,
        )

    def elapsed_days(self, now: float) -> float:
        """Days since the last review at ``now`` (0 if ``now`` precedes it)."""
        return max(0.0, (_finite("now", now) - self.last_reviewed) / SECONDS_PER_DAY)

    def retention_at(self, now: float) -> float:
        """Retention at epoch time ``now``."""
        return retention(self.stability, self.elapsed_days(now))

    def reinforced(self, now: float, boost_base: float = DEFAULT_BOOST_BASE) -> RetentionState:
        """The state after a review at ``now``: more stable, review clock reset.

        A ``now`` earlier than ``last_reviewed`` (clock skew) counts as an immediate review
        and does not move ``last_reviewed`` backwards.
        """
        return RetentionState(
            memory_id=self.memory_id,
            stability=reinforced_stability(self.stability, self.elapsed_days(now), boost_base),
            last_reviewed=max(self.last_reviewed, float(now)),
            review_count=self.review_count + 1,
        )
