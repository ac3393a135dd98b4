"""Records of the learning loop: retrievals, decision traces, outcomes and
salience updates (seed 003 "Decision Trace / Outcome / Salience Update
Schema"), with the outcome signals of rule R12.

A ``DecisionTrace`` is written once by ``decide`` and completed once by
``outcome``; its ``memory_scores`` are already normalised (R10). Records are
plain dataclasses; stores return fresh copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "DecisionTrace",
    "OutcomeReport",
    "OutcomeSignal",
    "Retrieval",
    "SalienceUpdate",
]


class OutcomeSignal(StrEnum):
    """How an outcome was detected: the user's reaction, the task's result, or the
    agent's own feedback."""

    # seed 003 R12's signals

    USER_ACCEPTED = "user_accepted"
    USER_REJECTED = "user_rejected"
    USER_MODIFIED = "user_modified"
    TASK_COMPLETED = "task_completed"
    TASK_FAILED = "task_failed"
    TASK_PARTIAL = "task_partial"
    AGENT_FEEDBACK = "agent_feedback"


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What one recall returned (seed 003 R8: "include retrieval_id")."""

    id: str
    user_id: str
    agent_id: str
    query_hash: str
    memory_ids: list[str]
    scores: list[float]
    created_at: float


@dataclass(kw_only=True, slots=True)
class DecisionTrace:
    """A decision and the memories that fed it; the outcome is filled in later.

    ``memory_scores`` maps memory id to its normalised contribution (sum 1,
    each at least 0.01: rules R10 and R18). ``retrieval_id`` points at the
    recall the memories came from, when the caller passed it.
    """

    id: str
    user_id: str
    agent_id: str = "default"
    session_id: str | None = None
    retrieval_id: str | None = None
    memory_scores: dict[str, float]
    decision_type: str
    summary: str
    confidence: float
    alternatives_count: int
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    outcome_quality: float | None = None
    outcome_signal: OutcomeSignal | None = None
    outcome_feedback: str | None = None
    outcome_at: float | None = None

    @property
    def memory_ids(self) -> list[str]:
        return list(self.memory_scores)

    @property
    def outcome_observed(self) -> bool:
        return self.outcome_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "retrieval_id": self.retrieval_id,
            "memory_scores": dict(self.memory_scores),
            "decision_type": self.decision_type,
            "summary": self.summary,
            "confidence": self.confidence,
            "alternatives_count": self.alternatives_count,
            "created_at": self.created_at,
            "metadata": dict(self.metadata),
            "outcome_observed": self.outcome_observed,
            "outcome_quality": self.outcome_quality,
            "outcome_signal": self.outcome_signal.value if self.outcome_signal else None,
            "outcome_feedback": self.outcome_feedback,
            "outcome_at": self.outcome_at,
        }


@dataclass(frozen=True, slots=True)
class SalienceUpdate:
    """One memory's salience change from one outcome (seed 003).

    ``raw_delta`` is R15's quality x attribution x learning rate x dampening;
    ``delta`` is what was applied after R16's bounds (single update, cumulative
    range, effective range), so ``new_adjustment = previous_adjustment + delta``.
    """

    memory_id: str
    trace_id: str
    attribution: float
    raw_delta: float
    delta: float
    previous_adjustment: float
    new_adjustment: float
    reason: str
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "trace_id": self.trace_id,
            "attribution": self.attribution,
            "raw_delta": self.raw_delta,
            "delta": self.delta,
            "previous_adjustment": self.previous_adjustment,
            "new_adjustment": self.new_adjustment,
            "reason": self.reason,
            "created_at": self.created_at,
        }


@dataclass(slots=True)
class OutcomeReport:
    """What ``outcome`` changed: the completed trace, each salience update, the
    procedures and learnings whose statistics it updated, and the world-model
    transition and self-model competence it fed (seed 000)."""

    trace: DecisionTrace
    updates: list[SalienceUpdate]
    procedures: list[str] = field(default_factory=list)
    learnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Memory ids of the trace that no longer exist (deleted since the decision)."""
    transitions: list[str] = field(default_factory=list)
    competences: list[str] = field(default_factory=list)
