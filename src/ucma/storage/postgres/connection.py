"""A pool of PostgreSQL connections, transactions per thread, and the error boundary.

Every store of a ``PostgresStorage`` shares one ``Database``. Outside a
transaction each call borrows a connection from the pool (autocommit: each
statement commits on its own) and gives it back; several threads run their calls
at once on different connections. ``transaction()`` pins one connection to the
calling thread from ``BEGIN`` to ``COMMIT``: every store call that thread makes
meanwhile runs on it, and nested blocks join it. A block that raises dooms the
transaction: the outermost block rolls everything back, so a caller that swallows
a failed write still commits nothing half-done (the same semantics as the SQLite
backend; errors.py: a ``StorageError`` means "the surrounding transaction was
rolled back"). PostgreSQL aborts a transaction at its first failed statement, so
stores check what they can before writing rather than catching a failed insert.

Transactions run at READ COMMITTED; what must not interleave across processes
(the per-scope event sequence, job claims) takes row locks.

The connections lent are ``PgConnection``s: statements are written as for SQLite
(``?`` placeholders, ``:name`` parameters; ``ucma.storage.sql``) and rewritten to
psycopg's style once per distinct statement (``pyformat``).

``psycopg`` exceptions never leave this package: ``translate_errors`` turns them
into ``StorageError`` (``ValidationError`` for a value PostgreSQL cannot hold, such
as a NUL character in text) raised ``from`` the original.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ucma.errors import StorageError, TransientStorageError, ValidationError
from ucma.storage.sql.connection import Params
from ucma.storage.sql.dialect import Dialect

__all__ = [
    "POSTGRES",
    "Database",
    "PgConnection",
    "RawConnection",
    "pyformat",
    "redact",
    "translate_errors",
]

logger = logging.getLogger(__name__)

RawConnection = psycopg.Connection[tuple[Any, ...]]
Cursor = psycopg.Cursor[tuple[Any, ...]]

ConfigureHook = Callable[[RawConnection], None]

POSTGRES = Dialect(
    name="postgresql",
    elements=lambda kind: f"unnest(?::{kind}[])",
    among=lambda column, kind: f"{column} = ANY(?{f'::{kind}[]' if kind else ''})",
    bind_list=list,
    unindexed=lambda column: column,
    greatest="GREATEST",
    least="LEAST",
    false="false",
    row_order=lambda table: "edge_seq" if table == "graph_edges" else "row_seq",
    lock_rows=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    no_limit=None,
    integrity_error=(psycopg.errors.IntegrityError,),
    unique_violation=(psycopg.errors.UniqueViolation,),
)

_QUOTED = re.compile(r"('(?:[^']|'')*')")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=4096)
def pyformat(sql: str) -> str:
    """A statement written with ``?`` and ``:name`` in psycopg's ``%s`` and
    ``%(name)s`` (``%`` doubled; nothing inside quoted literals but ``%``)."""
    parts = _QUOTED.split(sql)
    for i, part in enumerate(parts):
        part = part.replace("%", "%%")
        if i % 2 == 0:
            part = _NAMED.sub(r"%(\1)s", part.replace("?", "%s"))
        parts[i] = part
    return "".join(parts)


class PgConnection:
    """A pooled connection that runs statements written in SQLite's placeholder
    style (``ucma.storage.sql.connection.Connection``); ``raw`` is psycopg's."""

    __slots__ = ("raw",)
    dialect = POSTGRES

    def __init__(self, raw: RawConnection) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Params = (), /, *, binary: bool = False) -> Cursor:
        """Run one statement (``binary``: results in binary format, for vectors)."""
        return self.raw.execute(pyformat(sql), parameters, binary=binary)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        """Run ``sql`` once per row of parameters (nothing when there are none)."""
        batch = list(parameters)
        if batch:
            with self.raw.cursor() as cursor:
                cursor.executemany(pyformat(sql), batch)


POOL_TIMEOUT_SECONDS = 30.0
"""How long a call waits for a free connection before failing."""


