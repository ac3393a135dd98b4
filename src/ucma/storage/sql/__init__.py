"""SQL written once for both relational backends.

The stores here hold every query that SQLite and PostgreSQL run alike, written
against ``connection.Database`` (a connection protocol with transactions) and a
``dialect.Dialect`` for the few words the two say differently. What truly differs
(SQLite's FTS-free cache and triggers, PostgreSQL's tsvector and pgvector search,
PRAGMAs and the pool) stays in ``ucma.storage.sqlite`` and ``ucma.storage.postgres``.
"""
