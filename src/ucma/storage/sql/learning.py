"""``LearningStore`` over SQL: applicability-tag and type indexes.

``learnings.applicability`` keeps the list as given; ``learning_tags`` holds
its distinct lower-cased keys for ``relevant``; ``learnings_type`` indexes
(scope, learning_type, confidence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ucma.storage.base import LearningStore
from ucma.storage.sql.codec import learning_fields, tag_keys
from ucma.storage.sql.connection import Connection, Database, one
from ucma.storage.sql.memories import MemoryRows, check_kind, check_vector
from ucma.storage.sql.records import load_records
from ucma.types import Learning, LearningType, MemoryKind, Scope

__all__ = ["SqlLearningStore"]

_INSERT = """
INSERT INTO learnings (
    seq, user_id, agent_id, learning_type, title, evidence, applicability, confidence,
    impact_score, last_applied, application_count, validated
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE learnings SET learning_type = ?, title = ?, evidence = ?, applicability = ?,
    confidence = ?, impact_score = ?, last_applied = ?, application_count = ?, validated = ?
WHERE seq = ?
"""
_INSERT_TAG = "INSERT INTO learning_tags (user_id, agent_id, tag_key, seq) VALUES (?, ?, ?, ?)"


class SqlLearningStore(LearningStore):
    def __init__(self, db: Database, rows: MemoryRows) -> None:
        self._db = db
        self._rows = rows
        self._sql = db.dialect

    def add(self, learning: Learning, vector: np.ndarray) -> None:
        check_kind([learning], Learning)
        matrix = check_vector(vector, self._rows.dimension)
        fields = learning_fields(learning)
        with self._db.write() as conn:
            (seq,) = self._rows.insert(conn, [learning], matrix)
            conn.execute(_INSERT, (seq, learning.user_id, learning.agent_id, *fields))
            self._write_tags(conn, learning, seq)

    def get(self, scope: Scope, learning_id: str) -> Learning | None:
        found = self._select(
            " WHERE m.id = ? AND m.user_id = ? AND m.agent_id = ?",
            (learning_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def update(self, learning: Learning) -> None:
        """Persist every field but identity, access statistics and ``archived_at``."""
        check_kind([learning], Learning)
        fields = learning_fields(learning)
        with self._db.write() as conn:
            seq = self._rows.update(conn, learning)
            conn.execute(_UPDATE, (*fields, seq))
            conn.execute("DELETE FROM learning_tags WHERE seq = ?", (seq,))
            self._write_tags(conn, learning, seq)

    @staticmethod
    def _write_tags(conn: Connection, learning: Learning, seq: int) -> None:
        conn.executemany(
            _INSERT_TAG,
            [
                (learning.user_id, learning.agent_id, key, seq)
                for key in tag_keys(learning.applicability)
            ],
        )

    def relevant(
        self,
        scope: Scope,
        tags: Sequence[str],
        *,
        learning_type: LearningType | None = None,
        min_confidence: float = 0.3,
        limit: int = 5,
    ) -> list[Learning]:
        keys = tag_keys(tags)
        if not keys or limit <= 0:
            return []
        params: list[object] = [scope.user_id, scope.agent_id, self._sql.bind_list(keys)]
        params.append(float(min_confidence))
        type_filter = ""
        if learning_type is not None:
            type_filter = " AND t.learning_type = ?"
            params.append(LearningType(learning_type).value)
        params.append(limit)
        # Driven by the tag index: the seqs sharing a tag, then the filters.
        return self._select(
            f"""
            WHERE t.seq IN (
                    SELECT seq FROM learning_tags
                    WHERE user_id = ? AND agent_id = ?
                        AND {self._sql.among("tag_key", "text")}
                )
                AND t.confidence >= ? AND m.archived_at IS NULL"""
            + type_filter
            + """
            ORDER BY t.confidence * t.impact_score DESC, t.confidence DESC, m.seq
            LIMIT ?
            """,
            params,
        )

    def stats(self, scope: Scope) -> dict[str, int]:
        """Counts over live (not archived) learnings."""
        params = (scope.user_id, scope.agent_id)
        with self._db.read() as conn:
            (learnings,) = one(
                conn.execute(
                    """
                SELECT count(*) FROM learnings t JOIN memories m ON m.seq = t.seq
                WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL
                """,
                    params,
                )
            )
            (tags,) = one(
                conn.execute(
                    """
                SELECT count(DISTINCT g.tag_key)
                FROM learning_tags g JOIN memories m ON m.seq = g.seq
                WHERE g.user_id = ? AND g.agent_id = ? AND m.archived_at IS NULL
                """,
                    params,
                )
            )
        return {"learning_count": learnings, "applicability_tags": tags}

    def _select(self, where: str, params: Sequence[object]) -> list[Learning]:
        with self._db.read() as conn:
            return cast(list[Learning], load_records(conn, MemoryKind.LEARNING, where, params))
