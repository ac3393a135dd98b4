"""``MemoryCatalog`` over PostgreSQL: the shared catalog (``ucma.storage.sql.catalog``)
with pgvector and full-text search.

Outside a transaction, keyword search and the dense search of a scope below
``AnnSettings.threshold`` live rows answer from the scope's rows in this process's
memory (search_cache.py: the SQLite backend's ``ScopeVectors``), checked against the
scope's search version first, so every write any process committed is seen.

In the server (inside a transaction, which must find its own uncommitted rows, and
the dense search of larger scopes): scores are dot products of unit vectors, as on
SQLite (``<#>`` is the negated inner product). A scope with fewer live rows than
``AnnSettings.threshold`` is scanned exactly: the ORDER BY is on the score, an
expression no vector index can serve, so the planner reads the scope's rows
through its btree index and sorts them. A larger scope is searched through the
HNSW index ``memories_embedding`` once ``prepare_search`` has built it (pgvector's
iterative scan keeps fetching until ``k`` rows pass the scope and kind filters);
until then, exactly; and exactly whenever the index scan stops short of ``k`` rows
(filters that hide most of the index). Keyword search in the server is keywords.py.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Sequence

import numpy as np

from ucma.storage.base import (
    DEFAULT_ANN,
    DEFAULT_BM25,
    AnnSettings,
    Bm25,
    ScoredId,
    SearchIndexStatus,
)
from ucma.storage.index.vector_cache import kind_filter
from ucma.storage.postgres.connection import Database, PgConnection
from ucma.storage.postgres.keywords import keyword_search
from ucma.storage.postgres.search_cache import SearchCaches
from ucma.storage.sql.catalog import SqlMemoryCatalog
from ucma.storage.sql.memories import check_vector, unit_query
from ucma.types import MemoryKind, Scope

__all__ = ["ANN_INDEX", "PostgresMemoryCatalog"]

logger = logging.getLogger(__name__)

ANN_INDEX = "memories_embedding"


def _filters(
    kinds: Sequence[MemoryKind] | None, include_archived: bool
) -> tuple[str, dict[str, object]]:
    """SQL over alias ``m`` and its named parameters for a search's filters."""
    sql = ""
    params: dict[str, object] = {}
    if kinds is not None:
        sql += " AND m.kind = ANY(:kinds::text[])"
        params["kinds"] = sorted({MemoryKind(kind).value for kind in kinds})
    if not include_archived:
        sql += " AND m.archived_at IS NULL"
    return sql, params


_EXACT = """
SELECT id, score FROM (
    SELECT m.seq, m.id, -(m.embedding <#> :query) AS score
    FROM memories m
    WHERE m.user_id = :user AND m.agent_id = :agent {filters}
) s
ORDER BY score DESC, seq
LIMIT :k
"""
_APPROXIMATE = """
SELECT id, score FROM (
    SELECT m.seq, m.id, -(m.embedding <#> :query) AS score
    FROM memories m
    WHERE m.user_id = :user AND m.agent_id = :agent {filters}
    ORDER BY m.embedding <#> :query
    LIMIT :k
) s
ORDER BY score DESC, seq
"""


