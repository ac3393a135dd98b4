"""One SQLite connection, its lock, its transactions and the error boundary.

Every store of a ``SQLiteStorage`` shares one ``Database``. Writes run inside a
transaction (``write()``) on the one writing connection, under its lock: at top
level that is ``BEGIN IMMEDIATE`` ... ``COMMIT``, nested use joins the open
transaction. Reads (``read()``, ``snapshot()``) run on the writing connection in
the thread whose transaction is open (they see its uncommitted writes); in any
other thread of a file database they run on that thread's own read-only
connection, without the lock: WAL lets readers run beside the writer and one
another, each seeing what was committed when its statement (or snapshot)
began. A ``:memory:`` database has one connection, and every call takes the
lock. A block that raises inside a transaction dooms it: the outermost
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
import weakref
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
# A reading connection never writes: a write through read() outside a transaction
# fails loudly rather than bypass the writer's lock.
_READER_PRAGMAS = (
    "PRAGMA foreign_keys=ON",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-16384",
    "PRAGMA query_only=1",
)

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

    The writing connection is created with ``check_same_thread=False`` because
    the engine calls storage from worker threads; an ``RLock`` serialises its
    use, and a transaction holds the lock from BEGIN to COMMIT so no other
    thread's statement can slip into it. A file database also gives each thread
    that reads outside a transaction a read-only connection of its own (module
    docstring), so reads of several threads run at once.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.dialect = SQLITE
        self._lock = threading.RLock()
        self._depth = 0
        self._doomed = False
        self._owner: int | None = None  # the thread whose transaction is open
        self._listeners: list[TransactionListener] = []
        self._conn: SQLiteConnection | None = self._connect()
        self._local = threading.local()
        # Every thread's reading connection, to close them; one whose thread ended
        # closes as its thread's storage goes.
        self._readers: weakref.WeakSet[SQLiteConnection] = weakref.WeakSet()
        self._readers_lock = threading.Lock()
        self._checkpointer = Checkpointer(self.path) if self.on_disk else None

    @property
    def on_disk(self) -> bool:
        """A plain file path (not ``:memory:`` or a ``file:`` URI)."""
        return self.path != ":memory:" and not self.path.startswith("file:")

    def _connect(self, *, reader: bool = False) -> SQLiteConnection:
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
                if reader:
                    pragmas: tuple[str, ...] = _READER_PRAGMAS
                else:
                    pragmas = (*_PRAGMAS, *((_BACKGROUND_CHECKPOINTS,) if self.on_disk else ()))
                for pragma in pragmas:
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
        """Whether the calling thread has a transaction open."""
        return self._depth > 0 and self._owner == threading.get_ident()

    @property
    def concurrent_reads(self) -> bool:
        """Whether threads outside the transaction read on connections of their own
        (a file database: WAL lets them run beside the writer)."""
        return self.on_disk

    def add_listener(self, listener: TransactionListener) -> None:
        self._listeners.append(listener)

    def _require_open(self) -> SQLiteConnection:
        if self._conn is None:
            raise StorageError(f"the database {self.path!r} is closed")
        return self._conn

    # -- access -------------------------------------------------------------

    def _reader(self) -> SQLiteConnection | None:
        """The calling thread's reading connection (opened on its first read), or
        None when it must use the writing one: its transaction is open, or the
        database has one connection."""
        if not self.on_disk or self._owner == threading.get_ident():
            return None
        self._require_open()
        conn: SQLiteConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect(reader=True)
            with self._readers_lock:
                if self._conn is None:  # closed meanwhile
                    conn.close()
                    self._require_open()
                self._readers.add(conn)
            self._local.conn = conn
        return conn

    @contextmanager
    def read(self) -> Iterator[SQLiteConnection]:
        """A connection for reads, with errors translated: the thread's own
        reading connection, or the writing one under the lock (module docstring)."""
        reader = self._reader()
        if reader is not None:
            with translate_errors():
                yield reader
            return
        with self._writer() as conn:
            yield conn

    @contextmanager
    def _writer(self) -> Iterator[SQLiteConnection]:
        """The writing connection under the lock, with errors translated."""
        with self._lock:
            conn = self._require_open()
            with translate_errors():
                yield conn

    @contextmanager
    def exclusive(self) -> Iterator[SQLiteConnection]:
        """The writing connection under the lock, with the background checkpoints
        held off: for checkpointing and vacuuming the file from this connection."""
        if self._checkpointer is None:
            with self._writer() as conn:
                yield conn
            return
        with self._checkpointer.paused(), self._writer() as conn:
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
        reader = self._reader()
        if reader is not None:
            with self._read_transaction(reader) as conn:
                yield conn
            return
        with self._lock:
            conn = self._require_open()
            if self._depth:
                with translate_errors():
                    yield conn
                return
            with self._read_transaction(conn) as conn:
                yield conn

    @contextmanager
    def _read_transaction(self, conn: SQLiteConnection) -> Iterator[SQLiteConnection]:
        """``conn`` inside a read transaction (joined when one is open)."""
        if conn.in_transaction:
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
            self._owner = threading.get_ident()
            try:
                yield conn
            except BaseException:
                self._depth, self._owner = 0, None
                self._rollback(conn)
                raise
            self._depth, self._owner = 0, None
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
        """Close the connections (idempotent); later calls raise StorageError.
        A read running in another thread meanwhile fails with StorageError."""
        with self._lock:
            with self._readers_lock:
                conn, self._conn = self._conn, None
                readers, self._readers = list(self._readers), weakref.WeakSet()
            if conn is None:
                return
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
            try:
                if conn.in_transaction:
                    self._rollback(conn)
            finally:
                self._depth, self._owner = 0, None
                conn.close()
                for reader in readers:
                    reader.close()
