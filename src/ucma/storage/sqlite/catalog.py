"""``MemoryCatalog`` over SQLite: lookups, listing, access, archive, delete, search."""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ucma.errors import NotFoundError
from ucma.storage.base import DEFAULT_BM25, Bm25, MemoryCatalog, ScoredId, SearchIndexStatus
from ucma.storage.sql.memories import check_vector
from ucma.storage.sql.records import load_by_seqs
from ucma.storage.sqlite.codec import ids_param, optional_real, real, vector_from_blob
from ucma.storage.sqlite.connection import Database, SQLiteConnection
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import Bank, MemoryKind, MemoryRecord, Scope

__all__ = ["SQLiteMemoryCatalog"]

_SCOPED_IDS = """
SELECT seq, id, kind FROM memories
WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ? AND +agent_id = ?
"""


def load_scoped(
    conn: SQLiteConnection, scope: Scope, memory_ids: Sequence[str]
) -> dict[str, MemoryRecord]:
    """Typed records of ``scope`` by id, in the order of ``memory_ids``."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        _SCOPED_IDS, (ids_param(memory_ids), scope.user_id, scope.agent_id)
    ).fetchall()
    return _typed(conn, rows, order=memory_ids)


def _typed(
    conn: SQLiteConnection, rows: Sequence[Any], order: Sequence[str]
) -> dict[str, MemoryRecord]:
    """Records for (seq, id, kind) rows, keyed by id, in ``order``."""
    seqs_by_kind: dict[MemoryKind, list[int]] = defaultdict(list)
    for seq, _, kind in rows:
        seqs_by_kind[MemoryKind(kind)].append(seq)
    by_seq: dict[int, MemoryRecord] = {}
    for kind, seqs in seqs_by_kind.items():
        by_seq.update(load_by_seqs(conn, kind, seqs))
    by_id = {memory_id: by_seq[seq] for seq, memory_id, _ in rows if seq in by_seq}
    return {memory_id: by_id[memory_id] for memory_id in order if memory_id in by_id}


class SQLiteMemoryCatalog(MemoryCatalog):
    """Operations common to every kind; records come back as their typed class."""

    def __init__(self, db: Database, index: VectorIndex) -> None:
        self._db = db
        self._index = index

    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        with self._db.read() as conn:
            return load_scoped(conn, scope, [memory_id]).get(memory_id)

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        with self._db.read() as conn:
            return load_scoped(conn, scope, list(dict.fromkeys(memory_ids)))

    def list(
        self,
        scope: Scope,
        *,
        kind: MemoryKind | None = None,
        limit: int = 100,
        offset: int = 0,
        include_archived: bool = False,
        in_insertion_order: bool = False,
        bank: Bank | None = None,
    ) -> builtins.list[MemoryRecord]:
        if limit <= 0:
            return []
        sql = ["SELECT seq, id, kind FROM memories WHERE user_id = ? AND agent_id = ?"]
        params: list[object] = [scope.user_id, scope.agent_id]
        if kind is not None:
            sql.append("AND kind = ?")
            params.append(MemoryKind(kind).value)
        if bank is not None:
            sql.append("AND bank = ?")
            params.append(Bank(bank).value)
        if not include_archived:
            sql.append("AND archived_at IS NULL")
        sql.append("ORDER BY seq" if in_insertion_order else "ORDER BY created_at, id")
        sql.append("LIMIT ? OFFSET ?")
        params += [limit, max(offset, 0)]
        with self._db.read() as conn:
            rows = conn.execute(" ".join(sql), params).fetchall()
            records = _typed(conn, rows, order=[row[1] for row in rows])
        return list(records.values())

    def count(
        self, scope: Scope, *, include_archived: bool = False, bank: Bank | None = None
    ) -> dict[MemoryKind, int]:
        archived = "" if include_archived else "AND archived_at IS NULL"
        in_bank = "" if bank is None else "AND bank = ?"
        params: tuple[str, ...] = (scope.user_id, scope.agent_id)
        if bank is not None:
            params += (Bank(bank).value,)
        counts = dict.fromkeys(MemoryKind, 0)
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT kind, count(*) FROM memories WHERE user_id = ? AND agent_id = ? "
                f"{archived} {in_bank} GROUP BY kind",
                params,
            ).fetchall()
        for kind, number in rows:
            counts[MemoryKind(kind)] = number
        return counts

    def delete(self, scope: Scope, memory_id: str) -> bool:
        with self._db.write() as conn:
            row = conn.execute(
                "DELETE FROM memories WHERE id = ? AND user_id = ? AND agent_id = ? RETURNING seq",
                (memory_id, scope.user_id, scope.agent_id),
            ).fetchone()
            if row is None:
                return False
            self._index.removed(conn, scope, [row[0]])
        return True

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

    def set_bank(self, scope: Scope, memory_ids: Sequence[str], bank: Bank) -> int:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        with self._db.write() as conn:
            cursor = conn.execute(
                """
                UPDATE memories SET bank = ?
                WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ? AND +agent_id = ?
                """,
                (Bank(bank).value, ids_param(ids), scope.user_id, scope.agent_id),
            )
        return cursor.rowcount

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: float) -> None:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        with self._db.write() as conn:
            conn.execute(
                """
                UPDATE memories SET access_count = access_count + 1, last_accessed = ?
                WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ? AND +agent_id = ?
                """,
                (real(now, "now"), ids_param(ids), scope.user_id, scope.agent_id),
            )

    def set_salience(
        self, scope: Scope, memory_id: str, *, base_salience: float, outcome_adjustment: float
    ) -> None:
        with self._db.write() as conn:
            cursor = conn.execute(
                """
                UPDATE memories SET base_salience = ?, outcome_adjustment = ?
                WHERE id = ? AND user_id = ? AND agent_id = ?
                """,
                (
                    real(base_salience, "base_salience"),
                    real(outcome_adjustment, "outcome_adjustment"),
                    memory_id,
                    scope.user_id,
                    scope.agent_id,
                ),
            )
            if cursor.rowcount == 0:
                raise NotFoundError("memory", memory_id)

    def set_archived(
        self, scope: Scope, memory_ids: Sequence[str], archived_at: float | None
    ) -> None:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        value = optional_real(archived_at, "archived_at")
        with self._db.write() as conn:
            seqs = [
                row[0]
                for row in conn.execute(
                    """
                    UPDATE memories SET archived_at = ?
                    WHERE id IN (SELECT value FROM json_each(?))
                        AND +user_id = ? AND +agent_id = ?
                    RETURNING seq
                    """,
                    (value, ids_param(ids), scope.user_id, scope.agent_id),
                ).fetchall()
            ]
            if seqs:
                self._index.archived(conn, scope, seqs, value is not None)

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
                """
                SELECT m.id, v.vector FROM memories m JOIN vectors v ON v.seq = m.seq
                WHERE m.id IN (SELECT value FROM json_each(?))
                    AND +m.user_id = ? AND +m.agent_id = ?
                """,
                (ids_param(ids), scope.user_id, scope.agent_id),
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
