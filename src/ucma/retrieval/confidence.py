"""Seed 004's five-factor confidence of one retrieved memory. Pure functions.

- semantic_relevance: how much of the query the memory answers, in [0, 1]
  (``evidence``): its cosine to the query mapped linearly from
  ``relevance_floor_cosine`` (0: what unrelated text scores with this kind of
  embedder) to ``relevance_full_cosine`` (1), combined as a noisy OR with the
  share of the query's keyword information it matches (BM25 against the best
  score the query's terms allow); a memory that does not involve the person
  the query names counts ``off_subject_factor`` of that, and every memory
  ``unheard_name_factor`` when the query names someone the scope never mentions,
  and a short line saying nothing lasting ``passing_line_factor`` of it when the
  query asks how things are, and one holding no answer of the kind the query asks
  for (a time, a quantity: ``answer_kinds.py``) ``missing_kind_factor`` of it, while
  one about whom the query asks that holds the date or weekday asked for adds
  ``offered_kind_evidence`` to it as a noisy OR;
- source_quality: the layer's base quality times the memory's own evidence of
  reliability: provenance (observed 1.0, user-stated 1.0, inferred 0.8,
  generated 0.6) and, where the kind has one, its track record (a fact's
  confidence, a learning's confidence, a procedure's confidence-weighted
  success rate blended with a prior of 0.5);
- recency: ``exp(-age / time_constant)`` from the event time to the reference
  time (seed 004's example gives 0.92 for three days: a 36-day constant), the
  constant following the memory's temporal level (seed 003 R1): months for a
  seasonal one (level 3), years for an identity (level 4). How someone is stays
  so until a later statement replaces it (supersession), so its age tells less
  than an event's;
- consistency: 1.0, or 0.5 for a memory in doubt: flagged for review because
  a premise changed, or a fact superseded or conflicted (seed 002);
- completeness: the share of descriptive fields present (time, source or
  subject, participants or tags, summary or steps ...).

``overall = (0.35 relevance + 0.25 quality + 0.15 recency + 0.15 consistency
+ 0.10 completeness) x min(1, relevance / relevance_gate)`` with the weights
from ``CascadeConfig``. The seed's sum alone gives a fresh memory of a good
source 0.56 before it matches anything, so an unrelated question looked
answerable; relevance gates the sum, so only a memory that matches the query
can be confident, and the other factors then order the matches.

``level`` names the band seed 004 prints beside the number: ``low`` below the
cascade threshold, ``high`` from ``high_confidence``, ``medium`` between.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ucma.config import CascadeConfig
from ucma.retrieval.scales import ramp, unit
from ucma.types import Episode, Fact, Learning, MemoryRecord, Procedure, Provenance

__all__ = [
    "LAYER_QUALITY",
    "Confidence",
    "confidence",
    "event_time",
    "evidence",
    "level",
    "source_reliability",
]

_DAY = 86_400.0
RECENCY_TIME_CONSTANT_DAYS = 36.0
LEVEL_RECENCY_DAYS: dict[int, float] = {3: 365.0, 4: 3650.0}
"""Recency's time constant for the lasting temporal levels: seasonal (months) and
identity (years). With seed 004's 36 days for every memory, a statement of how someone
is said four months earlier scored as if forgotten. Everyday after one sleep:
low_confidence on answerable questions 9.4 -> 7.4 %, on unanswerable 87.7 -> 84.9 %,
AUC 0.945 -> 0.952, answers 84.9 -> 86.1 %; confidence AUC LoCoMo 0.852 -> 0.860,
BEAM 0.851 -> 0.856; rankings unchanged on all four sets. No decay at all for both
levels: everyday unanswerable 84.0 %, BEAM AUC 0.852."""

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
    level: str = "low"

    def to_dict(self) -> dict[str, float | str]:
        return {
            "semantic_relevance": round(self.semantic_relevance, 4),
            "source_quality": round(self.source_quality, 4),
            "recency": round(self.recency, 4),
            "consistency": round(self.consistency, 4),
            "completeness": round(self.completeness, 4),
            "overall": round(self.overall, 4),
            "level": self.level,
        }


def evidence(cosine: float, keyword: float, config: CascadeConfig, *, shift: float = 0.0) -> float:
    """How much of the query a memory answers, in [0, 1] (module docstring).
    ``shift`` moves the cosine scale: up where a shared name lifts the cosine
    by itself, down where the query was embedded without its names."""
    low, full = config.relevance_floor_cosine + shift, config.relevance_full_cosine + shift
    dense = ramp(cosine, low, full)
    return 1.0 - (1.0 - dense) * (1.0 - unit(keyword))


def level(overall: float, config: CascadeConfig) -> str:
    """Seed 004's band of an overall confidence: low, medium or high."""
    if overall < config.confidence_threshold:
        return "low"
    return "high" if overall >= config.high_confidence else "medium"


def source_reliability(memory: MemoryRecord) -> float:
    """How far a memory's source is to be trusted, in [0, 1], whatever layer found it:
    its provenance (observed or stated 1.0, inferred 0.8, generated 0.6) times its
    track record (a fact's or learning's confidence, a procedure's success record)."""
    return _PROVENANCE_QUALITY.get(memory.provenance, 0.8) * _track_record(memory)


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
    keyword: float = 0.0,
    in_doubt: bool = False,
    off_subject: bool = False,
    unheard: bool = False,
    passing: bool = False,
    missing_kind: bool = False,
    offers_kind: bool = False,
    cosine_shift: float = 0.0,
) -> Confidence:
    """The five factors and their gated overall score, each in [0, 1].
    ``keyword`` is the memory's share of the query's keyword information;
    ``off_subject`` says the query names someone the memory does not involve,
    ``unheard`` that it names someone no memory of the scope mentions,
    ``passing`` that the query asks how things are and the memory is a short
    line saying nothing lasting, ``missing_kind`` that the query asks for a time
    or a quantity and the memory holds none, ``offers_kind`` that the memory is
    about whom the query asks and holds the date or weekday it asks for;
    ``cosine_shift`` moves the cosine scale of relevance (``evidence``)."""
    relevance = evidence(cosine, keyword, config, shift=cosine_shift)
    if offers_kind:
        relevance = 1.0 - (1.0 - relevance) * (1.0 - config.offered_kind_evidence)
    if off_subject:
        relevance *= config.off_subject_factor
    if unheard:
        relevance *= config.unheard_name_factor
    if passing:
        relevance *= config.passing_line_factor
    if missing_kind:
        relevance *= config.missing_kind_factor
    # Written out (not source_reliability) to keep the product's rounding as it was.
    quality = (
        LAYER_QUALITY.get(layer, 0.7)
        * _PROVENANCE_QUALITY.get(memory.provenance, 0.8)
        * _track_record(memory)
    )
    age_days = max(0.0, (reference_time - event_time(memory)) / _DAY)
    constant = LEVEL_RECENCY_DAYS.get(memory.temporal_level, RECENCY_TIME_CONSTANT_DAYS)
    recency = math.exp(-age_days / constant)
    consistency = 0.5 if in_doubt else 1.0
    completeness = _completeness(memory)
    overall = (
        config.weight_semantic_relevance * relevance
        + config.weight_source_quality * quality
        + config.weight_recency * recency
        + config.weight_consistency * consistency
        + config.weight_completeness * completeness
    )
    if config.relevance_gate > 0:
        overall *= min(1.0, relevance / config.relevance_gate)
    overall = unit(overall)
    return Confidence(
        relevance, quality, recency, consistency, completeness, overall, level(overall, config)
    )
