"""``LifecycleStore`` over SQL: the tables of migration 2.

History and the duplicate log have no foreign key to ``memories`` (they are
the record of what happened, kept after a purge); source lists and
abstraction marks cascade with their memory; co-retrieval pairs are cleaned
by ``clean_orphans`` when a memory goes. The gardener's ``begin_job`` checks and
takes a job's lock atomically across every connection and process: on SQLite the
write transaction holds the file (``BEGIN IMMEDIATE``), on PostgreSQL it locks the
job's row (``SELECT ... FOR UPDATE``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import cast

from ucma.storage.base import LifecycleStore
from ucma.storage.sql.codec import dumps, real
from ucma.storage.sql.connection import Database, one
from ucma.storage.sql.dialect import Dialect
from ucma.storage.sql.records import load_records
from ucma.types import (
    DuplicateAttempt,
    Episode,
    ForgettingBound,
    HistoryEntry,
    JobRun,
    MemoryKind,
    MemorySource,
    MemoryVitals,
    Scope,
    SleepRun,
)

__all__ = ["ORPHANS", "SqlLifecycleStore"]

_MAX_PAIR_IDS = 20
"""At most this many ids of one retrieval are paired (190 pairs), best first."""

_VITALS = """
SELECT m.id, m.kind, m.temporal_level, m.base_salience + m.outcome_adjustment, m.created_at,
    coalesce(n.pagerank, 0.0), r.stability, r.last_reviewed, coalesce(r.review_count, 0),
    coalesce(f.confidence, l.confidence), coalesce(l.validated, 0), p.status, p.success_rate,
    e.tier
FROM memories m
    LEFT JOIN retention r ON r.memory_id = m.id
    LEFT JOIN facts f ON f.seq = m.seq
    LEFT JOIN graph_nodes n ON n.memory_id = m.id
    LEFT JOIN learnings l ON l.seq = m.seq
    LEFT JOIN procedures p ON p.seq = m.seq
    LEFT JOIN episodes e ON e.seq = m.seq
