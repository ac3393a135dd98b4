"""``TraceStore`` over SQL: ``retrievals``, ``decision_traces``,
``trace_memories`` (memory -> decision links) and ``salience_updates``."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from ucma.errors import NotFoundError, ScopeError, ValidationError
from ucma.learning.records import DecisionTrace, OutcomeSignal, Retrieval, SalienceUpdate
from ucma.storage.base import TraceStore
from ucma.storage.sql.codec import dumps, optional_real, real
from ucma.storage.sql.connection import Database
from ucma.types import Scope

__all__ = [
    "SALIENCE_UPDATE_COLUMNS",
    "SqlTraceStore",
    "TRACE_COLUMNS",
    "require_scope",
    "salience_update_from_row",
    "trace_from_row",
]

TRACE_COLUMNS = """id, user_id, agent_id, session_id, retrieval_id, memory_scores,
    decision_type, summary, confidence, alternatives_count, created_at, metadata,
    outcome_quality, outcome_signal, outcome_feedback, outcome_at"""
SALIENCE_UPDATE_COLUMNS = """memory_id, trace_id, attribution, raw_delta, delta,
    previous_adjustment, new_adjustment, reason, created_at"""


def trace_from_row(row: Sequence[Any]) -> DecisionTrace:
    return DecisionTrace(
        id=row[0],
        user_id=row[1],
        agent_id=row[2],
        session_id=row[3],
        retrieval_id=row[4],
        memory_scores=json.loads(row[5]),
        decision_type=row[6],
        summary=row[7],
        confidence=row[8],
        alternatives_count=row[9],
        created_at=row[10],
        metadata=json.loads(row[11]),
        outcome_quality=row[12],
        outcome_signal=OutcomeSignal(row[13]) if row[13] is not None else None,
        outcome_feedback=row[14],
        outcome_at=row[15],
    )


def salience_update_from_row(row: Sequence[Any]) -> SalienceUpdate:
    return SalienceUpdate(*row)


def require_scope(user_id: str, agent_id: str, what: str) -> None:
    if not user_id or not agent_id:
        raise ScopeError(f"{what} has no user_id/agent_id")


class SqlTraceStore(TraceStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    def add_retrieval(self, retrieval: Retrieval) -> None:
        require_scope(retrieval.user_id, retrieval.agent_id, f"retrieval {retrieval.id!r}")
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO retrievals (id, user_id, agent_id, query_hash, memory_ids, scores, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    retrieval.id,
                    retrieval.user_id,
                    retrieval.agent_id,
                    retrieval.query_hash,
                    dumps(list(retrieval.memory_ids)),
                    dumps([real(s, "score") for s in retrieval.scores]),
                    real(retrieval.created_at, "created_at"),
                ),
            )

    def get_retrieval(self, scope: Scope, retrieval_id: str) -> Retrieval | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT id, user_id, agent_id, query_hash, memory_ids, scores, created_at "
                "FROM retrievals WHERE id = ? AND user_id = ? AND agent_id = ?",
                (retrieval_id, scope.user_id, scope.agent_id),
            ).fetchone()
        if row is None:
            return None
        return Retrieval(
            row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]), row[6]
        )

    def add(self, trace: DecisionTrace) -> None:
        require_scope(trace.user_id, trace.agent_id, f"trace {trace.id!r}")
        scores = {k: real(v, "memory score") for k, v in trace.memory_scores.items()}
        with self._db.write() as conn:
            try:
                conn.execute(
                    f"INSERT INTO decision_traces ({TRACE_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        trace.id,
                        trace.user_id,
                        trace.agent_id,
                        trace.session_id,
                        trace.retrieval_id,
                        dumps(scores),
                        trace.decision_type,
                        trace.summary,
                        real(trace.confidence, "confidence"),
                        int(trace.alternatives_count),
                        real(trace.created_at, "created_at"),
                        dumps(trace.metadata, "metadata"),
                        optional_real(trace.outcome_quality, "outcome_quality"),
                        trace.outcome_signal.value if trace.outcome_signal else None,
                        trace.outcome_feedback,
                        optional_real(trace.outcome_at, "outcome_at"),
                    ),
                )
            except self._sql.integrity_error as exc:
                raise ValidationError(f"trace {trace.id!r} already exists") from exc
            conn.executemany(
                "INSERT INTO trace_memories (trace_id, memory_id, user_id, agent_id, score) "
                "VALUES (?, ?, ?, ?, ?)",
                [(trace.id, m, trace.user_id, trace.agent_id, s) for m, s in scores.items()],
            )

    def get(self, scope: Scope, trace_id: str) -> DecisionTrace | None:
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {TRACE_COLUMNS} FROM decision_traces "
                "WHERE id = ? AND user_id = ? AND agent_id = ?",
                (trace_id, scope.user_id, scope.agent_id),
            ).fetchone()
        return trace_from_row(row) if row is not None else None

    def list(
        self,
        scope: Scope,
        *,
        observed: bool | None = None,
        decision_type: str | None = None,
        limit: int = 100,
    ) -> builtins.list[DecisionTrace]:
        sql = [f"SELECT {TRACE_COLUMNS} FROM decision_traces WHERE user_id = ? AND agent_id = ?"]
        params: builtins.list[object] = [scope.user_id, scope.agent_id]
        if observed is not None:
            sql.append("AND outcome_at IS NOT NULL" if observed else "AND outcome_at IS NULL")
        if decision_type is not None:
            sql.append("AND decision_type = ?")
            params.append(decision_type)
        sql.append(
            f"ORDER BY created_at DESC, {self._sql.row_order('decision_traces')} DESC LIMIT ?"
        )
        params.append(max(int(limit), 0))
        with self._db.read() as conn:
            return [trace_from_row(r) for r in conn.execute(" ".join(sql), params)]

    def involving(self, scope: Scope, memory_ids: Sequence[str]) -> builtins.list[DecisionTrace]:
        if not memory_ids:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {TRACE_COLUMNS} FROM decision_traces WHERE id IN ("
                "SELECT trace_id FROM trace_memories WHERE user_id = ? AND agent_id = ? "
                f"AND {self._sql.ids('memory_id')})"
                f" ORDER BY created_at, {self._sql.row_order('decision_traces')}",
                (scope.user_id, scope.agent_id, self._sql.bind_list(memory_ids)),
            ).fetchall()
        return [trace_from_row(r) for r in rows]

    def set_outcome(
        self,
        scope: Scope,
        trace_id: str,
        *,
        quality: float,
        signal: OutcomeSignal,
        feedback: str | None,
        observed_at: float,
    ) -> None:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE decision_traces SET outcome_quality = ?, outcome_signal = ?, "
                "outcome_feedback = ?, outcome_at = ? "
                "WHERE id = ? AND user_id = ? AND agent_id = ? AND outcome_at IS NULL",
                (
                    real(quality, "quality"),
                    OutcomeSignal(signal).value,
                    feedback,
                    real(observed_at, "observed_at"),
                    trace_id,
                    scope.user_id,
                    scope.agent_id,
                ),
            )
            if cursor.rowcount == 1:
                return
            exists = conn.execute(
                "SELECT 1 FROM decision_traces WHERE id = ? AND user_id = ? AND agent_id = ?",
                (trace_id, scope.user_id, scope.agent_id),
            ).fetchone()
        if exists is None:
            raise NotFoundError("trace", trace_id)
        raise ValidationError(f"trace {trace_id!r} already has an outcome")

    def add_updates(self, scope: Scope, updates: Sequence[SalienceUpdate]) -> None:
        with self._db.write() as conn:
            conn.executemany(
                f"INSERT INTO salience_updates (user_id, agent_id, {SALIENCE_UPDATE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        scope.user_id,
                        scope.agent_id,
                        u.memory_id,
                        u.trace_id,
                        real(u.attribution, "attribution"),
                        real(u.raw_delta, "raw_delta"),
                        real(u.delta, "delta"),
                        real(u.previous_adjustment, "previous_adjustment"),
                        real(u.new_adjustment, "new_adjustment"),
                        u.reason,
                        real(u.created_at, "created_at"),
                    )
                    for u in updates
                ],
            )

    def updates(
        self, scope: Scope, *, memory_id: str | None = None, trace_id: str | None = None
    ) -> builtins.list[SalienceUpdate]:
        sql = [
            f"SELECT {SALIENCE_UPDATE_COLUMNS} FROM salience_updates"
            " WHERE user_id = ? AND agent_id = ?"
        ]
        params: builtins.list[object] = [scope.user_id, scope.agent_id]
        if memory_id is not None:
            sql.append("AND memory_id = ?")
            params.append(memory_id)
        if trace_id is not None:
            sql.append("AND trace_id = ?")
            params.append(trace_id)
        sql.append("ORDER BY id")
        with self._db.read() as conn:
            return [salience_update_from_row(r) for r in conn.execute(" ".join(sql), params)]
