"""What ``ucma.storage.migrate`` needs of a SQLite store beyond the storage interfaces
and what both backends share (``ucma.storage.sql.copying``): events written as they
are, with the lifecycle triggers held off while records are copied in.

Copied records would otherwise log themselves again (``memory.stored`` and
``memory.archived``, migration 6): the triggers are dropped inside the caller's
transaction and created again from their own SQL before it commits, so a rollback
restores them with everything else and no other writer ever sees the schema without
them (the transaction holds the write lock).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ucma.errors import StorageError
from ucma.events.log import Event
from ucma.storage.migrate import EVENT_COLUMNS, LIFECYCLE_TRIGGERS, event_row
from ucma.storage.sql.copying import SqlCopying
from ucma.storage.sqlite.storage import SQLiteStorage

__all__ = ["SQLiteCopying", "copying"]


class SQLiteCopying(SqlCopying):
    """``ucma.storage.migrate.Copying`` over one SQLite store."""

    def __init__(self, storage: SQLiteStorage) -> None:
        super().__init__(storage._db)

    @contextmanager
    def unlogged(self) -> Iterator[None]:
        with self._db.write() as conn:
            rows = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)",
                LIFECYCLE_TRIGGERS,
            ).fetchall()
            if len(rows) != len(LIFECYCLE_TRIGGERS):
                raise StorageError("the store's lifecycle triggers are missing")
            for name, _ in rows:
                conn.execute(f"DROP TRIGGER {name}")
            yield
            for _, sql in rows:
                conn.execute(sql)

    def put_events(self, events: Sequence[Event]) -> None:
        with self._db.write() as conn:
            conn.executemany(
                f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [event_row(e) for e in events],
            )


def copying(storage: object) -> SQLiteCopying:
    """The hook ``ucma.storage.migrate`` looks up by the store's URL scheme."""
    if not isinstance(storage, SQLiteStorage):
        raise TypeError(f"not a SQLite store: {type(storage).__name__}")
    return SQLiteCopying(storage)
