"""PostgreSQL's ``ErasureStore`` (``ucma.storage.sql.erasure``): the keyword
``tsvector``, the search caches, the catalog of scoped tables, and scrubbing.

A rewritten keyword context gets its row's terms again (keywords.py); the erased
scope's in-memory copy is dropped (search_cache.py). ``scrub``
rewrites every table (``VACUUM FULL``: the old files, dead rows included, are
deleted) and checkpoints; PostgreSQL recycles its write-ahead log on its own
schedule, and archived WAL or base backups are the operator's to expire.
"""

from __future__ import annotations

import logging

import psycopg

from ucma.storage.postgres.connection import Database
from ucma.storage.postgres.keywords import row_terms
from ucma.storage.postgres.search_cache import SearchCaches
from ucma.storage.sql.connection import Connection
from ucma.storage.sql.erasure import SqlErasureStore
from ucma.types import Scope

__all__ = ["PostgresErasureStore", "scoped_tables"]

logger = logging.getLogger(__name__)


class PostgresErasureStore(SqlErasureStore):
    # Bookkeeping rows a trigger or the erasure itself already emptied (keyword
    # statistics, the event sequence).
    not_counted = frozenset({"keyword_stats", "event_streams"})

    def __init__(self, db: Database, caches: SearchCaches) -> None:
        super().__init__(db)
        self._caches = caches

    def _erased(self, scope: Scope) -> None:
        # No erased text or vector stays in this process's memory.
        self._caches.drop(scope)

    def scoped_tables(self, conn: Connection) -> list[str]:
        return scoped_tables(conn)

    def _set_context(
        self, conn: Connection, scope: Scope, seq: int, content: str, old: str, new: str
    ) -> None:
        conn.execute(
            "UPDATE memories SET search_context = ?, terms = ?::tsvector,"
            " content_length = ?, context_length = ? WHERE seq = ?",
            (new, *row_terms(content, new), seq),
        )

    def scrub(self) -> tuple[bool, bool]:
        """Rewrite every table of the store (``VACUUM FULL``), then ``CHECKPOINT``
        (which needs a superuser or the ``pg_checkpoint`` role)."""
        with self._db.read() as conn:
            tables = [
                str(row[0])
                for row in conn.execute(
                    "SELECT c.relname FROM pg_class c"
                    " WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace"
                    " ORDER BY c.relname"
                ).fetchall()
            ]
            try:
                for table in tables:
                    conn.execute(f"VACUUM FULL {table}")
                vacuumed = True
            except psycopg.Error as exc:  # a lock held by another session, or no privilege
                logger.warning("scrub: VACUUM FULL did not run: %s", exc)
                vacuumed = False
            try:
                conn.execute("CHECKPOINT")
                checkpointed = True
            except psycopg.Error as exc:
                logger.warning("scrub: CHECKPOINT did not run: %s", exc)
                checkpointed = False
        return checkpointed, vacuumed


def scoped_tables(conn: Connection) -> list[str]:
    """Tables with ``user_id`` and ``agent_id`` columns, ``memories`` first."""
    rows = conn.execute(
        """
        SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name IN ('user_id', 'agent_id')
        GROUP BY table_name HAVING count(*) = 2 ORDER BY table_name
        """
    ).fetchall()
    return sorted((str(row[0]) for row in rows), key=lambda t: t != "memories")
