"""The write path every kind shares: the ``memories`` row and what hangs off it.

A typed store's ``add`` calls ``MemoryRows.insert`` inside its transaction to
write the common rows, the vectors (one blob per record), the graph nodes
and the scope counters the search cache follows (with each row's text for
its keyword postings). It then writes its typed rows keyed by the returned ``seq`` values.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ucma.errors import NotFoundError, ValidationError
from ucma.storage.sqlite.codec import (
    INSERT_MEMORY,
    UPDATE_MEMORY,
    ids_param,
    memory_row,
    memory_update_row,
)
from ucma.storage.sqlite.connection import SQLiteConnection
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import MemoryKind, MemoryRecord, Scope

__all__ = ["MemoryRows", "check_vector", "check_vectors"]

_LAST_SEQ = """
SELECT max(
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0),
    coalesce((SELECT max(seq) FROM memories), 0)
)
"""
_INSERT_VECTOR = "INSERT INTO vectors (seq, vector) VALUES (?, ?)"
_INSERT_NODE = "INSERT INTO graph_nodes (memory_id) VALUES (?)"
_FIND_SEQ = """
SELECT seq FROM memories WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""
_FIND_TEXT = """
SELECT seq, content, search_context FROM memories
WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""


def _taken_ids(conn: SQLiteConnection, ids: Sequence[str]) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
        (ids_param(dict.fromkeys(ids)),),
    )
    found = {row[0] for row in rows}
    counts: dict[str, int] = defaultdict(int)
    for memory_id in ids:
        counts[memory_id] += 1
    return sorted(found | {memory_id for memory_id, n in counts.items() if n > 1})


def check_vectors(vectors: np.ndarray, count: int, dimension: int) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (count, dimension) matrix of finite values."""
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if count == 0 and matrix.size == 0:
        return matrix.reshape(0, dimension)
    if matrix.ndim != 2 or matrix.shape != (count, dimension):
        raise ValidationError(
            f"expected vectors of shape ({count}, {dimension}), got {tuple(matrix.shape)}"
        )
    if not np.isfinite(matrix).all():
        raise ValidationError("vectors must be finite")
    return matrix


def check_vector(vector: np.ndarray, dimension: int) -> np.ndarray:
    """One vector as a (1, dimension) float32 matrix."""
    matrix = np.ascontiguousarray(vector, dtype=np.float32)
    if matrix.shape != (dimension,) and matrix.shape != (1, dimension):
        raise ValidationError(
            f"expected a vector of {dimension} dimensions, got shape {tuple(matrix.shape)}"
        )
    return check_vectors(matrix.reshape(1, dimension), 1, dimension)


def check_kind(records: Sequence[MemoryRecord], cls: type[MemoryRecord]) -> None:
    for record in records:
        if not isinstance(record, cls):
            raise ValidationError(f"expected {cls.__name__} records, got {type(record).__name__}")


class MemoryRows:
    """Inserts and updates of ``memories`` rows, shared by the typed stores."""

    def __init__(self, index: VectorIndex, dimension: int) -> None:
        self.index = index
        self.dimension = dimension

    def insert(
        self,
        conn: SQLiteConnection,
        records: Sequence[MemoryRecord],
        matrix: np.ndarray,
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Write common rows, vectors and graph nodes; returns each record's ``seq``.

        ``contexts`` fills the secondary keyword field (see ``search_context``).

        Seqs are assigned here, under the write lock, as the next values of the
        table's AUTOINCREMENT counter, so executemany needs no per-row round trip.
        """
        first = conn.execute(_LAST_SEQ).fetchone()[0] + 1
        seqs = list(range(first, first + len(records)))
        try:
            conn.executemany(
                INSERT_MEMORY, map(memory_row, records, seqs, contexts or [""] * len(records))
            )
        except sqlite3.IntegrityError as exc:
            taken = _taken_ids(conn, [record.id for record in records])
            if taken:
                # Ids are global; one held by another scope is reported without its owner.
                raise ValidationError(
                    f"memory id {taken[0]!r} is already in use; records keep their ids, so "
                    "import into the scope they came from or into a separate database"
                ) from exc
            raise
        conn.executemany(_INSERT_VECTOR, ((seq, matrix[i].tobytes()) for i, seq in enumerate(seqs)))
        conn.executemany(_INSERT_NODE, ((record.id,) for record in records))

        by_scope: dict[Scope, list[int]] = defaultdict(list)
        for i, record in enumerate(records):
            by_scope[Scope(record.user_id, record.agent_id)].append(i)
        for scope, rows in by_scope.items():
            self.index.added(
                conn,
                scope,
                [seqs[i] for i in rows],
                [records[i].id for i in rows],
                [records[i].kind for i in rows],
                [records[i].archived_at is not None for i in rows],
                matrix[rows] if len(rows) != len(records) else matrix,
                [(records[i].content, contexts[i] if contexts else "") for i in rows],
            )
        return seqs

    def update(self, conn: SQLiteConnection, record: MemoryRecord) -> int:
        """Overwrite the mutable common fields of an existing record; returns its seq.

        Identity (id, kind, scope, created_at), access statistics (``touch``)
        and ``archived_at`` (``set_archived``) have their own operations.
        """
        row = conn.execute(
            _FIND_TEXT,
            (record.id, record.user_id, record.agent_id, record.kind.value),
        ).fetchone()
        if row is None:
            raise NotFoundError(record.kind.value, record.id)
        seq, content, context = row
        conn.execute(UPDATE_MEMORY, memory_update_row(record, seq))
        if record.content != content:
            self.index.retexted(
                conn, record.scope, seq, (content, context), (record.content, context)
            )
        return int(seq)

    @staticmethod
    def find(conn: SQLiteConnection, scope: Scope, memory_id: str, kind: MemoryKind) -> int | None:
        row = conn.execute(
            _FIND_SEQ, (memory_id, scope.user_id, scope.agent_id, kind.value)
        ).fetchone()
        return None if row is None else int(row[0])
