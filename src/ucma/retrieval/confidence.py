"""Seed 004's five-factor confidence of one retrieved memory. Pure functions.

- semantic_relevance: cosine similarity of the memory to the query, in [0, 1];
- source_quality: the layer's base quality times the memory's own evidence of
  reliability: provenance (observed 1.0, user-stated 1.0, inferred 0.8,
  generated 0.6) and, where the kind has one, its track record (a fact's
  confidence, a learning's confidence, a procedure's confidence-weighted
  success rate blended with a prior of 0.5);
- recency: ``exp(-age / time_constant)`` from the event time to the reference
  time (seed 004's example gives 0.92 for three days: a 36-day constant);
- consistency: 1.0, or 0.5 for a memory in doubt: flagged for review because
  a premise changed, or a fact superseded or conflicted (seed 002);
- completeness: the share of descriptive fields present (time, source or
  subject, participants or tags, summary or steps ...).

``overall = 0.35 relevance + 0.25 quality + 0.15 recency + 0.15 consistency
+ 0.10 completeness`` with the weights from ``CascadeConfig``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ucma.config import CascadeConfig
from ucma.types import Episode, Fact, Learning, MemoryRecord, Procedure, Provenance

__all__ = ["LAYER_QUALITY", "Confidence", "confidence", "event_time"]

_DAY = 86_400.0
RECENCY_TIME_CONSTANT_DAYS = 36.0

#: Base source quality of each layer (seed 004: "episodic is strong", 0.85).
LAYER_QUALITY: dict[str, float] = {
    "episodic": 0.85,
    "semantic": 0.80,
    "procedural": 0.80,
    "graph": 0.75,
    "prospective": 0.70,
    "planning": 0.70,
    "meta": 0.70,
}
_PROVENANCE_QUALITY = {
    Provenance.OBSERVED: 1.0,
    Provenance.USER_STATED: 1.0,
    Provenance.INFERRED: 0.8,
    Provenance.GENERATED: 0.6,
}


@dataclass(frozen=True, slots=True)
class Confidence:
    semantic_relevance: float
    source_quality: float
    recency: float
    consistency: float
    completeness: float
    overall: float

    def to_dict(self) -> dict[str, float]:
        return {key: round(value, 4) for key, value in asdict(self).items()}


def _track_record(memory: MemoryRecord) -> float:
    if isinstance(memory, Fact | Learning):
        return memory.confidence
    if isinstance(memory, Procedure):
        trust = min(memory.execution_count / 10.0, 1.0)
        return 0.5 * (1 - trust) + memory.success_rate * trust
    return 1.0


def _completeness(memory: MemoryRecord) -> float:
    if isinstance(memory, Episode):
        present = [
            bool(memory.source),
            bool(memory.participants or memory.tags),
            bool(memory.summary),
            bool(memory.metadata),
            True,
        ]
    elif isinstance(memory, Fact):
        present = [
            bool(memory.source_episode_ids),
            memory.valid_from is not None,
            memory.last_verified is not None,
            True,
            bool(memory.metadata),
        ]
    elif isinstance(memory, Procedure):
        present = [
            bool(memory.steps),
            bool(memory.trigger_tags),
            memory.execution_count > 0,
            bool(memory.description),
            bool(memory.metadata),
        ]
    elif isinstance(memory, Learning):
        present = [
            bool(memory.evidence),
            bool(memory.applicability),
            memory.validated,
            bool(memory.title),
            bool(memory.metadata),
        ]
    else:
        present = [True]
    return sum(present) / len(present)


def event_time(memory: MemoryRecord) -> float:
    """When the memory's content happened: an episode's timestamp, else creation."""
    return memory.timestamp if isinstance(memory, Episode) else memory.created_at


def confidence(
    memory: MemoryRecord,
    *,
    cosine: float,
    layer: str,
    reference_time: float,
    config: CascadeConfig,
    in_doubt: bool = False,
) -> Confidence:
    """The five factors and their weighted overall score, each in [0, 1]."""
    relevance = max(0.0, min(1.0, cosine))
    quality = (
        LAYER_QUALITY.get(layer, 0.7)
        * _PROVENANCE_QUALITY.get(memory.provenance, 0.8)
        * _track_record(memory)
    )
    age_days = max(0.0, (reference_time - event_time(memory)) / _DAY)
    recency = math.exp(-age_days / RECENCY_TIME_CONSTANT_DAYS)
    consistency = 0.5 if in_doubt else 1.0
    completeness = _completeness(memory)
    overall = (
        config.weight_semantic_relevance * relevance
        + config.weight_source_quality * quality
        + config.weight_recency * recency
        + config.weight_consistency * consistency
        + config.weight_completeness * completeness
    )
    return Confidence(
        relevance, quality, recency, consistency, completeness, max(0.0, min(1.0, overall))
    )
