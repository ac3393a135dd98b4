"""``GoalStore`` over SQL: one row per goal or subgoal; the lists (subgoals,
blocking_on, conflicts, accepted) are JSON."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from ucma.errors import ValidationError
from ucma.paradigms.goal_records import Goal, GoalConflict, GoalOrigin, GoalStatus
from ucma.storage.base import GoalStore
from ucma.storage.sql.codec import dumps, real
from ucma.storage.sql.connection import Database, one
from ucma.types import Scope

__all__ = ["GOAL_COLUMNS", "GOAL_ORDER", "SqlGoalStore", "goal_from_row", "goal_row"]

GOAL_COLUMNS = """id, user_id, agent_id, description, priority, status, progress, deadline,
    parent_id, subgoals, blocking_on, conflicts, accepted, origin, last_worked, completed_at,
    created_at, updated_at"""

_UPSERT = f"""
INSERT INTO goals ({GOAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
GOAL_ORDER = "ORDER BY priority DESC, deadline IS NULL, deadline, created_at, id"


def _optional(value: float | None, name: str) -> float | None:
    return None if value is None else real(value, name)


def goal_row(goal: Goal) -> tuple[Any, ...]:
    if not goal.user_id or not goal.agent_id:
        raise ValidationError(f"goal {goal.id!r} has no user_id/agent_id")
    for name in ("priority", "progress"):
        value = real(getattr(goal, name), name)
        if not 0.0 <= value <= 1.0:
            raise ValidationError(f"{name} of goal {goal.id!r} must be in [0, 1]")
    return (
        goal.id,
        goal.user_id,
        goal.agent_id,
        goal.description,
        real(goal.priority, "priority"),
        GoalStatus(goal.status).value,
        real(goal.progress, "progress"),
        _optional(goal.deadline, "deadline"),
        goal.parent_id,
        dumps(list(goal.subgoals), "subgoals"),
        dumps(list(goal.blocking_on), "blocking_on"),
        dumps([c.to_dict() for c in goal.conflicts], "conflicts"),
        dumps(list(goal.accepted), "accepted"),
        GoalOrigin(goal.origin).value,
        _optional(goal.last_worked, "last_worked"),
        _optional(goal.completed_at, "completed_at"),
        real(goal.created_at, "created_at"),
        real(goal.updated_at, "updated_at"),
    )


def goal_from_row(row: Sequence[Any]) -> Goal:
    return Goal(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        description=row[3],
        priority=row[4],
        status=GoalStatus(row[5]),
        progress=row[6],
        deadline=row[7],
        parent_id=row[8],
        subgoals=json.loads(row[9]),
        blocking_on=json.loads(row[10]),
        conflicts=[GoalConflict(**c) for c in json.loads(row[11])],
        accepted=json.loads(row[12]),
        origin=GoalOrigin(row[13]),
        last_worked=row[14],
        completed_at=row[15],
        created_at=row[16],
        updated_at=row[17],
    )


class SqlGoalStore(GoalStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

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
            f"WHERE {self._sql.ids_in_scope()}",
            (self._sql.bind_list(dict.fromkeys(goal_ids)), scope.user_id, scope.agent_id),
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
            where += f" AND {self._sql.ids('status')}"
            params.append(self._sql.bind_list([GoalStatus(s).value for s in statuses]))
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
