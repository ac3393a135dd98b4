"""The embedded backend: every UCMA store in one SQLite file (WAL, FTS5, numpy vectors)."""

from ucma.storage.sqlite.storage import SQLiteStorage

__all__ = ["SQLiteStorage"]
