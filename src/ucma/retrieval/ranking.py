"""Ranking maths: pure functions, no I/O.

Seed 001's multi-factor formula scores each candidate as a weighted sum of

- relevance: how well it matches the query (cosine, keyword or structural), in [0, 1];
- importance: the memory's effective salience (seed 003), in [0, 1];
- recency: ``0.5 ** (age / half-life)``; seed 001 names the parameter a half-life
  but writes ``exp(-age / half-life)``, whose half-life is 0.69 of the
  parameter; we follow the name. Unknown age counts as 0.5;
- retention: the Ebbinghaus retention of the memory now; unknown counts as 0.5.

The weights come from ``RetrievalConfig`` and sum to 1, so the score is in
[0, 1] too. ``review_weight`` then down-weights memories whose premise changed
(flagged for review) and superseded facts: their score is multiplied by
``ConflictConfig.review_rank_factor`` (seed 002 dependency invalidation).
Seed 003's and seed 004's formulas join this module as further presets of
the same stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ucma.config import RetrievalConfig

__all__ = ["RankFactors", "recency", "review_weight", "seed001_score"]


@dataclass(frozen=True, slots=True)
class RankFactors:
    relevance: float
    importance: float
    age_days: float | None
    retention: float | None


def recency(age_days: float | None, halflife_days: float) -> float:
    """Fraction of freshness left after ``age_days``; 1.0 for now or the future."""
    if age_days is None:
        return 0.5
    if halflife_days <= 0:
        return 1.0 if age_days <= 0 else 0.0
    return math.pow(0.5, max(age_days, 0.0) / halflife_days)


def seed001_score(factors: RankFactors, config: RetrievalConfig) -> float:
    """Seed 001's weighted sum of relevance, importance, recency and retention."""
    retention = 0.5 if factors.retention is None else factors.retention
    return (
        config.weight_relevance * _unit(factors.relevance)
        + config.weight_importance * _unit(factors.importance)
        + config.weight_recency * recency(factors.age_days, config.recency_halflife_days)
        + config.weight_retention * _unit(retention)
    )


def review_weight(score: float, needs_review: bool, factor: float) -> float:
    """``score`` times ``factor`` for a memory flagged for review, else unchanged."""
    return score * factor if needs_review else score


def _unit(value: float) -> float:
    return max(0.0, min(1.0, value))
