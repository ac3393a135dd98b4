"""BatchingEmbedder: concurrent callers share model calls, each gets its own rows.

Concurrency here is deterministic, never timed: a gated embedder holds its model call open
until the test opens the gate, and tasks created before ``loop.call_soon(gate.set)`` have
queued their texts before the gate opens (the event loop runs ready callbacks in order).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.embeddings.test_cache import DIM
from tests.embeddings.test_cache import expected_vector as expected

from ucma.config import EmbeddingConfig, UCMAConfig
from ucma.embeddings import BatchingEmbedder, Embedder
from ucma.embeddings.batching import plan_batch
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, EmbeddingError, ValidationError

pytestmark = pytest.mark.anyio


class GatedEmbedder(Embedder):
    """Records each model call; the first waits for ``gate``; refuses ``poison``."""

    model_id = "gated-v1"
    dimension = DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.started = asyncio.Event()
        self.arrivals: asyncio.Queue[list[str]] = asyncio.Queue()  # each model call's texts
        self.gate = asyncio.Event()
        self.in_flight = 0
        self.most_in_flight = 0

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            self.started.set()
            self.arrivals.put_nowait(list(texts))
            await self.gate.wait()
            if "poison" in texts:
                raise EmbeddingError("the backend refused a text")
            return np.stack([expected(text) for text in texts])
        finally:
            self.in_flight -= 1


def open_batcher(max_batch: int = 64) -> tuple[GatedEmbedder, BatchingEmbedder]:
    """A batcher over a gated embedder whose gate is open."""
    inner = GatedEmbedder()
    inner.gate.set()
    return inner, BatchingEmbedder(inner, max_batch=max_batch)


async def gated_start(
    batching: BatchingEmbedder, inner: GatedEmbedder, first: list[str]
) -> asyncio.Task[np.ndarray]:
    """Start a call of ``first`` and return once its model call holds the gate."""
    task = asyncio.create_task(batching.embed(first))
    await inner.started.wait()
    return task


def open_gate_after_queued(inner: GatedEmbedder) -> None:
    """Open the gate after the tasks created so far have queued their texts."""
    asyncio.get_running_loop().call_soon(inner.gate.set)


async def test_callers_of_one_moment_share_one_model_call() -> None:
    inner, batching = open_batcher()
    texts = [f"text {i}" for i in range(10)]

    results = await asyncio.gather(*(batching.embed([text]) for text in texts))

    assert inner.calls == [texts]
    for text, rows in zip(texts, results, strict=True):
        np.testing.assert_allclose(rows, expected(text)[None, :], atol=1e-6)
    assert (batching.batches, batching.texts) == (1, 10)


async def test_callers_arriving_during_a_model_call_share_the_next() -> None:
    inner = GatedEmbedder()
    batching = BatchingEmbedder(inner)
    first = await gated_start(batching, inner, ["first"])
    later = [asyncio.create_task(batching.embed([t, t + " too"])) for t in ("b", "c", "d")]
    open_gate_after_queued(inner)

    results = await asyncio.gather(first, *later)

    assert inner.calls == [["first"], ["b", "b too", "c", "c too", "d", "d too"]]
    assert inner.most_in_flight == 1
    for text, rows in zip(("b", "c", "d"), results[1:], strict=True):
        np.testing.assert_allclose(
            rows, np.stack([expected(text), expected(text + " too")]), atol=1e-6
        )


async def test_a_large_call_is_spread_over_batches_and_small_ones_are_not_held_back() -> None:
    inner = GatedEmbedder()
    batching = BatchingEmbedder(inner, max_batch=4)
    first = await gated_start(batching, inner, ["first"])
    big = [f"big {i}" for i in range(10)]
    large = asyncio.create_task(batching.embed(big))
    small = [asyncio.create_task(batching.embed([f"small {i}"])) for i in range(2)]
    open_gate_after_queued(inner)

    large_rows, *_ = await asyncio.gather(large, first, *small)

    assert inner.calls == [
        ["first"],
        ["big 0", "big 1", "small 0", "small 1"],
        ["big 2", "big 3", "big 4", "big 5"],
        ["big 6", "big 7", "big 8", "big 9"],
    ]
    np.testing.assert_allclose(large_rows, np.stack([expected(t) for t in big]), atol=1e-6)


async def test_a_failed_shared_batch_fails_only_the_caller_whose_text_was_refused() -> None:
    inner = GatedEmbedder()
    batching = BatchingEmbedder(inner)
    first = await gated_start(batching, inner, ["first"])
    tasks = [asyncio.create_task(batching.embed([t])) for t in ("fine", "poison", "also fine")]
    open_gate_after_queued(inner)

    results = await asyncio.gather(first, *tasks, return_exceptions=True)

    assert isinstance(results[2], EmbeddingError)
    np.testing.assert_allclose(results[1], expected("fine")[None, :], atol=1e-6)
    np.testing.assert_allclose(results[3], expected("also fine")[None, :], atol=1e-6)
    assert inner.calls[1] == ["fine", "poison", "also fine"]
    assert inner.calls[2:] == [["fine"], ["poison"], ["also fine"]]


async def test_a_failed_batch_of_one_caller_is_not_tried_again() -> None:
    inner, batching = open_batcher()

    with pytest.raises(EmbeddingError, match="refused"):
        await batching.embed(["poison", "others"])

    assert inner.calls == [["poison", "others"]]


async def test_a_cancelled_caller_leaves_the_queue() -> None:
    inner = GatedEmbedder()
    batching = BatchingEmbedder(inner)
    first = await gated_start(batching, inner, ["first"])
    gone = asyncio.create_task(batching.embed(["never embedded"]))
    kept = asyncio.create_task(batching.embed(["kept"]))
    await asyncio.wait([gone, kept], timeout=0)  # let both queue their texts
    gone.cancel()
    open_gate_after_queued(inner)

    await asyncio.gather(first, kept)

    assert gone.cancelled()
    assert inner.calls == [["first"], ["kept"]]


async def test_bad_input_is_refused_before_it_joins_a_batch() -> None:
    inner, batching = open_batcher()

    with pytest.raises(ValidationError, match="empty"):
        await batching.embed(["fine", "  "])

    assert inner.calls == []
    assert (await batching.embed([])).shape == (0, DIM)


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="max_batch"):
        BatchingEmbedder(GatedEmbedder(), max_batch=0)
    with pytest.raises(ConfigError, match="capacity"):
        plan_batch([1], 0)


@given(
    st.lists(st.integers(min_value=1, max_value=500), max_size=40),
    st.integers(min_value=1, max_value=128),
)
def test_a_plan_fills_the_batch_fairly(remaining: list[int], capacity: int) -> None:
    shares = plan_batch(remaining, capacity)

    assert len(shares) == len(remaining)
    assert sum(shares) == min(capacity, sum(remaining))
    assert all(0 <= share <= count for share, count in zip(shares, remaining, strict=True))
    if len(remaining) <= capacity:
        assert all(share >= 1 for share in shares)  # every waiting call moves on
    else:
        assert shares[:capacity] == [1] * capacity  # the earliest calls first


async def test_concurrent_engine_queries_share_a_model_call(tmp_path: Path) -> None:
    inner = GatedEmbedder()
    inner.gate.set()
    config = UCMAConfig(embedding=EmbeddingConfig(persistent_cache=False))
    async with AsyncMemory(tmp_path / "m.db", embedder=inner, config=config) as memory:
        await memory.remember("warm up the scope", user_id="u")
        queries = [f"what did we say about topic {i}?" for i in range(5)]
        inner.calls.clear()

        answers = await asyncio.gather(*(memory.remember(q, user_id="u") for q in queries))

    assert answers == [[]] * 5
    assert [call for call in inner.calls if set(queries) & set(call)] == [queries]


class TwoSlotEmbedder(GatedEmbedder):
    """A backend that makes the most of two calls at once."""

    parallel_calls = 2


async def test_calls_run_in_parallel_up_to_the_backends_slots_then_batch() -> None:
    inner = TwoSlotEmbedder()
    batching = BatchingEmbedder(inner)
    first = asyncio.create_task(batching.embed(["first"]))
    assert await inner.arrivals.get() == ["first"]
    second = asyncio.create_task(batching.embed(["second"]))
    assert await inner.arrivals.get() == ["second"]  # the second slot, while the first waits
    later = [asyncio.create_task(batching.embed([t])) for t in ("c", "d", "e")]
    open_gate_after_queued(inner)

    await asyncio.gather(first, second, *later)

    assert inner.calls[:2] == [["first"], ["second"]]
    assert inner.most_in_flight == 2
    assert sorted(map(tuple, inner.calls[2:])) == [("c", "d", "e")]


async def test_a_lone_large_call_uses_every_slot() -> None:
    inner = TwoSlotEmbedder()
    batching = BatchingEmbedder(inner, max_batch=3)
    texts = [f"text {i}" for i in range(7)]

    call = asyncio.create_task(batching.embed(texts))
    assert await inner.arrivals.get() == texts[0:3]
    assert await inner.arrivals.get() == texts[3:6]  # on the second slot, the first still busy
    inner.gate.set()
    rows = await call

    assert inner.calls == [texts[0:3], texts[3:6], texts[6:7]]
    assert inner.most_in_flight == 2
    np.testing.assert_allclose(rows, np.stack([expected(t) for t in texts]), atol=1e-6)


async def test_a_large_call_goes_shortest_first_and_comes_back_in_order() -> None:
    inner, batching = open_batcher(max_batch=2)
    texts = ["a long text " * 20, "short", "another long one " * 20, "tiny"]

    rows = await batching.embed(texts)

    assert inner.calls == [["tiny", "short"], [texts[0], texts[2]]]
    np.testing.assert_allclose(rows, np.stack([expected(t) for t in texts]), atol=1e-6)
