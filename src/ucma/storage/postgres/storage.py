"""``PostgresStorage``: every store over one PostgreSQL database (with pgvector)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import psycopg
from pgvector.psycopg import register_vector

from ucma.errors import StorageError, ValidationError
from ucma.storage.base import DEFAULT_ANN, AnnSettings, Storage
from ucma.storage.postgres.catalog import PostgresMemoryCatalog
from ucma.storage.postgres.conflicts import PostgresConflictStore
from ucma.storage.postgres.connection import Connection, Database, redact, translate_errors
from ucma.storage.postgres.embedding_cache import PostgresEmbeddingCacheStore
from ucma.storage.postgres.episodic import PostgresEpisodicStore
from ucma.storage.postgres.erasure import PostgresErasureStore
from ucma.storage.postgres.events import PostgresEventStore
from ucma.storage.postgres.goals import PostgresGoalStore
from ucma.storage.postgres.graph import PostgresGraphStore
from ucma.storage.postgres.keys import PostgresKeyStore
from ucma.storage.postgres.learning import PostgresLearningStore
from ucma.storage.postgres.leases import PostgresLeaseStore
from ucma.storage.postgres.lifecycle import PostgresLifecycleStore
from ucma.storage.postgres.memories import MemoryRows
from ucma.storage.postgres.opinions import PostgresOpinionStore
from ucma.storage.postgres.predictive import PostgresPredictiveStore
from ucma.storage.postgres.procedural import PostgresProceduralStore
from ucma.storage.postgres.retention import PostgresRetentionStore
from ucma.storage.postgres.schema import apply_migrations
from ucma.storage.postgres.semantic import PostgresSemanticStore
from ucma.storage.postgres.traces import PostgresTraceStore
from ucma.storage.postgres.vault import PostgresVaultStore

__all__ = ["PostgresStorage"]

logger = logging.getLogger(__name__)

_DIMENSION_KEY = "embedding_dimension"
_EXTENSIONS = ("vector", "btree_gin")
DEFAULT_POOL_SIZE = 8
"""Connections per ``PostgresStorage`` (a process's concurrent storage calls)."""


def _configure(conn: Connection) -> None:
    """Every pooled connection: numpy arrays as pgvector ``vector`` values."""
    register_vector(conn)


class PostgresStorage(Storage):
    """Every UCMA store over one PostgreSQL database (``postgresql://`` URL).

    Opening creates the extensions it needs (pgvector, btree_gin) when missing and
    applies pending schema migrations in one transaction (an advisory lock keeps two
    processes opening a new database from migrating it twice), then checks that the
    database was created for embeddings of ``dimension`` dimensions. Several
    processes may open the same database: each has a pool of ``pool_size``
    connections, and the database orders their writes (connection.py). The engine
    runs up to ``pool_size`` calls at once (``Storage.concurrency``).
    """

    def __init__(
        self,
        url: str,
        *,
        dimension: int,
        ann: AnnSettings = DEFAULT_ANN,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValidationError(f"dimension must be a positive integer, got {dimension!r}")
        if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
            raise ValidationError(f"a PostgreSQL URL starts with postgresql://, got {url!r}")
        self.url = url
        applied = self._prepare(url, dimension)
        self._db = Database(url, pool_size=pool_size, configure=_configure)
        # The engine may run as many calls at once as the pool has connections; each
        # thread's transaction keeps one connection (connection.py).
        self.concurrency = max(1, pool_size)
        self.dimension = dimension
        rows = MemoryRows(dimension)
        self.memories = PostgresMemoryCatalog(self._db, dimension, ann)
        self.episodes = PostgresEpisodicStore(self._db, rows)
        self.facts = PostgresSemanticStore(self._db, rows)
        self.procedures = PostgresProceduralStore(self._db, rows)
        self.learnings = PostgresLearningStore(self._db, rows)
        self.graph = PostgresGraphStore(self._db)
        self.retention = PostgresRetentionStore(self._db)
        self.embedding_cache = PostgresEmbeddingCacheStore(self._db)
        self.conflicts = PostgresConflictStore(self._db)
        self.traces = PostgresTraceStore(self._db)
        self.events = PostgresEventStore(self._db)
        self.keys = PostgresKeyStore(self._db)
        self.lifecycle = PostgresLifecycleStore(self._db)
        self.vault = PostgresVaultStore(self._db)
        self.erasure = PostgresErasureStore(self._db)
        self.opinions = PostgresOpinionStore(self._db)
        self.predictive = PostgresPredictiveStore(self._db)
        self.goals = PostgresGoalStore(self._db)
        self.leases = PostgresLeaseStore(self._db)
        logger.info(
            "opened %s (dimension %d, migrations applied: %s)",
            redact(url),
            dimension,
            applied or "none",
        )

    @staticmethod
    def _prepare(url: str, dimension: int) -> list[int]:
        """Extensions, migrations and the dimension check, on a connection of its own."""
        with (
            translate_errors(f"opening {redact(url)}"),
            psycopg.connect(url) as conn,
            conn.transaction(),
        ):
            # One migrator at a time per database; the others then see it done.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ucma.migrations'))")
            for extension in _EXTENSIONS:
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
            applied = apply_migrations(conn, dimension)
            row = conn.execute(
                "SELECT value FROM settings WHERE key = %s", (_DIMENSION_KEY,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES (%s, %s)",
                    (_DIMENSION_KEY, str(dimension)),
                )
            elif int(row[0]) != dimension:
                raise StorageError(
                    f"{redact(url)} stores {row[0]}-dimensional embeddings but dimension="
                    f"{dimension} was requested; open it with the embedding model it was "
                    "created with, or use a new database"
                )
        return applied

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes atomically; nested use joins the outer transaction.

        An exception inside rolls everything back and propagates. A nested block
        that fails dooms the whole transaction even if the exception is caught: the
        outermost block then rolls back and raises ``StorageError``.
        """
        return self._transaction()

    def backup(self, target: str) -> int:
        raise StorageError(
            "backup of a PostgreSQL store is pg_dump's job (or continuous archiving); "
            "UCMA writes a portable copy with `ucma export`"
        )

    def close(self) -> None:
        """Close the pool (idempotent); later calls raise ``StorageError``."""
        self._db.close()

    def __repr__(self) -> str:
        state = "closed" if self._db.closed else "open"
        return f"PostgresStorage({redact(self.url)!r}, dimension={self.dimension}, {state})"
