"""``OpinionStore`` over SQL: one row per opinion, current or replaced.

``topic_key``, ``holder_key`` and ``stance_key`` are ``opinion_key`` of the text
(case and punctuation folded), indexed with the scope for the lookups the engine
makes on every observed preference; ``evidence`` is a JSON list.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from ucma.errors import ValidationError
from ucma.paradigms.opinions import opinion_key
from ucma.storage.base import OpinionStore
from ucma.storage.sql.codec import dumps, real
from ucma.storage.sql.connection import Database, one
from ucma.types import Opinion, OpinionEvidence, OpinionStatus, Scope

__all__ = ["OPINION_COLUMNS", "SqlOpinionStore", "opinion_from_row", "opinion_row"]

OPINION_COLUMNS = """id, user_id, agent_id, topic, stance, holder, confidence, status, evidence,
    memory_id, replaces, replaced_by, created_at, updated_at"""

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


def opinion_row(opinion: Opinion) -> tuple[Any, ...]:
    if not opinion.user_id or not opinion.agent_id:
        raise ValidationError(f"opinion {opinion.id!r} has no user_id/agent_id")
    confidence = real(opinion.confidence, "confidence")
    if not 0.0 <= confidence <= 1.0:
        raise ValidationError(f"confidence of opinion {opinion.id!r} must be in [0, 1]")
    return (
        opinion.id,
        opinion.user_id,
        opinion.agent_id,
        opinion.topic,
        opinion.stance,
        opinion.holder,
        confidence,
        OpinionStatus(opinion.status).value,
        dumps([e.to_dict() for e in opinion.evidence], "evidence"),
        opinion.memory_id,
        opinion.replaces,
        opinion.replaced_by,
        real(opinion.created_at, "created_at"),
        real(opinion.updated_at, "updated_at"),
        opinion_key(opinion.topic),
        opinion_key(opinion.stance),
        opinion_key(opinion.holder),
    )


def opinion_from_row(row: Sequence[Any]) -> Opinion:
    return Opinion(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        topic=row[3],
        stance=row[4],
        holder=row[5],
        confidence=row[6],
        status=OpinionStatus(row[7]),
        evidence=[OpinionEvidence(**item) for item in json.loads(row[8])],
        memory_id=row[9],
        replaces=row[10],
        replaced_by=row[11],
        created_at=row[12],
        updated_at=row[13],
    )


class SqlOpinionStore(OpinionStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

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
            where.append(self._sql.ids("memory_id"))
            params.append(self._sql.bind_list(dict.fromkeys(memory_ids)))
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
            where.append(self._sql.ids("memory_id"))
            params.append(self._sql.bind_list(dict.fromkeys(memory_ids)))
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
