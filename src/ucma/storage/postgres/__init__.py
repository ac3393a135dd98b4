"""The server backend: every UCMA store in one PostgreSQL database with pgvector, for
several service and worker processes on one database (``pip install ucma[postgres]``).
Searches answer from each scope's rows kept in the process's memory (the SQLite
backend's caches), checked against what every process committed before each search;
inside a transaction, and for the dense search of large scopes, in the server: pgvector
(exact for small scopes, HNSW for large ones) and PostgreSQL's full-text index with the
SQLite backend's analysis and BM25F scores."""

from __future__ import annotations

from ucma.storage.base import AnnSettings
from ucma.storage.location import StorageLocation
from ucma.storage.postgres.storage import PostgresStorage

__all__ = ["PostgresStorage", "open_storage"]


def open_storage(
    location: StorageLocation, *, dimension: int, ann: AnnSettings, cached_scopes: int
) -> PostgresStorage:
    """The ``ucma.storage`` hook: the database ``location``'s URL names; ``cached_scopes``
    scopes' rows are kept in memory for search (search_cache.py)."""
    return PostgresStorage(location.url, dimension=dimension, ann=ann, cached_scopes=cached_scopes)
