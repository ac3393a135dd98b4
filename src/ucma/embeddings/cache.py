"""A caching wrapper for any :class:`~ucma.embeddings.base.Embedder`.

Vectors are keyed by ``(model_id, text_hash(text))``: an in-process LRU answers first, then an
optional persistent :class:`EmbeddingCacheStore` (the SQLite one lives in ``ucma.storage``), and
only what neither holds is sent to the wrapped embedder, in one batched call.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio.to_thread
import numpy as np

from ucma.embeddings.base import Embedder, check_embeddings
from ucma.errors import ConfigError, EmbeddingError, StorageError
from ucma.lru import LruMap

__all__ = ["CacheStats", "CachedEmbedder", "EmbeddingCacheStore", "text_hash"]

logger = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    """Hex sha256 of the UTF-8 encoding of ``text``: the cache key of its vector."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCacheStore(Protocol):
    """Persistent vectors keyed by model id and :func:`text_hash`.

    Both methods are synchronous (the cache calls them from a worker thread) and must be safe to
    call from several threads. Failures are raised as :class:`~ucma.errors.StorageError`.
    """

    def get_embeddings(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors stored for ``model`` under any of ``text_hashes``; absent hashes are left out."""
        ...

    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        """Store each vector of ``items`` (text hash to float32 vector) for ``model``, replacing
        any vector already stored under the same key."""
        ...


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since construction, per distinct text of each call.

    ``hits`` and ``misses`` are in-process LRU lookups; ``store_hits`` are LRU misses the
    persistent store answered; ``computed`` are texts sent to the wrapped embedder.
    """

    hits: int
    misses: int
    store_hits: int
    computed: int
    size: int
    max_size: int


class CachedEmbedder(Embedder):
    """Wraps ``inner`` with an LRU of ``max_size`` vectors and an optional persistent ``store``.

    Same ``model_id`` and ``dimension`` as ``inner``. Each call embeds every distinct uncached
    text once, in a single call to ``inner``; if that call raises, neither cache changes and the
    error propagates. Vectors a store returns with the wrong shape or non-finite values are
    treated as misses and recomputed. ``max_size=0`` disables the LRU. Safe to share between
    tasks and threads; two concurrent calls with the same new text may both compute it.

    New vectors reach the store ``write_batch`` at a time (write-behind), so a query
    does not wait for a write each time; until then they are answered from memory.
    ``flush`` writes what is pending (``aclose`` does); a failed write is logged
    and dropped, as a cache may lose entries but must not fail a caller.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        max_size: int = 256,
        store: EmbeddingCacheStore | None = None,
        write_batch: int = 1,
    ) -> None:
        if max_size < 0:
            raise ConfigError(f"max_size must be 0 or more, got {max_size}")
        if write_batch < 1:
            raise ConfigError(f"write_batch must be 1 or more, got {write_batch}")
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.max_size = max_size
        self.store = store
        self.write_batch = write_batch
        self._unsaved: dict[str, np.ndarray] = {}
        self._lru: LruMap[str, np.ndarray] = LruMap(max(max_size, 1))
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._store_hits = 0
        self._computed = 0

    def stats(self) -> CacheStats:
        """A snapshot of the counters and the LRU's current size."""
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                store_hits=self._store_hits,
                computed=self._computed,
                size=len(self._lru),
                max_size=self.max_size,
            )

    async def flush(self) -> None:
        """Write the vectors the store does not have yet."""
        with self._lock:
            batch, self._unsaved = self._unsaved, {}
        if batch and self.store is not None:
            try:
                await anyio.to_thread.run_sync(self.store.put_embeddings, self.model_id, batch)
            except StorageError as exc:
                logger.warning("embedding cache: %d vectors not stored: %s", len(batch), exc)

    def clear(self) -> None:
        """Drop every vector held in memory, pending writes included (an erasure: the
        store's copies are erased with it)."""
        with self._lock:
            self._lru.clear()
            self._unsaved.clear()

    async def aclose(self) -> None:
        """Store what is pending and close the wrapped embedder."""
        await self.flush()
        await self.inner.aclose()

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        hashes = [text_hash(text) for text in texts]
        distinct: dict[str, str] = dict(zip(hashes, texts, strict=True))
        found = self._lookup_lru(distinct)

        from_store: dict[str, np.ndarray] = {}
        missing = [key for key in distinct if key not in found]
        if missing and self.store is not None:
            from_store = await self._lookup_store(self.store, missing)
            found.update(from_store)

        computed: dict[str, np.ndarray] = {}
        to_compute = [key for key in distinct if key not in found]
        if to_compute:
            vectors = await self.inner.embed([distinct[key] for key in to_compute])
            computed = {key: _frozen(vectors[row]) for row, key in enumerate(to_compute)}
            found.update(computed)

        with self._lock:
            self._store_hits += len(from_store)
            self._computed += len(computed)
            for key, vector in (*from_store.items(), *computed.items()):
                self._remember(key, vector)
            if self.store is not None:
                self._unsaved.update(computed)
            full = len(self._unsaved) >= self.write_batch
        if full:
            await self.flush()
        logger.debug(
            "embedding cache: %d texts, %d distinct, %d from store, %d computed",
            len(texts),
            len(distinct),
            len(from_store),
            len(computed),
        )
        return np.stack([found[key] for key in hashes])

    def _lookup_lru(self, distinct: Mapping[str, str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in distinct:
                vector = self._lru.get(key)
                if vector is None:
                    vector = self._unsaved.get(key)
                if vector is not None:
                    found[key] = vector
            self._hits += len(found)
            self._misses += len(distinct) - len(found)
        return found

    async def _lookup_store(
        self, store: EmbeddingCacheStore, keys: list[str]
    ) -> dict[str, np.ndarray]:
        stored = await anyio.to_thread.run_sync(store.get_embeddings, self.model_id, keys)
        usable: dict[str, np.ndarray] = {}
        for key in keys:
            vector = stored.get(key)
            if vector is None:
                continue
            try:
                row = check_embeddings(
                    np.asarray(vector).reshape(1, -1),
                    rows=1,
                    dimension=self.dimension,
                    source="embedding cache store",
                )
            except (EmbeddingError, ValueError) as exc:
                logger.warning("ignoring stored vector %s for %s: %s", key[:12], self.model_id, exc)
                continue
            usable[key] = _frozen(row[0])
        return usable

    def _remember(self, key: str, vector: np.ndarray) -> None:
        """Insert into the LRU and evict the least recently used; caller holds the lock."""
        if self.max_size:
            self._lru[key] = vector


def _frozen(vector: np.ndarray) -> np.ndarray:
    """A read-only float32 copy, so no caller can alter a cached vector."""
    copy = np.array(vector, dtype=np.float32, copy=True)
    copy.setflags(write=False)
    return copy
