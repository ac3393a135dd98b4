"""What outcomes do to the world model and the self-model (storage thread, inside the
caller's write transaction; the maths is ``world_model`` and ``self_model``).

- ``observe_transition``: doing an action in a context led to an outcome. The
  transition of that outcome is confirmed (created at the first sighting, with as many
  errors as the action had been seen in that context before); every other transition
  of the action in that context counts an error, since it was not what happened.
- ``record_attempt``: one attempt of a capability, its result, and the success
  probability predicted before it; a failure reason is a failure mode.
- ``record_failure_mode``: a failure mode seen without an attempt being counted (a
  strategy of the domain failed for that reason; seed 000 flow 5).
- ``learn_from_trace``: the outcome learning loop feeds both (seed 000's
  post-interaction learning) with no extra call: a decision's outcome is an attempt of
  its capability (``metadata["capability"]``, else its ``decision_type``), predicted at
  its ``confidence`` (or ``metadata["predicted_success"]``), and a transition of its
  action (``metadata["action"]``, else the capability) in its ``metadata["context"]``
  to ``success`` or ``failure``. A neutral outcome (quality 0) says neither.

Every change appends an event in the same transaction (``world.transition_observed``,
``self.attempt_recorded``, ``self.failure_mode_recorded``; imports log their state; the
schema logs ``world.transition_erased`` and ``self.competence_erased`` when forgetting a
person deletes one), so ``replay_predictive`` rebuilds every transition's and
competence's counts from the log.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ucma.config import PredictiveConfig
from ucma.errors import ValidationError
from ucma.events.log import Event, EventType, is_redacted, record
from ucma.learning.records import DecisionTrace
from ucma.paradigms.predictive_records import Competence, Transition
from ucma.paradigms.self_model import with_attempt, with_failure_mode
from ucma.paradigms.world_model import FAILURE, SUCCESS, normal
from ucma.storage.base import Storage
from ucma.types import Scope

__all__ = [
    "MAX_CONTEXT",
    "CompetenceState",
    "TransitionState",
    "check_context",
    "check_label",
    "check_prediction_metadata",
    "learn_from_attempt",
    "learn_from_trace",
    "live_states",
    "observe_transition",
    "record_attempt",
    "record_failure_mode",
    "replay_predictive",
]

MAX_CONTEXT = 50
"""Conditions one context may hold (as many as a strategy's preconditions)."""
_MAX_TEXT = 500
_GROUP = 10_000  # transitions of one action in one context, read on each observation


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def check_label(value: object, where: str) -> str:
    """A name, condition or value as stored: non-empty text of at most 500 characters
    with its spacing collapsed (a number or boolean becomes its text: 2 and 2.0 are
    "2", True is "true")."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValidationError(f"{where} must be finite")
        # 2 and 2.0 are one value (JSON clients send either).
        value = str(int(value)) if float(value).is_integer() else repr(float(value))
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_TEXT:
        raise ValidationError(
            f"{where} must be a non-empty string (or number or boolean) of at most "
            f"{_MAX_TEXT} characters"
        )
    return " ".join(value.split())


def check_context(value: object, where: str = "context") -> dict[str, str]:
    """A context as stored: a mapping of condition to value, both non-empty text
    (numbers and booleans become text), at most ``MAX_CONTEXT`` conditions, no two
    conditions the same once case and spacing are folded."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{where} must be an object mapping conditions to values")
    if len(value) > MAX_CONTEXT:
        raise ValidationError(f"{where} has {len(value)} conditions; the limit is {MAX_CONTEXT}")
    out: dict[str, str] = {}
    seen: set[str] = set()
    for key, item in value.items():
        name = check_label(key, f"{where} condition")
        if normal(name) in seen:
            raise ValidationError(f"{where} names the condition {name!r} twice")
        seen.add(normal(name))
        out[name] = check_label(item, f"{where}[{name!r}]")
    return out


def check_prediction_metadata(metadata: Mapping[str, Any]) -> None:
    """A decision's metadata keys that feed the world model and self-model, checked
    when the decision is recorded: ``capability`` and ``action`` text, ``context`` a
    context, ``predicted_success`` a probability."""
    for name in ("capability", "action"):
        if name in metadata:
            check_label(metadata[name], f"metadata[{name!r}]")
    if "context" in metadata:
        check_context(metadata["context"], "metadata['context']")
    if "predicted_success" in metadata:
        value = metadata["predicted_success"]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0.0 <= float(value) <= 1.0
        ):
            raise ValidationError("metadata['predicted_success'] must be a number in [0, 1]")


