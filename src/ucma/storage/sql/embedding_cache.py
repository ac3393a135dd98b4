"""``EmbeddingCacheStore`` over SQL: float32 blobs keyed by (model, text hash).

The cache is shared by every scope (a text's embedding does not depend on who
wrote it) and is independent of the store's embedding dimension, so several
models can share one database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ucma.errors import ValidationError
from ucma.storage.base import EmbeddingCacheStore
from ucma.storage.sql.codec import vector_blob, vector_from_blob
from ucma.storage.sql.connection import Database

__all__ = ["SqlEmbeddingCacheStore"]


class SqlEmbeddingCacheStore(EmbeddingCacheStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    def get_embeddings(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if not text_hashes:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT text_hash, vector FROM embedding_cache"
                f" WHERE model = ? AND {self._sql.ids('text_hash')}",
                (model, self._sql.bind_list(dict.fromkeys(text_hashes))),
            ).fetchall()
        return {text_hash: vector_from_blob(blob) for text_hash, blob in rows}

    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        if not items:
            return
        rows = []
        for text_hash, vector in items.items():
            array = np.asarray(vector, dtype=np.float32)
            if array.ndim != 1 or not np.isfinite(array).all():
                raise ValidationError(
                    f"embedding for {text_hash!r} must be a finite 1-D vector, "
                    f"got shape {array.shape}"
                )
            rows.append((model, text_hash, vector_blob(array)))
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO embedding_cache (model, text_hash, vector) VALUES (?, ?, ?)"
                " ON CONFLICT (model, text_hash) DO UPDATE SET vector = excluded.vector",
                rows,
            )
