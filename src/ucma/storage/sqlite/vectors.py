"""Exact dense search and BM25F keyword search over one scope, from an
in-process cache.

Vectors are float32 unit vectors stored as blobs in ``vectors``. Searching
reads no blobs: each scope's vectors and text postings live in a
``ScopeVectors`` (numpy, ``ucma.storage.index``), loaded on the
first search of the scope in this process.

Keeping the cache true:

- Every write that changes what a search can return (insert, delete,
  archive, restore, a change of content) bumps the scope's counter in ``scope_versions`` inside
  its transaction and records the change here as *pending*.
- On commit the pending changes are applied to the cache, but only when the
  cache was at the version the transaction started from; otherwise another
  connection wrote in between and the cache is left to resynchronise. On
  rollback they are dropped, so the cache is never ahead of the database.
- Before each search the scope's counter is read (one indexed lookup). A
  different value means another connection or process wrote. If that writer
  changed some row's text (the scope's ``rewrites`` count moved), the cache is
  reloaded; otherwise it
  counts the scope's rows it holds (index only) to detect deletions, re-reads
  the archived seqs (a partial index), and loads the blobs of rows newer than
  the newest it holds only (``seq`` is AUTOINCREMENT: new rows have larger
  seqs).
- A search inside a transaction that already wrote to the scope runs on a
  throwaway copy read through the transaction, so uncommitted rows are seen
  by their own transaction but never enter the cache.

Threads: the writing transaction's thread and any number of reading threads
(each on its own connection, ``connection.py``) use one ``VectorIndex``. The
pending changes belong to the thread whose transaction is open, and only it
reads them; the caches and graphs are read and changed under one lock, taken
after the database's lock when a thread holds both. A reader brings a cache
to what its connection shows, as a second process would.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ucma.errors import StorageError
from ucma.lru import SCOPES_IN_MEMORY, LruMap
from ucma.storage.base import DEFAULT_ANN, AnnSettings, Bm25, ScoredId, SearchIndexStatus
from ucma.storage.index.hnsw import HnswBuilder, HnswIndex, needs_build
from ucma.storage.index.vector_cache import (
    KIND_CODE_BY_VALUE,
    KIND_CODES,
    ScopeVectors,
    kind_filter,
)
from ucma.storage.sql.connection import Connection
from ucma.storage.sql.memories import unit_query
from ucma.storage.sqlite.connection import Database
from ucma.types import MemoryKind, Scope

__all__ = ["VectorIndex"]

logger = logging.getLogger(__name__)


# A scope's first counter starts above the floor erasure leaves (erasure.py), so a scope
# erased and written again never shows a version some cache holds from before.
_BUMP_VERSION = """
INSERT INTO scope_versions (user_id, agent_id, version)
VALUES (?, ?, 1 + COALESCE(
    (SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'scope_version_floor'), 0))
ON CONFLICT (user_id, agent_id) DO UPDATE SET version = version + 1
RETURNING version
"""
_BUMP_REWRITES = """
UPDATE scope_versions SET rewrites = rewrites + 1 WHERE user_id = ? AND agent_id = ?
RETURNING rewrites
"""
_READ_VERSION = """
SELECT version, rewrites FROM scope_versions WHERE user_id = ? AND agent_id = ?
"""
_COUNT_HELD = """
SELECT count(*) FROM memories INDEXED BY memories_scope_seq
WHERE user_id = ? AND agent_id = ? AND seq <= ?
"""
_READ_HELD = """
SELECT seq FROM memories INDEXED BY memories_scope_seq
WHERE user_id = ? AND agent_id = ? AND seq <= ?
"""
_READ_ARCHIVED = """
SELECT seq FROM memories INDEXED BY memories_scope_archived
WHERE user_id = ? AND agent_id = ? AND archived_at IS NOT NULL AND seq <= ?
"""
_COUNT_NEW = """
SELECT count(*) FROM memories INDEXED BY memories_scope_seq
WHERE user_id = ? AND agent_id = ? AND seq > ?
"""
_READ_NEW = """
SELECT m.seq, m.id, m.kind, m.archived_at IS NOT NULL, v.vector, m.content, m.search_context
FROM memories m INDEXED BY memories_scope_seq JOIN vectors v ON v.seq = m.seq
WHERE m.user_id = ? AND m.agent_id = ? AND m.seq > ?
ORDER BY m.seq
"""


@dataclass(slots=True)
class _Pending:
    """Changes one open transaction made to one scope's vectors."""

    before: int
    after: int
    rewrites: int | None = None  # the scope's rewrite count after this transaction's
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    # What the transaction's own reads search (``VectorIndex._written``), holding
    # the first ``view_ops`` of ``ops``; a full view (text postings too) read
    # through the transaction becomes the scope's cache on commit when it has none.
    view: ScopeVectors | None = None
    view_ops: int = 0
    view_rewrites: int = 0


