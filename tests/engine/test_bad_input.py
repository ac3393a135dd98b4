"""Bad input gets a typed error from one tree, and nothing is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ucma.embeddings import Embedder, LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import (
    EmbeddingError,
    NotFoundError,
    ScopeError,
    UCMAError,
    ValidationError,
)

pytestmark = pytest.mark.anyio


class HalfwayFailingEmbedder(Embedder):
    """Embeds the first half of a batch with the real model, then fails."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.model_id = "halfway-failing"
        self.dimension = inner.dimension

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        half = await self.inner.embed(texts[: max(1, len(texts) // 2)])
        assert len(half) >= 1
        raise EmbeddingError("model crashed halfway through the batch")


class ZeroVectorEmbedder(Embedder):
    model_id = "zeros"
    dimension = 384

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        return self._checked(np.zeros((len(texts), self.dimension), dtype=np.float32), len(texts))


async def _count(mem: AsyncMemory) -> int:
    return sum((await mem.stats())["memories"].values())


@pytest.mark.integration
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("x" * 40_000, "limit"),
        (42, "string"),
        (b"bytes are not text", "string"),
        ("broken \udcff surrogate", "UTF-8"),
        ("nul \x00 byte", "NUL"),
    ],
)
async def test_bad_content_is_rejected_and_nothing_is_written(
    memory: AsyncMemory, content, message
):
    with pytest.raises(ValidationError, match=message):
        await memory.observe(content)
    with pytest.raises(ValidationError):
        await memory.observe_many(["a fine observation about deploys", content])
    assert await _count(memory) == 0


@pytest.mark.integration
@pytest.mark.parametrize(
    "kwargs",
    [
        {"tags": "deploy"},
        {"metadata": ["not", "a", "mapping"]},
        {"metadata": {"value": object()}},
        {"timestamp": "yesterday"},
        {"timestamp": float("nan")},
        {"provenance": "rumour"},
        {"session_id": ""},
    ],
)
async def test_wrong_types_are_rejected(memory: AsyncMemory, kwargs):
    with pytest.raises(ValidationError):
        await memory.observe("The build is green again.", **kwargs)
    assert await _count(memory) == 0


async def test_missing_scope(db_path: Path, local_embedder: LocalEmbedder):
    async with AsyncMemory(db_path, embedder=local_embedder) as mem:
        with pytest.raises(ScopeError, match="user_id"):
            await mem.observe("no one owns this")
        with pytest.raises(ScopeError):
            await mem.remember("anything")
        with pytest.raises(ScopeError):
            await mem.observe("empty owner", user_id="  ")
        assert await _count_scope(mem) == 0


async def _count_scope(mem: AsyncMemory) -> int:
    return sum((await mem.stats(user_id="probe"))["memories"].values())


@pytest.mark.integration
async def test_unknown_ids(memory: AsyncMemory):
    for call in (
        memory.get("ep_missing"),
        memory.delete("ep_missing"),
        memory.record_procedure_outcome("proc_missing", True),
        memory.validate_learning("lrn_missing", True),
        memory.related("ep_missing"),
    ):
        with pytest.raises(NotFoundError) as info:
            await call
        assert "missing" in info.value.memory_id
    obs = await memory.observe("A real memory to point at.")
    with pytest.raises(NotFoundError):
        await memory.learn(
            "A lesson with a typo in its evidence.", evidence_ids=[obs.id, "ep_typo"]
        )
    with pytest.raises(NotFoundError):  # an episode is not a procedure
        await memory.record_procedure_outcome(obs.id, True)
    assert await _count(memory) == 1


@pytest.mark.integration
@pytest.mark.parametrize(
    "query",
    ['"NEAR(" AND *', "NOT OR AND", "col:value", '""""', "a\x00b", "🙂🚀", "*", "(", "'; DROP"],
)
async def test_query_syntax_is_never_interpreted(memory: AsyncMemory, query):
    await memory.observe("NEAR the AND gate, col value was logged with a rocket 🚀.")
    hits = await memory.remember(query)
    assert isinstance(hits, list)


@pytest.mark.integration
async def test_oversized_query_and_bad_limits(memory: AsyncMemory):
    with pytest.raises(ValidationError):
        await memory.remember("q" * 100_000)
    for limit in (0, -1, 101, 2.5, True):
        with pytest.raises(ValidationError):
            await memory.remember("anything", limit=limit)
    with pytest.raises(ValidationError):
        await memory.remember("anything", time_range=(10.0, 1.0))


@pytest.mark.integration
async def test_embedder_failing_halfway_leaves_no_partial_records(
    db_path: Path, local_embedder: LocalEmbedder
):
    flaky = HalfwayFailingEmbedder(local_embedder)
    async with AsyncMemory(db_path, user_id="alice", embedder=flaky) as mem:
        batch: Sequence[str] = [f"observation number {i} about the release" for i in range(10)]
        with pytest.raises(EmbeddingError):
            await mem.observe_many(batch)
        with pytest.raises(EmbeddingError):
            await mem.learn("A lesson that never gets stored.")
        assert await _count(mem) == 0
        assert mem._embedder.stats().size == 0  # nothing cached either


async def test_zero_vectors_are_refused(db_path: Path):
    async with AsyncMemory(db_path, user_id="alice", embedder=ZeroVectorEmbedder()) as mem:
        with pytest.raises(EmbeddingError):
            await mem.observe("this would be a zero vector")
        assert await _count(mem) == 0


def test_every_error_has_one_root():
    for error in (ValidationError, ScopeError, NotFoundError, EmbeddingError):
        assert issubclass(error, UCMAError)
