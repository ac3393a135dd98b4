"""``MemoryCatalog`` over SQLite: the shared catalog (``ucma.storage.sql.catalog``)
with search through per-scope in-process caches (vectors.py)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from ucma.storage.base import DEFAULT_BM25, Bm25, ScoredId, SearchIndexStatus
from ucma.storage.sql.catalog import SqlMemoryCatalog
from ucma.storage.sql.codec import vector_from_blob
from ucma.storage.sql.connection import Connection
from ucma.storage.sql.memories import check_vector
from ucma.storage.sqlite.connection import Database
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import MemoryKind, Scope

__all__ = ["SQLiteMemoryCatalog"]


class SQLiteMemoryCatalog(SqlMemoryCatalog):
    """The shared catalog, searched through the scope's in-process caches."""

    def __init__(self, db: Database, index: VectorIndex) -> None:
        super().__init__(db, index.dimension)
        self._index = index

    def _removed(self, conn: Connection, scope: Scope, seqs: Sequence[int]) -> None:
        self._index.removed(conn, scope, seqs)

    def _archived(
        self, conn: Connection, scope: Scope, seqs: Sequence[int], archived: bool
    ) -> None:
        self._index.archived(conn, scope, seqs, archived)

    def replace_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> bool:
        matrix = check_vector(vector, self._index.dimension)
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT seq FROM memories WHERE id = ? AND user_id = ? AND agent_id = ?",
                (memory_id, scope.user_id, scope.agent_id),
            ).fetchone()
            if row is None:
                return False
            conn.execute(
                "UPDATE vectors SET vector = ? WHERE seq = ?", (matrix[0].tobytes(), row[0])
            )
            self._index.revectored(conn, scope)
        return True

    def vector_search(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
    ) -> builtins.list[ScoredId]:
        return self._index.search(scope, vector, k, kinds=kinds, include_archived=include_archived)

    def prepare_search(self, scope: Scope, *, wait: bool = False) -> SearchIndexStatus:
        return self._index.prepare(scope, wait=wait)

    def vector_search_latest(
        self,
        scope: Scope,
        vectors: np.ndarray,
        k: int,
        *,
        window: int,
        kinds: Sequence[MemoryKind] | None = None,
        min_score: float = -1.0,
    ) -> builtins.list[builtins.list[ScoredId]]:
        return self._index.search_latest(
            scope, vectors, k, window=window, kinds=kinds, min_score=min_score
        )

    def keyword_search(
        self,
        scope: Scope,
        terms: Sequence[str],
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
        bm25: Bm25 = DEFAULT_BM25,
    ) -> builtins.list[ScoredId]:
        return self._index.keyword_search(
            scope, terms, k, kinds=kinds, include_archived=include_archived, params=bm25
        )

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        cached = self._index.cached_vectors(scope, ids)
        if cached is not None:
            return cached
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT m.id, v.vector FROM memories m JOIN vectors v ON v.seq = m.seq"
                f" WHERE {self._sql.ids_in_scope(table='m')}",
                (self._sql.bind_list(ids), scope.user_id, scope.agent_id),
            ).fetchall()
        found = {memory_id: vector_from_blob(blob) for memory_id, blob in rows}
        return {memory_id: found[memory_id] for memory_id in ids if memory_id in found}

    def scopes(self) -> builtins.list[Scope]:
        with self._db.read() as conn:
            # Every insert bumps its scope's counter, so scope_versions lists every
            # scope that ever held a record; keep those that still hold one.
            rows = conn.execute(
                """
                SELECT s.user_id, s.agent_id FROM scope_versions s
                WHERE EXISTS (
                    SELECT 1 FROM memories m
                    WHERE m.user_id = s.user_id AND m.agent_id = s.agent_id
                )
                ORDER BY s.user_id, s.agent_id
                """
            ).fetchall()
        return [Scope(user_id, agent_id) for user_id, agent_id in rows]
