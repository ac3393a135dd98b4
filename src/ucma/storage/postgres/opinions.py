"""``OpinionStore`` over PostgreSQL: one row per opinion, current or replaced.

``topic_key``, ``holder_key`` and ``stance_key`` are ``opinion_key`` of the text
(case and punctuation folded), indexed with the scope for the lookups the engine
makes on every observed preference; ``evidence`` is a JSON list.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ucma.errors import ValidationError
from ucma.storage.base import OpinionStore
from ucma.storage.postgres.connection import Database
from ucma.storage.sql.connection import one
from ucma.storage.sqlite.opinions import OPINION_COLUMNS, opinion_from_row, opinion_row
from ucma.types import Opinion, OpinionStatus, Scope

__all__ = ["PostgresOpinionStore"]


_UPSERT = """
INSERT INTO opinions (
    id, user_id, agent_id, topic, stance, holder, confidence, status, evidence,
    memory_id, replaces, replaced_by, created_at, updated_at, topic_key, stance_key, holder_key
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    topic = excluded.topic, stance = excluded.stance, holder = excluded.holder,
    confidence = excluded.confidence, status = excluded.status, evidence = excluded.evidence,
    memory_id = excluded.memory_id, replaces = excluded.replaces,
    replaced_by = excluded.replaced_by, updated_at = excluded.updated_at,
    topic_key = excluded.topic_key, stance_key = excluded.stance_key,
    holder_key = excluded.holder_key
WHERE opinions.user_id = excluded.user_id AND opinions.agent_id = excluded.agent_id
"""


class PostgresOpinionStore(OpinionStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def put(self, opinions: Sequence[Opinion]) -> None:
        rows = [opinion_row(opinion) for opinion in opinions]
        if not rows:
            return
        with self._db.write() as conn:
            for row in rows:
                cursor = conn.execute(_UPSERT, row)
                if cursor.rowcount == 0:
                    raise ValidationError(
                        f"opinion id {row[0]!r} is already in use; import into the scope it "
                        "came from or into a separate database"
                    )

    def get(self, scope: Scope, opinion_id: str) -> Opinion | None:
        found = self._select(
            "WHERE id = ? AND user_id = ? AND agent_id = ?",
            (opinion_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def list(
        self,
        scope: Scope,
        *,
        status: OpinionStatus | None = None,
        below: float | None = None,
        memory_ids: Sequence[str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Opinion]:
        where = ["user_id = ? AND agent_id = ?"]
        params: list[Any] = [scope.user_id, scope.agent_id]
        if status is not None:
            where.append("status = ?")
            params.append(OpinionStatus(status).value)
        if below is not None:
            where.append("confidence < ?")
            params.append(float(below))
        if memory_ids is not None:
            if not memory_ids:
                return []
            where.append("memory_id = ANY(?::text[])")
            params.append(list(dict.fromkeys(memory_ids)))
        params += [int(limit), int(offset)]
        return self._select(
            "WHERE " + " AND ".join(where) + " ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
            params,
        )

    def current(
        self,
        scope: Scope,
        *,
        topic_key: str | None = None,
        holder_key: str | None = None,
        stance_key: str | None = None,
        memory_ids: Sequence[str] | None = None,
        limit: int = 1000,
    ) -> builtins.list[Opinion]:
        where = ["user_id = ? AND agent_id = ? AND status = 'current'"]
        params: list[Any] = [scope.user_id, scope.agent_id]
        for column, value in (
            ("topic_key", topic_key),
            ("holder_key", holder_key),
            ("stance_key", stance_key),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if memory_ids is not None:
            if not memory_ids:
                return []
            where.append("memory_id = ANY(?::text[])")
            params.append(list(dict.fromkeys(memory_ids)))
        params.append(int(limit))
        return self._select(
            "WHERE " + " AND ".join(where) + " ORDER BY updated_at DESC, id LIMIT ?", params
        )

    def count(self, scope: Scope) -> int:
        with self._db.read() as conn:
            (n,) = one(
                conn.execute(
                    "SELECT count(*) FROM opinions WHERE user_id = ? AND agent_id = ?",
                    (scope.user_id, scope.agent_id),
                )
            )
        return int(n)

    def _select(self, where: str, params: Sequence[Any]) -> builtins.list[Opinion]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {OPINION_COLUMNS} FROM opinions {where}", params
            ).fetchall()
        return [opinion_from_row(row) for row in rows]
