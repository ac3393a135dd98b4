"""The embedded backend: every UCMA store in one SQLite file (WAL), searched
through per-scope numpy caches of vectors and BM25 postings."""

from __future__ import annotations

from ucma.errors import ConfigError
from ucma.storage.base import AnnSettings
from ucma.storage.location import StorageLocation
from ucma.storage.sqlite.storage import SQLiteStorage

__all__ = ["SQLiteStorage", "open_storage"]


def open_storage(
    location: StorageLocation, *, dimension: int, ann: AnnSettings, cached_scopes: int
) -> SQLiteStorage:
    """The ``ucma.storage`` hook: the SQLite file ``location`` names. Its folder must
    exist (``StorageError`` otherwise)."""
    if location.path is None:
        raise ConfigError(f"a SQLite store is a file; {location} names none")
    return SQLiteStorage(location.path, dimension=dimension, ann=ann, cached_scopes=cached_scopes)
