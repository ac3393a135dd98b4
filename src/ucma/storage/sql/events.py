"""``EventStore`` over SQL: the ``events`` table and ``event_cursors``.

Each backend's schema makes ``events`` append-only with triggers and logs the
memory lifecycle from triggers on ``memories``. ``append`` numbers a scope's
events with the backend's ``next_seq`` expression: on SQLite ``max(seq) + 1``
inside the write transaction, which ``BEGIN IMMEDIATE`` serialises across
connections; on PostgreSQL ``ucma_next_event_seq``, whose row lock on the scope's
stream serialises concurrent writers of one scope until their transactions end.
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ucma.errors import ScopeError, ValidationError
from ucma.events.log import Event
from ucma.storage.base import EventStore
from ucma.storage.sql.codec import dumps, real
from ucma.storage.sql.connection import Database, one
from ucma.types import Scope

__all__ = ["EVENT_COLUMNS", "SqlEventStore", "event_from_row"]

EVENT_COLUMNS = "id, position, user_id, agent_id, seq, type, payload, occurred_at"


def event_from_row(row: Sequence[Any]) -> Event:
    return Event(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]), row[7])


class SqlEventStore(EventStore):
    """``next_seq``: a SQL expression of two parameters (user, agent) giving the
    scope's next event number inside the writing transaction."""

    def __init__(self, db: Database, next_seq: str) -> None:
        self._db = db
        self._sql = db.dialect
        self._insert = (
            "INSERT INTO events (id, user_id, agent_id, seq, type, payload, occurred_at) "
            f"VALUES (?, ?, ?, {next_seq}, ?, ?, ?) RETURNING position, seq"
        )

    def append(
        self, scope: Scope, event_type: str, payload: Mapping[str, object], now: float
    ) -> Event:
        if not scope.user_id or not scope.agent_id:
            raise ScopeError("an event needs a scope")
        if not isinstance(event_type, str) or not event_type:
            raise ValidationError("an event needs a type")
        event_id = f"evt_{uuid.uuid4().hex}"
        body = dumps(dict(payload), "event payload")
        with self._db.write() as conn:
            row = one(
                conn.execute(
                    self._insert,
                    (
                        event_id,
                        scope.user_id,
                        scope.agent_id,
                        scope.user_id,
                        scope.agent_id,
                        event_type,
                        body,
                        real(now, "now"),
                    ),
                )
            )
        return Event(
            event_id,
            row[0],
            scope.user_id,
            scope.agent_id,
            row[1],
            event_type,
            json.loads(body),
            float(now),
        )

    def list(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        types: Sequence[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> builtins.list[Event]:
        sql = [f"SELECT {EVENT_COLUMNS} FROM events WHERE user_id = ? AND agent_id = ? AND seq > ?"]
        params: builtins.list[object] = [scope.user_id, scope.agent_id, int(after_seq)]
        if types:
            sql.append(f"AND {self._sql.ids('type')}")
            params.append(self._sql.bind_list(types))
        sql.append("ORDER BY seq DESC" if newest_first else "ORDER BY seq")
        if limit is not None:
            sql.append("LIMIT ?")
            params.append(max(int(limit), 0))
        with self._db.read() as conn:
            return [event_from_row(r) for r in conn.execute(" ".join(sql), params)]

    def latest(self, scope: Scope, types: Sequence[str]) -> tuple[str | None, ...]:
        wanted = list(types)
        if not wanted:
            return ()
        # One scalar subquery per type: each is a seek on events_type (user_id,
        # agent_id, type, seq) from its end.
        per_type = (
            "(SELECT id FROM events WHERE user_id = ? AND agent_id = ? AND type = ? "
            "ORDER BY seq DESC LIMIT 1)"
        )
        params: builtins.list[object] = []
        for kind in wanted:
            params += [scope.user_id, scope.agent_id, kind]
        with self._db.read() as conn:
            row = one(conn.execute("SELECT " + ", ".join([per_type] * len(wanted)), params))
        return tuple(row)

    def after(self, position: int, limit: int) -> builtins.list[Event]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?",
                (int(position), max(int(limit), 0)),
            ).fetchall()
        return [event_from_row(r) for r in rows]

    def cursor(self, name: str) -> int:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT position FROM event_cursors WHERE name = ?", (name,)
            ).fetchone()
        return int(row[0]) if row is not None else 0

    def set_cursor(self, name: str, position: int, now: float) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("a cursor needs a name")
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO event_cursors (name, position, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET "
                f"position = {self._sql.greatest}(event_cursors.position, excluded.position), "
                "updated_at = excluded.updated_at",
                (name, int(position), real(now, "now")),
            )
