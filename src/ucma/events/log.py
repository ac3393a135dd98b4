"""The event log: event types, the ``Event`` record, appending, and replay.

Every state change appends one immutable event in the same transaction as the
change (DESIGN.md "events"). Events are ordered per scope by ``seq`` (1, 2,
... with no gaps) and globally by ``position`` (what a publisher's cursor
counts). Two sources append them:

- the storage backend itself, for the memory lifecycle (``memory.stored``,
  ``memory.archived``, ``memory.restored``, ``memory.deleted``): the SQLite
  schema does it with triggers, so no write path can forget;
- ``record`` below, called inside the write transactions of the learning loop
  (retrievals, decisions, outcomes, salience, procedure and learning
  statistics, procedure status changes), of conflict resolution (detected, resolved, superseded)
  and of opinions (formed, reinforced, weakened, replaced: ``ucma.paradigms.evidence``)
  and goals (added, decomposed, progressed, suspended, resumed, abandoned, worked on:
  ``ucma.engine.goals``; ``ucma.paradigms.goals.replay_goals`` folds them).

``replay_salience`` is the salience projection rebuilt from events alone:
every memory's ``outcome_adjustment`` is its adjustment when stored plus the
deltas of its ``salience.adjusted`` events; deleted memories drop out. The
engine's ``replay`` compares it with the live records.

``replay_strategies`` is the strategy projection: each learned strategy or pitfall's
application count, successes, status, source trajectories, preconditions and failure
modes from its ``strategy.learned`` / ``strategy.merged`` events and the procedure
outcome and status events after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ucma.types import Scope

if TYPE_CHECKING:
    from ucma.storage.base import Storage

__all__ = [
    "Event",
    "EventType",
    "SalienceProjection",
    "StrategyState",
    "record",
    "replay_salience",
    "replay_strategies",
]


class EventType(StrEnum):
    MEMORY_STORED = "memory.stored"
    MEMORY_RETRIEVED = "memory.retrieved"
    MEMORY_ARCHIVED = "memory.archived"
    MEMORY_RESTORED = "memory.restored"
    MEMORY_DELETED = "memory.deleted"
    MEMORY_UPDATED = "memory.updated"
    DECISION_TRACKED = "decision.tracked"
    OUTCOME_OBSERVED = "outcome.observed"
    SALIENCE_ADJUSTED = "salience.adjusted"
    PROCEDURE_OUTCOME = "procedure.outcome_recorded"
    PROCEDURE_STATUS_CHANGED = "procedure.status_changed"
    LEARNING_VALIDATED = "learning.validated"
    STRATEGY_LEARNED = "strategy.learned"
    STRATEGY_MERGED = "strategy.merged"
    CONFLICT_DETECTED = "conflict.detected"
    CONFLICT_RESOLVED = "conflict.resolved"
    FACT_SUPERSEDED = "fact.superseded"
    MEMORY_SUPERSEDED = "memory.superseded"
    OPINION_FORMED = "opinion.formed"
    OPINION_REINFORCED = "opinion.reinforced"
    OPINION_WEAKENED = "opinion.weakened"
    OPINION_REPLACED = "opinion.replaced"
    GOAL_ADDED = "goal.added"
    GOAL_DECOMPOSED = "goal.decomposed"
    GOAL_PROGRESSED = "goal.progressed"
    GOAL_SUSPENDED = "goal.suspended"
    GOAL_RESUMED = "goal.resumed"
    GOAL_ABANDONED = "goal.abandoned"
    GOAL_WORKED = "goal.worked"


@dataclass(frozen=True, slots=True)
class Event:
    """One immutable state change. ``id`` is unique (publishers use it as the
    message id); ``seq`` orders the events of one scope, ``position`` all."""

    id: str
    position: int
    user_id: str
    agent_id: str
    seq: int
    type: str
    payload: dict[str, Any]
    occurred_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "position": self.position,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "seq": self.seq,
            "type": self.type,
            "payload": dict(self.payload),
            "occurred_at": self.occurred_at,
        }


def record(
    storage: Storage,
    scope: Scope,
    event_type: EventType,
    payload: Mapping[str, Any],
    now: float,
) -> Event:
    """Append one event; call it inside the transaction of the change it logs."""
    return storage.events.append(scope, event_type.value, dict(payload), now)


@dataclass(slots=True)
class SalienceProjection:
    """Outcome adjustments rebuilt from events; ``mismatches`` (filled by the
    engine's ``replay``) lists memory ids whose live value differs."""

    adjustments: dict[str, float]
    events_applied: int
    last_seq: int
    mismatches: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def matches_live(self) -> bool:
        return not self.mismatches


def replay_salience(events: Iterable[Event]) -> SalienceProjection:
    """Fold a scope's events (in ``seq`` order) into the salience projection."""
    adjustments: dict[str, float] = {}
    applied = 0
    last = 0
    for event in events:
        last = max(last, event.seq)
        memory_id = str(event.payload.get("memory_id", ""))
        if event.type == EventType.MEMORY_STORED:
            adjustments[memory_id] = float(event.payload.get("outcome_adjustment", 0.0))
        elif event.type == EventType.SALIENCE_ADJUSTED:
            if memory_id in adjustments:
                adjustments[memory_id] += float(event.payload["delta"])
        elif event.type == EventType.MEMORY_DELETED:
            adjustments.pop(memory_id, None)
        else:
            continue
        applied += 1
    return SalienceProjection(adjustments, applied, last)


@dataclass(slots=True)
class StrategyState:
    """A learned strategy's statistics as the events tell them."""

    application_count: int = 0
    success_count: int = 0
    status: str = "draft"
    source_trajectories: list[str] = field(default_factory=list)
    preconditions: list[list[str]] = field(default_factory=list)
    failure_modes: list[str] = field(default_factory=list)


def replay_strategies(events: Iterable[Event]) -> dict[str, StrategyState]:
    """Fold a scope's events (in ``seq`` order) into each learned strategy's state."""
    states: dict[str, StrategyState] = {}
    for event in events:
        memory_id = str(event.payload.get("memory_id", ""))
        if event.type == EventType.STRATEGY_LEARNED:
            states[memory_id] = StrategyState(
                source_trajectories=[str(event.payload["trajectory_id"])],
                preconditions=[list(c) for c in event.payload.get("preconditions", [])],
                failure_modes=list(event.payload.get("failure_modes", [])),
            )
            continue
        state = states.get(memory_id)
        if state is None:
            continue
        if event.type == EventType.STRATEGY_MERGED:
            state.source_trajectories.append(str(event.payload["trajectory_id"]))
            state.preconditions = [list(c) for c in event.payload.get("preconditions", [])]
            state.failure_modes = list(event.payload.get("failure_modes", []))
        elif event.type == EventType.PROCEDURE_OUTCOME:
            state.application_count += 1
            state.success_count += 1 if event.payload.get("success") else 0
            if "failure_modes" in event.payload:
                state.failure_modes = list(event.payload["failure_modes"])
        elif event.type == EventType.PROCEDURE_STATUS_CHANGED:
            state.status = str(event.payload["to"])
        elif event.type == EventType.MEMORY_DELETED:
            del states[memory_id]
    return states
