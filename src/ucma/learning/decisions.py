"""The decide -> outcome -> adjust steps of seed 003's learning loop.

``track_decision`` and ``observe_outcome`` run on the storage thread, each in
one transaction with the events that log it: a crash at any point leaves the
whole outcome (trace outcome, every salience update, R20 retention change,
procedure and learning statistics, their events) or none of it.

Outcomes feed seed 000's "Post-Interaction Learning" too: a procedure that
was part of the decision folds the outcome into its running success rate
(``Procedure.with_outcome``; success is quality > 0), and a learning counts
one more application and is validated by it (``Learning.validated_by``:
+0.10 confidence on success, -0.15 on failure; a neutral outcome only counts
the application).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ucma.config import PredictiveConfig, ProcedureConfig, SalienceConfig
from ucma.errors import (
    NotFoundError,
    OutcomeAlreadyRecorded,
    OutcomeWindowClosed,
    ValidationError,
)
from ucma.events.log import EventType, record
from ucma.learning.procedures import record_execution
from ucma.learning.records import (
    DecisionTrace,
    OutcomeReport,
    OutcomeSignal,
    Retrieval,
    SalienceUpdate,
)
from ucma.learning.salience import (
    attributions,
    bounded_update,
    normalise_scores,
    salience_delta,
    temporal_dampening,
)
from ucma.memory.retention import DEFAULT_OUTCOME_GAIN, after_outcome
from ucma.paradigms.predictive_evidence import learn_from_trace
from ucma.storage.base import Storage
from ucma.types import HistoryEntry, Learning, Procedure, Scope

__all__ = [
    "check_quality",
    "normalised_memory_scores",
    "observe_outcome",
    "record_retrieval",
    "track_decision",
]

_DAY = 86_400.0


def normalised_memory_scores(
    memory_ids: Sequence[str],
    memory_scores: Sequence[float] | Mapping[str, float] | None,
    minimum: float,
) -> dict[str, float]:
    """R10: one score per memory id (a list in the same order, a mapping by id,
    or None for equal shares), normalised to sum 1 with each at least ``minimum``."""
    ids = list(memory_ids)
    if len(set(ids)) != len(ids):
        raise ValidationError("memory_ids must not repeat an id")
    if memory_scores is None:
        raw = [1.0] * len(ids)
    elif isinstance(memory_scores, Mapping):
        if set(memory_scores) != set(ids):
            raise ValidationError("memory_scores must have exactly one score per memory id")
        raw = [memory_scores[i] for i in ids]
    else:
        raw = list(memory_scores)
        if len(raw) != len(ids):
            raise ValidationError(
                f"{len(ids)} memory ids but {len(raw)} memory scores; give one score per id"
            )
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("memory scores must be numbers")
    return dict(zip(ids, normalise_scores(raw, minimum), strict=True))


def check_quality(quality: object) -> float:
    """R13: outcome quality is a number in [-1, 1]."""
    if isinstance(quality, bool) or not isinstance(quality, int | float):
        raise ValidationError("quality must be a number between -1.0 and 1.0")
    value = float(quality)
    if not math.isfinite(value) or not -1.0 <= value <= 1.0:
        raise ValidationError(f"quality must be between -1.0 and 1.0, got {value}")
    return value


def record_retrieval(storage: Storage, retrieval: Retrieval) -> None:
    """Store what a recall returned and log ``memory.retrieved`` (caller's transaction)."""
    scope = Scope(retrieval.user_id, retrieval.agent_id)
    storage.traces.add_retrieval(retrieval)
    record(
        storage,
        scope,
        EventType.MEMORY_RETRIEVED,
        {
            "retrieval_id": retrieval.id,
            "memory_ids": list(retrieval.memory_ids),
            "query_hash": retrieval.query_hash,
        },
        retrieval.created_at,
    )


def track_decision(storage: Storage, scope: Scope, trace: DecisionTrace) -> DecisionTrace:
    """Insert a trace after checking its memories (and retrieval) exist in scope."""
    with storage.transaction():
        found = storage.memories.get_many(scope, trace.memory_ids)
        for memory_id in trace.memory_ids:
            if memory_id not in found:
                raise NotFoundError("memory", memory_id)
        if trace.retrieval_id is not None and (
            storage.traces.get_retrieval(scope, trace.retrieval_id) is None
        ):
            raise NotFoundError("retrieval", trace.retrieval_id)
        storage.traces.add(trace)
        record(
            storage,
            scope,
            EventType.DECISION_TRACKED,
            {
                "trace_id": trace.id,
                "memory_ids": trace.memory_ids,
                "memory_scores": dict(trace.memory_scores),
                "decision_type": trace.decision_type,
                "retrieval_id": trace.retrieval_id,
                "confidence": trace.confidence,
            },
            trace.created_at,
        )
    return trace


def observe_outcome(
    storage: Storage,
    scope: Scope,
    trace_id: str,
    quality: float,
    signal: OutcomeSignal,
    feedback: str | None,
    config: SalienceConfig,
    now: float,
    procedures_config: ProcedureConfig | None = None,
    stability_gain: float = DEFAULT_OUTCOME_GAIN,
    predictive_config: PredictiveConfig | None = None,
) -> OutcomeReport:
    """Record an outcome and apply everything that follows from it, atomically.
    Procedures' statuses move by ``procedures_config`` (defaults when None);
    retention stability by ``stability_gain`` (``ForgettingConfig.outcome_stability_gain``);
    the world model and self-model learn from it (``learn_from_trace``)."""
    with storage.transaction():
        trace = storage.traces.get(scope, trace_id)
        if trace is None:
            raise NotFoundError("trace", trace_id)
        if trace.outcome_observed:
            raise OutcomeAlreadyRecorded(trace_id)
        age_days = (now - trace.created_at) / _DAY
        if age_days > config.outcome_window_days:
            raise OutcomeWindowClosed(trace_id, age_days, config.outcome_window_days)
        _claim_outcome(storage, scope, trace_id, quality, signal, feedback, now)
        record(
            storage,
            scope,
            EventType.OUTCOME_OBSERVED,
            {"trace_id": trace_id, "quality": quality, "signal": signal.value},
            now,
        )
        credit = attributions(trace.memory_scores, config)
        records = storage.memories.get_many(scope, list(credit))
        updates = _salience_updates(storage, scope, trace_id, quality, credit, records, config, now)
        _reinforce_retention(storage, scope, quality, credit, records, config, stability_gain, now)
        # Re-read: the typed updates below write the whole row, salience included.
        fresh = storage.memories.get_many(scope, list(records))
        procedures, learnings = _update_statistics(
            storage, scope, trace_id, quality, fresh, now, procedures_config or ProcedureConfig()
        )
        transition, competence = learn_from_trace(
            storage, scope, trace, quality, now, predictive_config or PredictiveConfig()
        )
        completed = dataclasses.replace(
            trace,
            outcome_quality=quality,
            outcome_signal=signal,
            outcome_feedback=feedback,
            outcome_at=now,
        )
    return OutcomeReport(
        completed,
        updates,
        procedures=procedures,
        learnings=learnings,
        skipped=[m for m in credit if m not in records],
        transitions=[transition.id] if transition else [],
        competences=[competence.id] if competence else [],
    )


def _claim_outcome(
    storage: Storage,
    scope: Scope,
    trace_id: str,
    quality: float,
    signal: OutcomeSignal,
    feedback: str | None,
    now: float,
) -> None:
    """Fill in the trace's outcome before anything follows from it. The write is
    conditional (only a trace without an outcome takes one), so of two requests that
    both read the trace without one, in two processes or threads, the second finds it
    taken here (on PostgreSQL once the first commits) and its transaction, and every
    change it would make, rolls back with ``OutcomeAlreadyRecorded``."""
    try:
        storage.traces.set_outcome(
            scope, trace_id, quality=quality, signal=signal, feedback=feedback, observed_at=now
        )
    except ValidationError:
        current = storage.traces.get(scope, trace_id)
        if current is not None and current.outcome_observed:
            raise OutcomeAlreadyRecorded(trace_id) from None
        raise


def _salience_updates(
    storage: Storage,
    scope: Scope,
    trace_id: str,
    quality: float,
    credit: Mapping[str, float],
    records: Mapping[str, Any],
    config: SalienceConfig,
    now: float,
) -> list[SalienceUpdate]:
    updates = []
    for memory_id, attribution in credit.items():
        memory = records.get(memory_id)
        if memory is None:
            continue
        raw = salience_delta(quality, attribution, memory.temporal_level, config)
        bounded = bounded_update(raw, memory.outcome_adjustment, memory.base_salience, config)
        reason = (
            "positive_outcome"
            if quality > 0
            else "negative_outcome"
            if quality < 0
            else ("neutral_outcome")
        )
        update = SalienceUpdate(
            memory_id=memory_id,
            trace_id=trace_id,
            attribution=attribution,
            raw_delta=raw,
            delta=bounded.applied,
            previous_adjustment=memory.outcome_adjustment,
            new_adjustment=bounded.new_adjustment,
            reason=reason,
            created_at=now,
        )
        storage.memories.set_salience(
            scope,
            memory_id,
            base_salience=memory.base_salience,
            outcome_adjustment=update.new_adjustment,
        )
        record(
            storage,
            scope,
            EventType.SALIENCE_ADJUSTED,
            {
                "memory_id": memory_id,
                "trace_id": trace_id,
                "previous": update.previous_adjustment,
                "new": update.new_adjustment,
                "delta": update.delta,
                "raw_delta": raw,
                "attribution": attribution,
                "reason": reason,
            },
            now,
        )
        updates.append(update)
    storage.traces.add_updates(scope, updates)
    return updates


def _reinforce_retention(
    storage: Storage,
    scope: Scope,
    quality: float,
    credit: Mapping[str, float],
    records: Mapping[str, Any],
    config: SalienceConfig,
    gain: float,
    now: float,
) -> None:
    """R20: good outcomes lengthen retention stability, bad ones shorten it, each
    memory by its attribution times its level's dampening (the weight its salience
    moved by); every change is in the memory's history."""
    states = storage.retention.get_many(scope, [m for m in credit if m in records])
    updated = [
        after_outcome(
            state,
            quality,
            credit[state.memory_id]
            * temporal_dampening(records[state.memory_id].temporal_level, config),
            gain,
        )
        for state in states.values()
    ]
    storage.retention.put_many(scope, updated)
    storage.lifecycle.add_history(
        scope,
        [
            HistoryEntry(
                state.memory_id, "outcome", now, {"quality": quality, "stability": state.stability}
            )
            for state in updated
        ],
    )


def _update_statistics(
    storage: Storage,
    scope: Scope,
    trace_id: str,
    quality: float,
    records: Mapping[str, Any],
    now: float,
    procedures_config: ProcedureConfig,
) -> tuple[list[str], list[str]]:
    success = quality > 0
    procedures: list[str] = []
    learnings: list[str] = []
    for memory in records.values():
        if isinstance(memory, Procedure):
            record_execution(
                storage, scope, memory, success, now, procedures_config, trace_id=trace_id
            )
            procedures.append(memory.id)
        elif isinstance(memory, Learning):
            lesson = memory.applied(now)
            if quality != 0:
                lesson = lesson.validated_by(success, now)
            storage.learnings.update(lesson)
            learnings.append(memory.id)
            record(
                storage,
                scope,
                EventType.LEARNING_VALIDATED,
                {
                    "memory_id": memory.id,
                    "trace_id": trace_id,
                    "success": success if quality != 0 else None,
                    "confidence": lesson.confidence,
                    "application_count": lesson.application_count,
                },
                now,
            )
    return procedures, learnings
