"""``RetentionStore`` over SQL: Ebbinghaus state, one row per memory.

Rows reference ``memories(id)`` with ``ON DELETE CASCADE``. ``put_many``
writes only states of memories of the given scope; others are skipped, as
every store treats ids of other scopes as unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ucma.storage.base import RetentionStore
from ucma.storage.sql.codec import real
from ucma.storage.sql.connection import Database
from ucma.types import RetentionInfo, Scope

__all__ = ["SqlRetentionStore"]

_UPSERT = """
INSERT INTO retention (memory_id, stability, last_reviewed, review_count)
SELECT id, ?, ?, ? FROM memories WHERE id = ? AND user_id = ? AND agent_id = ?
ON CONFLICT (memory_id) DO UPDATE SET
    stability = excluded.stability,
    last_reviewed = excluded.last_reviewed,
    review_count = excluded.review_count
"""


class SqlRetentionStore(RetentionStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, RetentionInfo]:
        if not memory_ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT r.memory_id, r.stability, r.last_reviewed, r.review_count"
                " FROM memories m JOIN retention r ON r.memory_id = m.id"
                f" WHERE {self._sql.ids_in_scope(table='m')}",
                (self._sql.bind_list(dict.fromkeys(memory_ids)), scope.user_id, scope.agent_id),
            ).fetchall()
        found = {row[0]: RetentionInfo(*row) for row in rows}
        return {memory_id: found[memory_id] for memory_id in memory_ids if memory_id in found}

    def put_many(self, scope: Scope, states: Sequence[RetentionInfo]) -> None:
        if not states:
            return
        with self._db.write() as conn:
            conn.executemany(
                _UPSERT,
                [
                    (
                        real(state.stability, "stability"),
                        real(state.last_reviewed, "last_reviewed"),
                        int(state.review_count),
                        state.memory_id,
                        scope.user_id,
                        scope.agent_id,
                    )
                    for state in states
                ],
            )
