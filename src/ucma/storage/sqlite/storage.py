"""``SQLiteStorage``: the embedded backend, every store over one SQLite file."""

from __future__ import annotations

import logging
import os

from ucma.errors import ValidationError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.storage.base import DEFAULT_ANN, AnnSettings
from ucma.storage.sql.storage import SqlStorage, check_dimension
from ucma.storage.sqlite.backup import backup_database
from ucma.storage.sqlite.catalog import SQLiteMemoryCatalog
from ucma.storage.sqlite.connection import Database
from ucma.storage.sqlite.erasure import SQLiteErasureStore
from ucma.storage.sqlite.memories import SQLiteMemoryRows
from ucma.storage.sqlite.schema import migrations
from ucma.storage.sqlite.vectors import VectorIndex

__all__ = ["SQLiteStorage"]

logger = logging.getLogger(__name__)

# A scope's next event number: max + 1 inside the write transaction, which
# BEGIN IMMEDIATE serialises across connections (sql/events.py).
_NEXT_EVENT_SEQ = (
    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE user_id = ? AND agent_id = ?)"
)
_VECTOR_ORPHANS = ("vectors", "DELETE FROM vectors WHERE seq NOT IN (SELECT seq FROM memories)")
READ_THREADS = 4
"""Calls the engine runs at once on a file database (``Storage.concurrency``): reads
on connections of their own beside one writer (connection.py)."""


class SQLiteStorage(SqlStorage):
    """Every UCMA store over one SQLite file (WAL mode).

    Opening applies pending schema migrations in one transaction and checks
    that the file was created for embeddings of ``dimension`` dimensions; a
    file made for another dimension is refused with ``StorageError``, since
    its vectors cannot be compared with the caller's. The parent directory
    must exist. ``ann`` sets when a scope's dense search turns approximate;
    ``cached_scopes`` how many scopes' search caches stay loaded (the least
    recently searched beyond it are dropped and reloaded when next searched).

    Several ``SQLiteStorage`` objects (in one process or several) may open
    the same file: writes serialise on SQLite's write lock, and each object's
    vector cache notices the others' writes before it searches.

    A file database takes ``READ_THREADS`` calls at once (``concurrency``): each
    thread reads on a connection of its own while writes go one at a time through
    the writing connection; ``:memory:`` takes one call at a time.
    """

    concurrency = READ_THREADS

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dimension: int,
        ann: AnnSettings = DEFAULT_ANN,
        cached_scopes: int = SCOPES_IN_MEMORY,
    ) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValidationError(f"dimension must be a positive integer, got {dimension!r}")
        self._db = Database(path)
        try:
            applied = self._prepare(dimension)
        except BaseException:
            self._db.close()
            raise
        self.dimension = dimension
        if not self._db.concurrent_reads:
            self.concurrency = 1  # one connection: one call at a time
        self._index = VectorIndex(self._db, dimension, ann, cached_scopes)
        self._attach(
            self._db,
            rows=SQLiteMemoryRows(self._index, dimension),
            memories=SQLiteMemoryCatalog(self._db, self._index),
            erasure=SQLiteErasureStore(self._db, self._index),
            next_event_seq=_NEXT_EVENT_SEQ,
            orphans=[_VECTOR_ORPHANS],
        )
        logger.info(
            "opened %s (dimension %d, migrations applied: %s)",
            self.path,
            dimension,
            applied or "none",
        )

    def _prepare(self, dimension: int) -> list[int]:
        with self._db.write() as conn:
            applied = migrations.apply(conn)
            check_dimension(conn, dimension, repr(self._db.path), "a new file")
        return applied

    @property
    def path(self) -> str:
        return self._db.path

    def backup(self, target: str) -> int:
        """Copy the store to ``target`` through SQLite's backup API (backup.py): a file
        database through a connection of its own, so this one's writes go on."""
        if self._db.on_disk:
            return backup_database(self._db.path, target)
        with self._db.read() as conn:
            return backup_database(conn, target)

    def close(self) -> None:
        """Close the file (idempotent); later calls raise ``StorageError``."""
        self._db.close()
        self._index.clear()

    def __repr__(self) -> str:
        state = "closed" if self._db.closed else "open"
        return f"SQLiteStorage({self.path!r}, dimension={self.dimension}, {state})"
