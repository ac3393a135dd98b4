"""What the shared stores need of a database: connections and transactions.

A ``Database`` lends a ``Connection`` for reads (``read``), for several reads of
one committed state (``snapshot``) and inside a transaction (``write`` /
``transaction``: nested use joins the open one, and a block that raises dooms it),
with driver exceptions turned into ``ucma.errors`` at the boundary. SQLite's
``sqlite3.Connection`` is such a connection as it is; PostgreSQL's is a thin
wrapper that rewrites placeholders (``ucma.storage.postgres.connection``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, cast

from ucma.errors import StorageError
from ucma.storage.sql.dialect import Dialect

__all__ = ["Connection", "Cursor", "Database", "Params", "one"]

Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """Runs statements written with ``?`` placeholders and ``:name`` parameters."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any: ...


class Database(Protocol):
    """Connections of one database, with transactions (module docstring)."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def in_transaction(self) -> bool: ...

    def read(self) -> AbstractContextManager[Connection]: ...

    def snapshot(self) -> AbstractContextManager[Connection]: ...

    def write(self) -> AbstractContextManager[Connection]: ...

    def transaction(self) -> AbstractContextManager[Connection]: ...


def one(cursor: Cursor) -> tuple[Any, ...]:
    """The row of a statement that always returns one (an aggregate, ``RETURNING``)."""
    row = cursor.fetchone()
    if row is None:
        raise StorageError("a statement that returns one row returned none")
    return cast(tuple[Any, ...], row)
