"""One SQLite connection, its lock, its transactions and the error boundary.

Every store of a ``SQLiteStorage`` shares one ``Database``. Reads run under the
lock (``read()``); writes run inside a transaction (``write()``): at top level
that is ``BEGIN IMMEDIATE`` ... ``COMMIT``, nested use joins the open
transaction. A block that raises inside a transaction dooms it: the outermost
block rolls everything back, so a caller that swallows a failed write still
commits nothing half-done (errors.py: a ``StorageError`` means "the
surrounding transaction was rolled back").

Listeners (the vector cache) hear about commits and rollbacks, so in-process
state is updated only with what the database really holds. A file database
checkpoints its write-ahead log in a background thread (checkpoint.py).

``sqlite3`` exceptions never leave this package: ``translate_errors`` turns
them into ``StorageError`` raised ``from`` the original.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from ucma.errors import StorageError, ValidationError
from ucma.storage.sql.codec import ids_param
from ucma.storage.sql.dialect import Dialect
from ucma.storage.sqlite.checkpoint import SAFETY_NET_PAGES, Checkpointer

__all__ = [
    "BUSY_TIMEOUT_MS",
    "SQLITE",
    "Database",
    "SQLiteConnection",
    "TransactionListener",
    "translate_errors",
]

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
"""How long a writer waits for another connection's write lock before failing."""

_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-32768",
)
_BACKGROUND_CHECKPOINTS = f"PRAGMA wal_autocheckpoint={SAFETY_NET_PAGES}"

SQLITE = Dialect(
    name="sqlite",
    elements=lambda kind: "value FROM json_each(?)",
    among=lambda column, kind: f"{column} IN (SELECT value FROM json_each(?))",
    bind_list=ids_param,
    unindexed=lambda column: f"+{column}",
    greatest="max",
    least="min",
    false="0",
    row_order=lambda table: "rowid",
    lock_rows="",
    skip_locked="",
    no_limit=-1,
    integrity_error=(sqlite3.IntegrityError,),
    unique_violation=(sqlite3.IntegrityError,),
)


class SQLiteConnection(sqlite3.Connection):
    """A ``sqlite3`` connection that names its dialect (``ucma.storage.sql``)."""

    dialect = SQLITE


class TransactionListener(Protocol):
    """In-process state that must follow what the database commits."""

    def committed(self) -> None: ...

    def rolled_back(self) -> None: ...


@contextmanager
def translate_errors(action: str = "database operation") -> Iterator[None]:
    """Turn driver exceptions into the UCMA error tree at the store boundary."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StorageError(f"{action} failed: {exc}") from exc
    except (UnicodeEncodeError, OverflowError) as exc:
        # Lone surrogates and integers beyond 64 bits cannot be bound to SQLite.
        raise ValidationError(f"a value cannot be stored: {exc}") from exc


class Database:
    """A SQLite file opened for UCMA: WAL, foreign keys, explicit transactions.

    The connection is created with ``check_same_thread=False`` because the
    engine calls storage from a worker thread; an ``RLock`` still serialises
    calls, and a transaction holds the lock from BEGIN to COMMIT so no other
    thread's statement can slip into it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.dialect = SQLITE
        self._lock = threading.RLock()
        self._depth = 0
        self._doomed = False
        self._listeners: list[TransactionListener] = []
        self._conn: SQLiteConnection | None = self._connect()
        self._checkpointer = Checkpointer(self.path) if self.on_disk else None

    @property
    def on_disk(self) -> bool:
        """A plain file path (not ``:memory:`` or a ``file:`` URI)."""
        return self.path != ":memory:" and not self.path.startswith("file:")

    def _connect(self) -> SQLiteConnection:
        if self.on_disk:
            parent = Path(self.path).absolute().parent
            if not parent.is_dir():
                raise StorageError(
                    f"cannot open {self.path!r}: directory {str(parent)!r} does not exist; "
                    "create it before opening the database"
                )
        with translate_errors(f"opening {self.path!r}"):
            conn = sqlite3.connect(
                self.path,
                check_same_thread=False,
                isolation_level=None,
                cached_statements=256,
                factory=SQLiteConnection,
            )
        try:
            with translate_errors(f"configuring {self.path!r}"):
                for pragma in (*_PRAGMAS, *((_BACKGROUND_CHECKPOINTS,) if self.on_disk else ())):
                    conn.execute(pragma).fetchall()
        except BaseException:
            conn.close()
            raise
        if logger.isEnabledFor(logging.DEBUG):
            conn.set_trace_callback(logger.debug)
        return conn

    # -- state ------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._conn is None

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def add_listener(self, listener: TransactionListener) -> None:
        self._listeners.append(listener)

    def _require_open(self) -> SQLiteConnection:
        if self._conn is None:
            raise StorageError(f"the database {self.path!r} is closed")
        return self._conn

    # -- access -------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[SQLiteConnection]:
        """The connection for reads, under the lock, with errors translated."""
        with self._lock:
            conn = self._require_open()
            with translate_errors():
                yield conn

    @contextmanager
    def exclusive(self) -> Iterator[SQLiteConnection]:
        """``read()`` with the background checkpoints held off: for checkpointing
        and vacuuming the file from this connection."""
        if self._checkpointer is None:
            with self.read() as conn:
                yield conn
            return
        with self._checkpointer.paused(), self.read() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[SQLiteConnection]:
        """The connection inside a transaction (joined if one is open)."""
        with self.transaction() as conn, translate_errors():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[SQLiteConnection]:
        """Several reads that must see one committed state (a read transaction).

        Inside an open write transaction the reads already share one state.
        """
        with self._lock:
            conn = self._require_open()
            if self._depth or conn.in_transaction:
                with translate_errors():
                    yield conn
                return
            with translate_errors("starting a read transaction"):
                conn.execute("BEGIN DEFERRED")
            try:
                with translate_errors():
                    yield conn
            finally:
                if conn.in_transaction:
                    with translate_errors("ending a read transaction"):
                        conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[SQLiteConnection]:
        """Group writes atomically; nested use joins the outer transaction."""
        with self._lock:
            conn = self._require_open()
            if self._depth:
                self._depth += 1
                try:
                    yield conn
                except BaseException:
                    self._doomed = True
                    raise
                finally:
                    self._depth -= 1
                return

            with translate_errors("starting a transaction"):
                conn.execute("BEGIN IMMEDIATE")
            self._depth, self._doomed = 1, False
            try:
                yield conn
            except BaseException:
                self._depth = 0
                self._rollback(conn)
                raise
            self._depth = 0
            if self._doomed:
                self._rollback(conn)
                raise StorageError(
                    "the transaction was rolled back because a write inside it failed"
                )
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise StorageError(f"commit failed: {exc}") from exc
            for listener in self._listeners:
                listener.committed()
            if self._checkpointer is not None:
                self._checkpointer.poke()

    def _rollback(self, conn: sqlite3.Connection) -> None:
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:  # the original exception is the one worth raising
            logger.exception("rollback failed on %s", self.path)
        finally:
            for listener in self._listeners:
                listener.rolled_back()

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise StorageError."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is None:
                return
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
            try:
                if conn.in_transaction:
                    self._rollback(conn)
            finally:
                self._depth = 0
                conn.close()
