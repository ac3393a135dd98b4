"""PostgreSQL's ``MemoryRows`` (``ucma.storage.sql.memories``): the common rows
with each row's vector and keyword terms, and the graph nodes. Ids are checked
before anything is written: PostgreSQL aborts a transaction at its first failed
statement, so a taken id must be found by a query, not by a failed insert.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ucma.storage.postgres.keywords import row_terms
from ucma.storage.sql.codec import memory_row
from ucma.storage.sql.connection import Connection
from ucma.storage.sql.memories import MemoryRows, id_in_use, taken_ids
from ucma.types import MemoryRecord

__all__ = ["PostgresMemoryRows"]

_INSERT_MEMORY = """
INSERT INTO memories (
    seq, id, kind, user_id, agent_id, content, provenance, temporal_level,
    base_salience, outcome_adjustment, created_at, updated_at, access_count,
    last_accessed, archived_at, metadata, search_context, bank,
    embedding, terms, content_length, context_length
) VALUES (
    ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ?, ?::tsvector, ?, ?
)
"""
_RETEXT = """
UPDATE memories SET terms = ?::tsvector, content_length = ?, context_length = ?
WHERE seq = ?
"""
_NEXT_SEQS = """
SELECT nextval(pg_get_serial_sequence('memories', 'seq')) FROM generate_series(1, ?)
"""


class PostgresMemoryRows(MemoryRows):
    """``memories`` rows with their pgvector embedding and keyword ``tsvector``."""

    def insert(
        self,
        conn: Connection,
        records: Sequence[MemoryRecord],
        matrix: np.ndarray,
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Write common rows (vector and keyword terms included) and graph nodes;
        returns each record's ``seq`` (taken from the table's identity, so in the
        order of ``records``)."""
        taken = taken_ids(conn, [record.id for record in records])
        if taken:
            raise id_in_use(taken[0])
        contexts = list(contexts) if contexts is not None else [""] * len(records)
        seqs = sorted(int(row[0]) for row in conn.execute(_NEXT_SEQS, (len(records),)))
        rows = []
        for i, (record, seq, context) in enumerate(zip(records, seqs, contexts, strict=True)):
            terms, content_length, context_length = row_terms(record.content, context)
            rows.append(
                (
                    *memory_row(record, seq, context),
                    matrix[i],
                    terms,
                    content_length,
                    context_length,
                )
            )
        conn.executemany(_INSERT_MEMORY, rows)
        conn.executemany(
            "INSERT INTO graph_nodes (memory_id) VALUES (?)",
            [(record.id,) for record in records],
        )
        return seqs

    def retexted(
        self, conn: Connection, record: MemoryRecord, seq: int, before: str, context: str
    ) -> None:
        conn.execute(_RETEXT, (*row_terms(record.content, context), seq))
