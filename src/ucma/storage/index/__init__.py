"""Backend-neutral search state, for any backend to reuse or not.

Nothing here speaks to a database: a backend loads its rows into these and keeps
them in step with what it commits.

- ``vector_cache.ScopeVectors``: one scope's rows in memory (float32 blocks, ids,
  kinds, archived and liveness flags), exact top-k cosine search, and the keyword
  index at the same positions.
- ``keyword_cache``: text analysis (``analyze``) and ``ScopeTerms``, BM25F over a
  scope's content and context fields.
- ``hnsw``: per-scope HNSW graphs (usearch) for approximate dense search of large
  scopes, built in the background (``HnswBuilder``).
- ``search_context``: the second keyword field of an episode (its session's
  preceding turn and its date in words).

The SQLite backend keeps these true with its ``VectorIndex``
(``ucma.storage.sqlite.vectors``): scope versions, pending changes applied on
commit, reloads after another connection's writes.
"""
