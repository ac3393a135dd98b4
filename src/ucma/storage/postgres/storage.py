"""``PostgresStorage``: every store over one PostgreSQL database (with pgvector)."""

from __future__ import annotations

import logging

import psycopg
from pgvector.psycopg import register_vector

from ucma.errors import StorageError, ValidationError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.storage.base import DEFAULT_ANN, AnnSettings
from ucma.storage.postgres.catalog import PostgresMemoryCatalog
from ucma.storage.postgres.connection import (
    Database,
    PgConnection,
    RawConnection,
    redact,
    translate_errors,
)
from ucma.storage.postgres.erasure import PostgresErasureStore
from ucma.storage.postgres.memories import PostgresMemoryRows
from ucma.storage.postgres.schema import apply_migrations
from ucma.storage.postgres.search_cache import SearchCaches
from ucma.storage.sql.storage import SqlStorage, check_dimension

__all__ = ["PostgresStorage"]

logger = logging.getLogger(__name__)

# A scope's next event number: the row lock on its stream serialises writers (schema.py).
_NEXT_EVENT_SEQ = "ucma_next_event_seq(?, ?)"
_EXTENSIONS = ("vector", "btree_gin")
DEFAULT_POOL_SIZE = 8
"""Connections per ``PostgresStorage`` (a process's concurrent storage calls)."""


def _configure(conn: RawConnection) -> None:
    """Every pooled connection: numpy arrays as pgvector ``vector`` values."""
    register_vector(conn)


class PostgresStorage(SqlStorage):
    """Every UCMA store over one PostgreSQL database (``postgresql://`` URL).

    Opening creates the extensions it needs (pgvector, btree_gin) when missing and
    applies pending schema migrations in one transaction (an advisory lock keeps two
    processes opening a new database from migrating it twice), then checks that the
    database was created for embeddings of ``dimension`` dimensions. Several
    processes may open the same database: each has a pool of ``pool_size``
    connections, and the database orders their writes (connection.py). The engine
    runs up to ``pool_size`` calls at once (``Storage.concurrency``). The rows of the
    ``cached_scopes`` most recently searched scopes are kept in memory to search them,
    checked against what every process committed before each search (search_cache.py).
    """

    def __init__(
        self,
        url: str,
        *,
        dimension: int,
        ann: AnnSettings = DEFAULT_ANN,
        pool_size: int = DEFAULT_POOL_SIZE,
        cached_scopes: int = SCOPES_IN_MEMORY,
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
        self._caches = SearchCaches(self._db, dimension, cached_scopes)
        self._attach(
            self._db,
            rows=PostgresMemoryRows(dimension),
            memories=PostgresMemoryCatalog(self._db, dimension, self._caches, ann),
            erasure=PostgresErasureStore(self._db, self._caches),
            next_event_seq=_NEXT_EVENT_SEQ,
        )
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
            check_dimension(PgConnection(conn), dimension, redact(url), "a new database")
        return applied

    def backup(self, target: str) -> int:
        raise StorageError(
            "backup of a PostgreSQL store is pg_dump's job (or continuous archiving); "
            "UCMA writes a portable copy with `ucma export`"
        )

    def close(self) -> None:
        """Close the pool (idempotent); later calls raise ``StorageError``."""
        self._db.close()
        self._caches.clear()

    def __repr__(self) -> str:
        state = "closed" if self._db.closed else "open"
        return f"PostgresStorage({redact(self.url)!r}, dimension={self.dimension}, {state})"
