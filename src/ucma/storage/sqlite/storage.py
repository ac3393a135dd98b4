"""``SQLiteStorage``: the embedded backend, every store over one SQLite file."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from ucma.errors import StorageError, ValidationError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.storage.base import DEFAULT_ANN, AnnSettings, Storage
from ucma.storage.sql.conflicts import SqlConflictStore
from ucma.storage.sql.embedding_cache import SqlEmbeddingCacheStore
from ucma.storage.sql.episodic import SqlEpisodicStore
from ucma.storage.sql.events import SqlEventStore
from ucma.storage.sql.goals import SqlGoalStore
from ucma.storage.sql.graph import SqlGraphStore
from ucma.storage.sql.keys import SqlKeyStore
from ucma.storage.sql.learning import SqlLearningStore
from ucma.storage.sql.lifecycle import ORPHANS, SqlLifecycleStore
from ucma.storage.sql.opinions import SqlOpinionStore
from ucma.storage.sql.predictive import SqlPredictiveStore
from ucma.storage.sql.procedural import SqlProceduralStore
from ucma.storage.sql.retention import SqlRetentionStore
from ucma.storage.sql.semantic import SqlSemanticStore
from ucma.storage.sql.traces import SqlTraceStore
from ucma.storage.sql.vault import SqlVaultStore
from ucma.storage.sqlite.backup import backup_database
from ucma.storage.sqlite.catalog import SQLiteMemoryCatalog
from ucma.storage.sqlite.connection import Database
from ucma.storage.sqlite.erasure import SQLiteErasureStore
from ucma.storage.sqlite.memories import SQLiteMemoryRows
from ucma.storage.sqlite.schema import migrations
from ucma.storage.sqlite.vectors import VectorIndex

__all__ = ["SQLiteStorage"]

logger = logging.getLogger(__name__)

_DIMENSION_KEY = "embedding_dimension"
# A scope's next event number: max + 1 inside the write transaction, which
# BEGIN IMMEDIATE serialises across connections (sql/events.py).
_NEXT_EVENT_SEQ = (
    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE user_id = ? AND agent_id = ?)"
)
_VECTOR_ORPHANS = ("vectors", "DELETE FROM vectors WHERE seq NOT IN (SELECT seq FROM memories)")


class SQLiteStorage(Storage):
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
    """

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
        self._index = VectorIndex(self._db, dimension, ann, cached_scopes)
        rows = SQLiteMemoryRows(self._index, dimension)
        self.memories = SQLiteMemoryCatalog(self._db, self._index)
        self.episodes = SqlEpisodicStore(self._db, rows)
        self.facts = SqlSemanticStore(self._db, rows)
        self.procedures = SqlProceduralStore(self._db, rows)
        self.learnings = SqlLearningStore(self._db, rows)
        self.graph = SqlGraphStore(self._db)
        self.retention = SqlRetentionStore(self._db)
        self.embedding_cache = SqlEmbeddingCacheStore(self._db)
        self.conflicts = SqlConflictStore(self._db)
        self.traces = SqlTraceStore(self._db)
        self.events = SqlEventStore(self._db, _NEXT_EVENT_SEQ)
        self.keys = SqlKeyStore(self._db)
        self.lifecycle = SqlLifecycleStore(self._db, (*ORPHANS, _VECTOR_ORPHANS))
        self.vault = SqlVaultStore(self._db)
        self.erasure = SQLiteErasureStore(self._db, self._index)
        self.opinions = SqlOpinionStore(self._db)
        self.predictive = SqlPredictiveStore(self._db)
        self.goals = SqlGoalStore(self._db)
        logger.info(
            "opened %s (dimension %d, migrations applied: %s)",
            self.path,
            dimension,
            applied or "none",
        )

    def _prepare(self, dimension: int) -> list[int]:
        with self._db.write() as conn:
            applied = migrations.apply(conn)
            row = conn.execute(
                "SELECT value FROM settings WHERE key = ?", (_DIMENSION_KEY,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES (?, ?)",
                    (_DIMENSION_KEY, str(dimension)),
                )
            elif int(row[0]) != dimension:
                raise StorageError(
                    f"{self._db.path!r} stores {row[0]}-dimensional embeddings but dimension="
                    f"{dimension} was requested; open it with the embedding model it was created "
                    "with, or use a new file"
                )
        return applied

    @property
    def path(self) -> str:
        return self._db.path

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes atomically; nested use joins the outer transaction.

        An exception inside rolls everything back and propagates. A nested
        block that fails dooms the whole transaction even if the exception
        is caught: the outermost block then rolls back and raises
        ``StorageError``.
        """
        return self._transaction()

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
