"""``PredictiveStore`` over SQL: one row per world-model transition and one per
self-model competence (migration 14).

``action_key``, ``context_key``, ``outcome_key`` and ``capability_key`` are the
``ucma.paradigms.world_model`` keys of the texts, unique with the scope, so one
action in one context leading to one outcome is one row. Lists (context, bins,
failure modes, evidence) are JSON.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ucma.errors import ValidationError
from ucma.paradigms.predictive_records import (
    Competence,
    CompetenceEvidence,
    FailureMode,
    Transition,
)
from ucma.paradigms.world_model import context_key, normal
from ucma.storage.base import PredictiveStore
from ucma.storage.sql.codec import dumps, real
from ucma.storage.sql.connection import Database, one
from ucma.types import Scope

__all__ = [
    "COMPETENCE_COLUMNS",
    "SqlPredictiveStore",
    "TRANSITION_COLUMNS",
    "competence_from_row",
    "competence_row",
    "transition_from_row",
    "transition_row",
]

_SCOPE = "user_id = ? AND agent_id = ?"

TRANSITION_COLUMNS = """id, user_id, agent_id, action, context, outcome, confirmations, errors,
    promoted_fact_id, created_at, updated_at"""

_UPSERT_TRANSITION = """
INSERT INTO transitions (
    id, user_id, agent_id, action, context, outcome, confirmations, errors,
    promoted_fact_id, created_at, updated_at, action_key, context_key, outcome_key
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    action = excluded.action, context = excluded.context, outcome = excluded.outcome,
    confirmations = excluded.confirmations, errors = excluded.errors,
    promoted_fact_id = excluded.promoted_fact_id, updated_at = excluded.updated_at,
    action_key = excluded.action_key, context_key = excluded.context_key,
    outcome_key = excluded.outcome_key
WHERE transitions.user_id = excluded.user_id AND transitions.agent_id = excluded.agent_id
"""

COMPETENCE_COLUMNS = """id, user_id, agent_id, capability, attempts, successes,
    predicted_count, predicted_sum, brier_sum, bins, failure_modes, evidence,
    created_at, updated_at"""

_UPSERT_COMPETENCE = """
INSERT INTO competences (
    id, user_id, agent_id, capability, attempts, successes, predicted_count, predicted_sum,
    brier_sum, bins, failure_modes, evidence, created_at, updated_at, capability_key
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    capability = excluded.capability, attempts = excluded.attempts,
    successes = excluded.successes, predicted_count = excluded.predicted_count,
    predicted_sum = excluded.predicted_sum, brier_sum = excluded.brier_sum,
    bins = excluded.bins, failure_modes = excluded.failure_modes,
    evidence = excluded.evidence, updated_at = excluded.updated_at,
    capability_key = excluded.capability_key
WHERE competences.user_id = excluded.user_id AND competences.agent_id = excluded.agent_id
"""


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def _owner(record: Transition | Competence) -> None:
    if not record.user_id or not record.agent_id:
        raise ValidationError(f"{record.id!r} has no user_id/agent_id")


def transition_row(t: Transition) -> tuple[Any, ...]:
    _owner(t)
    if not isinstance(t.context, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in t.context.items()
    ):
        raise ValidationError(f"transition {t.id!r}: context must map strings to strings")
    return (
        t.id,
        t.user_id,
        t.agent_id,
        t.action,
        dumps(t.context, "context"),
        t.outcome,
        _count(t.confirmations, "confirmations"),
        _count(t.errors, "errors"),
        t.promoted_fact_id,
        real(t.created_at, "created_at"),
        real(t.updated_at, "updated_at"),
        normal(t.action),
        context_key(t.context),
        normal(t.outcome),
    )


def transition_from_row(row: Sequence[Any]) -> Transition:
    return Transition(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        action=row[3],
        context=json.loads(row[4]),
        outcome=row[5],
        confirmations=row[6],
        errors=row[7],
        promoted_fact_id=row[8],
        created_at=row[9],
        updated_at=row[10],
    )


def competence_row(c: Competence) -> tuple[Any, ...]:
    _owner(c)
    attempts = _count(c.attempts, "attempts")
    if not 0 <= _count(c.successes, "successes") <= attempts:
        raise ValidationError(f"competence {c.id!r}: successes must be in [0, attempts]")
    return (
        c.id,
        c.user_id,
        c.agent_id,
        c.capability,
        attempts,
        c.successes,
        _count(c.predicted_count, "predicted_count"),
        real(c.predicted_sum, "predicted_sum"),
        real(c.brier_sum, "brier_sum"),
        dumps([[float(x) for x in b] for b in c.bins], "bins"),
        dumps([m.to_dict() for m in c.failure_modes], "failure_modes"),
        dumps([e.to_dict() for e in c.evidence], "evidence"),
        real(c.created_at, "created_at"),
        real(c.updated_at, "updated_at"),
        normal(c.capability),
    )


def competence_from_row(row: Sequence[Any]) -> Competence:
    return Competence(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        capability=row[3],
        attempts=row[4],
        successes=row[5],
        predicted_count=row[6],
        predicted_sum=row[7],
        brier_sum=row[8],
        bins=json.loads(row[9]),
        failure_modes=[FailureMode(**m) for m in json.loads(row[10])],
        evidence=[CompetenceEvidence(**e) for e in json.loads(row[11])],
        created_at=row[12],
        updated_at=row[13],
    )


class SqlPredictiveStore(PredictiveStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def _put(self, sql: str, table: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        with self._db.write() as conn:
            for row in rows:
                try:
                    cursor = conn.execute(sql, row)
                except self._db.dialect.integrity_error as exc:
                    raise ValidationError(
                        f"{table} {row[0]!r} repeats the key of another row of its scope"
                    ) from exc
                if cursor.rowcount == 0:
                    raise ValidationError(
                        f"{table} id {row[0]!r} is already in use; import into the scope it "
                        "came from or into a separate database"
                    )

    def put_transitions(self, transitions: Sequence[Transition]) -> None:
        rows = [transition_row(t) for t in transitions]
        self._put(_UPSERT_TRANSITION, "transition", rows)

    def get_transition(self, scope: Scope, transition_id: str) -> Transition | None:
        found = self._transitions(
            f"WHERE id = ? AND {_SCOPE}", (transition_id, scope.user_id, scope.agent_id)
        )
        return found[0] if found else None

    def transitions(
        self,
        scope: Scope,
        *,
        action: str | None = None,
        context: Mapping[str, str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Transition]:
        where = [_SCOPE]
        params: list[Any] = [scope.user_id, scope.agent_id]
        if action is not None:
            where.append("action_key = ?")
            params.append(normal(action))
        if context is not None:
            where.append("context_key = ?")
            params.append(context_key(context))
        params += [int(limit), int(offset)]
        return self._transitions(
            "WHERE " + " AND ".join(where) + " ORDER BY confirmations + errors DESC, "
            "confirmations DESC, id LIMIT ? OFFSET ?",
            params,
        )

    def promotable(
        self, scope: Scope, above: float, min_support: int, *, limit: int = 100
    ) -> builtins.list[Transition]:
        return self._transitions(
            f"WHERE {_SCOPE} AND promoted_fact_id IS NULL AND confirmations + errors >= ? "
            "AND (confirmations + 1.0) / (confirmations + errors + 2.0) > ? "
            "ORDER BY updated_at, id LIMIT ?",
            (scope.user_id, scope.agent_id, int(min_support), float(above), int(limit)),
        )

    def _transitions(self, where: str, params: Sequence[Any]) -> builtins.list[Transition]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {TRANSITION_COLUMNS} FROM transitions {where}", params
            ).fetchall()
        return [transition_from_row(row) for row in rows]

    def put_competences(self, competences: Sequence[Competence]) -> None:
        rows = [competence_row(c) for c in competences]
        self._put(_UPSERT_COMPETENCE, "competence", rows)

    def get_competence(self, scope: Scope, capability: str) -> Competence | None:
        found = self._competences(
            f"WHERE {_SCOPE} AND capability_key = ?",
            (scope.user_id, scope.agent_id, normal(capability)),
        )
        return found[0] if found else None

    def competences(
        self, scope: Scope, *, limit: int = 1000, offset: int = 0
    ) -> builtins.list[Competence]:
        return self._competences(
            f"WHERE {_SCOPE} ORDER BY attempts DESC, capability_key LIMIT ? OFFSET ?",
            (scope.user_id, scope.agent_id, int(limit), int(offset)),
        )

    def _competences(self, where: str, params: Sequence[Any]) -> builtins.list[Competence]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {COMPETENCE_COLUMNS} FROM competences {where}", params
            ).fetchall()
        return [competence_from_row(row) for row in rows]

    def count(self, scope: Scope) -> dict[str, int]:
        key = (scope.user_id, scope.agent_id)
        with self._db.read() as conn:
            (transitions,) = one(
                conn.execute(f"SELECT count(*) FROM transitions WHERE {_SCOPE}", key)
            )
            (competences,) = one(
                conn.execute(f"SELECT count(*) FROM competences WHERE {_SCOPE}", key)
            )
        return {"transitions": int(transitions), "competences": int(competences)}
