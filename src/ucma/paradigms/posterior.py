"""Beta and Dirichlet posteriors, pure: how much a count of outcomes says.

Seed 000's predictive paradigm asks for honest uncertainty ("uncertain prediction:
widen confidence interval"). Every estimate of the world model and the self-model is
a posterior under a uniform prior, reported as its mean and a central credible
interval, so one observation gives a wide interval and a hundred a narrow one:

- ``beta_estimate(successes, failures)``: a rate (a capability's accuracy, a
  transition's reliability) under Beta(1, 1): mean ``(s + 1) / (n + 2)``, 0.5 with no
  evidence;
- ``dirichlet_estimates(counts)``: a distribution over outcomes under a uniform
  Dirichlet over the outcomes seen plus one bucket for "something not seen yet", so a
  single observation of one outcome predicts it at 2/3, not 1; each outcome's
  marginal is a Beta, whose interval it carries.

Counts may be fractional (evidence from similar contexts counts in part).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "Estimate",
    "beta_estimate",
    "dirichlet_estimates",
    "unseen_probability",
]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A posterior probability: its mean, a central credible interval, and the
    (possibly fractional) number of observations behind it."""

    mean: float
    low: float
    high: float
    support: float

    @property
    def width(self) -> float:
        return self.high - self.low


def _check_count(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def _interval(alpha: float, beta: float, mass: float) -> tuple[float, float]:
    """The central ``mass`` credible interval of Beta(alpha, beta)."""
    from scipy.special import betaincinv  # imported on first use: `import ucma` stays fast

    if not 0 < mass < 1:
        raise ValueError(f"interval mass must be in (0, 1), got {mass!r}")
    tail = (1.0 - mass) / 2.0
    low = float(betaincinv(alpha, beta, tail))
    high = float(betaincinv(alpha, beta, 1.0 - tail))
    return max(0.0, low), min(1.0, high)


def beta_estimate(successes: float, failures: float, mass: float = 0.95) -> Estimate:
    """The rate of success after ``successes`` and ``failures``, under a uniform prior."""
    s = _check_count(successes, "successes")
    f = _check_count(failures, "failures")
    low, high = _interval(s + 1.0, f + 1.0, mass)
    return Estimate((s + 1.0) / (s + f + 2.0), low, high, s + f)


def dirichlet_estimates(counts: Mapping[str, float], mass: float = 0.95) -> dict[str, Estimate]:
    """Each seen outcome's posterior probability (outcomes with a count above 0),
    under a uniform Dirichlet over them and one unseen bucket."""
    seen = {k: _check_count(v, f"count of {k!r}") for k, v in counts.items()}
    seen = {k: v for k, v in seen.items() if v > 0}
    total = sum(seen.values()) + len(seen) + 1.0
    out = {}
    for outcome, n in seen.items():
        low, high = _interval(n + 1.0, total - n - 1.0, mass)
        out[outcome] = Estimate((n + 1.0) / total, low, high, sum(seen.values()))
    return out


def unseen_probability(counts: Mapping[str, float]) -> float:
    """The posterior probability of an outcome not seen yet (1 with no evidence)."""
    seen = [float(v) for v in counts.values() if v > 0]
    return 1.0 / (sum(seen) + len(seen) + 1.0)
