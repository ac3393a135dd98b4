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
  statistics, procedure status changes), of conflict resolution (detected, resolved, superseded),
  of opinions (formed, reinforced, weakened, replaced: ``ucma.paradigms.evidence``),
  of the world model and self-model (``ucma.paradigms.predictive_evidence``)
  and of goals (added, decomposed, progressed, suspended, resumed, abandoned, worked on:
  ``ucma.engine.goals``; ``ucma.paradigms.goals.replay_goals`` folds them).

``replay_salience`` is the salience projection rebuilt from events alone:
every memory's ``outcome_adjustment`` is its adjustment when stored plus the
deltas of its ``salience.adjusted`` events; deleted memories drop out. The
engine's ``replay`` compares it with the live records.

``replay_strategies`` is the strategy projection: each learned strategy or pitfall's
application count, successes, status, source trajectories, preconditions and failure
modes from its ``strategy.learned`` / ``strategy.merged`` events and the procedure
outcome and status events after them (an imported one starts from the state its
``strategy.learned`` event carries).

``differences`` compares rebuilt records with the live ones, field by field: the
engine's ``replay`` runs it over the salience, opinion and strategy projections.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ucma.types import Procedure, Scope

if TYPE_CHECKING:
    from ucma.storage.base import Storage

__all__ = [
    "Event",
    "EventType",
    "Mismatch",
    "SalienceProjection",
    "StrategyState",
    "differences",
    "is_redacted",
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
    TRANSITION_OBSERVED = "world.transition_observed"
    TRANSITION_IMPORTED = "world.transition_imported"
    PATTERN_PROMOTED = "world.pattern_promoted"
    TRANSITION_ERASED = "world.transition_erased"
    ATTEMPT_RECORDED = "self.attempt_recorded"
    FAILURE_MODE_RECORDED = "self.failure_mode_recorded"
    COMPETENCE_IMPORTED = "self.competence_imported"
    COMPETENCE_ERASED = "self.competence_erased"
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


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A field the events rebuild differently from the live record: its name and
    the two values (None on the side that has no record)."""

    field: str
    replayed: Any
    live: Any


def _differs(replayed: Any, live: Any) -> bool:
    numbers = isinstance(replayed, int | float) and isinstance(live, int | float)
    return not abs(replayed - live) <= 1e-9 if numbers else bool(replayed != live)


def differences(
    rebuilt: Mapping[str, Mapping[str, Any]], live: Mapping[str, Mapping[str, Any]]
) -> dict[str, Mismatch]:
    """Each record (by id) whose rebuilt fields differ from its live ones, with the
    first field that does (numbers within 1e-9 agree); a record on one side only
    differs in its first field, None on the other side."""
    found: dict[str, Mismatch] = {}
    for record_id in sorted(rebuilt.keys() | live.keys()):
        was, now = rebuilt.get(record_id, {}), live.get(record_id, {})
        for name in was or now:
            if _differs(was.get(name), now.get(name)):
                found[record_id] = Mismatch(name, was.get(name), now.get(name))
                break
    return found


@dataclass(slots=True)
class SalienceProjection:
    """What ``replay`` rebuilt from events: every memory's outcome adjustment, and
    how many opinions and learned strategies; ``mismatches`` (filled by the engine's
    ``replay``) maps a memory or opinion id whose live state differs to how."""

    adjustments: dict[str, float]
    events_applied: int
    last_seq: int
    mismatches: dict[str, Mismatch] = field(default_factory=dict)
    opinions: int = 0
    strategies: int = 0

    @property
    def matches_live(self) -> bool:
        return not self.mismatches


def is_redacted(event: Event) -> bool:
    """Whether forgetting a person redacted the event (its payload is then only
    ``{"erased": true}``). Every replay skips such events: the records they told of
    went with the person, and their other events name them by id only."""
    return bool(event.payload.get("erased"))


def replay_salience(events: Iterable[Event]) -> SalienceProjection:
    """Fold a scope's events (in ``seq`` order) into the salience projection."""
    adjustments: dict[str, float] = {}
    applied = 0
    last = 0
    for event in events:
        last = max(last, event.seq)
        if is_redacted(event):
            continue
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

    @classmethod
    def of(cls, procedure: Procedure) -> StrategyState:
        """The same fields of a live strategy or pitfall, to compare with a replay."""
        return cls(
            application_count=procedure.execution_count,
            success_count=procedure.success_count,
            status=procedure.status.value,
            source_trajectories=list(procedure.source_trajectories),
            preconditions=[list(c.key()) for c in procedure.preconditions],
            failure_modes=list(procedure.failure_modes),
        )


def replay_strategies(events: Iterable[Event]) -> dict[str, StrategyState]:
    """Fold a scope's events (in ``seq`` order) into each learned strategy's state."""
    states: dict[str, StrategyState] = {}
    for event in events:
        if is_redacted(event):
            continue
        payload = event.payload
        memory_id = str(payload.get("memory_id", ""))
        if event.type == EventType.STRATEGY_LEARNED:
            trajectories = payload.get("source_trajectories", [payload.get("trajectory_id")])
            states[memory_id] = StrategyState(
                application_count=int(payload.get("application_count", 0)),
                success_count=int(payload.get("success_count", 0)),
                status=str(payload.get("status", "draft")),
                source_trajectories=[str(t) for t in trajectories],
                preconditions=[list(c) for c in payload.get("preconditions", [])],
                failure_modes=list(payload.get("failure_modes", [])),
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
