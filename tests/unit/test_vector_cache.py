"""A scope's in-memory vectors: a small scope takes little room, and rows appended one at
a time, in batches, or past a block's size are searched exactly as one matrix would be."""

from __future__ import annotations

import numpy as np
import pytest

from ucma.storage.base import Bm25
from ucma.storage.index.vector_cache import BLOCK_ROWS, FIRST_TAIL_ROWS, ScopeVectors

DIMENSION = 8


def unit_rows(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = rng.normal(size=(count, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def append(cache: ScopeVectors, matrix: np.ndarray, first_seq: int) -> None:
    count = len(matrix)
    cache.append(
        np.arange(first_seq, first_seq + count, dtype=np.int64),
        [f"m{first_seq + i}" for i in range(count)],
        np.zeros(count, dtype=np.int8),
        np.zeros(count, dtype=bool),
        matrix,
        [("text", "")] * count,
    )


def test_a_scope_of_one_row_holds_room_for_a_few_rows_only() -> None:
    cache = ScopeVectors(DIMENSION)
    append(cache, unit_rows(np.random.default_rng(1), 1), 1)
    assert cache.vector_bytes == FIRST_TAIL_ROWS * DIMENSION * 4


def test_growing_one_row_at_a_time_and_in_batches_searches_every_row() -> None:
    rng = np.random.default_rng(7)
    sizes = [1] * 40 + [3, 500, 17, BLOCK_ROWS, 1, BLOCK_ROWS - 1, 2, 900]
    cache = ScopeVectors(DIMENSION)
    matrices = []
    seq = 1
    for size in sizes:
        matrix = unit_rows(rng, size)
        append(cache, matrix, seq)
        matrices.append(matrix)
        seq += size
        # Room grows with the rows held: never more than twice them plus one block.
        assert cache.vector_bytes <= (2 * cache.n + BLOCK_ROWS) * DIMENSION * 4
    everything = np.concatenate(matrices)
    query = unit_rows(rng, 1)[0]
    assert np.allclose(cache.scores(query), everything @ query, atol=1e-6)
    best = cache.search(query, 10, None, include_archived=False)
    expected = np.argsort(-(everything @ query), kind="stable")[:10]
    assert [memory_id for memory_id, _ in best] == [f"m{i + 1}" for i in expected]


def test_a_fork_changes_without_touching_what_it_was_forked_from() -> None:
    rng = np.random.default_rng(3)
    cache = ScopeVectors(DIMENSION)
    rows = unit_rows(rng, BLOCK_ROWS + 5)  # a sealed block and a tail
    append(cache, rows, 1)
    view = cache.fork()
    more = unit_rows(rng, 3)
    append(view, more, BLOCK_ROWS + 6)
    view.set_archived([1], True)
    view.remove([2])
    assert view.search(more[0], 1, None, False)[0][0] == f"m{BLOCK_ROWS + 6}"
    assert "m1" not in {i for i, _ in view.search(rows[0], 3, None, False)}
    # The original holds what it held.
    assert cache.n == BLOCK_ROWS + 5 and cache.live_count == BLOCK_ROWS + 5
    assert cache.search(rows[0], 1, None, False)[0][0] == "m1"
    assert cache.search(rows[1], 1, None, False)[0][0] == "m2"
    assert cache.search(more[0], 1, None, False)[0][0] != f"m{BLOCK_ROWS + 6}"
    own = unit_rows(rng, 2)
    append(cache, own, BLOCK_ROWS + 6)  # the same seqs, its own rows
    assert cache.n == BLOCK_ROWS + 7
    # Each keeps its own rows past the shared ones (the tail is shared, not copied).
    for i, row in enumerate(more):
        assert view.search(row, 1, None, False)[0][0] == f"m{BLOCK_ROWS + 6 + i}"
        assert np.allclose(view.scores(row)[BLOCK_ROWS + 5 + i], 1.0, atol=1e-5)
    for i, row in enumerate(own):
        assert np.allclose(cache.scores(row)[BLOCK_ROWS + 5 + i], 1.0, atol=1e-5)
    assert np.allclose(cache.scores(rows[-1])[: BLOCK_ROWS + 5], rows @ rows[-1], atol=1e-6)
    assert np.allclose(view.scores(rows[-1])[: BLOCK_ROWS + 5], rows @ rows[-1], atol=1e-6)
    with pytest.raises(RuntimeError):
        view.keyword_search(["text"], 1, None, False, Bm25())
