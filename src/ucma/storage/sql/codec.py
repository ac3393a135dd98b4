"""Conversion between typed records and table rows (the same on both backends).

Writes: ``memory_row`` and the ``*_fields`` / ``step_rows`` functions build
the parameters of the INSERT and UPDATE statements, validating enums, scope
and JSON on the way in. Reads: the ``SELECT_*`` statements join ``memories``
(alias ``m``) with one typed table (alias ``t``), and ``record_from_row`` builds
fresh records from their rows (read by ``ucma.storage.sql.records``), so callers
never share state with the database. JSON columns use ``ensure_ascii=False``;
floats, lists, dicts and enums come back equal to what was stored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Generic, TypeVar

import numpy as np

from ucma.errors import ScopeError, ValidationError
from ucma.types import (
    Bank,
    Condition,
    Episode,
    Fact,
    FactStatus,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    Procedure,
    ProcedureStatus,
    ProcedureType,
    Provenance,
    RiskLevel,
    Tier,
)

__all__ = [
    "BUCKET_SECONDS",
    "INSERT_MEMORY",
    "SELECT_BY_KIND",
    "SELECT_EPISODES",
    "UPDATE_MEMORY",
    "bucket_of",
    "dumps",
    "episode_fields",
    "fact_fields",
    "ids_param",
    "key_of",
    "loads",
    "learning_fields",
    "memory_row",
    "memory_update_row",
    "optional_real",
    "procedure_fields",
    "real",
    "record_from_row",
    "step_rows",
    "tag_keys",
    "vector_blob",
    "vector_from_blob",
]

BUCKET_SECONDS = 3600
"""Width of a temporal bucket (seed 001: one bucket per hour)."""


# -- scalars -------------------------------------------------------------------


# ``json.dumps(value, ensure_ascii=False)`` builds an encoder on every call, and
# ``json.loads`` matches whitespace around the value twice: for the short JSON of
# each row read or written (metadata, id lists) that was most of the cost.
_ENCODER = json.JSONEncoder(ensure_ascii=False)
_DECODER = json.JSONDecoder()


def dumps(value: Any, what: str = "value") -> str:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{what} must be JSON-serialisable: {exc}") from exc


def loads(text: str) -> Any:
    """``json.loads(text)``, quicker for JSON without surrounding whitespace (what
    ``dumps`` writes); anything else goes through ``json.loads`` (and its errors)."""
    try:
        value, end = _DECODER.raw_decode(text)
    except (TypeError, ValueError):
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def ids_param(ids: Iterable[str]) -> str:
    """A JSON array bound as one parameter and expanded with ``json_each``.

    Queries filter such id lists with ``id IN (SELECT value FROM json_each(?))
    AND +user_id = ? AND +agent_id = ?``: the unary ``+`` keeps SQLite from
    scanning the whole scope through a scope index instead of probing ``id``.
    """
    return _ENCODER.encode(list(ids))


def key_of(text: str) -> str:
    """Index key of an entity or tag: case-insensitive, surrounding spaces ignored."""
    return text.strip().lower()


def tag_keys(tags: Iterable[str]) -> list[str]:
    """Distinct non-empty keys of a tag list, first occurrence first."""
    return list(dict.fromkeys(k for k in map(key_of, tags) if k))


def bucket_of(timestamp: float) -> int:
    return int(timestamp // BUCKET_SECONDS)


def real(value: float, field: str = "value") -> float:
    """A float SQLite can store faithfully: NaN would silently become NULL."""
    number = float(value)
    if number != number:
        raise ValidationError(f"{field} must be a number, got NaN")
    return number


def optional_real(value: float | None, field: str = "value") -> float | None:
    return None if value is None else real(value, field)


def _enum_value(enum: type[StrEnum], value: Any, field: str) -> str:
    try:
        return str(enum(value).value)
    except ValueError as exc:
        raise ValidationError(f"{field} must be one of {[e.value for e in enum]}") from exc


def vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def vector_from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32).copy()


_E = TypeVar("_E", bound=StrEnum)


class _Members(dict[str, _E], Generic[_E]):
    """An enum's members by stored value: a dict lookup where calling the enum costs
    a microsecond a column; a value it lacks goes to the enum (and its error)."""

    def __init__(self, enum: type[_E]) -> None:
        super().__init__((member.value, member) for member in enum)
        self._enum = enum

    def __missing__(self, value: str) -> _E:
        return self._enum(value)


_PROVENANCE = _Members(Provenance)
_BANK = _Members(Bank)
_TIER = _Members(Tier)
_FACT_STATUS = _Members(FactStatus)


# -- records -> rows -----------------------------------------------------------

INSERT_MEMORY = """
INSERT INTO memories (
    seq, id, kind, user_id, agent_id, content, provenance, temporal_level,
    base_salience, outcome_adjustment, created_at, updated_at, access_count,
    last_accessed, archived_at, metadata, search_context, bank
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

UPDATE_MEMORY = """
UPDATE memories SET content = ?, provenance = ?, temporal_level = ?, base_salience = ?,
    outcome_adjustment = ?, updated_at = ?, metadata = ?, bank = ?
WHERE seq = ?
"""


def memory_row(record: MemoryRecord, seq: int, search_context: str = "") -> tuple[Any, ...]:
    if not record.user_id or not record.agent_id:
        raise ScopeError(
            f"memory {record.id!r} has no user_id/agent_id; every record needs a scope"
        )
    if not isinstance(record.content, str):
        raise ValidationError(f"content of {record.id!r} must be a string")
    return (
        seq,
        record.id,
        record.kind.value,
        record.user_id,
        record.agent_id,
        record.content,
        _enum_value(Provenance, record.provenance, "provenance"),
        int(record.temporal_level),
        real(record.base_salience, "base_salience"),
        real(record.outcome_adjustment, "outcome_adjustment"),
        real(record.created_at, "created_at"),
        optional_real(record.updated_at, "updated_at"),
        int(record.access_count),
        optional_real(record.last_accessed, "last_accessed"),
        optional_real(record.archived_at, "archived_at"),
        dumps(record.metadata, "metadata"),
        search_context,
        _enum_value(Bank, record.bank, "bank"),
    )


def memory_update_row(record: MemoryRecord, seq: int) -> tuple[Any, ...]:
    row = memory_row(record, seq)
    # content, provenance, temporal_level, base_salience, outcome_adjustment, updated_at,
    # metadata, bank
    return (row[5], row[6], row[7], row[8], row[9], row[11], row[15], row[17], seq)


def episode_fields(episode: Episode) -> tuple[Any, ...]:
    """Typed columns of an episode, after ``seq, user_id, agent_id``."""
    timestamp = real(episode.timestamp, "timestamp")
    if math.isinf(timestamp):
        raise ValidationError(f"timestamp of episode {episode.id!r} must be finite")
    return (
        episode.session_id,
        timestamp,
        bucket_of(timestamp),
        episode.source,
        dumps(list(episode.participants), "participants"),
        dumps(list(episode.tags), "tags"),
        episode.summary,
        _enum_value(Tier, episode.tier, "tier"),
    )


def fact_fields(fact: Fact) -> tuple[Any, ...]:
    return (
        fact.subject,
        fact.predicate,
        fact.object,
        key_of(fact.subject),
        key_of(fact.predicate),
        key_of(fact.object),
        real(fact.confidence, "confidence"),
        dumps(list(fact.source_episode_ids), "source_episode_ids"),
        int(fact.reinforcement_count),
        optional_real(fact.last_verified, "last_verified"),
        optional_real(fact.valid_from, "valid_from"),
        optional_real(fact.valid_until, "valid_until"),
        _enum_value(FactStatus, fact.status, "status"),
        optional_real(fact.recorded_at, "recorded_at"),
        optional_real(fact.superseded_at, "superseded_at"),
        fact.superseded_by,
    )


def procedure_fields(procedure: Procedure) -> tuple[Any, ...]:
    return (
        procedure.name,
        procedure.description,
        dumps(list(procedure.trigger_tags), "trigger_tags"),
        _enum_value(ProcedureStatus, procedure.status, "status"),
        real(procedure.success_rate, "success_rate"),
        int(procedure.execution_count),
        optional_real(procedure.last_used, "last_used"),
        _enum_value(ProcedureType, procedure.procedure_type, "procedure_type"),
        procedure.domain,
        dumps(
            [[c.subject, c.predicate, c.object] for c in procedure.preconditions], "preconditions"
        ),
        _enum_value(RiskLevel, procedure.risk_level, "risk_level"),
        dumps(list(procedure.failure_modes), "failure_modes"),
        dumps(list(procedure.source_trajectories), "source_trajectories"),
        int(procedure.success_count),
    )


def step_rows(procedure: Procedure, seq: int) -> list[tuple[Any, ...]]:
    return [
        (
            seq,
            position,
            step.description,
            step.action_type,
            dumps(step.action_spec, "action_spec"),
            step.success_criteria,
            step.on_failure,
            int(step.max_retries),
        )
        for position, step in enumerate(procedure.steps)
    ]


def learning_fields(learning: Learning) -> tuple[Any, ...]:
    return (
        _enum_value(LearningType, learning.learning_type, "learning_type"),
        learning.title,
        dumps(list(learning.evidence), "evidence"),
        dumps(list(learning.applicability), "applicability"),
        real(learning.confidence, "confidence"),
        real(learning.impact_score, "impact_score"),
        optional_real(learning.last_applied, "last_applied"),
        int(learning.application_count),
        1 if learning.validated else 0,
    )


# -- rows -> records -----------------------------------------------------------

_COMMON = """m.seq, m.id, m.user_id, m.agent_id, m.content, m.provenance, m.temporal_level,
    m.base_salience, m.outcome_adjustment, m.created_at, m.updated_at, m.access_count,
    m.last_accessed, m.archived_at, m.metadata, m.bank"""
_N_COMMON = 16

SELECT_EPISODES = f"""
SELECT {_COMMON}, t.session_id, t.timestamp, t.source, t.participants, t.tags, t.summary, t.tier
FROM episodes t JOIN memories m ON m.seq = t.seq
"""
SELECT_FACTS = f"""
SELECT {_COMMON}, t.subject, t.predicate, t.object, t.confidence, t.source_episode_ids,
    t.reinforcement_count, t.last_verified, t.valid_from, t.valid_until, t.status,
    t.recorded_at, t.superseded_at, t.superseded_by
FROM facts t JOIN memories m ON m.seq = t.seq
"""
SELECT_PROCEDURES = f"""
SELECT {_COMMON}, t.name, t.description, t.trigger_tags, t.status, t.success_rate,
    t.execution_count, t.last_used, t.procedure_type, t.domain, t.preconditions, t.risk_level,
    t.failure_modes, t.source_trajectories, t.success_count
FROM procedures t JOIN memories m ON m.seq = t.seq
"""
SELECT_LEARNINGS = f"""
SELECT {_COMMON}, t.learning_type, t.title, t.evidence, t.applicability, t.confidence,
    t.impact_score, t.last_applied, t.application_count, t.validated
FROM learnings t JOIN memories m ON m.seq = t.seq
"""
SELECT_BY_KIND = {
    MemoryKind.EPISODIC: SELECT_EPISODES,
    MemoryKind.SEMANTIC: SELECT_FACTS,
    MemoryKind.PROCEDURAL: SELECT_PROCEDURES,
    MemoryKind.LEARNING: SELECT_LEARNINGS,
}


def _common(row: Sequence[Any]) -> dict[str, Any]:
    return {
        "id": row[1],
        "user_id": row[2],
        "agent_id": row[3],
        "content": row[4],
        "provenance": _PROVENANCE[row[5]],
        "temporal_level": row[6],
        "base_salience": row[7],
        "outcome_adjustment": row[8],
        "created_at": row[9],
        "updated_at": row[10],
        "access_count": row[11],
        "last_accessed": row[12],
        "archived_at": row[13],
        "metadata": loads(row[14]),
        "bank": _BANK[row[15]],
    }


def _episode(row: Sequence[Any]) -> Episode:
    (session_id, timestamp, source, participants, tags, summary, tier) = row[_N_COMMON:]
    return Episode(
        **_common(row),
        session_id=session_id,
        timestamp=timestamp,
        source=source,
        participants=loads(participants),
        tags=loads(tags),
        summary=summary,
        tier=_TIER[tier],
    )


def _fact(row: Sequence[Any]) -> Fact:
    (
        subject,
        predicate,
        object_,
        confidence,
        sources,
        reinforcements,
        last_verified,
        valid_from,
        valid_until,
        status,
        recorded_at,
        superseded_at,
        superseded_by,
    ) = row[_N_COMMON:]
    return Fact(
        **_common(row),
        subject=subject,
        predicate=predicate,
        object=object_,
        confidence=confidence,
        source_episode_ids=loads(sources),
        reinforcement_count=reinforcements,
        last_verified=last_verified,
        valid_from=valid_from,
        valid_until=valid_until,
        status=_FACT_STATUS[status],
        recorded_at=recorded_at,
        superseded_at=superseded_at,
        superseded_by=superseded_by,
    )


def _procedure(row: Sequence[Any]) -> Procedure:
    (
        name,
        description,
        trigger_tags,
        status,
        success_rate,
        execution_count,
        last_used,
        procedure_type,
        domain,
        preconditions,
        risk_level,
        failure_modes,
        source_trajectories,
        success_count,
    ) = row[_N_COMMON:]
    return Procedure(
        **_common(row),
        name=name,
        description=description,
        trigger_tags=loads(trigger_tags),
        status=ProcedureStatus(status),
        success_rate=success_rate,
        execution_count=execution_count,
        last_used=last_used,
        procedure_type=ProcedureType(procedure_type),
        domain=domain,
        preconditions=[Condition(*triple) for triple in loads(preconditions)],
        risk_level=RiskLevel(risk_level),
        failure_modes=loads(failure_modes),
        source_trajectories=loads(source_trajectories),
        success_count=success_count,
    )


def _learning(row: Sequence[Any]) -> Learning:
    (
        learning_type,
        title,
        evidence,
        applicability,
        confidence,
        impact_score,
        last_applied,
        application_count,
        validated,
    ) = row[_N_COMMON:]
    return Learning(
        **_common(row),
        learning_type=LearningType(learning_type),
        title=title,
        evidence=loads(evidence),
        applicability=loads(applicability),
        confidence=confidence,
        impact_score=impact_score,
        last_applied=last_applied,
        application_count=application_count,
        validated=bool(validated),
    )


_FROM_ROW = {
    MemoryKind.EPISODIC: _episode,
    MemoryKind.SEMANTIC: _fact,
    MemoryKind.PROCEDURAL: _procedure,
    MemoryKind.LEARNING: _learning,
}


def record_from_row(kind: MemoryKind, row: Sequence[Any]) -> MemoryRecord:
    return _FROM_ROW[kind](row)
