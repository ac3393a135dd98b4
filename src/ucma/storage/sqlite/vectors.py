"""Exact dense search over one scope's vectors, with an in-process cache.

Vectors are float32 unit vectors stored as blobs in ``vectors``. Searching
reads no blobs: each scope's vectors live in a numpy matrix (with ids, kinds,
archived flags and a liveness mask), scored with one matrix-vector product
and ``np.argpartition``. 100,000 x 384 takes a few milliseconds.

Keeping the cache true:

- Every write that changes what dense search can return (insert, delete,
  archive, restore) bumps the scope's counter in ``scope_versions`` inside
  its transaction and records the change here as *pending*.
- On commit the pending changes are applied to the cache, but only when the
  cache was at the version the transaction started from; otherwise another
  connection wrote in between and the cache is left to resynchronise. On
  rollback they are dropped, so the cache is never ahead of the database.
- Before each search the scope's counter is read (one indexed lookup). A
  different value means another connection or process wrote: the cache then
  re-reads the scope's seqs and archived seqs (index-only reads) to drop
  deleted rows and update flags, and loads only the blobs of rows newer than the newest it holds
  (``seq`` is AUTOINCREMENT, so new rows always have larger seqs).
- A search inside a transaction that already wrote to the scope runs on a
  throwaway copy read through the transaction, so uncommitted rows are seen
  by their own transaction but never enter the cache.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ucma.errors import StorageError, ValidationError
from ucma.storage.base import ScoredId
from ucma.storage.sqlite.connection import Database
from ucma.types import MemoryKind, Scope

__all__ = ["KIND_CODES", "ScopeVectors", "VectorIndex"]

logger = logging.getLogger(__name__)

KIND_CODES = {kind: code for code, kind in enumerate(MemoryKind)}
_KIND_BY_VALUE = {kind.value: code for kind, code in KIND_CODES.items()}

_BUMP_VERSION = """
INSERT INTO scope_versions (user_id, agent_id, version) VALUES (?, ?, 1)
ON CONFLICT (user_id, agent_id) DO UPDATE SET version = version + 1
RETURNING version
"""
_READ_VERSION = "SELECT version FROM scope_versions WHERE user_id = ? AND agent_id = ?"
_READ_SEQS = """
SELECT seq FROM memories INDEXED BY memories_scope_seq
WHERE user_id = ? AND agent_id = ? AND seq <= ?
"""
_READ_ARCHIVED = """
SELECT seq FROM memories INDEXED BY memories_scope_archived
WHERE user_id = ? AND agent_id = ? AND archived_at IS NOT NULL AND seq <= ?
"""
_READ_NEW_ROWS = """
SELECT m.seq, m.id, m.kind, m.archived_at IS NOT NULL, v.vector
FROM memories m INDEXED BY memories_scope_seq JOIN vectors v ON v.seq = m.seq
WHERE m.user_id = ? AND m.agent_id = ? AND m.seq > ?
ORDER BY m.seq
"""


class ScopeVectors:
    """One scope's vectors in seq order, with per-row kind, archived and alive flags."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.version = -1
        self.n = 0
        self.dead = 0
        self.ids: list[str] = []
        self.matrix = np.empty((0, dimension), dtype=np.float32)
        self.seqs = np.empty(0, dtype=np.int64)
        self.kinds = np.empty(0, dtype=np.int8)
        self.archived = np.empty(0, dtype=bool)
        self.alive = np.empty(0, dtype=bool)

    @property
    def max_seq(self) -> int:
        return int(self.seqs[self.n - 1]) if self.n else 0

    def _reserve(self, needed: int) -> None:
        capacity = self.matrix.shape[0]
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity, 1024)
        for name in ("matrix", "seqs", "kinds", "archived", "alive"):
            old = getattr(self, name)
            new = np.empty((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def append(
        self,
        seqs: np.ndarray,
        ids: Sequence[str],
        kinds: np.ndarray,
        archived: np.ndarray,
        matrix: np.ndarray,
    ) -> None:
        count = len(ids)
        if count == 0:
            return
        if self.n and int(seqs[0]) <= self.max_seq:
            raise StorageError("vector cache out of order")  # caught by the caller: reload
        self._reserve(self.n + count)
        end = self.n + count
        self.matrix[self.n : end] = matrix
        self.seqs[self.n : end] = seqs
        self.kinds[self.n : end] = kinds
        self.archived[self.n : end] = archived
        self.alive[self.n : end] = True
        self.ids.extend(ids)
        self.n = end

    def _positions(self, seqs: Sequence[int] | np.ndarray) -> np.ndarray:
        """Row positions of the given seqs that the cache holds alive."""
        wanted = np.asarray(seqs, dtype=np.int64)
        if wanted.size == 0 or self.n == 0:
            return np.empty(0, dtype=np.int64)
        held = self.seqs[: self.n]
        pos = np.searchsorted(held, wanted)
        pos = pos[pos < self.n]
        pos = pos[np.isin(held[pos], wanted)]
        return pos[self.alive[pos]]

    def remove(self, seqs: Sequence[int] | np.ndarray) -> None:
        pos = self._positions(seqs)
        self.alive[pos] = False
        self.dead += int(pos.size)
        if self.dead > 256 and self.dead * 4 > self.n:
            self.compact()

    def set_archived(self, seqs: Sequence[int] | np.ndarray, archived: bool) -> None:
        self.archived[self._positions(seqs)] = archived

    def compact(self) -> None:
        keep = np.flatnonzero(self.alive[: self.n])
        self.ids = [self.ids[i] for i in keep]
        for name in ("matrix", "seqs", "kinds", "archived", "alive"):
            setattr(self, name, np.ascontiguousarray(getattr(self, name)[keep]))
        self.n, self.dead = int(keep.size), 0

    def sync(self, seqs: np.ndarray, archived_seqs: np.ndarray) -> None:
        """Match the database: ``seqs`` (sorted) are the scope's rows up to
        ``max_seq``, ``archived_seqs`` those of them that are archived."""
        held = self.seqs[: self.n]
        present = np.isin(held, seqs, assume_unique=True)
        gone = self.alive[: self.n] & ~present
        self.alive[: self.n] &= present
        self.dead += int(gone.sum())
        self.archived[: self.n] = np.isin(held, archived_seqs)
        if self.dead > 256 and self.dead * 4 > self.n:
            self.compact()

    def search(
        self, query: np.ndarray, k: int, kind_codes: np.ndarray | None, include_archived: bool
    ) -> list[ScoredId]:
        n = self.n
        if k <= 0 or n == 0:
            return []
        mask: np.ndarray | None = None
        if self.dead:
            mask = self.alive[:n]
        if not include_archived and self.archived[:n].any():
            visible = ~self.archived[:n]
            mask = visible if mask is None else mask & visible
        if kind_codes is not None:
            wanted = np.isin(self.kinds[:n], kind_codes)
            mask = wanted if mask is None else mask & wanted
        scores = self.matrix[:n] @ query
        if mask is None:
            top = np.arange(n) if k >= n else np.argpartition(scores, n - k)[n - k :]
        else:
            candidates = np.flatnonzero(mask)
            if candidates.size > k:
                part = scores[candidates]
                top = candidates[np.argpartition(part, part.size - k)[part.size - k :]]
            else:
                top = candidates
        top = np.sort(top)  # ties: older first
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in order]


@dataclass(slots=True)
class _Pending:
    """Changes one open transaction made to one scope's vectors."""

    before: int
    after: int
    ops: list[tuple[Any, ...]] = field(default_factory=list)


class VectorIndex:
    """Per-scope vector caches of one ``Database`` (a ``TransactionListener``)."""

    def __init__(self, db: Database, dimension: int) -> None:
        self._db = db
        self._dimension = dimension
        self._scopes: dict[Scope, ScopeVectors] = {}
        self._pending: dict[Scope, _Pending] = {}
        db.add_listener(self)

    # -- writes (inside the writing transaction) -------------------------------

    def _bump(self, conn: sqlite3.Connection, scope: Scope) -> _Pending:
        version = conn.execute(_BUMP_VERSION, (scope.user_id, scope.agent_id)).fetchone()[0]
        pending = self._pending.get(scope)
        if pending is None:
            pending = self._pending[scope] = _Pending(before=version - 1, after=version)
        pending.after = version
        return pending

    def added(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        seqs: Sequence[int],
        ids: Sequence[str],
        kinds: Sequence[MemoryKind],
        archived: Sequence[bool],
        matrix: np.ndarray,
    ) -> None:
        self._bump(conn, scope).ops.append(
            (
                "add",
                np.asarray(seqs, dtype=np.int64),
                list(ids),
                np.fromiter((KIND_CODES[k] for k in kinds), dtype=np.int8, count=len(ids)),
                np.asarray(archived, dtype=bool),
                np.array(matrix, dtype=np.float32, copy=True),
            )
        )

    def removed(self, conn: sqlite3.Connection, scope: Scope, seqs: Sequence[int]) -> None:
        self._bump(conn, scope).ops.append(("remove", list(seqs)))

    def archived(
        self, conn: sqlite3.Connection, scope: Scope, seqs: Sequence[int], archived: bool
    ) -> None:
        self._bump(conn, scope).ops.append(("archive", list(seqs), archived))

    def committed(self) -> None:
        pending, self._pending = self._pending, {}
        for scope, changes in pending.items():
            cache = self._scopes.get(scope)
            if cache is None or cache.version != changes.before:
                continue  # not loaded, or another connection wrote: resync on next search
            try:
                for op in changes.ops:
                    if op[0] == "add":
                        cache.append(*op[1:])
                    elif op[0] == "remove":
                        cache.remove(op[1])
                    else:
                        cache.set_archived(op[1], op[2])
            except StorageError:
                del self._scopes[scope]
                continue
            cache.version = changes.after

    def rolled_back(self) -> None:
        self._pending.clear()

    def clear(self) -> None:
        self._scopes.clear()
        self._pending.clear()

    # -- reads --------------------------------------------------------------------

    def search(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None,
        include_archived: bool,
    ) -> list[ScoredId]:
        query = self._query(vector)
        kind_codes = None
        if kinds is not None:
            kind_codes = np.array(sorted({KIND_CODES[MemoryKind(k)] for k in kinds}), np.int8)
            if kind_codes.size == 0:
                return []
        if k <= 0:
            return []
        with self._db.read() as conn:
            if scope in self._pending:
                cache = ScopeVectors(self._dimension)
                self._load_new_rows(conn, scope, cache)
            else:
                cache = self._fresh(conn, scope)
            return cache.search(query, k, kind_codes, include_archived)

    def _query(self, vector: np.ndarray) -> np.ndarray:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self._dimension:
            raise ValidationError(
                f"query vector has {query.shape[0]} dimensions, the store holds {self._dimension}"
            )
        norm = float(np.linalg.norm(query))
        if not np.isfinite(norm) or norm == 0.0:
            raise ValidationError("query vector must be finite and non-zero")
        return query / norm

    def _fresh(self, conn: sqlite3.Connection, scope: Scope) -> ScopeVectors:
        cache = self._scopes.get(scope)
        if cache is not None and cache.version == self._version(conn, scope):
            return cache
        try:
            with self._db.snapshot() as snap:
                version = self._version(snap, scope)
                if cache is None:
                    cache = ScopeVectors(self._dimension)
                elif cache.n - cache.dead:
                    self._sync(snap, scope, cache)
                self._load_new_rows(snap, scope, cache)
                cache.version = version
        except BaseException:
            self._scopes.pop(scope, None)
            raise
        self._scopes[scope] = cache
        return cache

    @staticmethod
    def _version(conn: sqlite3.Connection, scope: Scope) -> int:
        row = conn.execute(_READ_VERSION, (scope.user_id, scope.agent_id)).fetchone()
        return 0 if row is None else int(row[0])

    @staticmethod
    def _sync(conn: sqlite3.Connection, scope: Scope, cache: ScopeVectors) -> None:
        params = (scope.user_id, scope.agent_id, cache.max_seq)
        seqs = np.fromiter((row[0] for row in conn.execute(_READ_SEQS, params)), np.int64)
        archived = np.fromiter((row[0] for row in conn.execute(_READ_ARCHIVED, params)), np.int64)
        cache.sync(seqs, archived)

    def _load_new_rows(self, conn: sqlite3.Connection, scope: Scope, cache: ScopeVectors) -> None:
        rows = conn.execute(
            _READ_NEW_ROWS, (scope.user_id, scope.agent_id, cache.max_seq)
        ).fetchall()
        if not rows:
            return
        seqs, ids, kinds, archived, blobs = zip(*rows, strict=True)
        data = b"".join(blobs)
        if len(data) != len(rows) * self._dimension * 4:
            raise StorageError(
                f"stored vectors of scope {scope} do not have {self._dimension} dimensions"
            )
        cache.append(
            np.asarray(seqs, dtype=np.int64),
            list(ids),
            np.fromiter((_KIND_BY_VALUE[k] for k in kinds), dtype=np.int8, count=len(rows)),
            np.asarray(archived, dtype=bool),
            np.frombuffer(data, dtype=np.float32).reshape(len(rows), self._dimension),
        )
        logger.debug("loaded %d vectors of %s", len(rows), scope)