@contextmanager
def translate_errors(action: str = "database operation") -> Iterator[None]:
    """Turn driver exceptions into the UCMA error tree at the store boundary."""
    try:
        yield
    except PoolTimeout as exc:
        raise StorageError(f"{action} failed: no free database connection ({exc})") from exc
    except psycopg.DataError as exc:
        # NUL characters in text, numbers out of range, malformed values.
        raise ValidationError(f"a value cannot be stored: {exc}") from exc
    except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
        raise TransientStorageError(f"{action} failed: {exc}") from exc
    except psycopg.Error as exc:
        raise StorageError(f"{action} failed: {exc}") from exc
    except (UnicodeEncodeError, OverflowError) as exc:
        raise ValidationError(f"a value cannot be stored: {exc}") from exc


@dataclass
class _Open:
    """The calling thread's open transaction."""

    conn: PgConnection
    depth: int = 1
    doomed: bool = False


class Database:
    """Connections to one PostgreSQL database for UCMA.

    ``configure`` runs once on every new connection of the pool (type adapters).
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int,
        configure: ConfigureHook | None = None,
    ) -> None:
        self.url = url
        self.dialect = POSTGRES
        self._local = threading.local()
        self._closed = False
        with translate_errors(f"connecting to {redact(url)}"):
            self._pool: ConnectionPool[RawConnection] = ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, pool_size),
                kwargs={"autocommit": True},
                configure=configure,
                timeout=POOL_TIMEOUT_SECONDS,
                open=False,
            )
            self._pool.open(wait=True, timeout=POOL_TIMEOUT_SECONDS)

    # -- state ------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_transaction(self) -> bool:
        return self._open() is not None

    def _open(self) -> _Open | None:
        current: _Open | None = getattr(self._local, "open", None)
        return current

    def _require_open(self) -> None:
        if self._closed:
            raise StorageError(f"the database {redact(self.url)} is closed")

    # -- access -------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[PgConnection]:
        """A connection for reads (the thread's transaction's, if one is open)."""
        with self._borrow(None) as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[PgConnection]:
        """A connection inside a transaction (joined if one is open)."""
        with self.transaction() as conn, translate_errors():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[PgConnection]:
        """Several reads that must see one committed state (a repeatable-read
        transaction); inside an open transaction, that transaction's connection."""
        with self._borrow("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") as conn:
            yield conn

    @contextmanager
    def _borrow(self, begin: str | None) -> Iterator[PgConnection]:
        """The thread's open transaction's connection, else one from the pool (inside a
        read-only transaction opened with ``begin`` when given, rolled back after)."""
        self._require_open()
        current = self._open()
        if current is not None:
            with translate_errors():
                yield current.conn
            return
        with translate_errors(), self._pool.connection() as raw:
            conn = PgConnection(raw)
            if begin is None:
                yield conn
                return
            raw.execute(begin)
            try:
                yield conn
            finally:
                raw.execute("ROLLBACK")

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """Group writes atomically; nested use joins the outer transaction."""
        self._require_open()
        current = self._open()
        if current is not None:
            current.depth += 1
            try:
                yield current.conn
            except BaseException:
                current.doomed = True
                raise
            finally:
                current.depth -= 1
            return

        with translate_errors("a transaction"), self._pool.connection() as raw:
            conn = PgConnection(raw)
            raw.execute("BEGIN")
            state = self._local.open = _Open(conn)
            try:
                yield conn
            except BaseException:
                self._local.open = None
                self._rollback(conn)
                raise
            self._local.open = None
            if state.doomed:
                self._rollback(conn)
                raise StorageError(
                    "the transaction was rolled back because a write inside it failed"
                )
            try:
                raw.execute("COMMIT")
            except psycopg.Error as exc:
                self._rollback(conn)
                raise StorageError(f"commit failed: {exc}") from exc

    def _rollback(self, conn: PgConnection) -> None:
        try:
            conn.raw.execute("ROLLBACK")
        except psycopg.Error:  # the original exception is the one worth raising
            logger.exception("rollback failed on %s", redact(self.url))

    def close(self) -> None:
        """Close every connection (idempotent); later calls raise StorageError."""
        if self._closed:
            return
        self._closed = True
        self._pool.close()


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "the PostgreSQL database"
    host = info.get("host", "localhost")
    port = info.get("port", "5432")
    return f"postgresql://{info.get('user', '')}@{host}:{port}/{info.get('dbname', '')}"