class PostgresMemoryCatalog(SqlMemoryCatalog):
    """The shared catalog, searched by pgvector and the keyword ``tsvector``."""

    def __init__(
        self, db: Database, dimension: int, caches: SearchCaches, ann: AnnSettings = DEFAULT_ANN
    ) -> None:
        super().__init__(db, dimension)
        self._pg = db
        self._caches = caches
        self._ann = ann
        self._build_lock = threading.Lock()
        self._builder: threading.Thread | None = None

    def replace_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> bool:
        matrix = check_vector(vector, self._dimension)
        with self._pg.write() as conn:
            row = conn.execute(
                "UPDATE memories SET embedding = ? WHERE id = ? AND user_id = ? "
                "AND agent_id = ? RETURNING seq",
                (matrix[0], memory_id, scope.user_id, scope.agent_id),
            ).fetchone()
        return row is not None

    # -- dense search ----------------------------------------------------------------

    def _live_rows(self, conn: PgConnection, scope: Scope) -> int:
        row = conn.execute(
            "SELECT rows FROM keyword_stats WHERE user_id = ? AND agent_id = ?",
            (scope.user_id, scope.agent_id),
        ).fetchone()
        return 0 if row is None else int(row[0])

    @staticmethod
    def _has_ann_index(conn: PgConnection) -> bool:
        row = conn.execute("SELECT to_regclass(?) IS NOT NULL", (ANN_INDEX,)).fetchone()
        return bool(row and row[0])

    def vector_search(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
    ) -> builtins.list[ScoredId]:
        query = unit_query(vector, self._dimension)
        if k <= 0 or (kinds is not None and not kinds):
            return []
        if not self._pg.in_transaction:
            codes = kind_filter(kinds)
            found = self._caches.search(
                scope,
                lambda cache: (
                    None
                    if self._ann.enabled and cache.live_count >= self._ann.threshold
                    else cache.search(query, k, codes, include_archived)
                ),
            )
            if found is not None:
                return found
        return self._server_vector_search(scope, query, k, kinds, include_archived)

    def _server_vector_search(
        self,
        scope: Scope,
        query: np.ndarray,
        k: int,
        kinds: Sequence[MemoryKind] | None,
        include_archived: bool,
    ) -> builtins.list[ScoredId]:
        """pgvector in the server: exact below ``AnnSettings.threshold``, else HNSW."""
        filters, params = _filters(kinds, include_archived)
        params.update(query=query, user=scope.user_id, agent=scope.agent_id, k=int(k))
        with self._pg.snapshot() as conn:
            approximate = (
                self._ann.enabled
                and self._live_rows(conn, scope) >= self._ann.threshold
                and self._has_ann_index(conn)
            )
            if approximate:
                conn.execute(
                    "SELECT set_config('hnsw.ef_search', ?, true),"
                    " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                    (str(max(self._ann.expansion_search, min(int(k), 1000))),),
                )
                rows = conn.execute(_APPROXIMATE.format(filters=filters), params).fetchall()
            if not approximate or len(rows) < k:
                # Small scopes, and filters that hide so many rows that the index scan
                # ran out before finding k: exact.
                rows = conn.execute(_EXACT.format(filters=filters), params).fetchall()
        return [(str(memory_id), float(score)) for memory_id, score in rows]

    def prepare_search(self, scope: Scope, *, wait: bool = False) -> SearchIndexStatus:
        """Build the HNSW index once a scope reaches ``AnnSettings.threshold`` live rows
        (one index for every scope; in the background unless ``wait``)."""
        with self._pg.read() as conn:
            live = self._live_rows(conn, scope)
            indexed = self._has_ann_index(conn)
        large = self._ann.enabled and live >= self._ann.threshold
        if large and not indexed:
            with self._build_lock:
                if self._builder is None or not self._builder.is_alive():
                    self._builder = threading.Thread(
                        target=self._build_index, name="ucma-pg-hnsw", daemon=True
                    )
                    self._builder.start()
                builder = self._builder
            if wait:
                builder.join()
                with self._pg.read() as conn:
                    indexed = self._has_ann_index(conn)
        building = large and not indexed
        return SearchIndexStatus(
            live_rows=live, graph_rows=live if large and indexed else 0, building=building
        )

    def _build_index(self) -> None:
        ann = self._ann
        try:
            with self._pg.read() as conn:
                conn.execute(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {ANN_INDEX} ON memories "
                    f"USING hnsw (embedding vector_ip_ops) WITH (m = {int(ann.connectivity)}, "
                    f"ef_construction = {int(ann.expansion_add)})"
                )
        except Exception:  # a failed build leaves exact search answering
            logger.exception("building the HNSW index failed")

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
        queries = [unit_query(v, self._dimension) for v in np.asarray(vectors, dtype=np.float32)]
        found: builtins.list[builtins.list[ScoredId]] = [[] for _ in queries]
        if k <= 0 or window <= 0 or not queries:
            return found
        with self._pg.read() as conn:
            rows = conn.execute(
                """
                SELECT id, kind, archived_at IS NOT NULL, embedding FROM memories
                WHERE user_id = ? AND agent_id = ? ORDER BY seq DESC LIMIT ?
                """,
                (scope.user_id, scope.agent_id, int(window)),
                binary=True,
            ).fetchall()
        allowed = None if kinds is None else {MemoryKind(kind).value for kind in kinds}
        rows = [
            row for row in reversed(rows) if not row[2] and (allowed is None or row[1] in allowed)
        ]
        if not rows:
            return found
        matrix = np.stack([row[3].to_numpy() for row in rows])
        scores = matrix @ np.stack(queries).T
        for q in range(len(queries)):
            column = scores[:, q]
            order = np.lexsort((np.arange(len(rows)), -column))[:k]
            found[q] = [
                (str(rows[i][0]), float(column[i])) for i in order if column[i] >= min_score
            ]
        return found

    # -- keyword search ----------------------------------------------------------------

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
        if k <= 0 or not terms or (kinds is not None and not kinds):
            return []
        if not self._pg.in_transaction:
            codes = kind_filter(kinds)
            return self._caches.search(
                scope, lambda cache: cache.keyword_search(terms, k, codes, include_archived, bm25)
            )
        # A transaction's own writes are not in the caches: the server's index has them.
        filters, params = _filters(kinds, include_archived)
        with self._pg.snapshot() as conn:
            return keyword_search(
                conn, scope, terms, k, filters=filters, filter_params=params, params=bm25
            )

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        if not self._pg.in_transaction:
            # From the scope's copy when one is loaded and current (a recall's searches
            # loaded it); reading vectors in the server costs a round trip and a decode.
            cached = self._caches.loaded(scope, lambda cache: cache.rows(ids))
            if cached is not None:
                return cached
        with self._pg.read() as conn:
            rows = conn.execute(
                """
                SELECT id, embedding FROM memories
                WHERE id = ANY(?::text[]) AND user_id = ? AND agent_id = ?
                """,
                (ids, scope.user_id, scope.agent_id),
                binary=True,
            ).fetchall()
        found = {str(memory_id): vector.to_numpy() for memory_id, vector in rows}
        return {memory_id: found[memory_id] for memory_id in ids if memory_id in found}

    def scopes(self) -> builtins.list[Scope]:
        with self._pg.read() as conn:
            rows = conn.execute(
                "SELECT user_id, agent_id FROM keyword_stats WHERE rows > 0"
                " ORDER BY user_id, agent_id"
            ).fetchall()
        return [Scope(str(user_id), str(agent_id)) for user_id, agent_id in rows]
