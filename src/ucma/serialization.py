"""Records to and from JSON-ready dicts (API responses, export and import).

``record_to_dict`` adds ``"kind"`` so ``record_from_dict`` can rebuild the
right class; enums become their string values and back. Unknown keys or a
missing required field raise ``ValidationError`` rather than a TypeError.

What people read (REST answers, the CLI's ``--json``) goes through
``record_to_api_dict`` and ``hit_to_dict``: beside each epoch-seconds time, an ISO 8601
copy in UTC (``created_at`` and ``created_at_iso``), and scores rounded to 4 decimals.
Exports keep the plain ``record_to_dict`` form, which ``record_from_dict`` reads back.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ucma.config import PredictiveConfig
from ucma.errors import ValidationError
from ucma.paradigms.goal_records import (
    Anticipation,
    Goal,
    GoalConflict,
    GoalOrigin,
    GoalPlan,
    GoalStatus,
)
from ucma.paradigms.predictive_records import Competence
from ucma.paradigms.self_model import measured
from ucma.types import (
    Bank,
    Condition,
    DuplicateAttempt,
    Episode,
    Fact,
    FactStatus,
    GraphEdge,
    Hit,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    MemorySource,
    Opinion,
    OpinionEvidence,
    OpinionStatus,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    ProcedureType,
    Provenance,
    RetentionInfo,
    RiskLevel,
    SleepRun,
    StrategyMatch,
    Tier,
    TrajectoryLearning,
)

if TYPE_CHECKING:
    from ucma.events.log import SalienceProjection
    from ucma.learning.records import OutcomeReport
    from ucma.paradigms.synthesis_records import InteractionLearning, Synthesis
    from ucma.retrieval.cascade import RecallResult

__all__ = [
    "anticipation_to_dict",
    "competence_to_api_dict",
    "duplicate_to_dict",
    "edge_from_dict",
    "edge_to_dict",
    "goal_from_dict",
    "goal_plan_to_dict",
    "goal_to_api_dict",
    "goal_to_dict",
    "hit_to_dict",
    "iso_time",
    "link_to_dict",
    "outcome_report_to_dict",
    "recall_result_to_dict",
    "opinion_from_dict",
    "opinion_to_api_dict",
    "opinion_to_dict",
    "record_from_dict",
    "record_to_api_dict",
    "record_to_dict",
    "replay_to_dict",
    "retention_from_dict",
    "retention_to_dict",
    "sleep_run_to_dict",
    "source_to_dict",
    "interaction_learning_to_dict",
    "strategy_match_to_dict",
    "synthesis_to_dict",
    "trajectory_learning_to_dict",
    "with_iso_times",
]

_CLASSES: dict[MemoryKind, type[MemoryRecord]] = {
    MemoryKind.EPISODIC: Episode,
    MemoryKind.SEMANTIC: Fact,
    MemoryKind.PROCEDURAL: Procedure,
    MemoryKind.LEARNING: Learning,
}
_ENUM_FIELDS = {
    "bank": Bank,
    "provenance": Provenance,
    "tier": Tier,
    "learning_type": LearningType,
    "procedure_type": ProcedureType,
    "risk_level": RiskLevel,
}
# ``status`` means a different thing per kind.
_STATUS_ENUM: dict[type[MemoryRecord], type[ProcedureStatus] | type[FactStatus]] = {
    Procedure: ProcedureStatus,
    Fact: FactStatus,
}


def record_to_dict(record: MemoryRecord) -> dict[str, Any]:
    """A JSON-ready dict of every field, plus ``kind`` and ``effective_salience``:
    ``dataclasses.asdict`` with the fields' enums as their values. Plain values are
    taken as they are (``asdict`` deep-copies each, most of an API answer's cost);
    lists, dicts and nested records are copied as ``asdict`` copies them."""
    data: dict[str, Any] = {}
    for name in _field_names(type(record)):
        value = getattr(record, name)
        if isinstance(value, StrEnum):
            value = value.value
        elif not isinstance(value, _PLAIN):
            value = _copied(value)
        data[name] = value
    data["kind"] = record.kind.value
    data["effective_salience"] = record.effective_salience
    return data


_PLAIN = (str, int, float, type(None))


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    """A dataclass's field names, in order (kept per class)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in dataclasses.fields(cls))
    return names


def _copied(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` renders a field's value: records as dicts,
    containers copied element by element, anything else deep-copied."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _copied(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_copied(item) for item in value])
    if isinstance(value, list | tuple):
        return type(value)(_copied(item) for item in value)
    if isinstance(value, dict):
        return type(value)((_copied(key), _copied(item)) for key, item in value.items())
    if isinstance(value, _PLAIN):
        return value
    return copy.deepcopy(value)


#: Epoch-seconds fields of memory records (and of API keys) that get an ISO 8601 copy.
TIME_FIELDS = frozenset(
    {
        "created_at",
        "updated_at",
        "last_accessed",
        "archived_at",
        "timestamp",
        "last_verified",
        "valid_from",
        "valid_until",
        "recorded_at",
        "superseded_at",
        "last_used",
        "last_applied",
        "revoked_at",
        "deadline",
        "last_worked",
        "completed_at",
    }
)
SCORE_DECIMALS = 4


def iso_time(epoch: float | None) -> str | None:
    """``epoch`` seconds as ISO 8601 in UTC to the second (``2025-05-03T14:00:00Z``);
    None for None or a time no calendar can show (an open-ended ``valid_until``)."""
    if epoch is None or isinstance(epoch, bool) or not math.isfinite(epoch):
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def with_iso_times(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``<field>_iso`` after each set time field of ``TIME_FIELDS``; the
    epoch fields stay as they are."""
    out: dict[str, Any] = {}
    for name, value in data.items():
        out[name] = value
        if name in TIME_FIELDS and isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{name}_iso"] = iso_time(value)
    return out


def record_to_api_dict(record: MemoryRecord) -> dict[str, Any]:
    """``record_to_dict`` for people and API clients: ISO 8601 times beside the epochs."""
    return with_iso_times(record_to_dict(record))


def opinion_to_dict(opinion: Opinion) -> dict[str, Any]:
    """An opinion as JSON (events, export); ``opinion_from_dict`` reads it back."""
    return {
        "id": opinion.id,
        "user_id": opinion.user_id,
        "agent_id": opinion.agent_id,
        "topic": opinion.topic,
        "stance": opinion.stance,
        "holder": opinion.holder,
        "confidence": opinion.confidence,
        "status": opinion.status.value,
        "evidence": [e.to_dict() for e in opinion.evidence],
        "memory_id": opinion.memory_id,
        "replaces": opinion.replaces,
        "replaced_by": opinion.replaced_by,
        "created_at": opinion.created_at,
        "updated_at": opinion.updated_at,
    }


def competence_to_api_dict(competence: Competence, config: PredictiveConfig) -> dict[str, Any]:
    """A competence with what its counts say (``self_model.measured``): the estimated
    ``accuracy`` with its credible interval ``low``..``high``, the ``actual_rate``, the
    ``mean_predicted`` before attempts, the ``calibration_error`` and ``brier`` score of
    those predictions, and ``is_weak``; ISO 8601 times beside the epochs."""
    counts = measured(competence, config)
    return {
        **with_iso_times(competence.to_dict()),
        "accuracy": counts.accuracy.mean,
        "low": counts.accuracy.low,
        "high": counts.accuracy.high,
        "actual_rate": counts.actual_rate,
        "mean_predicted": counts.mean_predicted,
        "calibration_error": counts.calibration_error,
        "brier": counts.brier,
        "is_weak": counts.is_weak,
    }


def goal_to_dict(goal: Goal) -> dict[str, Any]:
    """A goal as JSON (events, export); ``goal_from_dict`` reads it back."""
    return {
        "id": goal.id,
        "user_id": goal.user_id,
        "agent_id": goal.agent_id,
        "description": goal.description,
        "priority": goal.priority,
        "status": goal.status.value,
        "progress": goal.progress,
        "deadline": goal.deadline,
        "parent_id": goal.parent_id,
        "subgoals": list(goal.subgoals),
        "blocking_on": list(goal.blocking_on),
        "conflicts": [c.to_dict() for c in goal.conflicts],
        "accepted": list(goal.accepted),
        "origin": goal.origin.value,
        "last_worked": goal.last_worked,
        "completed_at": goal.completed_at,
        "created_at": goal.created_at,
        "updated_at": goal.updated_at,
    }


def goal_to_api_dict(goal: Goal) -> dict[str, Any]:
    """``goal_to_dict`` for people and API clients: ISO 8601 times beside the epochs."""
    return with_iso_times(goal_to_dict(goal))


def goal_from_dict(data: dict[str, Any]) -> Goal:
    """Rebuild a goal from ``goal_to_dict`` output; ValidationError if malformed."""
    try:
        fields = dict(data)
        fields["status"] = GoalStatus(fields.get("status", "active"))
        fields["origin"] = GoalOrigin(fields.get("origin", "user"))
        fields["conflicts"] = [GoalConflict(**c) for c in fields.get("conflicts", [])]
        goal = Goal(**fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"invalid goal: {exc}") from exc
    for name in ("priority", "progress"):
        value = getattr(goal, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValidationError(f"a goal's {name} must be in [0, 1]")
    for name in ("id", "user_id", "agent_id", "description"):
        if not isinstance(getattr(goal, name), str) or not getattr(goal, name):
            raise ValidationError(f"a goal's {name} must be a non-empty string")
    for name in ("subgoals", "blocking_on", "accepted"):
        values = getattr(goal, name)
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValidationError(f"a goal's {name} must be a list of strings")
    for name in ("deadline", "last_worked", "completed_at", "created_at", "updated_at"):
        value = getattr(goal, name)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ValidationError(f"a goal's {name} must be a finite number")
    return goal


def anticipation_to_dict(anticipation: Anticipation) -> dict[str, Any]:
    """``anticipate``'s answer: knowledge gaps, skill gaps (each with the estimate behind
    it), what memory does know, and the skill estimates of every task."""
    return {
        "goal_id": anticipation.goal_id,
        "knowledge_gaps": [
            {"topic": g.topic, "goal_id": g.goal_id} for g in anticipation.knowledge_gaps
        ],
        "skill_gaps": [
            {
                "task": g.task,
                "goal_id": g.goal_id,
                "reason": g.reason,
                "estimate": g.estimate.to_dict(),
            }
            for g in anticipation.skill_gaps
        ],
        "known": list(anticipation.known),
        "skills": [s.to_dict() for s in anticipation.skills],
        "gaps": anticipation.all_gaps(),
    }


def goal_plan_to_dict(plan: GoalPlan) -> dict[str, Any]:
    """``pursue_goal``'s answer: the goal after the pass, its steps and its gaps."""
    return {
        "goal": goal_to_api_dict(plan.goal),
        "steps": [
            {
                "goal": goal_to_api_dict(step.goal),
                "strategy_id": step.strategy_id,
                "strategy": step.strategy,
                "strategy_steps": list(step.strategy_steps),
                "blocked_by": list(step.blocked_by),
                "achievable": step.achievable,
            }
            for step in plan.steps
        ],
        "anticipation": anticipation_to_dict(plan.anticipation),
    }


def opinion_to_api_dict(opinion: Opinion) -> dict[str, Any]:
    """``opinion_to_dict`` for people and API clients: ISO 8601 times beside the epochs."""
    return with_iso_times(opinion_to_dict(opinion))


def opinion_from_dict(data: dict[str, Any]) -> Opinion:
    """Rebuild an opinion from ``opinion_to_dict`` output; ValidationError if malformed."""
    try:
        fields = {k: v for k, v in data.items() if not k.endswith("_iso")}
        fields["status"] = OpinionStatus(fields.get("status", "current"))
        fields["evidence"] = [OpinionEvidence(**e) for e in fields.get("evidence", [])]
        opinion = Opinion(**fields)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValidationError(f"invalid opinion: {exc}") from exc
    if not isinstance(opinion.confidence, int | float) or not 0 <= opinion.confidence <= 1:
        raise ValidationError("an opinion's confidence must be in [0, 1]")
    for name in ("topic", "stance", "holder"):
        if not isinstance(getattr(opinion, name), str):
            raise ValidationError(f"an opinion's {name} must be a string")
    return opinion


def record_from_dict(data: dict[str, Any]) -> MemoryRecord:
    """Rebuild a record from ``record_to_dict`` output."""
    fields = dict(data)
    try:
        kind = MemoryKind(fields.pop("kind"))
    except (KeyError, ValueError) as exc:
        raise ValidationError(f"record has no valid kind: {data.get('kind')!r}") from exc
    fields.pop("effective_salience", None)
    cls = _CLASSES[kind]
    try:
        enums: dict[str, Any] = dict(_ENUM_FIELDS)
        if cls in _STATUS_ENUM:
            enums["status"] = _STATUS_ENUM[cls]
        for name, enum in enums.items():
            if name in fields and fields[name] is not None:
                fields[name] = enum(fields[name])
        if cls is Procedure and "steps" in fields:
            fields["steps"] = [ProcedureStep(**step) for step in fields["steps"]]
        if cls is Procedure and "preconditions" in fields:
            fields["preconditions"] = [Condition(**c) for c in fields["preconditions"]]
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"invalid {kind.value} record: {exc}") from exc


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    """A hit for API answers: scores rounded to 4 decimals (the ranking is done; float
    noise such as 0.8732000000000001 says nothing), the memory with ISO times."""
    return {
        "id": hit.id,
        "kind": hit.kind.value,
        "bank": hit.memory.bank.value,
        "content": hit.content,
        "score": round(hit.score, SCORE_DECIMALS),
        "relevance": round(hit.relevance, SCORE_DECIMALS),
        "source": hit.source,
        "graph_distance": hit.graph_distance,
        "channels": {name: round(value, SCORE_DECIMALS) for name, value in hit.channels.items()},
        "needs_review": hit.needs_review,
        "layer": hit.layer or None,
        "confidence": hit.confidence.to_dict() if hit.confidence is not None else None,
        "memory": record_to_api_dict(hit.memory),
    }


def recall_result_to_dict(result: RecallResult) -> dict[str, Any]:
    """``recall``'s answer: hits (each with its five confidence factors and layer), the
    cascade path, the overall confidence, the low-confidence flag and the retrieval id."""
    data: dict[str, Any] = {
        "query": result.query,
        "query_class": result.query_class,
        "paradigms": list(result.paradigms),
        "retrieval_id": result.retrieval_id,
        "confidence": round(result.confidence, 4),
        "low_confidence": result.low_confidence,
        "cascade_path": result.cascade_path.to_dict(),
        "results": [hit_to_dict(hit) for hit in result.hits],
    }
    if result.explanation:
        data["explanation"] = result.explanation
    return data


def outcome_report_to_dict(report: OutcomeReport) -> dict[str, Any]:
    """What an outcome changed: the completed trace and every salience update."""
    return {
        "trace": report.trace.to_dict(),
        "salience_updates": [update.to_dict() for update in report.updates],
        "procedures_updated": list(report.procedures),
        "learnings_updated": list(report.learnings),
        "skipped_memory_ids": list(report.skipped),
        "transitions_updated": list(report.transitions),
        "competences_updated": list(report.competences),
    }


def edge_to_dict(edge: GraphEdge) -> dict[str, Any]:
    return dataclasses.asdict(edge)


def link_to_dict(edge: GraphEdge, target: MemoryRecord) -> dict[str, Any]:
    """One outgoing link of a memory (``links``): its type, weight and time, and the
    memory it points to."""
    return {
        "edge_type": edge.edge_type,
        "weight": edge.weight,
        "created_at": edge.created_at,
        "memory": record_to_api_dict(target),
    }


def edge_from_dict(data: dict[str, Any]) -> GraphEdge:
    try:
        return GraphEdge(**data)
    except TypeError as exc:
        raise ValidationError(f"invalid edge: {exc}") from exc


def retention_to_dict(state: RetentionInfo) -> dict[str, Any]:
    return dataclasses.asdict(state)


def retention_from_dict(data: dict[str, Any]) -> RetentionInfo:
    try:
        return RetentionInfo(**data)
    except TypeError as exc:
        raise ValidationError(f"invalid retention state: {exc}") from exc


def source_to_dict(source: MemorySource) -> dict[str, Any]:
    """One occurrence merged into a memory, with its time in ISO 8601 beside the epoch."""
    return {**dataclasses.asdict(source), "at_iso": iso_time(source.at)}


def duplicate_to_dict(attempt: DuplicateAttempt) -> dict[str, Any]:
    """One write that reinforced an existing memory instead of copying it."""
    return {
        **dataclasses.asdict(attempt),
        "similarity": round(attempt.similarity, SCORE_DECIMALS),
        "at_iso": iso_time(attempt.at),
    }


def sleep_run_to_dict(run: SleepRun) -> dict[str, Any]:
    """One recorded sleep cycle: id, why it ran, when (epoch seconds and ISO 8601),
    how long, the phases that completed, what each changed, interrupted, error."""
    return {
        "id": run.id,
        "trigger": run.trigger,
        "started_at": run.started_at,
        "started_at_iso": iso_time(run.started_at),
        "seconds": round(run.seconds, 4),
        "phases": list(run.phases),
        "changes": run.changes,
        "interrupted": run.interrupted,
        "error": run.error,
    }


def replay_to_dict(projection: SalienceProjection) -> dict[str, Any]:
    """A replay's summary: how many events it applied and how many memories, opinions
    and learned strategies it rebuilt, and for each record whose rebuilt state differs
    from the live one the first field that does, with both values (null on the side
    that has no such record)."""
    return {
        "events_applied": projection.events_applied,
        "last_seq": projection.last_seq,
        "memories": len(projection.adjustments),
        "opinions": projection.opinions,
        "strategies": projection.strategies,
        "matches_live": projection.matches_live,
        "mismatches": {
            record_id: {"field": m.field, "replayed": m.replayed, "live": m.live}
            for record_id, m in projection.mismatches.items()
        },
    }


def strategy_match_to_dict(match: StrategyMatch) -> dict[str, Any]:
    """One ``strategies_for`` result: the procedure, its scores (4 decimals), and what
    known facts say of its preconditions."""
    return {
        "score": round(match.score, SCORE_DECIMALS),
        "relevance": round(match.relevance, SCORE_DECIMALS),
        "lower_bound": round(match.lower_bound, SCORE_DECIMALS),
        "grounding": match.grounding,
        "met": [dataclasses.asdict(c) for c in match.met],
        "contradicted": [dataclasses.asdict(c) for c in match.contradicted],
        "procedure": record_to_api_dict(match.procedure),
    }


def trajectory_learning_to_dict(learning: TrajectoryLearning) -> dict[str, Any]:
    """What ``learn_from_trajectory`` kept: the trajectory id, each item, merged ids,
    and the ids of the pitfalls it refuted."""
    return {
        "trajectory_id": learning.trajectory_id,
        "items": [record_to_api_dict(p) for p in learning.items],
        "merged_ids": list(learning.merged_ids),
        "refuted_ids": list(learning.refuted_ids),
    }


def synthesis_to_dict(synthesis: Synthesis) -> dict[str, Any]:
    """``synthesize``'s answer: every paradigm's part (facts as recall hits, opinions
    and goals with ISO times), the conflict matrix's caveats, and whether the cache
    served part of it."""
    s = synthesis
    return {
        "query": s.query,
        "task": s.task,
        "paradigms": list(s.paradigms),
        "facts": [hit_to_dict(h) for h in s.facts],
        "preferences": [opinion_to_api_dict(o) for o in s.preferences],
        "strategies": [r.to_dict() for r in s.strategies],
        "prediction": s.prediction.to_dict() if s.prediction is not None else None,
        "goals": [goal_to_api_dict(g) for g in s.goals],
        "competence": s.competence.to_dict() if s.competence is not None else None,
        "advice": s.advice.to_dict() if s.advice is not None else None,
        "caveats": list(s.caveats),
        "cached": s.cached,
    }


def interaction_learning_to_dict(learning: InteractionLearning) -> dict[str, Any]:
    """What ``post_interaction`` changed in each paradigm, and the events it wrote."""
    x = learning
    return {
        "experience_id": x.experience_id,
        "opinions": list(x.opinions),
        "strategy_id": x.strategy_id,
        "strategies_extracted": list(x.strategies_extracted),
        "transition": x.transition.to_api_dict() if x.transition is not None else None,
        "competence": x.competence.to_dict() if x.competence is not None else None,
        "goal": goal_to_api_dict(x.goal) if x.goal is not None else None,
        "failure_mode_added": x.failure_mode_added,
        "failure_experience_id": x.failure_experience_id,
        "promoted_fact_ids": list(x.promoted_fact_ids),
        "events": list(x.events),
    }
