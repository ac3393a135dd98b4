"""The write path every kind shares: the ``memories`` row and what hangs off it.

A typed store's ``add`` calls ``MemoryRows.insert`` inside its transaction to
write the common rows and what each backend keeps beside them (SQLite: the
vector blobs and the search cache's pending changes; PostgreSQL: the pgvector
column and the keyword ``tsvector``), then writes its typed rows keyed by the
returned ``seq`` values. What is the same on both backends (the checks of vectors
and record kinds, finding a record's seq, overwriting its common fields) is here;
each backend's ``MemoryRows`` adds its ``insert`` and what a change of text means
for its keyword search.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ucma.errors import NotFoundError, ValidationError
from ucma.storage.sql.codec import UPDATE_MEMORY, memory_update_row
from ucma.storage.sql.connection import Connection
from ucma.types import MemoryKind, MemoryRecord, Scope

__all__ = [
    "MemoryRows",
    "check_kind",
    "check_vector",
    "check_vectors",
    "taken_ids",
    "unit_query",
]

_FIND_SEQ = """
SELECT seq FROM memories WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""
_FIND_TEXT = """
SELECT seq, content, search_context FROM memories
WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""


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


def unit_query(vector: np.ndarray, dimension: int) -> np.ndarray:
    """A search's query vector scaled to unit length (float32, one dimension)."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if query.shape[0] != dimension:
        raise ValidationError(
            f"query vector has {query.shape[0]} dimensions, the store holds {dimension}"
        )
    norm = float(np.linalg.norm(query))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValidationError("query vector must be finite and non-zero")
    return (query / norm).astype(np.float32, copy=False)


def check_kind(records: Sequence[MemoryRecord], cls: type[MemoryRecord]) -> None:
    for record in records:
        if not isinstance(record, cls):
            raise ValidationError(f"expected {cls.__name__} records, got {type(record).__name__}")


def taken_ids(conn: Connection, ids: Sequence[str]) -> list[str]:
    """Ids of ``ids`` already stored (in any scope) or repeated within ``ids``."""
    sql = conn.dialect
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {sql.ids('id')}", (sql.bind_list(dict.fromkeys(ids)),)
    ).fetchall()
    repeated = {memory_id for memory_id, n in Counter(ids).items() if n > 1}
    return sorted({str(row[0]) for row in rows} | repeated)


def id_in_use(memory_id: str) -> ValidationError:
    """The error for a memory id another record holds (ids are global; the holder's
    scope is not told)."""
    return ValidationError(
        f"memory id {memory_id!r} is already in use; records keep their ids, so "
        "import into the scope they came from or into a separate database"
    )


class MemoryRows(ABC):
    """Inserts and updates of ``memories`` rows, shared by the typed stores."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    @abstractmethod
    def insert(
        self,
        conn: Connection,
        records: Sequence[MemoryRecord],
        matrix: np.ndarray,
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Write common rows, vectors and graph nodes; returns each record's ``seq``
        (in the order of ``records``). ``contexts`` fills the secondary keyword field
        (see ``search_context``)."""

    @abstractmethod
    def retexted(
        self, conn: Connection, record: MemoryRecord, seq: int, before: str, context: str
    ) -> None:
        """The content of row ``seq`` changed from ``before`` to ``record.content``."""

    def update(self, conn: Connection, record: MemoryRecord) -> int:
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
            self.retexted(conn, record, int(seq), content, context)
        return int(seq)

    @staticmethod
    def find(conn: Connection, scope: Scope, memory_id: str, kind: MemoryKind) -> int | None:
        row = conn.execute(
            _FIND_SEQ, (memory_id, scope.user_id, scope.agent_id, kind.value)
        ).fetchone()
        return None if row is None else int(row[0])