def observe_transition(
    storage: Storage,
    scope: Scope,
    action: str,
    context: Mapping[str, str],
    outcome: str,
    source: str,
    now: float,
) -> Transition:
    """Fold one observation into the transitions of ``action`` in ``context``; returns
    the transition of ``outcome``."""
    group = storage.predictive.transitions(scope, action=action, context=context, limit=_GROUP)
    wanted = normal(outcome)
    changed: list[Transition] = []
    confirmed: Transition | None = None
    erred: list[str] = []
    for transition in group:
        if normal(transition.outcome) == wanted:
            transition.confirmations += 1
            confirmed = transition
        else:
            transition.errors += 1
            erred.append(transition.id)
        transition.updated_at = now
        changed.append(transition)
    created = confirmed is None
    initial_errors = sum(t.confirmations for t in group)
    if confirmed is None:
        confirmed = Transition(
            id=_new_id("tr"),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            action=action,
            context=dict(context),
            outcome=outcome,
            confirmations=1,
            errors=initial_errors,
            created_at=now,
            updated_at=now,
        )
        changed.append(confirmed)
    storage.predictive.put_transitions(changed)
    record(
        storage,
        scope,
        EventType.TRANSITION_OBSERVED,
        {
            "transition_id": confirmed.id,
            "created": created,
            "initial_errors": initial_errors if created else None,
            "erred": erred,
            "action": action,
            "context": dict(context),
            "outcome": outcome,
            "source": source,
        },
        now,
    )
    return confirmed


def _competence(
    storage: Storage, scope: Scope, capability: str, now: float
) -> tuple[Competence, bool]:
    """The capability's competence, and whether it is new (not stored yet)."""
    found = storage.predictive.get_competence(scope, capability)
    if found is not None:
        return found, False
    new = Competence(
        id=_new_id("cap"),
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        capability=capability,
        created_at=now,
        updated_at=now,
    )
    return new, True


def record_attempt(
    storage: Storage,
    scope: Scope,
    capability: str,
    success: bool,
    predicted: float | None,
    source: str,
    reason: str | None,
    now: float,
    config: PredictiveConfig,
) -> tuple[Competence, bool]:
    """Fold one attempt of ``capability`` into its competence (created on first use);
    returns it and whether ``reason`` was a failure mode not seen before."""
    before, created = _competence(storage, scope, capability, now)
    after, novel = with_attempt(before, success, predicted, source, reason, now, config)
    storage.predictive.put_competences([after])
    record(
        storage,
        scope,
        EventType.ATTEMPT_RECORDED,
        {
            "competence_id": after.id,
            "capability": after.capability,
            "created": created,
            "success": success,
            "predicted": predicted,
            "source": source,
            "reason": reason,
            "novel_failure_mode": novel,
        },
        now,
    )
    return after, novel


def record_failure_mode(
    storage: Storage, scope: Scope, capability: str, mode: str, source: str, now: float
) -> Competence:
    """Count one more sighting of failure mode ``mode`` of ``capability``."""
    before, created = _competence(storage, scope, capability, now)
    after, novel = with_failure_mode(before, mode, now)
    storage.predictive.put_competences([after])
    record(
        storage,
        scope,
        EventType.FAILURE_MODE_RECORDED,
        {
            "competence_id": after.id,
            "capability": after.capability,
            "created": created,
            "mode": mode,
            "novel": novel,
            "source": source,
        },
        now,
    )
    return after


def learn_from_trace(
    storage: Storage,
    scope: Scope,
    trace: DecisionTrace,
    quality: float,
    now: float,
    config: PredictiveConfig,
) -> tuple[Transition | None, Competence | None]:
    """The world-model transition and the competence a decision's outcome updated
    (None, None for a neutral outcome)."""
    if quality == 0:
        return None, None
    success = quality > 0
    meta = trace.metadata
    capability = check_label(meta.get("capability", trace.decision_type), "capability")
    action = check_label(meta.get("action", capability), "action")
    context = check_context(meta.get("context"))
    raw = meta.get("predicted_success", trace.confidence)
    predicted = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    source = f"decision {trace.id}"
    transition = observe_transition(
        storage, scope, action, context, SUCCESS if success else FAILURE, source, now
    )
    competence, _ = record_attempt(
        storage, scope, capability, success, predicted, source, None, now, config
    )
    return transition, competence


