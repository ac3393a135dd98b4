"""Strategy maths (seed 000's procedural paradigm): pure functions, no I/O.

- ``wilson_lower_bound``: how good a success rate is *at least*, given how many times
  it was measured, so 1 success in 1 application (0.21) ranks below 45 in 50 (0.78).
- ``strategy_score``: relevance to the task times the success evidence,
  ``relevance x (1 + lower_bound) / 2``: an untried strategy keeps half its relevance,
  a proven one all of it, so evidence reorders strategies of similar relevance without
  burying a new, exactly relevant one.
- ``ground``: what known facts say of a strategy's preconditions (flow 1, "facts ground
  strategies"): each is met (a current fact says exactly it), contradicted (a current
  fact gives a functional predicate another value) or unknown.
- ``generalise``: merging a near-duplicate keeps the preconditions both had, so a
  strategy distilled from many trajectories keeps only the conditions that held in all
  of them (the others were incidental).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ucma.types import Condition, Procedure

__all__ = [
    "Grounding",
    "generalise",
    "ground",
    "strategy_score",
    "success_rate",
    "wilson_lower_bound",
]

MET = "met"
UNKNOWN = "unknown"
CONTRADICTED = "contradicted"


def wilson_lower_bound(successes: int, trials: int, z: float = 1.96) -> float:
    """Lower end of the Wilson score interval of ``successes / trials`` (95% by
    default); 0 when nothing was tried."""
    if trials <= 0:
        return 0.0
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, {trials}], got {successes}")
    p = successes / trials
    z2 = z * z
    centre = p + z2 / (2 * trials)
    margin = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # In exact arithmetic the bound lies in [0, p]; rounding can leave it a hair
    # outside (6e-18 for 0 of 47), so it is clamped to what it means.
    return min(p, max(0.0, (centre - margin) / (1 + z2 / trials)))


def strategy_score(relevance: float, lower_bound: float) -> float:
    """Relevance (cosine clipped to [0, 1]) weighted by success evidence."""
    return max(0.0, min(1.0, relevance)) * (1.0 + lower_bound) / 2.0


@dataclass(frozen=True, slots=True)
class Grounding:
    """Preconditions sorted by what the facts say of them."""

    met: tuple[Condition, ...]
    contradicted: tuple[Condition, ...]
    unknown: tuple[Condition, ...]

    @property
    def verdict(self) -> str:
        if self.contradicted:
            return CONTRADICTED
        return UNKNOWN if self.unknown else MET


def ground(
    conditions: Sequence[Condition],
    current_values: Callable[[str, str], Sequence[str]],
    is_functional: Callable[[str], bool],
) -> Grounding:
    """Sort ``conditions`` by the current facts: ``current_values(subject, predicate)``
    gives the objects believed now. A functional predicate (one value at a time) with
    other values contradicts; a multi-valued one without the value leaves it unknown."""
    met: list[Condition] = []
    contradicted: list[Condition] = []
    unknown: list[Condition] = []
    for condition in conditions:
        wanted = condition.key()[2]
        values = {
            " ".join(v.lower().split())
            for v in current_values(condition.subject, condition.predicate)
        }
        if wanted in values:
            met.append(condition)
        elif values and is_functional(condition.predicate):
            contradicted.append(condition)
        else:
            unknown.append(condition)
    return Grounding(tuple(met), tuple(contradicted), tuple(unknown))


def generalise(kept: Iterable[Condition], new: Iterable[Condition]) -> list[Condition]:
    """The conditions of ``kept`` that ``new`` also has (case-insensitive), in order."""
    keys = {c.key() for c in new}
    return [c for c in kept if c.key() in keys]


def success_rate(procedure: Procedure) -> float:
    """A strategy's success rate when applied; 0.5 when untried (seed 000: ``or 0.5``)."""
    if procedure.execution_count <= 0:
        return 0.5
    return procedure.success_count / procedure.execution_count
