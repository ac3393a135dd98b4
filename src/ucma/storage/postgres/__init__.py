"""The server backend: every UCMA store in one PostgreSQL database with pgvector, for
several service and worker processes on one database (``pip install ucma[postgres]``).
Dense search is pgvector (exact for small scopes, HNSW for large ones), keyword search
PostgreSQL's full-text index with the SQLite backend's analysis and BM25F scores."""

from ucma.storage.postgres.storage import PostgresStorage

__all__ = ["PostgresStorage"]
