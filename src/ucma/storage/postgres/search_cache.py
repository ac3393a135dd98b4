"""Each scope's rows in this process's memory, kept true to what other processes commit.

A search on PostgreSQL may answer from the scope's ``ScopeVectors`` (``ucma.storage.
index``: the vectors and the keyword postings the SQLite backend searches) instead of
scanning the scope in the server. Several processes write one database, so before it
answers the cache reads the scope's search version (``keyword_stats.version``, one
primary-key lookup; schema.py, migration 2), which every committed statement that
inserts, deletes, archives, restores or rewrites the scope's rows has moved to a value
never used before. An equal version means nothing changed since the cache was filled:
it answers. Otherwise it catches up in one repeatable-read snapshot, reading the
version again with the rows:

- ``rewritten`` moved (a row's text or vector changed; which row is not recorded), or
  a row appeared below the newest one held (two writers committed out of seq order):
  the scope is reloaded;
- otherwise rows held but gone are dropped, the archived flags are read again, and
  the rows newer than the newest held are loaded.

So a write committed by any process is seen by the next search in every process
(read-your-writes across processes). A search inside a transaction never uses the
cache (the transaction's own uncommitted rows must be found, and must not enter a
cache other threads read): the catalog searches in the server then.

A scope's cache is used by one thread at a time (its lock); ``cached_scopes`` caches
are kept, the least recently used beyond that dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ucma.errors import StorageError
from ucma.lru import SCOPES_IN_MEMORY, LruMap
from ucma.storage.index.vector_cache import KIND_CODE_BY_VALUE, ScopeVectors
from ucma.storage.postgres.connection import Database, PgConnection
from ucma.types import Scope

__all__ = ["SearchCaches"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_VERSION = "SELECT version, rewritten FROM keyword_stats WHERE user_id = ? AND agent_id = ?"
_HELD = """
SELECT seq FROM memories WHERE user_id = ? AND agent_id = ? AND seq <= ? ORDER BY seq
"""
_ARCHIVED = """
SELECT seq FROM memories
WHERE user_id = ? AND agent_id = ? AND archived_at IS NOT NULL AND seq <= ?
"""
_NEW = """
SELECT seq, id, kind, archived_at IS NOT NULL, embedding, content, search_context
FROM memories WHERE user_id = ? AND agent_id = ? AND seq > ? ORDER BY seq
"""


class _Entry:
    __slots__ = ("cache", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cache: ScopeVectors | None = None


class SearchCaches:
    """The scopes' in-memory copies of one ``PostgresStorage`` (module docstring)."""

    def __init__(self, db: Database, dimension: int, cached_scopes: int = SCOPES_IN_MEMORY) -> None:
        self._db = db
        self._dimension = dimension
        self._lock = threading.Lock()
        self._entries: LruMap[Scope, _Entry] = LruMap(cached_scopes)

    def search(self, scope: Scope, answer: Callable[[ScopeVectors], T]) -> T:
        """``answer`` asked of the scope's rows as every committed write left them."""
        with self._lock:
            entry = self._entries.get(scope)
            if entry is None:
                entry = self._entries[scope] = _Entry()
        with entry.lock:
            entry.cache = self._current(scope, entry.cache)
            return answer(entry.cache)

    def loaded(self, scope: Scope, answer: Callable[[ScopeVectors], T]) -> T | None:
        """``answer`` asked of the scope's copy when one is loaded and nothing was
        committed to the scope since; None otherwise (nothing is loaded for it)."""
        with self._lock:
            entry = self._entries.get(scope)
        if entry is None:
            return None
        with entry.lock:
            cache = entry.cache
            if cache is None:
                return None
            with self._db.read() as conn:
                if _version(conn, (scope.user_id, scope.agent_id))[0] != cache.version:
                    return None
            return answer(cache)

    def drop(self, scope: Scope) -> None:
        """Forget the scope's copy (after an erasure); the next search reloads it."""
        with self._lock:
            self._entries.pop(scope, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _current(self, scope: Scope, cache: ScopeVectors | None) -> ScopeVectors:
        key = (scope.user_id, scope.agent_id)
        if cache is not None:
            with self._db.read() as conn:
                if _version(conn, key)[0] == cache.version:
                    return cache
        with self._db.snapshot() as conn:
            version, rewritten = _version(conn, key)
            if cache is None or cache.rewrites != rewritten or not _sync(conn, key, cache):
                cache = ScopeVectors(self._dimension)
            self._load_new_rows(conn, key, cache)
            cache.version, cache.rewrites = version, rewritten
        return cache

    def _load_new_rows(self, conn: PgConnection, key: tuple[str, str], cache: ScopeVectors) -> None:
        rows = conn.execute(_NEW, (*key, cache.max_seq), binary=True).fetchall()
        if not rows:
            return
        matrix = np.empty((len(rows), self._dimension), dtype=np.float32)
        for i, row in enumerate(rows):
            vector = row[4].to_numpy()
            if vector.shape != (self._dimension,):
                raise StorageError(
                    f"stored vector of {row[1]!r} does not have {self._dimension} dimensions"
                )
            matrix[i] = vector
        cache.append(
            np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)),
            [str(row[1]) for row in rows],
            np.fromiter((KIND_CODE_BY_VALUE[row[2]] for row in rows), np.int8, len(rows)),
            np.fromiter((row[3] for row in rows), dtype=bool, count=len(rows)),
            matrix,
            [(str(row[5]), str(row[6])) for row in rows],
        )
        logger.debug("loaded %d rows of %s", len(rows), key)


def _version(conn: PgConnection, key: tuple[str, str]) -> tuple[int, int]:
    row = conn.execute(_VERSION, key).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _sync(conn: PgConnection, key: tuple[str, str], cache: ScopeVectors) -> bool:
    """Bring the rows ``cache`` holds up to date (deletions, archived flags); False
    when a row appeared among them, so the scope must be reloaded."""
    if cache.n == 0:
        return True
    params = (*key, cache.max_seq)
    present = np.fromiter((row[0] for row in conn.execute(_HELD, params)), np.int64)
    held = cache.seqs[: cache.n][cache.alive[: cache.n]]
    if not np.isin(present, held, assume_unique=True).all():
        return False
    if len(present) != len(held):
        cache.keep_only(present)
    archived = np.fromiter((row[0] for row in conn.execute(_ARCHIVED, params)), np.int64)
    cache.set_archived_exactly(archived)
    return True
