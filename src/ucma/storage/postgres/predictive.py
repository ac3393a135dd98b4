"""``PredictiveStore`` over PostgreSQL: one row per world-model transition and one per
self-model competence (migration 14).

``action_key``, ``context_key``, ``outcome_key`` and ``capability_key`` are the
``ucma.paradigms.world_model`` keys of the texts, unique with the scope, so one
action in one context leading to one outcome is one row. Lists (context, bins,
failure modes, evidence) are JSON.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from ucma.errors import ValidationError
from ucma.paradigms.predictive_records import (
    Competence,
    Transition,
)
from ucma.paradigms.world_model import context_key, normal
from ucma.storage.base import PredictiveStore
from ucma.storage.postgres.connection import Database
from ucma.storage.sql.connection import one
from ucma.storage.sqlite.predictive import (
    COMPETENCE_COLUMNS,
    TRANSITION_COLUMNS,
    competence_from_row,
    competence_row,
    transition_from_row,
    transition_row,
)
from ucma.types import Scope

__all__ = ["PostgresPredictiveStore"]

_SCOPE = "user_id = ? AND agent_id = ?"


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


class PostgresPredictiveStore(PredictiveStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def _put(self, sql: str, table: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        with self._db.write() as conn:
            for row in rows:
                try:
                    cursor = conn.execute(sql, row)
                except psycopg.errors.IntegrityError as exc:
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
