"""The write path every kind shares: the ``memories`` row and what hangs off it.

A typed store's ``add`` calls ``MemoryRows.insert`` inside its transaction to
write the common rows (with each row's vector and keyword terms) and the graph
nodes, then writes its typed rows keyed by the returned ``seq`` values. Ids are
checked before anything is written: PostgreSQL aborts a transaction at its first
failed statement, so a taken id must be found by a query, not by a failed insert.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ucma.errors import NotFoundError, ValidationError
from ucma.storage.postgres.connection import PgConnection
from ucma.storage.postgres.keywords import row_terms
from ucma.storage.sqlite.codec import memory_row, memory_update_row
from ucma.types import MemoryKind, MemoryRecord, Scope

__all__ = ["MemoryRows"]

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
_UPDATE_MEMORY = """
UPDATE memories SET content = ?, provenance = ?, temporal_level = ?, base_salience = ?,
    outcome_adjustment = ?, updated_at = ?, metadata = ?, bank = ?
WHERE seq = ?
"""
_RETEXT = """
UPDATE memories SET terms = ?::tsvector, content_length = ?, context_length = ?
WHERE seq = ?
"""
_NEXT_SEQS = """
SELECT nextval(pg_get_serial_sequence('memories', 'seq')) FROM generate_series(1, ?)
"""
_FIND_SEQ = """
SELECT seq FROM memories WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""
_FIND_TEXT = """
SELECT seq, content, search_context FROM memories
WHERE id = ? AND user_id = ? AND agent_id = ? AND kind = ?
"""


def _taken_ids(conn: PgConnection, ids: Sequence[str]) -> list[str]:
    """Ids of ``ids`` already stored (in any scope) or repeated within ``ids``."""
    rows = conn.execute(
        "SELECT id FROM memories WHERE id = ANY(?::text[])", (list(dict.fromkeys(ids)),)
    ).fetchall()
    repeated = {memory_id for memory_id, n in Counter(ids).items() if n > 1}
    return sorted({str(row[0]) for row in rows} | repeated)


class MemoryRows:
    """Inserts and updates of ``memories`` rows, shared by the typed stores."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def insert(
        self,
        conn: PgConnection,
        records: Sequence[MemoryRecord],
        matrix: np.ndarray,
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Write common rows (vector and keyword terms included) and graph nodes;
        returns each record's ``seq`` (taken from the table's identity, so in the
        order of ``records``)."""
        taken = _taken_ids(conn, [record.id for record in records])
        if taken:
            # Ids are global; one held by another scope is reported without its owner.
            raise ValidationError(
                f"memory id {taken[0]!r} is already in use; records keep their ids, so "
                "import into the scope they came from or into a separate database"
            )
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

    def update(self, conn: PgConnection, record: MemoryRecord) -> int:
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
        conn.execute(_UPDATE_MEMORY, memory_update_row(record, seq))
        if record.content != content:
            conn.execute(_RETEXT, (*row_terms(record.content, context), seq))
        return int(seq)

    @staticmethod
    def find(conn: PgConnection, scope: Scope, memory_id: str, kind: MemoryKind) -> int | None:
        row = conn.execute(
            _FIND_SEQ, (memory_id, scope.user_id, scope.agent_id, kind.value)
        ).fetchone()
        return None if row is None else int(row[0])
