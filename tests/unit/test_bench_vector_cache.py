"""The benchmarks' on-disk vectors (bench/vector_cache.py): a second run with the same file
embeds nothing it embedded before and gets the very vectors the first run computed; another
model's vectors are not reused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.bench_modules import load_bench

from ucma.embeddings import Embedder, LocalEmbedder

locomo = load_bench("locomo")
vector_cache = load_bench("vector_cache")

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


class Counting(Embedder):
    """The packaged embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: LocalEmbedder, model_id: str | None = None) -> None:
        self.inner = inner
        self.model_id = model_id or inner.model_id
        self.dimension = inner.dimension
        self.embedded: list[str] = []

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        self.embedded += texts
        return await self.inner.embed(texts)


async def test_a_second_run_reads_the_vectors_the_first_computed(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path = tmp_path / "vectors.sqlite"
    texts = ["The deploy key rotates monthly.", "I moved to Lisbon in May.", "x" * 3000]
    first = Counting(local_embedder)
    computed = await locomo.MemoEmbedder(first, vector_cache.DiskVectors(path)).embed(texts)
    assert first.embedded == texts

    again = Counting(local_embedder)
    embedder = locomo.MemoEmbedder(again, vector_cache.DiskVectors(path))
    read = await embedder.embed([texts[1], "A new line.", texts[0]])
    assert again.embedded == ["A new line."]
    assert np.array_equal(read[0], computed[1]) and np.array_equal(read[2], computed[0])


async def test_vectors_are_kept_per_model(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    path = tmp_path / "vectors.sqlite"
    await locomo.MemoEmbedder(Counting(local_embedder), vector_cache.DiskVectors(path)).embed(
        ["a line"]
    )
    other = Counting(local_embedder, model_id="another-model")
    await locomo.MemoEmbedder(other, vector_cache.DiskVectors(path)).embed(["a line"])
    assert other.embedded == ["a line"]