WHERE m.user_id = :user AND m.agent_id = :agent AND m.archived_at IS NULL {bound}
ORDER BY m.seq
"""


def _bound_rules(sql: Dialect) -> dict[str, str]:
    """``ForgettingBound`` in SQL (the joins above put retention and facts first, so the
    planner tests it before reading the other tables)."""
    hi, lo = sql.greatest, sql.least
    # Effective salience clamped to [0, 1]:
    salience = f"{hi}(0.0, {lo}(1.0, m.base_salience + m.outcome_adjustment))"
    # The retention threshold t; d = 1 - t, and the bound d + d^2/2 + d^3/3 in Horner form.
    threshold = (
        f"{lo}(1.0, :retention_threshold * {hi}(:weight_floor, 2.0 * (1.0 - {salience}))"
        " / CASE WHEN m.kind = 'semantic' AND f.confidence IS NOT NULL"
        f" THEN {hi}(f.confidence, 0.1) ELSE 1.0 END)"
    )
    d = f"(1.0 - {threshold})"
    return {
        "salience": f"{salience} < :salience_below",
        "retention": (
            "(r.stability IS NOT NULL AND"
            f" {hi}(0.0, :now - {hi}(m.created_at, r.last_reviewed)) / 86400.0"
            f" >= {hi}(r.stability, :min_stability) * {d} * (1.0 + {d} * (0.5 + {d} / 3.0))"
            " - 1e-9)"
        ),
    }


def _bound_sql(sql: Dialect, bound: ForgettingBound | None) -> tuple[str, dict[str, float]]:
    """The WHERE terms and parameters of ``bound`` (none without one)."""
    if bound is None:
        return "", {}
    rules = []
    known = _bound_rules(sql)
    if bound.salience_below is not None:
        rules.append(known["salience"])
    if bound.retention_threshold is not None:
        rules.append(known["retention"])
    if not rules:
        return f"AND {sql.false}", {}
    params = {
        "now": real(bound.now, "now"),
        "salience_below": real(bound.salience_below or 0.0, "salience_below"),
        "retention_threshold": real(bound.retention_threshold or 0.0, "retention_threshold"),
        "weight_floor": real(bound.salience_weight_floor, "salience_weight_floor"),
        "min_stability": real(bound.min_stability, "min_stability"),
    }
    return f"AND m.temporal_level < 4 AND ({' OR '.join(rules)})", params


ORPHANS: tuple[tuple[str, str], ...] = (
    ("graph_edges", "DELETE FROM graph_edges WHERE source_id NOT IN (SELECT id FROM memories)"
     " OR target_id NOT IN (SELECT id FROM memories)"),
    ("graph_nodes", "DELETE FROM graph_nodes WHERE memory_id NOT IN (SELECT id FROM memories)"),
    ("retention", "DELETE FROM retention WHERE memory_id NOT IN (SELECT id FROM memories)"),
    ("episodes", "DELETE FROM episodes WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("facts", "DELETE FROM facts WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("procedure_steps",
     "DELETE FROM procedure_steps WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("procedure_tags", "DELETE FROM procedure_tags WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("procedures", "DELETE FROM procedures WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("learning_tags", "DELETE FROM learning_tags WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("learnings", "DELETE FROM learnings WHERE seq NOT IN (SELECT seq FROM memories)"),
    ("memory_sources",
     "DELETE FROM memory_sources WHERE memory_id NOT IN (SELECT id FROM memories)"),
    ("abstracted_episodes",
     "DELETE FROM abstracted_episodes WHERE memory_id NOT IN (SELECT id FROM memories)"),
    ("co_retrievals", "DELETE FROM co_retrievals WHERE first_id NOT IN (SELECT id FROM memories)"
     " OR second_id NOT IN (SELECT id FROM memories)"),
)  # fmt: skip
"""Rows of tables every backend has that no memory holds any more (``clean_orphans``)."""


class SqlLifecycleStore(LifecycleStore):
    """``orphans``: ``ORPHANS`` and the backend's own tables' rows of that kind."""

    def __init__(self, db: Database, orphans: Sequence[tuple[str, str]] = ORPHANS) -> None:
        self._db = db
        self._sql = db.dialect
        self._orphans = tuple(orphans)

    # -- history and provenance ---------------------------------------------------

    def add_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None:
        if not entries:
            return
        rows = [
            (
                scope.user_id,
                scope.agent_id,
                e.memory_id,
                e.event,
                real(e.at, "at"),
                dumps(e.details, "history details"),
            )
            for e in entries
        ]
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO memory_history (user_id, agent_id, memory_id, event, at, details)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT memory_id, event, at, details FROM memory_history"
                " WHERE user_id = ? AND agent_id = ? AND memory_id = ? ORDER BY id",
                (scope.user_id, scope.agent_id, memory_id),
            ).fetchall()
        return [HistoryEntry(m, e, at, json.loads(d)) for m, e, at, d in rows]

    def log_duplicate(self, scope: Scope, attempt: DuplicateAttempt) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO duplicate_attempts"
                " (user_id, agent_id, existing_id, content, similarity, source, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.user_id,
                    scope.agent_id,
                    attempt.existing_id,
                    attempt.content,
                    real(attempt.similarity, "similarity"),
                    attempt.source,
                    real(attempt.at, "at"),
                ),
            )

    def duplicates(self, scope: Scope, *, limit: int = 100) -> list[DuplicateAttempt]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT existing_id, content, similarity, source, at FROM duplicate_attempts"
                " WHERE user_id = ? AND agent_id = ? ORDER BY id DESC LIMIT ?",
                (scope.user_id, scope.agent_id, max(int(limit), 0)),
            ).fetchall()
        return [DuplicateAttempt(*row) for row in rows]

    def add_sleep_run(self, run: SleepRun, *, keep: int) -> None:
        row = (
            run.user_id,
            run.agent_id,
            run.trigger,
            real(run.started_at, "started_at"),
            real(run.seconds, "seconds"),
            dumps(list(run.phases), "phases"),
            dumps(run.changes, "sleep changes"),
            int(run.interrupted),
            run.error,
        )
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO sleep_runs (user_id, agent_id, trigger, started_at, seconds,"
                " phases, changes, interrupted, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            conn.execute(
                "DELETE FROM sleep_runs WHERE user_id = ? AND agent_id = ? AND id <= ("
                " SELECT id FROM sleep_runs WHERE user_id = ? AND agent_id = ?"
                " ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (run.user_id, run.agent_id, run.user_id, run.agent_id, max(int(keep), 1)),
            )

    def sleep_runs(self, scope: Scope, *, limit: int, offset: int = 0) -> list[SleepRun]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, trigger, started_at, seconds, phases, changes, interrupted, error"
                " FROM sleep_runs WHERE user_id = ? AND agent_id = ?"
                " ORDER BY id DESC LIMIT ? OFFSET ?",
                (scope.user_id, scope.agent_id, max(int(limit), 0), max(int(offset), 0)),
            ).fetchall()
        return [
            SleepRun(
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                trigger=trigger,
                started_at=started_at,
                seconds=seconds,
                phases=tuple(json.loads(phases)),
                changes=json.loads(changes),
                interrupted=bool(interrupted),
                error=error,
                id=run_id,
            )
            for run_id, trigger, started_at, seconds, phases, changes, interrupted, error in rows
        ]

    def add_sources(self, scope: Scope, memory_id: str, sources: Sequence[MemorySource]) -> None:
        if not sources:
            return
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO memory_sources (memory_id, reference, source, at)"
                " SELECT id, ?, ?, ? FROM memories WHERE id = ? AND user_id = ? AND agent_id = ?",
                [
                    (s.reference, s.source, real(s.at, "at"), memory_id, *_key(scope))
                    for s in sources
                ],
            )

    def sources(self, scope: Scope, memory_id: str) -> list[MemorySource]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT s.reference, s.source, s.at FROM memory_sources s"
                " JOIN memories m ON m.id = s.memory_id"
                " WHERE s.memory_id = ? AND m.user_id = ? AND m.agent_id = ? ORDER BY s.id",
                (memory_id, *_key(scope)),
            ).fetchall()
        return [MemorySource(*row) for row in rows]

    # -- consolidation inputs -----------------------------------------------------

    def record_co_retrieval(self, scope: Scope, memory_ids: Sequence[str], now: float) -> None:
        ids = list(dict.fromkeys(memory_ids))[:_MAX_PAIR_IDS]
        pairs = [tuple(sorted(p)) for p in itertools.combinations(ids, 2)]
        if not pairs:
            return
        at = real(now, "now")
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO co_retrievals (user_id, agent_id, first_id, second_id, count, last_at)"
                " VALUES (?, ?, ?, ?, 1, ?)"
                " ON CONFLICT (user_id, agent_id, first_id, second_id) DO UPDATE SET"
                " count = co_retrievals.count + 1, last_at = excluded.last_at",
                [(*_key(scope), a, b, at) for a, b in pairs],
            )

    def take_co_retrievals(self, scope: Scope) -> list[tuple[str, str, int]]:
        with self._db.write() as conn:
            rows = conn.execute(
                "DELETE FROM co_retrievals WHERE user_id = ? AND agent_id = ?"
                " RETURNING first_id, second_id, count",
                _key(scope),
            ).fetchall()
        return sorted((a, b, int(n)) for a, b, n in rows)

    def mark_abstracted(self, scope: Scope, episode_ids: Sequence[str], now: float) -> None:
        if not episode_ids:
            return
        with self._db.write() as conn:
            sql = self._sql
            conn.execute(
                "INSERT INTO abstracted_episodes (memory_id, at)"
                f" SELECT id, ? FROM memories WHERE {sql.ids('id')}"
                f" AND {sql.unindexed('user_id')} = ? AND {sql.unindexed('agent_id')} = ?"
                " ON CONFLICT DO NOTHING",
                (real(now, "now"), sql.bind_list(episode_ids), *_key(scope)),
            )

    def unabstracted_episodes(self, scope: Scope, *, limit: int) -> list[Episode]:
        if limit <= 0:
            return []
        with self._db.read() as conn:
            records = load_records(
                conn,
                MemoryKind.EPISODIC,
                " LEFT JOIN abstracted_episodes a ON a.memory_id = m.id"
                " WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL"
                " AND a.memory_id IS NULL ORDER BY t.timestamp, t.seq LIMIT ?",
                (*_key(scope), int(limit)),
            )
        return cast(list[Episode], records)

    def vitals(self, scope: Scope, bound: ForgettingBound | None = None) -> list[MemoryVitals]:
        terms, params = _bound_sql(self._sql, bound)
        with self._db.read() as conn:
            rows = conn.execute(
                _VITALS.format(bound=terms),
                {"user": scope.user_id, "agent": scope.agent_id, **params},
            ).fetchall()
        return [
            MemoryVitals(
                memory_id=row[0],
                kind=MemoryKind(row[1]),
                temporal_level=row[2],
                effective_salience=max(0.0, min(1.0, row[3])),
                created_at=row[4],
                pagerank=row[5],
                stability=row[6],
                last_reviewed=row[7],
                review_count=row[8],
                confidence=row[9],
                validated=bool(row[10]),
                status=row[11],
                success_rate=row[12],
                tier=row[13],
            )
            for row in rows
        ]

    def archived_before(self, scope: Scope, cutoff: float) -> list[str]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id FROM memories WHERE user_id = ? AND agent_id = ?"
                " AND archived_at IS NOT NULL AND archived_at <= ? ORDER BY archived_at, seq",
                (*_key(scope), real(cutoff, "cutoff")),
            ).fetchall()
        return [row[0] for row in rows]

    # -- gardener jobs ------------------------------------------------------------

    def job_runs(self) -> dict[str, JobRun]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT job, last_run_at, last_summary, locked_by, lock_expires_at"
                " FROM gardener_jobs ORDER BY job"
            ).fetchall()
        return {row[0]: JobRun(row[0], row[1], json.loads(row[2]), row[3], row[4]) for row in rows}

    def begin_job(
        self, job: str, owner: str, now: float, *, due_before: float, lease_seconds: float
    ) -> bool:
        at = real(now, "now")
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO gardener_jobs (job) VALUES (?) ON CONFLICT DO NOTHING", (job,)
            )
            last_run, locked_by, expires = one(
                conn.execute(
                    "SELECT last_run_at, locked_by, lock_expires_at FROM gardener_jobs"
                    f" WHERE job = ?{self._sql.lock_rows}",
                    (job,),
                )
            )
            if locked_by is not None and locked_by != owner and (expires or 0.0) > at:
                return False
            if last_run is not None and last_run > due_before:
                return False
            conn.execute(
                "UPDATE gardener_jobs SET locked_by = ?, lock_expires_at = ? WHERE job = ?",
                (owner, at + real(lease_seconds, "lease_seconds"), job),
            )
        return True

    def finish_job(self, job: str, owner: str, now: float, summary: Mapping[str, object]) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE gardener_jobs SET last_run_at = ?, last_summary = ?, locked_by = NULL,"
                " lock_expires_at = NULL WHERE job = ? AND locked_by = ?",
                (real(now, "now"), dumps(dict(summary), "job summary"), job, owner),
            )

    def abandon_job(self, job: str, owner: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE gardener_jobs SET locked_by = NULL, lock_expires_at = NULL"
                " WHERE job = ? AND locked_by = ?",
                (job, owner),
            )

    # -- maintenance --------------------------------------------------------------

    def clean_orphans(self) -> dict[str, int]:
        removed: dict[str, int] = {}
        with self._db.write() as conn:
            for name, sql in self._orphans:
                removed[name] = conn.execute(sql).rowcount
        return removed


def _key(scope: Scope) -> tuple[str, str]:
    return scope.user_id, scope.agent_id
