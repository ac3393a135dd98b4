"""``GoalStore`` over PostgreSQL: one row per goal or subgoal; the lists (subgoals,
blocking_on, conflicts, accepted) are JSON."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ucma.errors import ValidationError
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.storage.base import GoalStore
from ucma.storage.postgres.connection import Database
from ucma.storage.sql.connection import one
from ucma.storage.sqlite.codec import real
from ucma.storage.sqlite.goals import GOAL_COLUMNS, GOAL_ORDER, goal_from_row, goal_row
from ucma.types import Scope

__all__ = ["PostgresGoalStore"]


_UPSERT = f"""
INSERT INTO goals ({GOAL_COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    description = excluded.description, priority = excluded.priority,
    status = excluded.status, progress = excluded.progress, deadline = excluded.deadline,
    parent_id = excluded.parent_id, subgoals = excluded.subgoals,
    blocking_on = excluded.blocking_on, conflicts = excluded.conflicts,
    accepted = excluded.accepted, origin = excluded.origin,
    last_worked = excluded.last_worked, completed_at = excluded.completed_at,
    updated_at = excluded.updated_at
WHERE goals.user_id = excluded.user_id AND goals.agent_id = excluded.agent_id
"""

# Highest priority first, then the nearest deadline (none last), then the oldest.


def _optional(value: float | None, name: str) -> float | None:
    return None if value is None else real(value, name)


class PostgresGoalStore(GoalStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def put(self, goals: Sequence[Goal]) -> None:
        rows = [goal_row(goal) for goal in goals]
        if not rows:
            return
        with self._db.write() as conn:
            for row in rows:
                if conn.execute(_UPSERT, row).rowcount == 0:
                    raise ValidationError(
                        f"goal id {row[0]!r} is already in use; import into the scope it "
                        "came from or into a separate database"
                    )

    def get(self, scope: Scope, goal_id: str) -> Goal | None:
        found = self._select(
            "WHERE id = ? AND user_id = ? AND agent_id = ?",
            (goal_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def get_many(self, scope: Scope, goal_ids: Sequence[str]) -> dict[str, Goal]:
        if not goal_ids:
            return {}
        found = self._select(
            "WHERE id = ANY(?::text[]) AND user_id = ? AND agent_id = ?",
            (list(dict.fromkeys(goal_ids)), scope.user_id, scope.agent_id),
        )
        return {g.id: g for g in found}

    def list(
        self,
        scope: Scope,
        *,
        statuses: Sequence[GoalStatus] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Goal]:
        where = "WHERE user_id = ? AND agent_id = ?"
        params: list[Any] = [scope.user_id, scope.agent_id]
        if statuses is not None:
            if not statuses:
                return []
            where += " AND status = ANY(?::text[])"
            params.append([GoalStatus(s).value for s in statuses])
        params += [int(limit), int(offset)]
        return self._select(f"{where} {GOAL_ORDER} LIMIT ? OFFSET ?", params)

    def count(self, scope: Scope) -> int:
        with self._db.read() as conn:
            (n,) = one(
                conn.execute(
                    "SELECT count(*) FROM goals WHERE user_id = ? AND agent_id = ?",
                    (scope.user_id, scope.agent_id),
                )
            )
        return int(n)

    def _select(self, where: str, params: Sequence[Any]) -> builtins.list[Goal]:
        with self._db.read() as conn:
            rows = conn.execute(f"SELECT {GOAL_COLUMNS} FROM goals {where}", params).fetchall()
        return [goal_from_row(row) for row in rows]
