"""CachedEmbedder over a small deterministic embedder and an in-memory persistent store."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence

import anyio
import numpy as np
import pytest

from ucma.embeddings import CachedEmbedder, Embedder, EmbeddingCacheStore, text_hash
from ucma.errors import ConfigError, EmbeddingError, StorageError, ValidationError

DIM = 4


def expected_vector(text: str) -> np.ndarray:
    digest = hashlib.sha256(text.encode()).digest()
    vector = np.frombuffer(digest[: DIM * 4], dtype=np.uint32).astype(np.float64) + 1.0
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class CountingEmbedder(Embedder):
    """Deterministic vectors from a hash; records every batch it is asked for."""

    model_id = "counting-v1"
    dimension = DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.fail_with: Exception | None = None

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.fail_with is not None:
            raise self.fail_with
        # Unnormalised on purpose: the base class normalises.
        return np.stack([expected_vector(text) * 3.0 for text in texts])


class MemoryStore:
    """EmbeddingCacheStore in a dict, recording calls."""

    def __init__(self) -> None:
        self.vectors: dict[tuple[str, str], np.ndarray] = {}
        self.gets: list[list[str]] = []
        self.puts: list[list[str]] = []
        self._lock = threading.Lock()

    def get_embeddings(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            self.gets.append(list(text_hashes))
            return {h: self.vectors[model, h] for h in text_hashes if (model, h) in self.vectors}

    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        with self._lock:
            self.puts.append(list(items))
            for key, vector in items.items():
                self.vectors[model, key] = np.array(vector)


def test_memory_store_satisfies_the_protocol() -> None:
    store: EmbeddingCacheStore = MemoryStore()
    assert store.get_embeddings("m", []) == {}


def test_text_hash_is_sha256_of_utf8() -> None:
    assert text_hash("hello") == hashlib.sha256(b"hello").hexdigest()
    assert text_hash("café") == hashlib.sha256("café".encode()).hexdigest()
    assert len(text_hash("x")) == 64


@pytest.mark.anyio
async def test_results_match_the_inner_embedder_in_input_order() -> None:
    cached = CachedEmbedder(CountingEmbedder())
    vectors = await cached.embed(["a", "b", "c"])
    assert vectors.shape == (3, DIM)
    assert vectors.dtype == np.float32
    for row, text in zip(vectors, ["a", "b", "c"], strict=True):
        np.testing.assert_allclose(row, expected_vector(text), atol=1e-6)
    assert cached.model_id == "counting-v1"
    assert cached.dimension == DIM


@pytest.mark.anyio
async def test_lru_hits_misses_and_eviction_order() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_size=2)
    await cached.embed(["a", "b"])
    await cached.embed(["a"])  # hit: "a" becomes the most recently used
    await cached.embed(["c"])  # evicts "b", the least recently used
    await cached.embed(["a"])  # still cached
    await cached.embed(["b"])  # evicted, so computed again (evicts "c")
    assert inner.calls == [["a", "b"], ["c"], ["b"]]
    stats = cached.stats()
    assert (stats.hits, stats.misses, stats.computed) == (2, 4, 4)
    assert (stats.size, stats.max_size, stats.store_hits) == (2, 2, 0)
    await cached.embed(["a", "b"])
    assert cached.stats().hits == 4
    assert inner.calls == [["a", "b"], ["c"], ["b"]]


@pytest.mark.anyio
async def test_zero_max_size_disables_the_lru() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_size=0)
    await cached.embed(["a"])
    await cached.embed(["a"])
    assert inner.calls == [["a"], ["a"]]
    assert cached.stats().size == 0


def test_negative_max_size_raises_config_error() -> None:
    with pytest.raises(ConfigError):
        CachedEmbedder(CountingEmbedder(), max_size=-1)


@pytest.mark.anyio
async def test_duplicates_in_one_call_are_embedded_once() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    vectors = await cached.embed(["x", "y", "x", "x"])
    assert inner.calls == [["x", "y"]]
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[0], vectors[3])
    np.testing.assert_allclose(vectors[1], expected_vector("y"), atol=1e-6)
    assert (cached.stats().misses, cached.stats().computed) == (2, 2)


@pytest.mark.anyio
async def test_persistent_store_is_filled_and_read_by_a_new_instance() -> None:
    store = MemoryStore()
    first_inner = CountingEmbedder()
    await CachedEmbedder(first_inner, store=store).embed(["a", "b"])
    assert set(store.vectors) == {("counting-v1", text_hash("a")), ("counting-v1", text_hash("b"))}
    np.testing.assert_allclose(store.vectors["counting-v1", text_hash("a")], expected_vector("a"))

    second_inner = CountingEmbedder()
    second = CachedEmbedder(second_inner, store=store)
    vectors = await second.embed(["b", "c", "a"])
    assert second_inner.calls == [["c"]]  # only the text the store lacked, in one batch
    assert store.gets[-1] == [text_hash("b"), text_hash("c"), text_hash("a")]
    assert store.puts[-1] == [text_hash("c")]
    for row, text in zip(vectors, ["b", "c", "a"], strict=True):
        np.testing.assert_allclose(row, expected_vector(text), atol=1e-6)
    stats = second.stats()
    assert (stats.misses, stats.store_hits, stats.computed, stats.size) == (3, 2, 1, 3)

    # Everything is in the LRU now: the store is not consulted again.
    gets_before = len(store.gets)
    await second.embed(["a", "b", "c"])
    assert len(store.gets) == gets_before
    assert second.stats().hits == 3


@pytest.mark.anyio
async def test_store_is_keyed_by_model_id() -> None:
    store = MemoryStore()
    await CachedEmbedder(CountingEmbedder(), store=store).embed(["a"])

    class OtherModel(CountingEmbedder):
        model_id = "other-model"

    other = OtherModel()
    await CachedEmbedder(other, store=store).embed(["a"])
    assert other.calls == [["a"]]


@pytest.mark.anyio
async def test_inner_failure_leaves_both_caches_unchanged() -> None:
    inner = CountingEmbedder()
    store = MemoryStore()
    cached = CachedEmbedder(inner, store=store, max_size=10)
    await cached.embed(["known"])
    store.vectors["counting-v1", text_hash("stored")] = expected_vector("stored")
    store_before = dict(store.vectors)

    inner.fail_with = EmbeddingError("backend down")
    with pytest.raises(EmbeddingError, match="backend down"):
        await cached.embed(["known", "stored", "new"])
    assert store.vectors.keys() == store_before.keys()
    assert cached.stats().size == 1  # "stored" was read but not promoted into the LRU

    inner.fail_with = None
    await cached.embed(["new"])
    assert inner.calls[-1] == ["new"]
    assert cached.stats().size == 2


@pytest.mark.anyio
async def test_zero_vector_from_inner_is_refused_and_not_cached() -> None:
    class ZeroEmbedder(CountingEmbedder):
        async def _embed_texts(self, texts: list[str]) -> np.ndarray:
            self.calls.append(list(texts))
            return np.zeros((len(texts), DIM))

    store = MemoryStore()
    cached = CachedEmbedder(ZeroEmbedder(), store=store)
    with pytest.raises(EmbeddingError, match="zero vectors"):
        await cached.embed(["a"])
    assert store.vectors == {}
    assert cached.stats().size == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    "bad",
    [np.zeros(DIM), np.array([np.nan, 1.0, 0.0, 0.0]), np.ones(DIM + 1), "not a vector"],
)
async def test_unusable_stored_vectors_are_recomputed(bad: object) -> None:
    store = MemoryStore()
    store.vectors["counting-v1", text_hash("a")] = bad  # type: ignore[assignment]
    inner = CountingEmbedder()
    vectors = await CachedEmbedder(inner, store=store).embed(["a"])
    assert inner.calls == [["a"]]
    np.testing.assert_allclose(vectors[0], expected_vector("a"), atol=1e-6)
    np.testing.assert_allclose(store.vectors["counting-v1", text_hash("a")], expected_vector("a"))


@pytest.mark.anyio
async def test_callers_cannot_alter_cached_vectors() -> None:
    cached = CachedEmbedder(CountingEmbedder())
    first = await cached.embed(["a"])
    first[0, :] = 0.0
    again = await cached.embed(["a"])
    np.testing.assert_allclose(again[0], expected_vector("a"), atol=1e-6)


@pytest.mark.anyio
async def test_validation_happens_before_any_lookup() -> None:
    inner = CountingEmbedder()
    store = MemoryStore()
    cached = CachedEmbedder(inner, store=store)
    with pytest.raises(ValidationError):
        await cached.embed(["ok", ""])
    assert (await cached.embed([])).shape == (0, DIM)
    assert inner.calls == [] and store.gets == []


@pytest.mark.anyio
async def test_concurrent_calls_return_consistent_vectors() -> None:
    cached = CachedEmbedder(CountingEmbedder(), max_size=8, store=MemoryStore())
    texts = [f"text {i % 12}" for i in range(40)]
    results: dict[int, np.ndarray] = {}

    async def one(i: int) -> None:
        results[i] = await cached.embed([texts[i], texts[(i + 5) % 40]])

    async with anyio.create_task_group() as group:
        for i in range(40):
            group.start_soon(one, i)
    for i, vectors in results.items():
        np.testing.assert_allclose(vectors[0], expected_vector(texts[i]), atol=1e-6)
        np.testing.assert_allclose(vectors[1], expected_vector(texts[(i + 5) % 40]), atol=1e-6)
    assert cached.stats().size <= 8


@pytest.mark.anyio
async def test_aclose_closes_the_inner_embedder() -> None:
    closed: list[bool] = []

    class Closing(CountingEmbedder):
        async def aclose(self) -> None:
            closed.append(True)

    await CachedEmbedder(Closing()).aclose()
    assert closed == [True]


@pytest.mark.anyio
async def test_new_vectors_are_written_behind_in_batches() -> None:
    store = MemoryStore()
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, store=store, max_size=0, write_batch=3)
    await cached.embed(["a"])
    await cached.embed(["b"])
    assert store.puts == []
    again = await cached.embed(["a"])  # pending vectors answer without the LRU or the store
    assert inner.calls == [["a"], ["b"]]
    np.testing.assert_allclose(again[0], expected_vector("a"), atol=1e-6)
    await cached.embed(["c"])
    assert store.puts == [[text_hash("a"), text_hash("b"), text_hash("c")]]
    await cached.embed(["d"])
    await cached.aclose()
    assert store.puts[-1] == [text_hash("d")]


@pytest.mark.anyio
async def test_a_failed_cache_write_does_not_fail_the_caller(caplog) -> None:
    class BrokenStore(MemoryStore):
        def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None:
            raise StorageError("disk full")

    cached = CachedEmbedder(CountingEmbedder(), store=BrokenStore())
    vectors = await cached.embed(["a"])
    np.testing.assert_allclose(vectors[0], expected_vector("a"), atol=1e-6)
    assert "not stored" in caplog.text
