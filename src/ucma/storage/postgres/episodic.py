"""``EpisodicStore`` over PostgreSQL: two tiers and an hour-bucket temporal index.

The same layout as the SQLite store (``bucket = timestamp // 3600`` and the index
``episodes_bucket (user_id, agent_id, bucket, timestamp, seq)``): a time range is
a range of buckets read in index order, trimmed exactly at the two edge buckets.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import cast

import numpy as np

from ucma.storage.base import EpisodeBrief, EpisodicStore
from ucma.storage.index.search_context import SessionKey, episode_contexts
from ucma.storage.postgres.connection import Database
from ucma.storage.postgres.memories import MemoryRows
from ucma.storage.sql.connection import one
from ucma.storage.sql.records import load_records
from ucma.storage.sqlite.codec import BUCKET_SECONDS, episode_fields, key_of
from ucma.storage.sqlite.memories import check_kind, check_vectors
from ucma.types import Episode, MemoryKind, Scope, Tier

__all__ = ["PostgresEpisodicStore"]

_INSERT = """
INSERT INTO episodes (
    seq, user_id, agent_id, session_id, timestamp, bucket, source, participants, tags,
    summary, tier
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE episodes SET session_id = ?, timestamp = ?, bucket = ?, source = ?,
    participants = ?, tags = ?, summary = ?, tier = ?
WHERE seq = ?
"""
_INSERT_PARTICIPANT = """
INSERT INTO known_participants (user_id, agent_id, name_key, name) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
_PREVIOUS = """
SELECT m.content FROM episodes t JOIN memories m ON m.seq = t.seq
WHERE t.user_id = ? AND t.agent_id = ? AND t.session_id = ? AND t.timestamp <= ?
ORDER BY t.timestamp DESC, t.seq DESC LIMIT 1
"""
_BRIEFS = """
SELECT m.id, t.session_id, t.timestamp, t.source, t.participants
FROM memories m JOIN episodes t ON t.seq = m.seq
WHERE m.id = ANY(?::text[]) AND m.user_id = ? AND m.agent_id = ?
    AND m.archived_at IS NULL
"""
_SIDE = """
SELECT m.id FROM episodes t JOIN memories m ON m.seq = t.seq
WHERE t.user_id = :user AND t.agent_id = :agent AND t.session_id = :session
    AND m.archived_at IS NULL AND (t.timestamp, t.seq) {op} (:ts, :seq)
ORDER BY t.timestamp {direction}, t.seq {direction} LIMIT :window
"""
_BEFORE = _SIDE.format(op="<", direction="DESC")
_AFTER = _SIDE.format(op=">", direction="ASC")
_LIVE = " AND m.archived_at IS NULL"
_BUCKET_LIMIT = 2**62
_IN_RANGE = (
    " WHERE t.user_id = ? AND t.agent_id = ? AND t.bucket BETWEEN ? AND ?"
    " AND t.timestamp BETWEEN ? AND ?"
)
_RANGE_ORDER = " ORDER BY t.bucket, t.timestamp, t.seq LIMIT ?"


def _range_params(
    scope: Scope, start: float, end: float, limit: int | None
) -> tuple[str, str, int, int, float, float, int | None]:
    return (
        scope.user_id,
        scope.agent_id,
        _bucket_bound(start),
        _bucket_bound(end),
        float(start),
        float(end),
        limit,  # LIMIT NULL: no limit
    )


def _bucket_bound(timestamp: float) -> int:
    """Bucket of a range bound; infinite bounds become the outermost buckets."""
    if math.isinf(timestamp):
        return _BUCKET_LIMIT if timestamp > 0 else -_BUCKET_LIMIT
    return max(-_BUCKET_LIMIT, min(_BUCKET_LIMIT, int(timestamp // BUCKET_SECONDS)))


@functools.lru_cache(maxsize=4096)
def _names(source: str, participants: str) -> frozenset[str]:
    """Keys of an episode's source and participants (a JSON list, most often empty)."""
    names = (source, *json.loads(participants)) if participants != "[]" else (source,)
    return frozenset(key_of(name) for name in names if name.strip())


class PostgresEpisodicStore(EpisodicStore):
    def __init__(self, db: Database, rows: MemoryRows) -> None:
        self._db = db
        self._rows = rows

    def add(self, episodes: Sequence[Episode], vectors: np.ndarray) -> None:
        episodes = list(episodes)
        check_kind(episodes, Episode)
        matrix = check_vectors(vectors, len(episodes), self._rows.dimension)
        if not episodes:
            return
        typed = [(e.user_id, e.agent_id, *episode_fields(e)) for e in episodes]
        with self._db.write() as conn:

            def stored_previous(key: SessionKey, timestamp: float) -> str | None:
                row = conn.execute(_PREVIOUS, (*key, timestamp)).fetchone()
                return None if row is None else str(row[0])

            contexts = episode_contexts(episodes, stored_previous)
            seqs = self._rows.insert(conn, episodes, matrix, contexts)
            conn.executemany(_INSERT, [(seq, *row) for seq, row in zip(seqs, typed, strict=True)])
            names = [
                (e.user_id, e.agent_id, key_of(name), name.strip())
                for e in episodes
                for name in (e.source, *e.participants)
                if name.strip()
            ]
            conn.executemany(_INSERT_PARTICIPANT, names)

    def get(self, scope: Scope, episode_id: str) -> Episode | None:
        found = self._select(
            " WHERE m.id = ? AND m.user_id = ? AND m.agent_id = ?",
            (episode_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def update(self, episode: Episode) -> None:
        check_kind([episode], Episode)
        fields = episode_fields(episode)
        with self._db.write() as conn:
            seq = self._rows.update(conn, episode)
            conn.execute(_UPDATE, (*fields, seq))

    def time_range(
        self,
        scope: Scope,
        start: float,
        end: float,
        *,
        limit: int | None = None,
        include_archived: bool = False,
    ) -> list[Episode]:
        if math.isnan(start) or math.isnan(end) or start > end:
            return []
        if limit is not None and limit <= 0:
            return []
        return self._select(
            _IN_RANGE + ("" if include_archived else _LIVE) + _RANGE_ORDER,
            _range_params(scope, start, end, limit),
        )

    def in_range(self, scope: Scope, start: float, end: float, *, limit: int) -> list[str]:
        if math.isnan(start) or math.isnan(end) or start > end or limit <= 0:
            return []
        sql = (
            "SELECT m.id FROM episodes t JOIN memories m ON m.seq = t.seq"
            + _IN_RANGE
            + _LIVE
            + _RANGE_ORDER
        )
        with self._db.read() as conn:
            rows = conn.execute(sql, _range_params(scope, start, end, limit)).fetchall()
        return [str(row[0]) for row in rows]

    def expired_short_term(self, scope: Scope, cutoff: float) -> list[Episode]:
        # Time since storing, not event age: an episode imported today about 2024 is fresh.
        return self._select(
            " WHERE t.user_id = ? AND t.agent_id = ? AND t.tier = ? AND m.created_at < ?"
            + _LIVE
            + " ORDER BY t.timestamp, t.seq",
            (scope.user_id, scope.agent_id, Tier.SHORT_TERM.value, float(cutoff)),
        )

    def session(self, scope: Scope, session_id: str) -> list[Episode]:
        return self._select(
            " WHERE t.user_id = ? AND t.agent_id = ? AND t.session_id = ?"
            + _LIVE
            + " ORDER BY t.timestamp, t.seq",
            (scope.user_id, scope.agent_id, session_id),
        )

    def last_of_session(self, scope: Scope, session_id: str) -> str | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT m.id FROM episodes t JOIN memories m ON m.seq = t.seq"
                " WHERE t.user_id = ? AND t.agent_id = ? AND t.session_id = ?"
                + _LIVE
                + " ORDER BY t.timestamp DESC, t.seq DESC LIMIT 1",
                (scope.user_id, scope.agent_id, session_id),
            ).fetchone()
        return None if row is None else str(row[0])

    def briefs(self, scope: Scope, episode_ids: Sequence[str]) -> dict[str, EpisodeBrief]:
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(_BRIEFS, (ids, scope.user_id, scope.agent_id)).fetchall()
        return {
            memory_id: EpisodeBrief(
                id=memory_id,
                session_id=session_id,
                timestamp=timestamp,
                participants=_names(source, participants),
            )
            for memory_id, session_id, timestamp, source, participants in rows
        }

    def neighbors(
        self, scope: Scope, episode_ids: Sequence[str], window: int
    ) -> dict[str, list[tuple[str, int]]]:
        ids = list(dict.fromkeys(episode_ids))
        if window <= 0 or not ids:
            return {}
        result: dict[str, list[tuple[str, int]]] = {}
        with self._db.snapshot() as conn:
            anchors = conn.execute(
                """
                SELECT m.id, t.session_id, t.timestamp, t.seq
                FROM memories m JOIN episodes t ON t.seq = m.seq
                WHERE m.id = ANY(?::text[]) AND m.user_id = ? AND m.agent_id = ?
                """,
                (ids, scope.user_id, scope.agent_id),
            ).fetchall()
            for memory_id, session_id, timestamp, seq in anchors:
                where = {
                    "user": scope.user_id,
                    "agent": scope.agent_id,
                    "session": session_id,
                    "ts": timestamp,
                    "seq": seq,
                    "window": window,
                }
                before = conn.execute(_BEFORE, where).fetchall()
                after = conn.execute(_AFTER, where).fetchall()
                found = [(str(row[0]), -offset) for offset, row in enumerate(before, 1)]
                found += [(str(row[0]), offset) for offset, row in enumerate(after, 1)]
                found.sort(key=lambda item: (abs(item[1]), item[1]))
                result[memory_id] = found
        return result

    def participants(self, scope: Scope) -> list[str]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT name FROM known_participants WHERE user_id = ? AND agent_id = ?"
                " ORDER BY name_key",
                (scope.user_id, scope.agent_id),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def stats(self, scope: Scope) -> dict[str, int]:
        """Counts over live (not archived) episodes."""
        with self._db.read() as conn:
            row = one(
                conn.execute(
                    """
                SELECT count(*) FILTER (WHERE t.tier = ?), count(*) FILTER (WHERE t.tier = ?),
                    count(DISTINCT t.bucket)
                FROM episodes t JOIN memories m ON m.seq = t.seq
                WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL
                """,
                    (Tier.SHORT_TERM.value, Tier.MEDIUM_TERM.value, scope.user_id, scope.agent_id),
                )
            )
        return {
            "short_term_count": int(row[0]),
            "medium_term_count": int(row[1]),
            "temporal_buckets": int(row[2]),
        }

    def _select(self, where: str, params: Sequence[object]) -> list[Episode]:
        with self._db.read() as conn:
            return cast(list[Episode], load_records(conn, MemoryKind.EPISODIC, where, params))
