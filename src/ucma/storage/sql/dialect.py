"""The few words SQLite and PostgreSQL say differently, as SQL fragments.

Shared statements (``ucma.storage.sql``) are written with ``?`` placeholders and
``:name`` parameters, SQLite's style; the PostgreSQL connection rewrites them to
psycopg's (``ucma.storage.postgres.connection``). What else differs is asked of
the ``Dialect`` of the store's database: a list of ids bound as one parameter
(a JSON array read with ``json_each`` on SQLite, a ``text[]`` on PostgreSQL), the
two-argument ``max``/``min``, the boolean false, the row id that orders rows of
equal time, row locks, and which driver exception is a constraint violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Dialect"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """SQL fragments of one database engine (see the module docstring)."""

    name: str
    elements: Callable[[str], str]
    """``elements(type)``: what follows ``SELECT`` to read the elements of one list
    parameter, ``value FROM json_each(?)`` on SQLite, ``unnest(?::type[])`` on
    PostgreSQL."""
    among: Callable[[str, str], str]
    """``among(column, type)``: ``column`` is one of a list parameter's elements (of
    SQL ``type``; empty: the column's own, for PostgreSQL to infer)."""
    bind_list: Callable[[Iterable[Any]], Any]
    """The parameter value of a list (``among`` / ``elements``)."""
    unindexed: Callable[[str], str]
    """A column the planner must not pick an index for (SQLite's unary ``+``)."""
    greatest: str
    """Two-argument maximum: ``max`` on SQLite, ``GREATEST`` on PostgreSQL."""
    least: str
    """Two-argument minimum: ``min`` on SQLite, ``LEAST`` on PostgreSQL."""
    false: str
    """A condition that never holds."""
    row_order: Callable[[str], str]
    """``row_order(table)``: the column that orders the table's rows by insertion
    (SQLite's ``rowid``; an identity column on PostgreSQL)."""
    lock_rows: str
    """Appended to a SELECT whose rows the transaction will update (``FOR UPDATE``);
    empty on SQLite, where the write transaction already holds the file."""
    skip_locked: str
    """As ``lock_rows``, passing over rows another transaction holds (``FOR UPDATE
    SKIP LOCKED``): a claim that finds its row taken moves on instead of waiting."""
    no_limit: int | None
    """The ``LIMIT`` value that means none: ``-1`` on SQLite, ``NULL`` on PostgreSQL."""
    integrity_error: tuple[type[Exception], ...]
    """The driver's exceptions for a violated constraint (unique, foreign key)."""
    unique_violation: tuple[type[Exception], ...]
    """The driver's exceptions for a violated unique constraint only."""

    def ids(self, column: str) -> str:
        """``column`` is one of a list of text ids bound as one parameter."""
        return self.among(column, "text")

    def ids_in_scope(self, column: str = "id", table: str = "") -> str:
        """``column`` of ``table`` (an alias, or none) is among a list parameter, and
        the row's scope is the next two parameters (user, agent). The scope columns are
        kept off their indexes (``unindexed``) so SQLite probes by id."""
        at = f"{table}." if table else ""
        return (
            f"{self.ids(at + column)} AND {self.unindexed(at + 'user_id')} = ?"
            f" AND {self.unindexed(at + 'agent_id')} = ?"
        )
