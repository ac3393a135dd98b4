"""Typed records read through either backend's connection.

The SELECT statements and the row decoders are ``ucma.storage.sql.codec``'s:
the tables have the same columns in the same order on both backends, so one
definition of each record's shape serves both. What is here is the reading.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from ucma.storage.sql.codec import SELECT_BY_KIND, record_from_row
from ucma.storage.sql.connection import Connection
from ucma.types import MemoryKind, MemoryRecord, Procedure, ProcedureStep

__all__ = ["load_by_seqs", "load_records", "load_steps"]


def load_steps(conn: Connection, procedures: dict[int, Procedure]) -> None:
    """Fill ``steps`` of procedures keyed by seq, in their stored order."""
    if not procedures:
        return
    sql = conn.dialect
    rows = conn.execute(
        f"""
        SELECT seq, description, action_type, action_spec, success_criteria, on_failure,
            max_retries
        FROM procedure_steps
        WHERE {sql.among("seq", "bigint")}
        ORDER BY seq, position
        """,
        (sql.bind_list(procedures),),
    ).fetchall()
    for seq, description, action_type, action_spec, criteria, on_failure, retries in rows:
        procedures[seq].steps.append(
            ProcedureStep(
                description=description,
                action_type=action_type,
                action_spec=json.loads(action_spec),
                success_criteria=criteria,
                on_failure=on_failure,
                max_retries=retries,
            )
        )


def load_records(
    conn: Connection, kind: MemoryKind, where: str, params: Sequence[Any]
) -> list[MemoryRecord]:
    """Records of one kind selected by ``SELECT_BY_KIND[kind] + where``, in row order.

    ``where`` is SQL written in this package (never user text) that filters and
    orders over the aliases ``m`` (memories) and ``t`` (the typed table).
    """
    rows = conn.execute(SELECT_BY_KIND[kind] + where, params).fetchall()
    records = [record_from_row(kind, row) for row in rows]
    if kind is MemoryKind.PROCEDURAL:
        procedures = zip((row[0] for row in rows), records, strict=True)
        load_steps(conn, {seq: cast(Procedure, record) for seq, record in procedures})
    return records


def load_by_seqs(
    conn: Connection, kind: MemoryKind, seqs: Sequence[int]
) -> dict[int, MemoryRecord]:
    """Records of one kind by seq (no scope filter: callers pass seqs of their scope)."""
    if not seqs:
        return {}
    sql = conn.dialect
    rows = conn.execute(
        SELECT_BY_KIND[kind] + f" WHERE {sql.among('m.seq', 'bigint')}",
        (sql.bind_list(seqs),),
    ).fetchall()
    records = {int(row[0]): record_from_row(kind, row) for row in rows}
    if kind is MemoryKind.PROCEDURAL:
        load_steps(conn, cast(dict[int, Procedure], records))
    return records
