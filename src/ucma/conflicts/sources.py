"""Sources of truth: authoritative current values that memory defers to (seed 002).

A ``SourceOfTruth`` maps some (subject, predicate) pairs to the value an
external system of record holds now (an order's status in the orders
database). When a read touches a current fact the source covers and the
values differ, the engine records a ``memory_vs_db`` conflict, uses the
source's value, and decays the memory (``trust_db``).

``SQLSourceOfTruth`` answers with one SQL query per predicate against any
database the user names:

    orders = SQLSourceOfTruth.sqlite(
        "shop.db",
        {"status": "SELECT status FROM sales_orders WHERE id = :id"},
        subject_pattern=r"sales_order_(?P<id>.+)",
    )

The subject pattern's named groups, plus ``subject`` and ``predicate``, are
the query's parameters, passed as a mapping. For other databases pass
``connect``, a function returning a DB-API 2.0 connection, and write the
template in that driver's named style (``%(id)s`` for psycopg,
``:id`` for sqlite3 and oracledb):

    SQLSourceOfTruth("orders", lambda: psycopg.connect(DSN),
                     {"status": "SELECT status FROM sales_orders WHERE id = %(id)s"},
                     subject_pattern=r"sales_order_(?P<id>.+)")

A connection is opened per lookup and closed after it; the engine runs
lookups on a worker thread. Failures raise ``SourceOfTruthError``: a read
never silently falls back to memory when its source is broken.
"""

from __future__ import annotations

import re
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from ucma.conflicts.predicates import normalise_predicate
from ucma.errors import SourceOfTruthError, ValidationError

__all__ = ["DBAPIConnection", "SQLSourceOfTruth", "SourceOfTruth"]


class DBAPIConnection(Protocol):
    """The part of a PEP 249 connection a SQL source uses."""

    def cursor(self) -> Any: ...

    def close(self) -> None: ...


class SourceOfTruth(ABC):
    """An authority for some (subject, predicate) pairs.

    ``covers`` must be cheap and side-effect free (it is asked for every fact
    a read touches); ``lookup`` may do I/O and is called only for covered
    pairs. ``name`` appears in conflicts as ``resolved_by = "source:<name>"``.
    """

    name: str

    @abstractmethod
    def covers(self, subject: str, predicate: str) -> bool:
        """True when this source is authoritative for (subject, predicate)."""

    @abstractmethod
    def lookup(self, subject: str, predicate: str) -> str | None:
        """The authoritative current value, or None when the source holds no
        record for this pair (memory is then left alone)."""


class SQLSourceOfTruth(SourceOfTruth):
    """A source of truth answered by one SQL query per predicate.

    ``queries`` maps predicates (normalised like the registry's) to a query
    whose first column of its first row is the value; no row or NULL means
    "no record". ``subject_pattern`` must match the whole subject; its named
    groups become query parameters.
    """

    def __init__(
        self,
        name: str,
        connect: Callable[[], DBAPIConnection],
        queries: Mapping[str, str],
        *,
        subject_pattern: str = r"(?P<id>.+)",
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("a source of truth needs a non-empty name")
        if not queries or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in queries.items()
        ):
            raise ValidationError("queries must map predicate names to non-empty SQL strings")
        try:
            self._pattern = re.compile(subject_pattern)
        except re.error as exc:
            raise ValidationError(f"invalid subject_pattern {subject_pattern!r}: {exc}") from exc
        self.name = name.strip()
        self._connect = connect
        self._queries = {normalise_predicate(k): v for k, v in queries.items()}

    @classmethod
    def sqlite(
        cls,
        path: str | Path,
        queries: Mapping[str, str],
        *,
        subject_pattern: str = r"(?P<id>.+)",
        name: str | None = None,
    ) -> SQLSourceOfTruth:
        """A source over a SQLite file, opened read-only for each lookup."""
        file = Path(path)
        uri = f"file:{quote(str(file.absolute()))}?mode=ro"

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True)

        return cls(name or file.stem, connect, queries, subject_pattern=subject_pattern)

    def covers(self, subject: str, predicate: str) -> bool:
        return (
            normalise_predicate(predicate) in self._queries
            and self._pattern.fullmatch(subject.strip()) is not None
        )

    def lookup(self, subject: str, predicate: str) -> str | None:
        match = self._pattern.fullmatch(subject.strip())
        query = self._queries.get(normalise_predicate(predicate))
        if match is None or query is None:
            return None
        params = {"subject": subject, "predicate": predicate, **match.groupdict()}
        try:
            with closing(self._connect()) as conn:
                cursor = conn.cursor()
                try:
                    cursor.execute(query, params)
                    row = cursor.fetchone()
                finally:
                    cursor.close()
        except Exception as exc:  # any driver's error: the boundary of the user's database
            raise SourceOfTruthError(
                f"source of truth {self.name!r} failed for ({subject}, {predicate}): {exc}"
            ) from exc
        if row is None or row[0] is None:
            return None
        return str(row[0])

    def __repr__(self) -> str:
        return f"SQLSourceOfTruth({self.name!r}, predicates={sorted(self._queries)})"
