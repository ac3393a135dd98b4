"""Hypothesis tests (seed 003 "Hypothesis Testing", H1 to H6): control versus
treatment, compared with Welch's t-test.

``Experiment`` assigns trials to the two arms at random with a seeded
generator (balanced: a shuffled half-and-half split, so both arms get the
same number of trials up to one), runs each arm's function on its trials, and
``analyse`` reports both means, the relative improvement, Welch's t statistic
and two-sided p-value (``scipy.stats.ttest_ind(equal_var=False)``: the arms
need not share a variance) and whether p < alpha.

Two arms with no variance at all cannot be t-tested: equal means then give
p = 1 (no difference), different means p = 0 (a certain one).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from ucma.errors import ValidationError

__all__ = ["Experiment", "ExperimentResult", "analyse", "assign"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ExperimentResult:
    name: str
    metric: str
    control_n: int
    treatment_n: int
    control_mean: float
    treatment_mean: float
    improvement: float | None
    """(treatment - control) / |control|; None when the control mean is 0."""
    t_statistic: float
    p_value: float
    significant: bool
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "metric": self.metric,
            "control_n": self.control_n,
            "treatment_n": self.treatment_n,
            "control_mean": round(self.control_mean, 6),
            "treatment_mean": round(self.treatment_mean, 6),
            "improvement": None if self.improvement is None else round(self.improvement, 6),
            "t_statistic": round(self.t_statistic, 6),
            "p_value": self.p_value,
            "significant": self.significant,
            "alpha": self.alpha,
        }


def analyse(
    control: Sequence[float],
    treatment: Sequence[float],
    *,
    name: str = "experiment",
    metric: str = "metric",
    alpha: float = 0.05,
) -> ExperimentResult:
    """Means, relative improvement and Welch's t-test of two samples."""
    if len(control) < 2 or len(treatment) < 2:
        raise ValidationError("each arm needs at least two trials for a t-test")
    a = np.asarray(control, dtype=np.float64)
    b = np.asarray(treatment, dtype=np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValidationError("trial values must be finite numbers")
    mean_a, mean_b = float(a.mean()), float(b.mean())
    if a.var() == 0 and b.var() == 0:
        t_stat = 0.0 if mean_a == mean_b else math.copysign(math.inf, mean_b - mean_a)
        p_value = 1.0 if mean_a == mean_b else 0.0
    else:
        from scipy import stats  # 0.3 s to import: paid by the first t-test, not at import

        result = stats.ttest_ind(b, a, equal_var=False)
        t_stat, p_value = float(result.statistic), float(result.pvalue)
    improvement = (mean_b - mean_a) / abs(mean_a) if mean_a != 0 else None
    return ExperimentResult(
        name,
        metric,
        len(a),
        len(b),
        mean_a,
        mean_b,
        improvement,
        t_stat,
        p_value,
        bool(p_value < alpha),
        alpha,
    )


def assign(trials: Sequence[T], seed: int) -> tuple[list[T], list[T]]:
    """A seeded, balanced random split of ``trials`` into (control, treatment)."""
    order = np.random.default_rng(seed).permutation(len(trials))
    half = len(trials) // 2
    control = [trials[i] for i in sorted(order[:half])]
    treatment = [trials[i] for i in sorted(order[half:])]
    return control, treatment


class Experiment(Generic[T]):
    """A control / treatment comparison over a list of trials.

    ``control`` and ``treatment`` map one trial to its metric value (sync or
    async callables). ``paired=False`` (the default) is a between-trials
    design: each trial runs in one arm only, as seed 003's A/B test does.
    """

    def __init__(
        self,
        name: str,
        control: Callable[[T], float | Awaitable[float]],
        treatment: Callable[[T], float | Awaitable[float]],
        *,
        metric: str = "metric",
        alpha: float = 0.05,
        seed: int = 0,
    ) -> None:
        self.name = name
        self.metric = metric
        self.alpha = alpha
        self.seed = seed
        self._control = control
        self._treatment = treatment

    async def run(self, trials: Sequence[T]) -> ExperimentResult:
        control_trials, treatment_trials = assign(trials, self.seed)
        control = [await _value(self._control, t) for t in control_trials]
        treatment = [await _value(self._treatment, t) for t in treatment_trials]
        return analyse(control, treatment, name=self.name, metric=self.metric, alpha=self.alpha)


async def _value(fn: Callable[[T], float | Awaitable[float]], trial: T) -> float:
    value = fn(trial)
    if isinstance(value, Awaitable):
        value = await value
    return float(value)


def describe(values: Sequence[float]) -> dict[str, float]:
    """Mean and standard deviation of one arm, for reports."""
    return {
        "mean": statistics.fmean(values) if values else 0.0,
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
    }