def learn_from_attempt(
    storage: Storage,
    scope: Scope,
    domain: str,
    conditions: Iterable[tuple[str, str, str]],
    success: bool,
    failure_reason: str | None,
    source: str,
    now: float,
    config: PredictiveConfig,
) -> tuple[Transition, Competence]:
    """A trajectory (a task of ``domain`` done while ``conditions`` held, each a
    (subject, predicate, object) triple) as an attempt of the domain and a transition
    of attempting it in that context to success or failure."""
    values: dict[str, list[str]] = {}
    for subject, predicate, value in conditions:
        values.setdefault(f"{subject} {predicate}", []).append(value)
    context = check_context({k: ", ".join(sorted(set(v))) for k, v in values.items()})
    transition = observe_transition(
        storage, scope, domain, context, SUCCESS if success else FAILURE, source, now
    )
    competence, _ = record_attempt(
        storage, scope, domain, success, None, source, failure_reason, now, config
    )
    return transition, competence


# ------------------------------------------------------------------------------ replay


@dataclass(slots=True)
class TransitionState:
    """A transition's counts as the events tell them."""

    confirmations: int = 0
    errors: int = 0
    promoted_fact_id: str | None = None


@dataclass(slots=True)
class CompetenceState:
    """A competence's counts as the events tell them."""

    attempts: int = 0
    successes: int = 0
    predicted_count: int = 0
    failure_modes: dict[str, int] = field(default_factory=dict)


def _add_mode(state: CompetenceState, mode: str) -> None:
    key = normal(mode)
    state.failure_modes[key] = state.failure_modes.get(key, 0) + 1


def replay_predictive(
    events: Iterable[Event],
) -> tuple[dict[str, TransitionState], dict[str, CompetenceState]]:
    """Every transition's and competence's counts rebuilt from a scope's events alone,
    in ``seq`` order: what ``replay`` compares with the live records."""
    transitions: dict[str, TransitionState] = {}
    competences: dict[str, CompetenceState] = {}
    for event in events:
        if is_redacted(event):  # forgetting a person redacted it: its record went too
            continue
        p = event.payload
        if event.type == EventType.TRANSITION_ERASED:
            transitions.pop(str(p["transition_id"]), None)
        elif event.type == EventType.COMPETENCE_ERASED:
            competences.pop(str(p["competence_id"]), None)
        elif event.type == EventType.TRANSITION_OBSERVED:
            key = str(p["transition_id"])
            if p.get("created"):
                transitions[key] = TransitionState(1, int(p.get("initial_errors") or 0))
            elif key in transitions:
                transitions[key].confirmations += 1
            for other in p.get("erred", []):
                if other in transitions:
                    transitions[other].errors += 1
        elif event.type == EventType.TRANSITION_IMPORTED:
            t = p["transition"]
            transitions[t["id"]] = TransitionState(
                int(t["confirmations"]), int(t["errors"]), t.get("promoted_fact_id")
            )
        elif event.type == EventType.PATTERN_PROMOTED:
            if p["transition_id"] in transitions:
                transitions[p["transition_id"]].promoted_fact_id = p["fact_id"]
        elif event.type == EventType.ATTEMPT_RECORDED:
            state = competences.setdefault(str(p["competence_id"]), CompetenceState())
            state.attempts += 1
            state.successes += 1 if p["success"] else 0
            state.predicted_count += 1 if p.get("predicted") is not None else 0
            if p.get("reason"):
                _add_mode(state, p["reason"])
        elif event.type == EventType.FAILURE_MODE_RECORDED:
            _add_mode(competences.setdefault(str(p["competence_id"]), CompetenceState()), p["mode"])
        elif event.type == EventType.COMPETENCE_IMPORTED:
            c = p["competence"]
            competences[c["id"]] = CompetenceState(
                int(c["attempts"]),
                int(c["successes"]),
                int(c["predicted_count"]),
                {normal(m["mode"]): int(m["count"]) for m in c["failure_modes"]},
            )
    return transitions, competences


def live_states(
    storage: Storage, scope: Scope
) -> tuple[dict[str, TransitionState], dict[str, CompetenceState]]:
    """The live records' counts, in ``replay_predictive``'s form (caller's transaction)."""
    transitions = {
        t.id: TransitionState(t.confirmations, t.errors, t.promoted_fact_id)
        for t in storage.predictive.transitions(scope, limit=2**62)
    }
    competences = {
        c.id: CompetenceState(
            c.attempts,
            c.successes,
            c.predicted_count,
            {normal(m.mode): m.count for m in c.failure_modes},
        )
        for c in storage.predictive.competences(scope, limit=2**62)
    }
    return transitions, competences
