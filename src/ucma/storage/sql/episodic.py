"""``EpisodicStore`` over SQL: two tiers and an hour-bucket temporal index.

Each episode row carries ``bucket = int(timestamp // 3600)`` and the index
``episodes_bucket (user_id, agent_id, bucket, timestamp)``. A time range is a
range of buckets, read in index order (bucket, then timestamp, then seq), so
the database neither scans the table nor sorts; the timestamp bounds then trim the
two edge buckets exactly (seed 001 chapter 12: O(buckets + matches)).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ucma.storage.base import EpisodeBrief, EpisodicStore
from ucma.storage.index.search_context import SessionKey, episode_contexts
from ucma.storage.sql.codec import BUCKET_SECONDS, episode_fields, key_of
from ucma.storage.sql.connection import Connection, Database, one
from ucma.storage.sql.dialect import Dialect
from ucma.storage.sql.memories import MemoryRows, check_kind, check_vectors
from ucma.storage.sql.records import load_records
from ucma.types import Episode, MemoryKind, Scope, Tier

__all__ = ["SqlEpisodicStore"]

# The session's stored episode an inserted one follows (ucma.storage.index.search_context).
_PREVIOUS = """
SELECT m.content FROM episodes t JOIN memories m ON m.seq = t.seq
WHERE t.user_id = ? AND t.agent_id = ? AND t.session_id = ? AND t.timestamp <= ?
ORDER BY t.timestamp DESC, t.seq DESC LIMIT 1
"""

_INSERT = """
INSERT INTO episodes (
    seq, user_id, agent_id, session_id, timestamp, bucket, source, participants, tags,
    summary, tier
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE episodes SET session_id = ?, timestamp = ?, bucket = ?, source = ?, participants = ?,
    tags = ?, summary = ?, tier = ?
WHERE seq = ?
"""
INSERT_PARTICIPANT = """
INSERT INTO known_participants (user_id, agent_id, name_key, name) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""


def _briefs(sql: Dialect) -> str:
    return f"""
SELECT m.id, t.session_id, t.timestamp, t.source, t.participants
FROM memories m JOIN episodes t ON t.seq = m.seq
WHERE {sql.ids_in_scope(table="m")} AND m.archived_at IS NULL
"""


def _anchors(sql: Dialect) -> str:
    return f"""
SELECT m.id, t.session_id, t.timestamp, t.seq
FROM memories m JOIN episodes t ON t.seq = m.seq
WHERE {sql.ids_in_scope(table="m")}
"""


# Neighbours on one side of an anchor in (timestamp, seq) order, from two ranges
# of episodes_session (whose entries end with seq): the anchor's own
# timestamp past its seq, then the timestamps beyond it. One row-value range
# "(timestamp, seq) < (?, ?)" seeks on the timestamp alone and walks every
# episode sharing it (a batch observed at once): 100+ us a side instead of ~25.
_SIDE_PART = """
SELECT * FROM (
    SELECT m.id, t.timestamp AS ts, t.seq AS s FROM episodes t JOIN memories m ON m.seq = t.seq
    WHERE t.user_id = :user AND t.agent_id = :agent AND t.session_id = :session
        AND m.archived_at IS NULL AND {where}
    ORDER BY {order} LIMIT :window
)"""
_SIDE = """
SELECT {offset} AS side, id, ts, s FROM (
    SELECT * FROM ({same} UNION ALL {beyond}) ORDER BY ts {direction}, s {direction} LIMIT :window
) AS {alias}
"""
_BEFORE = _SIDE.format(
    same=_SIDE_PART.format(where="t.timestamp = :ts AND t.seq < :seq", order="t.seq DESC"),
    beyond=_SIDE_PART.format(where="t.timestamp < :ts", order="t.timestamp DESC, t.seq DESC"),
    direction="DESC",
    offset=-1,
    alias="before_anchor",
)
_AFTER = _SIDE.format(
    same=_SIDE_PART.format(where="t.timestamp = :ts AND t.seq > :seq", order="t.seq ASC"),
    beyond=_SIDE_PART.format(where="t.timestamp > :ts", order="t.timestamp ASC, t.seq ASC"),
    direction="ASC",
    offset=1,
    alias="after_anchor",
)
# Both sides in one statement (one round trip per anchor); rows say their side, and
# their order within it comes from (timestamp, seq), not from the engine's output order.
_AROUND = _BEFORE + " UNION ALL " + _AFTER
_LIVE = " AND m.archived_at IS NULL"
_BUCKET_LIMIT = 2**62


_IN_RANGE = (
    " WHERE t.user_id = ? AND t.agent_id = ? AND t.bucket BETWEEN ? AND ?"
    " AND t.timestamp BETWEEN ? AND ?"
)
_RANGE_ORDER = " ORDER BY t.bucket, t.timestamp, t.seq LIMIT ?"


def _range_params(
    sql: Dialect, scope: Scope, start: float, end: float, limit: int | None
) -> tuple[str, str, int, int, float, float, int | None]:
    return (
        scope.user_id,
        scope.agent_id,
        _bucket_bound(start),
        _bucket_bound(end),
        float(start),
        float(end),
        sql.no_limit if limit is None else limit,
    )


@functools.lru_cache(maxsize=4096)
def _names(source: str, participants: str) -> frozenset[str]:
    """Keys of an episode's source and participants (a JSON list, most often empty).

    Memoised: a scope has few distinct speakers and participant lists, and a
    recall reads the briefs of a few hundred candidates."""
    names = (source, *json.loads(participants)) if participants != "[]" else (source,)
    return frozenset(key_of(name) for name in names if name.strip())


def _by_offset(rows: Sequence[Sequence[Any]]) -> list[tuple[str, int]]:
    """``(id, offset)`` of an anchor's neighbours from ``_AROUND``'s rows ``(side, id,
    timestamp, seq)``: ``-1, -2, ...`` before it (closest first), ``1, 2, ...`` after,
    nearest first and the earlier of two as near."""
    found: list[tuple[str, int]] = []
    for side in (-1, 1):
        rows_of_side = sorted(
            (row for row in rows if row[0] == side),
            key=lambda row: (row[2], row[3]),
            reverse=side < 0,
        )
        found += [(row[1], side * place) for place, row in enumerate(rows_of_side, 1)]
    found.sort(key=lambda item: (abs(item[1]), item[1]))
    return found


def _bucket_bound(timestamp: float) -> int:
    """Bucket of a range bound; infinite bounds become the outermost buckets."""
    if math.isinf(timestamp):
        return _BUCKET_LIMIT if timestamp > 0 else -_BUCKET_LIMIT
    return max(-_BUCKET_LIMIT, min(_BUCKET_LIMIT, int(timestamp // BUCKET_SECONDS)))


class SqlEpisodicStore(EpisodicStore):
    def __init__(self, db: Database, rows: MemoryRows) -> None:
        self._db = db
        self._rows = rows
        self._sql = db.dialect
        self._briefs = _briefs(db.dialect)
        self._anchors = _anchors(db.dialect)

    def add(self, episodes: Sequence[Episode], vectors: np.ndarray) -> None:
        episodes = list(episodes)
        check_kind(episodes, Episode)
        matrix = check_vectors(vectors, len(episodes), self._rows.dimension)
        if not episodes:
            return
        typed = [(e.user_id, e.agent_id, *episode_fields(e)) for e in episodes]
        with self._db.write() as conn:
            contexts = episode_contexts(episodes, functools.partial(_stored_previous, conn))
            seqs = self._rows.insert(conn, episodes, matrix, contexts)
            conn.executemany(_INSERT, [(seq, *row) for seq, row in zip(seqs, typed, strict=True)])
            conn.executemany(
                INSERT_PARTICIPANT,
                (
                    (e.user_id, e.agent_id, key_of(name), name.strip())
                    for e in episodes
                    for name in (e.source, *e.participants)
                    if name.strip()
                ),
            )

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
            _range_params(self._sql, scope, start, end, limit),
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
        params = _range_params(self._sql, scope, start, end, limit)
        with self._db.read() as conn:
            rows = conn.execute(sql, params).fetchall()
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
            rows = conn.execute(
                self._briefs, (self._sql.bind_list(ids), scope.user_id, scope.agent_id)
            ).fetchall()
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
                self._anchors, (self._sql.bind_list(ids), scope.user_id, scope.agent_id)
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
                result[memory_id] = _by_offset(conn.execute(_AROUND, where).fetchall())
        return result

    def participants(self, scope: Scope) -> list[str]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT name FROM known_participants WHERE user_id = ? AND agent_id = ?"
                " ORDER BY name_key",
                (scope.user_id, scope.agent_id),
            ).fetchall()
        return [row[0] for row in rows]

    def stats(self, scope: Scope) -> dict[str, int]:
        """Counts over live (not archived) episodes."""
        with self._db.read() as conn:
            short, medium, buckets = one(
                conn.execute(
                    """
                    SELECT count(*) FILTER (WHERE t.tier = ?),
                        count(*) FILTER (WHERE t.tier = ?), count(DISTINCT t.bucket)
                    FROM episodes t JOIN memories m ON m.seq = t.seq
                    WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL
                    """,
                    (Tier.SHORT_TERM.value, Tier.MEDIUM_TERM.value, scope.user_id, scope.agent_id),
                )
            )
        return {
            "short_term_count": int(short),
            "medium_term_count": int(medium),
            "temporal_buckets": int(buckets),
        }

    def _select(self, where: str, params: Sequence[object]) -> list[Episode]:
        with self._db.read() as conn:
            return cast(list[Episode], load_records(conn, MemoryKind.EPISODIC, where, params))


def _stored_previous(conn: Connection, key: SessionKey, timestamp: float) -> str | None:
    row = conn.execute(_PREVIOUS, (*key, timestamp)).fetchone()
    return None if row is None else str(row[0])