class VectorIndex:
    """Per-scope vector caches of one ``Database`` (a ``TransactionListener``),
    and the HNSW graphs of scopes large enough for one (``ucma.storage.index.hnsw``).

    Caches and graphs of the ``cached_scopes`` most recently searched or written
    scopes are kept (``ucma.lru``): any caller may name a new scope, so they are not
    kept for every scope ever seen. A dropped scope's cache (and graph) goes as after
    ``drop``: its next search reloads it from the file."""

    def __init__(
        self,
        db: Database,
        dimension: int,
        ann: AnnSettings = DEFAULT_ANN,
        cached_scopes: int = SCOPES_IN_MEMORY,
    ) -> None:
        self._db = db
        self._dimension = dimension
        self._graphs: LruMap[Scope, HnswIndex] = LruMap(cached_scopes)
        self._scopes: LruMap[Scope, ScopeVectors] = LruMap(
            cached_scopes, lambda scope, _: self._graphs.pop(scope, None)
        )
        self._pending: dict[Scope, _Pending] = {}
        self._ann = ann
        self._lock = threading.RLock()  # the caches and graphs (module docstring)
        self._builder = HnswBuilder(ann, dimension, self._built)
        db.add_listener(self)

    def _built(self, scope: Scope, graph: HnswIndex) -> None:
        with self._lock:
            self._graphs[scope] = graph

    def _own_pending(self, scope: Scope) -> _Pending | None:
        """The changes to ``scope`` of the calling thread's open transaction."""
        return self._pending.get(scope) if self._db.in_transaction else None

    # -- writes (inside the writing transaction) -------------------------------

    def _bump(self, conn: Connection, scope: Scope) -> _Pending:
        version = conn.execute(_BUMP_VERSION, (scope.user_id, scope.agent_id)).fetchone()[0]
        pending = self._pending.get(scope)
        if pending is None:
            pending = self._pending[scope] = _Pending(before=version - 1, after=version)
        pending.after = version
        return pending

    def added(
        self,
        conn: Connection,
        scope: Scope,
        seqs: Sequence[int],
        ids: Sequence[str],
        kinds: Sequence[MemoryKind],
        archived: Sequence[bool],
        matrix: np.ndarray,
        texts: Sequence[tuple[str, str]],
    ) -> None:
        self._bump(conn, scope).ops.append(
            (
                "add",
                np.asarray(seqs, dtype=np.int64),
                list(ids),
                np.fromiter((KIND_CODES[k] for k in kinds), dtype=np.int8, count=len(ids)),
                np.asarray(archived, dtype=bool),
                np.array(matrix, dtype=np.float32, copy=True),
                list(texts),
            )
        )

    def removed(self, conn: Connection, scope: Scope, seqs: Sequence[int]) -> None:
        self._bump(conn, scope).ops.append(("remove", list(seqs)))

    def archived(self, conn: Connection, scope: Scope, seqs: Sequence[int], archived: bool) -> None:
        self._bump(conn, scope).ops.append(("archive", list(seqs), archived))

    def retexted(
        self,
        conn: Connection,
        scope: Scope,
        seq: int,
        old: tuple[str, str],
        new: tuple[str, str],
    ) -> None:
        pending = self._bump(conn, scope)
        key = (scope.user_id, scope.agent_id)
        pending.rewrites = conn.execute(_BUMP_REWRITES, key).fetchone()[0]
        pending.ops.append(("retext", seq, old, new))

    def revectored(self, conn: Connection, scope: Scope) -> None:
        """A stored vector of the scope was overwritten: which row is not tracked, so
        this process's cache and graph of the scope are dropped on commit, and other
        processes reload (the rewrite count moves)."""
        pending = self._bump(conn, scope)
        key = (scope.user_id, scope.agent_id)
        pending.rewrites = conn.execute(_BUMP_REWRITES, key).fetchone()[0]
        pending.ops.append(("reload",))

    @property
    def dimension(self) -> int:
        return self._dimension

    def committed(self) -> None:
        pending, self._pending = self._pending, {}
        with self._lock:
            self._apply(pending)

    def _apply(self, pending: dict[Scope, _Pending]) -> None:
        for scope, changes in pending.items():
            if any(op[0] == "reload" for op in changes.ops):
                self.drop(scope)
                continue
            cache = self._scopes.get(scope)
            if cache is None or cache.version != changes.before:
                # Not loaded, or another connection wrote: a full view the transaction
                # read through itself is what the file now holds; else resync on the
                # next search.
                view = changes.view
                if (
                    view is not None
                    and view.terms is not None
                    and _replay(view, changes.ops[changes.view_ops :])
                ):
                    view.version = changes.after
                    view.rewrites = (
                        changes.view_rewrites if changes.rewrites is None else changes.rewrites
                    )
                    self._scopes[scope] = view
                continue
            if not _replay(cache, changes.ops):
                del self._scopes[scope]
                continue
            cache.version = changes.after
            if changes.rewrites is not None:
                cache.rewrites = changes.rewrites

    def rolled_back(self) -> None:
        self._pending.clear()

    def drop(self, scope: Scope) -> None:
        """Forget one scope's cache and graph (after an erasure, so no erased text or
        vector stays in this process); the next search reloads what the file holds."""
        with self._lock:
            self._scopes.pop(scope, None)
            self._graphs.pop(scope, None)

    def clear(self) -> None:
        """Forget every cache and graph, stopping a graph build in progress."""
        self._builder.stop()  # first: its last graph goes in under the lock
        with self._lock:
            self._scopes.clear()
            self._pending.clear()
            self._graphs.clear()

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
        query = unit_query(vector, self._dimension)
        kind_codes = kind_filter(kinds)
        if k <= 0 or (kind_codes is not None and kind_codes.size == 0):
            return []
        with self._db.read() as conn, self._lock:
            cache = self._current(conn, scope)
            # A throwaway copy (see _current) is searched exactly.
            own = self._own_pending(scope) is not None
            graph = None if own else self._graph(scope, cache)[0]
            return cache.search(query, k, kind_codes, include_archived, graph)

    def _graph(self, scope: Scope, cache: ScopeVectors) -> tuple[HnswIndex | None, bool]:
        """The scope's graph if it has one (a scope shrunk below half the
        threshold loses it), and whether a build or extension of it is due and
        under way: started now, or queued behind the builder's current job."""
        graph = self._graphs.get(scope)
        if graph is not None and 2 * cache.live_count < self._ann.threshold:
            self._graphs.pop(scope, None)
            graph = None
        covered, covered_alive = (0, 0) if graph is None else cache.graph_coverage(graph)
        if not needs_build(self._ann, cache.live_count, cache.n - covered, covered_alive, graph):
            return graph, False
        if self._builder.busy:
            return graph, True
        return graph, self._builder.start(scope, *cache.snapshot(), graph)

    def prepare(self, scope: Scope, *, wait: bool) -> SearchIndexStatus:
        """Load the scope's cache and start the graph build that is due, if any;
        with ``wait``, return once none is under way for the scope (a failed
        build is not retried at once: the scope then stays exact)."""
        while True:
            with self._db.read() as conn, self._lock:
                cache = self._fresh(conn, scope)
                graph, building = self._graph(scope, cache)
                status = SearchIndexStatus(
                    live_rows=cache.live_count,
                    graph_rows=0 if graph is None else cache.graph_coverage(graph)[1],
                    building=building,
                )
            if not (wait and building):
                return status
            self._builder.wait()

    def cached_vectors(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, np.ndarray] | None:
        """Vectors by id from the scope's cache when it is loaded and current
        (reading blobs costs ~5 us a row); None sends the caller to the table."""
        with self._db.read() as conn, self._lock:
            cache = self._scopes.get(scope)
            if cache is None or self._own_pending(scope) is not None:
                return None
            if cache.version != self._version(conn, scope)[0]:
                return None
            return cache.rows(memory_ids)

    def keyword_search(
        self,
        scope: Scope,
        terms: Sequence[str],
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None,
        include_archived: bool,
        params: Bm25,
    ) -> list[ScoredId]:
        kind_codes = kind_filter(kinds)
        if k <= 0 or not terms or (kind_codes is not None and kind_codes.size == 0):
            return []
        with self._db.read() as conn, self._lock:
            return self._current(conn, scope, text=True).keyword_search(
                terms, k, kind_codes, include_archived, params
            )

    def search_latest(
        self,
        scope: Scope,
        vectors: np.ndarray,
        k: int,
        *,
        window: int,
        kinds: Sequence[MemoryKind] | None,
        min_score: float,
    ) -> list[list[ScoredId]]:
        queries = np.stack(
            [unit_query(v, self._dimension) for v in np.asarray(vectors, dtype=np.float32)]
        )
        kind_codes = kind_filter(kinds)
        with self._db.read() as conn, self._lock:
            return self._current(conn, scope).search_latest(
                queries, k, window, kind_codes, min_score
            )

    def _current(self, conn: Connection, scope: Scope, *, text: bool = False) -> ScopeVectors:
        """The scope's rows as ``conn`` sees them: inside a transaction that wrote
        to the scope, the transaction's own view (``_written``; uncommitted rows
        never enter the cache); otherwise the cache, brought up to date. ``text``:
        the keyword index is needed too."""
        pending = self._own_pending(scope)
        if pending is not None:
            return self._written(conn, scope, pending, text)
        return self._fresh(conn, scope)

    def _written(
        self, conn: Connection, scope: Scope, pending: _Pending, text: bool
    ) -> ScopeVectors:
        """What a transaction that wrote to ``scope`` searches: the committed cache
        forked (vectors only, ``ScopeVectors.fork``) with the transaction's changes
        replayed, when the cache is up to date and no text is searched; otherwise a
        copy read through the transaction (every row loaded and indexed: at 10,000
        rows, most of an observation's cost when every write took it). Kept for the
        transaction's next reads, which replay only the changes since."""
        view = pending.view
        if (
            view is not None
            and (view.terms is not None or not text)
            and _replay(view, pending.ops[pending.view_ops :])
        ):
            pending.view_ops = len(pending.ops)
            return view
        cache = self._scopes.get(scope)
        if not text and cache is not None and cache.version == pending.before:
            view = cache.fork()
            if not _replay(view, pending.ops):
                view = None
        else:
            view = None
        if view is None:
            view = ScopeVectors(self._dimension)
            self._load_new_rows(conn, scope, view)
            pending.view_rewrites = self._version(conn, scope)[1]
        pending.view, pending.view_ops = view, len(pending.ops)
        return view

    def _fresh(self, conn: Connection, scope: Scope) -> ScopeVectors:
        """The scope's cache, brought to what ``conn`` shows (index lock held)."""
        cache = self._scopes.get(scope)
        if cache is not None and cache.version == self._version(conn, scope)[0]:
            return cache
        try:
            with self._db.snapshot() as snap:
                version, rewrites = self._version(snap, scope)
                if cache is None or cache.rewrites != rewrites:
                    # Text rewritten elsewhere: which rows is not recorded, so reload.
                    cache = ScopeVectors(self._dimension)
                elif cache.live_count:
                    self._sync(snap, scope, cache)
                self._load_new_rows(snap, scope, cache)
                cache.version, cache.rewrites = version, rewrites
        except BaseException:
            self._scopes.pop(scope, None)
            raise
        self._scopes[scope] = cache
        return cache

    @staticmethod
    def _version(conn: Connection, scope: Scope) -> tuple[int, int]:
        """The scope's change counter and, of those changes, the text rewrites."""
        row = conn.execute(_READ_VERSION, (scope.user_id, scope.agent_id)).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    @staticmethod
    def _sync(conn: Connection, scope: Scope, cache: ScopeVectors) -> None:
        """Drop rows deleted since the cache was filled and refresh archived flags.

        Rows at or below ``max_seq`` can only disappear, never appear, so an
        unchanged count (an index-only read) means nothing was deleted.
        """
        params = (scope.user_id, scope.agent_id, cache.max_seq)
        (count,) = conn.execute(_COUNT_HELD, params).fetchone()
        if count != cache.live_count:
            held = np.fromiter((row[0] for row in conn.execute(_READ_HELD, params)), np.int64)
            cache.keep_only(held)
        archived = np.fromiter((row[0] for row in conn.execute(_READ_ARCHIVED, params)), np.int64)
        cache.set_archived_exactly(archived)

    def _load_new_rows(self, conn: Connection, scope: Scope, cache: ScopeVectors) -> None:
        """Append the scope's rows newer than ``cache.max_seq``, streaming the
        blobs straight into one preallocated matrix."""
        params = (scope.user_id, scope.agent_id, cache.max_seq)
        (count,) = conn.execute(_COUNT_NEW, params).fetchone()
        if count == 0:
            return
        row_bytes = self._dimension * 4
        matrix = np.empty((count, self._dimension), dtype=np.float32)
        buffer = matrix.data.cast("B")
        seqs: list[int] = []
        ids: list[str] = []
        kinds: list[int] = []
        archived: list[int] = []
        texts: list[tuple[str, str]] = []
        offset = 0
        for seq, memory_id, kind, is_archived, blob, content, context in conn.execute(
            _READ_NEW, params
        ):
            if len(blob) != row_bytes or offset == len(buffer):
                raise StorageError(
                    f"stored vector of {memory_id!r} does not have {self._dimension} dimensions"
                )
            buffer[offset : offset + row_bytes] = blob
            offset += row_bytes
            seqs.append(seq)
            ids.append(memory_id)
            kinds.append(KIND_CODE_BY_VALUE[kind])
            archived.append(is_archived)
            texts.append((content, context))
        i = len(ids)
        cache.append(
            np.array(seqs, dtype=np.int64),
            ids,
            np.array(kinds, dtype=np.int8),
            np.array(archived, dtype=bool),
            matrix[:i],
            texts,
        )
        logger.debug("loaded %d rows of %s", i, scope)


def _replay(cache: ScopeVectors, ops: Sequence[tuple[Any, ...]]) -> bool:
    """Apply a transaction's recorded changes to ``cache``; False when it cannot
    follow them (a vector overwritten, rows out of order): it must be reloaded."""
    try:
        for op in ops:
            if op[0] == "add":
                cache.append(*op[1:])
            elif op[0] == "remove":
                cache.remove(op[1])
            elif op[0] == "retext":
                cache.retext(*op[1:])
            elif op[0] == "archive":
                cache.set_archived(op[1], op[2])
            else:
                return False
    except ValueError:
        return False
    return True
