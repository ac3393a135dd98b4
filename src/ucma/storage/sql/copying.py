"""What ``ucma.storage.migrate`` needs of a SQL store beyond the storage interfaces and
that both backends do alike: the publishers' cursors read by name, and participant
names written as the episodic store writes them. Each backend's ``copying`` module
adds how it holds off its lifecycle triggers and writes events as they are."""

from __future__ import annotations

from collections.abc import Sequence

from ucma.storage.migrate import CURSORS_SQL
from ucma.storage.sql.codec import key_of
from ucma.storage.sql.connection import Database
from ucma.storage.sql.episodic import INSERT_PARTICIPANT
from ucma.types import Scope

__all__ = ["SqlCopying"]


class SqlCopying:
    """The part of ``ucma.storage.migrate.Copying`` both SQL backends share."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def cursors(self) -> list[tuple[str, int, float]]:
        with self._db.read() as conn:
            return [(str(n), int(p), float(t)) for n, p, t in conn.execute(CURSORS_SQL)]

    def put_participants(self, scope: Scope, names: Sequence[str]) -> None:
        with self._db.write() as conn:
            conn.executemany(
                INSERT_PARTICIPANT,
                [(scope.user_id, scope.agent_id, key_of(n), n.strip()) for n in names if n.strip()],
            )
