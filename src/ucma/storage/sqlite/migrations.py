"""A small, decorator-registered schema migration runner.

Each migration is a function taking the connection, registered with its
version number::

    migrations = Migrations()

    @migrations.migration(1)
    def create_schema(conn: sqlite3.Connection) -> None: ...

``apply`` runs the pending ones in version order inside the caller's
transaction and records each in the ``migrations`` table (version, name,
applied_at), so a crash mid-way leaves the database at its previous version.
A database that has a version this code does not know is newer than the code:
it is refused with ``MigrationError`` rather than half understood.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ucma.errors import MigrationError

__all__ = ["Migration", "MigrationFunction", "Migrations"]

logger = logging.getLogger(__name__)

MigrationFunction = Callable[[sqlite3.Connection], None]

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    function: MigrationFunction


class Migrations:
    """An ordered registry of migrations and the runner that applies them."""

    def __init__(self) -> None:
        self._by_version: dict[int, Migration] = {}

    def migration(self, version: int) -> Callable[[MigrationFunction], MigrationFunction]:
        """Register the decorated function as migration ``version`` (1, 2, ...)."""
        if version < 1:
            raise ValueError(f"migration versions start at 1, got {version}")

        def register(function: MigrationFunction) -> MigrationFunction:
            if version in self._by_version:
                raise ValueError(f"migration {version} is registered twice")
            self._by_version[version] = Migration(version, function.__name__, function)
            return function

        return register

    @property
    def latest(self) -> int:
        return max(self._by_version, default=0)

    def __iter__(self) -> Iterator[Migration]:
        return iter(sorted(self._by_version.values(), key=lambda m: m.version))

    def applied(self, conn: sqlite3.Connection) -> list[int]:
        """Versions recorded in the database, ascending (empty for a new file)."""
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'"
        ).fetchone()
        if exists is None:
            return []
        return [row[0] for row in conn.execute("SELECT version FROM migrations ORDER BY version")]

    def apply(self, conn: sqlite3.Connection, *, now: float | None = None) -> list[int]:
        """Apply pending migrations; the caller holds an open write transaction.

        Returns the versions applied (empty when the schema was current).
        """
        applied = set(self.applied(conn))
        unknown = sorted(applied - set(self._by_version))
        if unknown:
            raise MigrationError(
                f"the database has schema version {max(unknown)} but this version of ucma "
                f"knows migrations up to {self.latest}; upgrade ucma to open it"
            )
        conn.execute(_CREATE_TABLE)
        done: list[int] = []
        for migration in self:
            if migration.version in applied:
                continue
            logger.info("applying migration %d (%s)", migration.version, migration.name)
            try:
                migration.function(conn)
            except sqlite3.Error as exc:
                raise MigrationError(
                    f"migration {migration.version} ({migration.name}) failed: {exc}"
                ) from exc
            conn.execute(
                "INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time() if now is None else now),
            )
            done.append(migration.version)
        return done
