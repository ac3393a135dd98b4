"""``ProceduralStore`` over SQL: ordered steps and a trigger-tag index.

``procedures.trigger_tags`` keeps the tag list exactly as given (order,
case, duplicates); ``procedure_tags`` holds its distinct lower-cased keys,
the index ``find_by_tags`` reads. Steps are rows ordered by ``position``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ucma.storage.base import ProceduralStore
from ucma.storage.sql.codec import (
    procedure_fields,
    step_rows,
    tag_keys,
)
from ucma.storage.sql.connection import Connection, Database, one
from ucma.storage.sql.memories import MemoryRows, check_kind, check_vector
from ucma.storage.sql.records import load_records
from ucma.types import MemoryKind, Procedure, ProcedureStatus, ProcedureType, Scope

__all__ = ["SqlProceduralStore"]

_INSERT = """
INSERT INTO procedures (
    seq, user_id, agent_id, name, description, trigger_tags, status, success_rate,
    execution_count, last_used, procedure_type, domain, preconditions, risk_level,
    failure_modes, source_trajectories, success_count
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE procedures SET name = ?, description = ?, trigger_tags = ?, status = ?,
    success_rate = ?, execution_count = ?, last_used = ?, procedure_type = ?, domain = ?,
    preconditions = ?, risk_level = ?, failure_modes = ?, source_trajectories = ?,
    success_count = ?
WHERE seq = ?
"""
_INSERT_STEP = """
INSERT INTO procedure_steps (
    seq, position, description, action_type, action_spec, success_criteria, on_failure,
    max_retries
) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
_INSERT_TAG = "INSERT INTO procedure_tags (user_id, agent_id, tag_key, seq) VALUES (?, ?, ?, ?)"


class SqlProceduralStore(ProceduralStore):
    def __init__(self, db: Database, rows: MemoryRows) -> None:
        self._db = db
        self._rows = rows
        self._sql = db.dialect

    def add(self, procedure: Procedure, vector: np.ndarray) -> None:
        check_kind([procedure], Procedure)
        matrix = check_vector(vector, self._rows.dimension)
        fields = procedure_fields(procedure)
        with self._db.write() as conn:
            (seq,) = self._rows.insert(conn, [procedure], matrix)
            conn.execute(_INSERT, (seq, procedure.user_id, procedure.agent_id, *fields))
            self._write_children(conn, procedure, seq)

    def get(self, scope: Scope, procedure_id: str) -> Procedure | None:
        found = self._select(
            " WHERE m.id = ? AND m.user_id = ? AND m.agent_id = ?",
            (procedure_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def update(self, procedure: Procedure) -> None:
        """Persist every field but identity, access statistics and ``archived_at``."""
        check_kind([procedure], Procedure)
        fields = procedure_fields(procedure)
        with self._db.write() as conn:
            seq = self._rows.update(conn, procedure)
            conn.execute(_UPDATE, (*fields, seq))
            conn.execute("DELETE FROM procedure_steps WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM procedure_tags WHERE seq = ?", (seq,))
            self._write_children(conn, procedure, seq)

    @staticmethod
    def _write_children(conn: Connection, procedure: Procedure, seq: int) -> None:
        conn.executemany(_INSERT_STEP, step_rows(procedure, seq))
        conn.executemany(
            _INSERT_TAG,
            [
                (procedure.user_id, procedure.agent_id, key, seq)
                for key in tag_keys(procedure.trigger_tags)
            ],
        )

    def find_by_tags(
        self, scope: Scope, tags: Sequence[str], *, min_success_rate: float = 0.0
    ) -> list[Procedure]:
        keys = tag_keys(tags)
        if not keys:
            return []
        return self._select(
            f"""
            WHERE t.seq IN (
                    SELECT seq FROM procedure_tags
                    WHERE user_id = ? AND agent_id = ?
                        AND {self._sql.among("tag_key", "text")}
                )
                AND t.status != ? AND t.success_rate >= ? AND m.archived_at IS NULL
            ORDER BY t.success_rate * {self._sql.least}(t.execution_count / 10.0, 1.0) DESC,
                t.success_rate DESC, m.seq
            """,
            (
                scope.user_id,
                scope.agent_id,
                self._sql.bind_list(keys),
                ProcedureStatus.DEPRECATED.value,
                float(min_success_rate),
            ),
        )

    def in_domain(
        self,
        scope: Scope,
        domain: str,
        procedure_type: ProcedureType | None = None,
        *,
        limit: int = 200,
    ) -> list[Procedure]:
        of_type = "" if procedure_type is None else " AND t.procedure_type = ?"
        params: list[object] = [scope.user_id, scope.agent_id, domain]
        if procedure_type is not None:
            params.append(procedure_type.value)
        return self._select(
            f"""
            WHERE t.user_id = ? AND t.agent_id = ? AND t.domain = ?{of_type}
                AND m.archived_at IS NULL
            ORDER BY coalesce(m.updated_at, m.created_at) DESC, m.seq DESC
            LIMIT ?
            """,
            [*params, int(limit)],
        )

    def stats(self, scope: Scope) -> dict[str, int]:
        """Counts over live (not archived) procedures, deprecated ones included."""
        params = (scope.user_id, scope.agent_id)
        with self._db.read() as conn:
            (procedures,) = one(
                conn.execute(
                    """
                SELECT count(*) FROM procedures t JOIN memories m ON m.seq = t.seq
                WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL
                """,
                    params,
                )
            )
            (tags,) = one(
                conn.execute(
                    """
                SELECT count(DISTINCT g.tag_key)
                FROM procedure_tags g JOIN memories m ON m.seq = g.seq
                WHERE g.user_id = ? AND g.agent_id = ? AND m.archived_at IS NULL
                """,
                    params,
                )
            )
        return {"procedure_count": procedures, "tag_count": tags}

    def _select(self, where: str, params: Sequence[object]) -> list[Procedure]:
        with self._db.read() as conn:
            return cast(list[Procedure], load_records(conn, MemoryKind.PROCEDURAL, where, params))
