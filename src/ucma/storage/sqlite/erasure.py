"""SQLite's ``ErasureStore`` (``ucma.storage.sql.erasure``): secure deletion, the search
cache, and scrubbing the files.

An erasure runs with ``secure_delete`` on (freed cells are zeroed) and tells the
vector cache which rows went. A scope's change counter is remembered as a floor
(``SCOPE_VERSION_FLOOR``) before its ``scope_versions`` row is deleted. ``scrub``
then checkpoints the write-ahead log into the file, rewrites the file (``VACUUM``:
no free page keeps an old row) and truncates the log, so no erased byte is left in
``.db`` or ``-wal`` (the ``-shm`` index holds page numbers, never content).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ucma.storage.sql.connection import Connection
from ucma.storage.sql.erasure import SqlErasureStore
from ucma.storage.sqlite.connection import Database
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import Scope

__all__ = ["SCOPE_VERSION_FLOOR", "SQLiteErasureStore", "scoped_tables"]

logger = logging.getLogger(__name__)

SCOPE_VERSION_FLOOR = "scope_version_floor"
"""``settings`` key: the highest change counter of an erased scope, so a scope written
again starts above it and no process's vector cache mistakes it for its old state."""


class SQLiteErasureStore(SqlErasureStore):
    not_counted = frozenset({"scope_versions"})

    def __init__(self, db: Database, index: VectorIndex) -> None:
        super().__init__(db)
        self._file = db
        self._index = index

    def scoped_tables(self, conn: Connection) -> list[str]:
        return scoped_tables(conn)

    @contextmanager
    def _erasing(self) -> Iterator[None]:
        with self._file.read() as conn:
            conn.execute("PRAGMA secure_delete = ON").fetchall()
            try:
                yield
            finally:
                conn.execute("PRAGMA secure_delete = OFF").fetchall()

    def _removed(self, conn: Connection, scope: Scope, seqs: Sequence[int]) -> None:
        self._index.removed(conn, scope, seqs)

    def _set_context(
        self, conn: Connection, scope: Scope, seq: int, content: str, old: str, new: str
    ) -> None:
        super()._set_context(conn, scope, seq, content, old, new)
        self._index.retexted(conn, scope, seq, (content, old), (content, new))

    def _scope_erasing(self, conn: Connection, scope: Scope) -> None:
        version = conn.execute(
            "SELECT version FROM scope_versions WHERE user_id = ? AND agent_id = ?",
            (scope.user_id, scope.agent_id),
        ).fetchone()
        if version is not None:
            conn.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                "SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (SCOPE_VERSION_FLOOR, str(int(version[0]))),
            )

    def _erased(self, scope: Scope) -> None:
        self._index.drop(scope)

    # -- the files --------------------------------------------------------------

    def scrub(self) -> tuple[bool, bool]:
        with self._file.exclusive() as conn:
            checkpointed = _checkpoint(conn)
            try:
                conn.execute("VACUUM")
                vacuumed = True
            except sqlite3.OperationalError as exc:  # busy, or a transaction open
                logger.warning("scrub: VACUUM of %s did not run: %s", self._file.path, exc)
                vacuumed = False
            checkpointed = _checkpoint(conn) and checkpointed
        return checkpointed, vacuumed


def scoped_tables(conn: Connection) -> list[str]:
    """Tables with ``user_id`` and ``agent_id`` columns, ``memories`` first."""
    tables = [
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    scoped = []
    for table in tables:
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if {"user_id", "agent_id"} <= columns:
            scoped.append(table)
    return sorted(scoped, key=lambda t: t != "memories")


def _checkpoint(conn: Connection) -> bool:
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError as exc:
        logger.warning("scrub: checkpoint failed: %s", exc)
        return False
    return int(busy) == 0
