"""What both relational backends' ``Storage`` classes share: the stores written once
(``ucma.storage.sql``), transactions, and the check of the embedding dimension.

A backend's ``Storage`` opens its database, then calls ``_attach`` with the parts
that are its own (the memory rows' write path, the catalog and its search, the
erasure, how a scope's next event is numbered, its extra orphan tables)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from ucma.errors import StorageError
from ucma.storage.base import Storage
from ucma.storage.sql.catalog import SqlMemoryCatalog
from ucma.storage.sql.conflicts import SqlConflictStore
from ucma.storage.sql.connection import Connection, Database
from ucma.storage.sql.embedding_cache import SqlEmbeddingCacheStore
from ucma.storage.sql.episodic import SqlEpisodicStore
from ucma.storage.sql.erasure import SqlErasureStore
from ucma.storage.sql.events import SqlEventStore
from ucma.storage.sql.goals import SqlGoalStore
from ucma.storage.sql.graph import SqlGraphStore
from ucma.storage.sql.keys import SqlKeyStore
from ucma.storage.sql.learning import SqlLearningStore
from ucma.storage.sql.leases import SqlLeaseStore
from ucma.storage.sql.lifecycle import ORPHANS, SqlLifecycleStore
from ucma.storage.sql.memories import MemoryRows
from ucma.storage.sql.opinions import SqlOpinionStore
from ucma.storage.sql.predictive import SqlPredictiveStore
from ucma.storage.sql.procedural import SqlProceduralStore
from ucma.storage.sql.retention import SqlRetentionStore
from ucma.storage.sql.semantic import SqlSemanticStore
from ucma.storage.sql.traces import SqlTraceStore
from ucma.storage.sql.vault import SqlVaultStore

__all__ = ["SqlStorage", "check_dimension"]

_DIMENSION_KEY = "embedding_dimension"


def check_dimension(conn: Connection, dimension: int, name: str, new: str) -> None:
    """Record ``dimension`` in a new store's settings, or check it against the one
    recorded (``StorageError`` naming the store ``name``; ``new`` is what a caller
    with another model should use instead)."""
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (_DIMENSION_KEY,)).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?)", (_DIMENSION_KEY, str(dimension))
        )
    elif int(row[0]) != dimension:
        raise StorageError(
            f"{name} stores {row[0]}-dimensional embeddings but dimension={dimension} was "
            f"requested; open it with the embedding model it was created with, or use {new}"
        )


class SqlStorage(Storage):
    """Every store of one relational database (module docstring)."""

    def _attach(
        self,
        db: Database,
        *,
        rows: MemoryRows,
        memories: SqlMemoryCatalog,
        erasure: SqlErasureStore,
        next_event_seq: str,
        orphans: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._database = db
        self.memories = memories
        self.episodes = SqlEpisodicStore(db, rows)
        self.facts = SqlSemanticStore(db, rows)
        self.procedures = SqlProceduralStore(db, rows)
        self.learnings = SqlLearningStore(db, rows)
        self.graph = SqlGraphStore(db)
        self.retention = SqlRetentionStore(db)
        self.embedding_cache = SqlEmbeddingCacheStore(db)
        self.conflicts = SqlConflictStore(db)
        self.traces = SqlTraceStore(db)
        self.events = SqlEventStore(db, next_event_seq)
        self.keys = SqlKeyStore(db)
        self.lifecycle = SqlLifecycleStore(db, (*ORPHANS, *orphans))
        self.vault = SqlVaultStore(db)
        self.erasure = erasure
        self.opinions = SqlOpinionStore(db)
        self.predictive = SqlPredictiveStore(db)
        self.goals = SqlGoalStore(db)
        self.leases = SqlLeaseStore(db)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._database.transaction():
            yield

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes atomically; nested use joins the outer transaction.

        An exception inside rolls everything back and propagates. A nested block
        that fails dooms the whole transaction even if the exception is caught: the
        outermost block then rolls back and raises ``StorageError``.
        """
        return self._transaction()
