"""``ConflictStore`` over SQL: the ``conflicts``, ``review_flags`` and
``supersessions`` tables.

All three reference ``memories (id)`` with ``ON DELETE CASCADE``, so a
deleted fact takes its conflicts, review flags and supersessions with it. ``subject_key`` /
``predicate_key`` are the normalised names of ``codec.key_of``, as on facts.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Sequence
from typing import Any

from ucma.errors import NotFoundError, ScopeError, ValidationError
from ucma.storage.base import ConflictStore, Supersession
from ucma.storage.sql.codec import dumps, key_of, optional_real, real
from ucma.storage.sql.connection import Database, one
from ucma.storage.sql.dialect import Dialect
from ucma.types import (
    Conflict,
    ConflictStatus,
    ConflictType,
    ResolutionStrategy,
    ReviewFlag,
    Scope,
)

__all__ = [
    "CONFLICT_COLUMNS",
    "FLAG_COLUMNS",
    "SqlConflictStore",
    "conflict_from_row",
    "enum_value",
    "flag_from_row",
]

CONFLICT_COLUMNS = """id, user_id, agent_id, conflict_type, subject, predicate, existing_fact_id,
    existing_value, existing_confidence, new_fact_id, new_value, new_confidence,
    resolution_strategy, action, chosen_value, explanation, status, detected_at,
    resolved_at, resolved_by, options"""
_INSERT = """
INSERT INTO conflicts (
    id, user_id, agent_id, conflict_type, subject, predicate, subject_key, predicate_key,
    existing_fact_id, existing_value, existing_confidence, new_fact_id, new_value,
    new_confidence, resolution_strategy, action, chosen_value, explanation, status,
    detected_at, resolved_at, resolved_by, options
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE conflicts SET resolution_strategy = ?, action = ?, chosen_value = ?, explanation = ?,
    status = ?, resolved_at = ?, resolved_by = ?, options = ?, existing_confidence = ?,
    new_confidence = ?
WHERE id = ? AND user_id = ? AND agent_id = ?
"""
FLAG_COLUMNS = "memory_id, premise_id, conflict_id, reason, flagged_at, cleared_at"


# One pass over the asked ids: a fact that is no longer current or whose valid time
# ended, or any memory a supersession names. Primary-key lookups only.
def _superseded(sql: Dialect) -> str:
    return f"""
WITH asked (id) AS (SELECT DISTINCT {sql.elements("text")})
SELECT m.id, coalesce(t.superseded_by, '')
FROM asked JOIN memories m ON m.id = asked.id JOIN facts t ON t.seq = m.seq
WHERE m.user_id = ? AND m.agent_id = ?
    AND (t.superseded_at IS NOT NULL OR t.valid_until <= ?)
UNION ALL
SELECT s.memory_id, s.superseded_by
FROM asked JOIN supersessions s ON s.memory_id = asked.id
WHERE s.user_id = ? AND s.agent_id = ?
"""


def enum_value(enum: Any, value: Any, field: str) -> str:
    try:
        return str(enum(value).value)
    except ValueError as exc:
        raise ValidationError(f"{field} must be one of {[e.value for e in enum]}") from exc


def conflict_from_row(row: Sequence[Any]) -> Conflict:
    return Conflict(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        conflict_type=ConflictType(row[3]),
        subject=row[4],
        predicate=row[5],
        existing_fact_id=row[6],
        existing_value=row[7],
        existing_confidence=row[8],
        new_fact_id=row[9],
        new_value=row[10],
        new_confidence=row[11],
        resolution_strategy=ResolutionStrategy(row[12]),
        action=row[13],
        chosen_value=row[14],
        explanation=row[15],
        status=ConflictStatus(row[16]),
        detected_at=row[17],
        resolved_at=row[18],
        resolved_by=row[19],
        options=json.loads(row[20]),
    )


def flag_from_row(row: Sequence[Any]) -> ReviewFlag:
    return ReviewFlag(
        memory_id=row[0],
        premise_id=row[1],
        conflict_id=row[2],
        reason=row[3],
        flagged_at=row[4],
        cleared_at=row[5],
    )


class SqlConflictStore(ConflictStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    def add(self, conflict: Conflict) -> None:
        if not conflict.user_id or not conflict.agent_id:
            raise ScopeError(f"conflict {conflict.id!r} has no user_id/agent_id")
        row = (
            conflict.id,
            conflict.user_id,
            conflict.agent_id,
            enum_value(ConflictType, conflict.conflict_type, "conflict_type"),
            conflict.subject,
            conflict.predicate,
            key_of(conflict.subject),
            key_of(conflict.predicate),
            conflict.existing_fact_id,
            conflict.existing_value,
            real(conflict.existing_confidence, "existing_confidence"),
            conflict.new_fact_id,
            conflict.new_value,
            real(conflict.new_confidence, "new_confidence"),
            *self._resolution(conflict)[:4],
            enum_value(ConflictStatus, conflict.status, "status"),
            real(conflict.detected_at, "detected_at"),
            optional_real(conflict.resolved_at, "resolved_at"),
            conflict.resolved_by,
            dumps(list(conflict.options), "options"),
        )
        with self._db.write() as conn:
            try:
                conn.execute(_INSERT, row)
            except self._sql.integrity_error as exc:
                raise ValidationError(
                    f"conflict {conflict.id!r} cannot be stored (duplicate id, or a fact id "
                    f"that is not a memory): {exc}"
                ) from exc

    @staticmethod
    def _resolution(conflict: Conflict) -> tuple[Any, ...]:
        return (
            enum_value(ResolutionStrategy, conflict.resolution_strategy, "resolution_strategy"),
            conflict.action,
            conflict.chosen_value,
            conflict.explanation,
        )

    def update(self, conflict: Conflict) -> None:
        params = (
            *self._resolution(conflict),
            enum_value(ConflictStatus, conflict.status, "status"),
            optional_real(conflict.resolved_at, "resolved_at"),
            conflict.resolved_by,
            dumps(list(conflict.options), "options"),
            real(conflict.existing_confidence, "existing_confidence"),
            real(conflict.new_confidence, "new_confidence"),
            conflict.id,
            conflict.user_id,
            conflict.agent_id,
        )
        with self._db.write() as conn:
            if conn.execute(_UPDATE, params).rowcount == 0:
                raise NotFoundError("conflict", conflict.id)

    def get(self, scope: Scope, conflict_id: str) -> Conflict | None:
        found = self._select(
            "WHERE id = ? AND user_id = ? AND agent_id = ?",
            (conflict_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def list(
        self,
        scope: Scope,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        status: ConflictStatus | None = None,
        limit: int = 100,
    ) -> list[Conflict]:
        where = "WHERE user_id = ? AND agent_id = ?"
        params: list[Any] = [scope.user_id, scope.agent_id]
        if subject is not None:
            where += " AND subject_key = ?"
            params.append(key_of(subject))
        if predicate is not None:
            where += " AND predicate_key = ?"
            params.append(key_of(predicate))
        if status is not None:
            where += " AND status = ?"
            params.append(enum_value(ConflictStatus, status, "status"))
        params.append(int(limit))
        order = f" ORDER BY detected_at DESC, {self._sql.row_order('conflicts')} DESC LIMIT ?"
        return self._select(where + order, params)

    def involving(self, scope: Scope, fact_ids: Sequence[str]) -> builtins.list[Conflict]:
        sql = self._sql
        ids = sql.bind_list(dict.fromkeys(fact_ids))
        row = sql.row_order("conflicts")
        return self._select(
            f"""WHERE {row} IN (
                SELECT {row} FROM conflicts WHERE {sql.ids("existing_fact_id")}
                UNION
                SELECT {row} FROM conflicts WHERE {sql.ids("new_fact_id")}
            ) AND {sql.unindexed("user_id")} = ? AND {sql.unindexed("agent_id")} = ?
            ORDER BY detected_at, {row}""",
            (ids, ids, scope.user_id, scope.agent_id),
        )

    def _select(self, where: str, params: Sequence[Any]) -> builtins.list[Conflict]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {CONFLICT_COLUMNS} FROM conflicts {where}", params
            ).fetchall()
        return [conflict_from_row(row) for row in rows]

    # -- review flags -------------------------------------------------------------

    def flag(self, scope: Scope, flags: Sequence[ReviewFlag]) -> int:
        written = 0
        with self._db.write() as conn:
            for flag in flags:
                open_already = conn.execute(
                    "SELECT 1 FROM review_flags WHERE memory_id = ? AND premise_id = ?"
                    " AND cleared_at IS NULL AND user_id = ? AND agent_id = ?",
                    (flag.memory_id, flag.premise_id, scope.user_id, scope.agent_id),
                ).fetchone()
                if open_already:
                    continue
                try:
                    conn.execute(
                        f"INSERT INTO review_flags ({FLAG_COLUMNS}, user_id, agent_id)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            flag.memory_id,
                            flag.premise_id,
                            flag.conflict_id,
                            flag.reason,
                            real(flag.flagged_at, "flagged_at"),
                            optional_real(flag.cleared_at, "cleared_at"),
                            scope.user_id,
                            scope.agent_id,
                        ),
                    )
                except self._sql.integrity_error as exc:
                    raise ValidationError(
                        f"review flag on {flag.memory_id!r} names an unknown memory: {exc}"
                    ) from exc
                written += 1
        return written

    def flagged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ReviewFlag]:
        if not memory_ids:
            return {}
        sql = self._sql
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {FLAG_COLUMNS} FROM review_flags"
                f" WHERE {sql.ids('memory_id')} AND cleared_at IS NULL"
                f" AND {sql.unindexed('user_id')} = ? AND {sql.unindexed('agent_id')} = ?"
                f" ORDER BY flagged_at, {sql.row_order('review_flags')}",
                (sql.bind_list(dict.fromkeys(memory_ids)), scope.user_id, scope.agent_id),
            ).fetchall()
        return {flag.memory_id: flag for flag in map(flag_from_row, rows)}

    def flags(
        self, scope: Scope, *, include_cleared: bool = False, limit: int = 100
    ) -> builtins.list[ReviewFlag]:
        where = "" if include_cleared else " AND cleared_at IS NULL"
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {FLAG_COLUMNS} FROM review_flags WHERE user_id = ? AND agent_id = ?"
                f"{where} ORDER BY flagged_at DESC, {self._sql.row_order('review_flags')} DESC"
                " LIMIT ?",
                (scope.user_id, scope.agent_id, int(limit)),
            ).fetchall()
        return [flag_from_row(row) for row in rows]

    def clear_flags(self, scope: Scope, memory_id: str, cleared_at: float) -> int:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE review_flags SET cleared_at = ? WHERE memory_id = ?"
                " AND cleared_at IS NULL AND user_id = ? AND agent_id = ?",
                (real(cleared_at, "cleared_at"), memory_id, scope.user_id, scope.agent_id),
            ).rowcount

    # -- supersession of whole memories ------------------------------------------------

    def supersessions(self, scope: Scope) -> builtins.list[Supersession]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT memory_id, superseded_by, superseded_at, reason FROM supersessions "
                "WHERE user_id = ? AND agent_id = ? ORDER BY superseded_at, memory_id",
                (scope.user_id, scope.agent_id),
            ).fetchall()
        return [Supersession(str(m), str(b), float(at), str(r)) for m, b, at, r in rows]

    def supersede(self, scope: Scope, entries: Sequence[Supersession]) -> None:
        rows = [
            (
                entry.memory_id,
                scope.user_id,
                scope.agent_id,
                entry.superseded_by,
                real(entry.superseded_at, "superseded_at"),
                entry.reason,
            )
            for entry in entries
        ]
        if not rows:
            return
        ids = list(dict.fromkeys(i for e in entries for i in (e.memory_id, e.superseded_by)))
        sql = self._sql
        with self._db.write() as conn:
            (found,) = one(
                conn.execute(
                    f"SELECT count(*) FROM memories WHERE {sql.ids('id')}"
                    " AND user_id = ? AND agent_id = ?",
                    (sql.bind_list(ids), scope.user_id, scope.agent_id),
                )
            )
            if found != len(ids):
                raise NotFoundError("memory", f"one of {ids} in this scope")
            conn.executemany(
                "INSERT INTO supersessions (memory_id, user_id, agent_id,"
                " superseded_by, superseded_at, reason) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (memory_id) DO UPDATE SET user_id = excluded.user_id,"
                " agent_id = excluded.agent_id, superseded_by = excluded.superseded_by,"
                " superseded_at = excluded.superseded_at, reason = excluded.reason",
                rows,
            )

    def superseded(
        self, scope: Scope, memory_ids: Sequence[str], *, at: float | None = None
    ) -> dict[str, str]:
        if not memory_ids:
            return {}
        moment = time.time() if at is None else real(at, "at")
        ids = self._sql.bind_list(dict.fromkeys(memory_ids))
        params = (ids, scope.user_id, scope.agent_id, moment, scope.user_id, scope.agent_id)
        with self._db.read() as conn:
            rows = conn.execute(_superseded(self._sql), params).fetchall()
        found: dict[str, str] = {}
        for memory_id, replacement in rows:
            if replacement or memory_id not in found:
                found[memory_id] = replacement
        return found

    def subject_names(self, scope: Scope, first_name: str) -> builtins.list[str]:
        first = key_of(first_name)
        if not first or " " in first:
            return []
        # A key range on the (user, agent, subject_key) index: "dana" and "dana ...".
        with self._db.read() as conn:
            # Each key's first spelling (its oldest fact's), oldest key first.
            rows = conn.execute(
                "SELECT subject FROM facts WHERE seq IN (SELECT min(seq) FROM facts"
                " WHERE user_id = ? AND agent_id = ?"
                " AND (subject_key = ? OR (subject_key >= ? AND subject_key < ?))"
                " GROUP BY subject_key) ORDER BY seq",
                (scope.user_id, scope.agent_id, first, first + " ", first + "!"),
            ).fetchall()
        return [row[0] for row in rows]
