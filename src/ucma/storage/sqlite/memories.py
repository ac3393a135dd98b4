"""SQLite's ``MemoryRows`` (``ucma.storage.sql.memories``): the common rows, the
vectors (one blob per record), the graph nodes and the scope counters the search
cache follows (with each row's text for its keyword postings)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ucma.storage.sql.codec import INSERT_MEMORY, memory_row
from ucma.storage.sql.connection import Connection
from ucma.storage.sql.memories import MemoryRows, id_in_use, taken_ids
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import MemoryRecord, Scope

__all__ = ["SQLiteMemoryRows"]

_LAST_SEQ = """
SELECT max(
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0),
    coalesce((SELECT max(seq) FROM memories), 0)
)
"""
_INSERT_VECTOR = "INSERT INTO vectors (seq, vector) VALUES (?, ?)"
_INSERT_NODE = "INSERT INTO graph_nodes (memory_id) VALUES (?)"


class SQLiteMemoryRows(MemoryRows):
    """``memories`` rows with their vector blobs, told to the search cache."""

    def __init__(self, index: VectorIndex, dimension: int) -> None:
        super().__init__(dimension)
        self.index = index

    def insert(
        self,
        conn: Connection,
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
            taken = taken_ids(conn, [record.id for record in records])
            if taken:
                raise id_in_use(taken[0]) from exc
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

    def retexted(
        self, conn: Connection, record: MemoryRecord, seq: int, before: str, context: str
    ) -> None:
        self.index.retexted(conn, record.scope, seq, (before, context), (record.content, context))
