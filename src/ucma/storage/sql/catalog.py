"""``MemoryCatalog`` over SQL: lookups, listing, access, archive, delete.

Search and vectors are each backend's (SQLite: the in-process caches of
``ucma.storage.index``; PostgreSQL: pgvector and its keyword ``tsvector``), so a
backend's catalog subclasses ``SqlMemoryCatalog`` with them and with what a
deletion or an archive means for its search (``_removed``, ``_archived``).
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ucma.errors import NotFoundError
from ucma.storage.base import MemoryCatalog
from ucma.storage.sql.codec import optional_real, real
from ucma.storage.sql.connection import Connection, Database
from ucma.storage.sql.records import load_by_seqs, load_records
from ucma.types import Bank, MemoryKind, MemoryRecord, Scope

__all__ = ["SqlMemoryCatalog", "load_scoped"]


# The kind a memory id's prefix names when the engine made it (``new_memory_id``,
# ``fact_id_for``): a hint only, checked by the typed table's join.
_KIND_OF_PREFIX = {
    "ep": MemoryKind.EPISODIC,
    "fact": MemoryKind.SEMANTIC,
    "proc": MemoryKind.PROCEDURAL,
    "lrn": MemoryKind.LEARNING,
}


def load_scoped(
    conn: Connection, scope: Scope, memory_ids: Sequence[str]
) -> dict[str, MemoryRecord]:
    """Typed records of ``scope`` by id (distinct ids), in the order of ``memory_ids``.

    Each id is first looked for in the typed table its prefix names, one statement a
    kind; the ids found nowhere so (another prefix, an imported id) are looked up
    for their kind first. Reading the kinds first for every id was a third of the
    cost of a recall's record reads."""
    if not memory_ids:
        return {}
    hinted: dict[MemoryKind, list[str]] = defaultdict(list)
    for memory_id in memory_ids:
        kind = _KIND_OF_PREFIX.get(memory_id.partition("_")[0])
        if kind is not None:
            hinted[kind].append(memory_id)
    sql = conn.dialect
    found: dict[str, MemoryRecord] = {}
    for kind, ids in hinted.items():
        where = f" WHERE {sql.ids_in_scope(table='m')}"
        for record in load_records(conn, kind, where, (sql.bind_list(ids), *_key(scope))):
            found[record.id] = record
    rest = [memory_id for memory_id in memory_ids if memory_id not in found]
    if rest:
        rows = conn.execute(
            f"SELECT seq, id, kind FROM memories WHERE {sql.ids_in_scope()}",
            (sql.bind_list(rest), *_key(scope)),
        ).fetchall()
        found.update(_typed(conn, rows, order=rest))
    return {memory_id: found[memory_id] for memory_id in memory_ids if memory_id in found}


def _key(scope: Scope) -> tuple[str, str]:
    return (scope.user_id, scope.agent_id)


def _typed(conn: Connection, rows: Sequence[Any], order: Sequence[str]) -> dict[str, MemoryRecord]:
    """Records for (seq, id, kind) rows, keyed by id, in ``order``."""
    seqs_by_kind: dict[MemoryKind, list[int]] = defaultdict(list)
    for seq, _, kind in rows:
        seqs_by_kind[MemoryKind(kind)].append(seq)
    by_seq: dict[int, MemoryRecord] = {}
    for kind, seqs in seqs_by_kind.items():
        by_seq.update(load_by_seqs(conn, kind, seqs))
    by_id = {memory_id: by_seq[seq] for seq, memory_id, _ in rows if seq in by_seq}
    return {memory_id: by_id[memory_id] for memory_id in order if memory_id in by_id}


class SqlMemoryCatalog(MemoryCatalog):
    """Operations common to every kind; records come back as their typed class."""

    def __init__(self, db: Database, dimension: int) -> None:
        self._db = db
        self._sql = db.dialect
        self._dimension = dimension

    # -- what each backend's search adds ---------------------------------------------

    def _removed(self, conn: Connection, scope: Scope, seqs: Sequence[int]) -> None:
        """Rows ``seqs`` of ``scope`` were deleted in this transaction."""

    def _archived(
        self, conn: Connection, scope: Scope, seqs: Sequence[int], archived: bool
    ) -> None:
        """Rows ``seqs`` of ``scope`` were archived (or restored) in this transaction."""

    # -- reads ----------------------------------------------------------------------

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
        with self._db.snapshot() as conn:
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
            counts[MemoryKind(kind)] = int(number)
        return counts

    # -- writes ---------------------------------------------------------------------

    def delete(self, scope: Scope, memory_id: str) -> bool:
        with self._db.write() as conn:
            row = conn.execute(
                "DELETE FROM memories WHERE id = ? AND user_id = ? AND agent_id = ? RETURNING seq",
                (memory_id, scope.user_id, scope.agent_id),
            ).fetchone()
            if row is None:
                return False
            self._removed(conn, scope, [int(row[0])])
        return True

    def set_bank(self, scope: Scope, memory_ids: Sequence[str], bank: Bank) -> int:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        with self._db.write() as conn:
            cursor = conn.execute(
                f"UPDATE memories SET bank = ? WHERE {self._sql.ids_in_scope()}",
                (Bank(bank).value, self._sql.bind_list(ids), scope.user_id, scope.agent_id),
            )
            return cursor.rowcount

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: float) -> None:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        with self._db.write() as conn:
            conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed = ?"
                f" WHERE {self._sql.ids_in_scope()}",
                (real(now, "now"), self._sql.bind_list(ids), scope.user_id, scope.agent_id),
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
                int(row[0])
                for row in conn.execute(
                    f"UPDATE memories SET archived_at = ? WHERE {self._sql.ids_in_scope()}"
                    " RETURNING seq",
                    (value, self._sql.bind_list(ids), scope.user_id, scope.agent_id),
                ).fetchall()
            ]
            if seqs:
                self._archived(conn, scope, seqs, value is not None)
