"""Document vectors kept on disk between benchmark runs.

A benchmark that embeds thousands of long messages (BEAM 100K: about 5,700 of
them, assistant replies of several thousand characters embedded in chunks)
spends most of a run in the embedder, although the vectors of a text never
change for a given model. ``DiskVectors`` keeps them in one SQLite file keyed
by the model id and the sha256 of the text (the key the engine's own cache
uses), so a second run pays only for the engine's own work. The file lives
in a gitignored folder (``.artifacts/``); deleting it only costs time.

The engine is not involved: the benchmark's memo embedder asks this cache
before its inner embedder, and every vector it returns is one that embedder
computed for the same text, so what a run measures does not depend on whether
the cache was warm.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ucma.embeddings.cache import text_hash

__all__ = ["DEFAULT_PATH", "DiskVectors"]

DEFAULT_PATH = Path(__file__).resolve().parent.parent / ".artifacts" / "bench_vectors.sqlite"


class DiskVectors:
    """float32 vectors by (model id, text hash) in one SQLite file, created on first use."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, text_hash TEXT NOT NULL,"
            " vector BLOB NOT NULL, PRIMARY KEY (model, text_hash))"
        )
        self._conn.commit()

    def get(self, model: str, texts: Sequence[str], dimension: int) -> dict[str, np.ndarray]:
        """The stored vectors of ``texts`` (by text); texts not stored, or stored with
        another width, are left out."""
        by_hash = {text_hash(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        hashes = list(by_hash)
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            rows = self._conn.execute(
                "SELECT text_hash, vector FROM vectors WHERE model = ? AND text_hash IN "
                f"({','.join('?' * len(chunk))})",
                (model, *chunk),
            ).fetchall()
            for key, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape == (dimension,):
                    found[by_hash[key]] = vector
        return found

    def put(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store each text's vector, replacing any stored under the same key."""
        self._conn.executemany(
            "INSERT OR REPLACE INTO vectors (model, text_hash, vector) VALUES (?, ?, ?)",
            [
                (model, text_hash(t), np.asarray(v, dtype=np.float32).tobytes())
                for t, v in vectors.items()
            ],
        )
        self._conn.commit()

    def close(self) -> None:
        self._conn.close()
