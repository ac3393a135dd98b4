"""``SQLiteStorage``: the embedded backend, every store over one SQLite file."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from ucma.errors import StorageError, ValidationError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.storage.base import DEFAULT_ANN, AnnSettings, Storage
from ucma.storage.sqlite.backup import backup_database
from ucma.storage.sqlite.catalog import SQLiteMemoryCatalog
from ucma.storage.sqlite.conflicts import SQLiteConflictStore
from ucma.storage.sqlite.connection import Database
from ucma.storage.sqlite.embedding_cache import SQLiteEmbeddingCacheStore
from ucma.storage.sqlite.episodic import SQLiteEpisodicStore
from ucma.storage.sqlite.erasure import SQLiteErasureStore
from ucma.storage.sqlite.events import SQLiteEventStore
from ucma.storage.sqlite.goals import SQLiteGoalStore
from ucma.storage.sqlite.graph import SQLiteGraphStore
from ucma.storage.sqlite.keys import SQLiteKeyStore
from ucma.storage.sqlite.learning import SQLiteLearningStore
from ucma.storage.sqlite.leases import SQLiteLeaseStore
from ucma.storage.sqlite.lifecycle import SQLiteLifecycleStore
from ucma.storage.sqlite.memories import MemoryRows
from ucma.storage.sqlite.opinions import SQLiteOpinionStore
from ucma.storage.sqlite.predictive import SQLitePredictiveStore
from ucma.storage.sqlite.procedural import SQLiteProceduralStore
from ucma.storage.sqlite.retention import SQLiteRetentionStore
from ucma.storage.sqlite.schema import migrations
from ucma.storage.sqlite.semantic import SQLiteSemanticStore
from ucma.storage.sqlite.traces import SQLiteTraceStore
from ucma.storage.sqlite.vault import SQLiteVaultStore
from ucma.storage.sqlite.vectors import VectorIndex

__all__ = ["SQLiteStorage"]

logger = logging.getLogger(__name__)

_DIMENSION_KEY = "embedding_dimension"


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
        rows = MemoryRows(self._index, dimension)
        self.memories = SQLiteMemoryCatalog(self._db, self._index)
        self.episodes = SQLiteEpisodicStore(self._db, rows)
        self.facts = SQLiteSemanticStore(self._db, rows)
        self.procedures = SQLiteProceduralStore(self._db, rows)
        self.learnings = SQLiteLearningStore(self._db, rows)
        self.graph = SQLiteGraphStore(self._db)
        self.retention = SQLiteRetentionStore(self._db)
        self.embedding_cache = SQLiteEmbeddingCacheStore(self._db)
        self.conflicts = SQLiteConflictStore(self._db)
        self.traces = SQLiteTraceStore(self._db)
        self.events = SQLiteEventStore(self._db)
        self.keys = SQLiteKeyStore(self._db)
        self.lifecycle = SQLiteLifecycleStore(self._db)
        self.vault = SQLiteVaultStore(self._db)
        self.erasure = SQLiteErasureStore(self._db, self._index)
        self.opinions = SQLiteOpinionStore(self._db)
        self.predictive = SQLitePredictiveStore(self._db)
        self.goals = SQLiteGoalStore(self._db)
        self.leases = SQLiteLeaseStore(self._db)
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
