"""Ranking: the seeds' formulas as named presets of one stage. Pure functions.

Every preset turns a candidate's ``RankInputs`` into its final score (higher
is better):

- ``relevance``: the fused retrieval score alone;
- ``salient``: the fused score scaled by effective salience with strength
  ``salience_weight`` (``relevance * (1 - w + w * salience)``): seed 003's
  R7 product, tempered so a heuristic salience cannot override a clearly
  better match; then times ``1 + outcome_weight * outcome_adjustment``, the
  learned part of salience with its own strength. The heuristic base is a
  guess: by default (``salience_weight`` 0, chosen on the retrieval
  benchmarks, see ``RetrievalConfig``) it does not order hits at all, and the
  adjustment, evidence from outcomes, does. With ``salience_weight`` alone
  (0.2), a memory that outcomes drove to salience 0
  still keeps 0.8 of its score and cannot fall behind a proven one more than
  ~6% less relevant (bench/learning.py: the helpful advice is 12% less
  relevant at the median, so learning barely moved decisions: +8 points).
  The factor is exactly 1 while no outcome was recorded, so rankings without
  outcomes (the retrieval benchmark) are unchanged;
- ``seed001``: seed 001's weighted sum of relevance, importance (effective
  salience), recency and Ebbinghaus retention;
- ``seed003``: seed 003 R7, the fused score times effective salience;
- ``seed004``: seed 004's composite, ``0.5 * confidence + 0.3 * source weight
  + 0.2 * recency`` (the layer's source weight is 1 within one layer).

Recency is ``0.5 ** (age / half-life)``: seed 001 names its parameter a
half-life but writes ``exp(-age / half-life)``; we follow the name. Unknown
age or retention count as 0.5. The default preset is chosen by the retrieval
benchmark (docs/retrieval.md).

``review_weight`` then down-weights memories whose premise changed (flagged
for review) and superseded facts: their score is multiplied by
``ConflictConfig.review_rank_factor`` (seed 002 dependency invalidation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ucma.config import RetrievalConfig
from ucma.retrieval.scales import unit

__all__ = [
    "RANKING_PRESETS",
    "RankInputs",
    "rank_score",
    "reads_retention",
    "recency",
    "review_weight",
]


@dataclass(frozen=True, slots=True)
class RankInputs:
    relevance: float
    salience: float
    age_days: float | None
    retention: float | None
    confidence: float = 0.0
    source_weight: float = 1.0
    outcome_adjustment: float = 0.0


def recency(age_days: float | None, halflife_days: float) -> float:
    """Fraction of freshness left after ``age_days``; 1.0 for now or the future."""
    if age_days is None:
        return 0.5
    if halflife_days <= 0:
        return 1.0 if age_days <= 0 else 0.0
    return math.pow(0.5, max(age_days, 0.0) / halflife_days)


def review_weight(score: float, needs_review: bool, factor: float) -> float:
    """``score`` times ``factor`` for a memory flagged for review, else unchanged."""
    return score * factor if needs_review else score


def _relevance(x: RankInputs, cfg: RetrievalConfig) -> float:
    return x.relevance


def _seed001(x: RankInputs, cfg: RetrievalConfig) -> float:
    kept = 0.5 if x.retention is None else x.retention
    return (
        cfg.weight_relevance * unit(x.relevance)
        + cfg.weight_importance * unit(x.salience)
        + cfg.weight_recency * recency(x.age_days, cfg.recency_halflife_days)
        + cfg.weight_retention * unit(kept)
    )


def _salient(x: RankInputs, cfg: RetrievalConfig) -> float:
    weight = cfg.salience_weight
    learned = max(0.0, 1.0 + cfg.outcome_weight * x.outcome_adjustment)
    return x.relevance * (1.0 - weight + weight * unit(x.salience)) * learned


def _seed003(x: RankInputs, cfg: RetrievalConfig) -> float:
    return x.relevance * unit(x.salience)


def _seed004(x: RankInputs, cfg: RetrievalConfig) -> float:
    return (
        0.5 * unit(x.confidence)
        + 0.3 * unit(x.source_weight)
        + 0.2 * recency(x.age_days, cfg.recency_halflife_days)
    )


RANKING_PRESETS: dict[str, Callable[[RankInputs, RetrievalConfig], float]] = {
    "relevance": _relevance,
    "salient": _salient,
    "seed001": _seed001,
    "seed003": _seed003,
    "seed004": _seed004,
}


#: The presets whose score reads Ebbinghaus retention (``RankInputs.retention``).
_READ_RETENTION = frozenset({"seed001"})


def reads_retention(preset: str) -> bool:
    """Whether ``preset``'s score depends on retention: when not, ranking need
    not read the candidates' retention states."""
    return preset in _READ_RETENTION


def rank_score(preset: str, inputs: RankInputs, config: RetrievalConfig) -> float:
    try:
        formula = RANKING_PRESETS[preset]
    except KeyError as exc:
        known = sorted(RANKING_PRESETS)
        raise ValueError(f"unknown ranking preset {preset!r}; use {known}") from exc
    return formula(inputs, config)
