"""The embedded backend: every UCMA store in one SQLite file (WAL), searched
through per-scope numpy caches of vectors and BM25 postings."""

from ucma.storage.sqlite.storage import SQLiteStorage

__all__ = ["SQLiteStorage"]
