"""The engine's storage threads follow ``Storage.concurrency``: a store of one connection
(SQLite's ``:memory:``) runs every call on one thread in order; a store that takes N calls
at once (a SQLite file: readers beside one writer; a pool) gets N threads, and a storage
call still sees the writes queued before it."""

from __future__ import annotations

import asyncio
import sys
import threading
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError
from ucma.storage import BACKENDS, StorageLocation, open_storage
from ucma.storage.base import AnnSettings
from ucma.storage.sqlite import SQLiteStorage
from ucma.storage.sqlite.storage import READ_THREADS

pytestmark = pytest.mark.anyio

DIMENSION = 384
WAIT = 30.0  # seconds a blocked thread waits before the test fails instead of hanging


@pytest.fixture
def pooled(tmp_path: Path) -> Iterator[SQLiteStorage]:
    """A SQLite store that declares three storage threads (SQLite's lock still
    serialises its statements; the engine's threads are what is tested)."""
    storage = SQLiteStorage(tmp_path / "pooled.db", dimension=DIMENSION)
    storage.concurrency = 3
    yield storage
    storage.close()


@pytest.fixture
async def pooled_memory(
    pooled: SQLiteStorage, local_embedder: LocalEmbedder
) -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(
        "unused.db", user_id="alice", embedder=local_embedder, storage=pooled
    ) as memory:
        yield memory


async def test_a_sqlite_file_runs_its_calls_on_several_threads(memory: AsyncMemory) -> None:
    together = threading.Barrier(READ_THREADS, timeout=WAIT)

    def call() -> str:
        together.wait()  # BrokenBarrierError unless READ_THREADS calls run at once
        return threading.current_thread().name

    names = await asyncio.gather(*(memory._run(call) for _ in range(READ_THREADS)))
    assert len(set(names)) == READ_THREADS


async def test_sqlite_in_memory_calls_run_on_one_thread_in_order(
    local_embedder: LocalEmbedder,
) -> None:
    order: list[int] = []

    def call(n: int) -> str:
        order.append(n)
        return threading.current_thread().name

    async with AsyncMemory(":memory:", user_id="alice", embedder=local_embedder) as memory:
        names = await asyncio.gather(*(memory._run(call, n) for n in range(20)))
    assert order == list(range(20))
    assert set(names) == {"ucma-storage_0"}


async def test_a_store_with_three_threads_runs_three_calls_at_once(
    pooled_memory: AsyncMemory,
) -> None:
    together = threading.Barrier(3, timeout=WAIT)

    def call() -> str:
        together.wait()  # BrokenBarrierError unless three calls run at the same time
        return threading.current_thread().name

    names = await asyncio.gather(*(pooled_memory._run(call) for _ in range(3)))
    assert len(set(names)) == 3
    await pooled_memory.observe("Greta prefers tea in the morning")
    hits = await pooled_memory.recall("what does Greta drink")
    assert any("tea" in hit.content for hit in hits.hits)


async def test_a_call_waits_for_the_writes_queued_before_it(pooled_memory: AsyncMemory) -> None:
    release = threading.Event()
    order: list[str] = []

    def queued_write() -> None:
        release.wait(WAIT)
        order.append("queued")

    pooled_memory._queue(queued_write)
    read = asyncio.create_task(pooled_memory._run(order.append, "read"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert order == []
    release.set()
    await read
    assert order == ["queued", "read"]


@pytest.mark.parametrize("concurrency", [0, -2, 1.5, True, "4"])
async def test_a_store_must_declare_a_positive_integer(
    tmp_path: Path,
    local_embedder: LocalEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    concurrency: object,
) -> None:
    closed: list[SQLiteStorage] = []

    class Declared(SQLiteStorage):
        def close(self) -> None:
            closed.append(self)
            super().close()

    Declared.concurrency = concurrency  # type: ignore[assignment]

    def hook(
        location: StorageLocation, *, dimension: int, ann: AnnSettings, cached_scopes: int
    ) -> Declared:
        return Declared(tmp_path / "declared.db", dimension=dimension)

    module = types.ModuleType("ucma_test_declared")
    module.open_storage = hook  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ucma_test_declared", module)
    monkeypatch.setitem(BACKENDS, "declared", "ucma_test_declared")
    with pytest.raises(ConfigError, match="concurrency must be a positive integer"):
        open_storage("declared://x", dimension=DIMENSION)
    assert len(closed) == 1

    memory = AsyncMemory("declared://x", embedder=local_embedder)
    for _ in range(2):  # a failed open leaves the memory closed, not half-open
        with pytest.raises(ConfigError, match="concurrency"):
            await memory.open()
    await memory.close()
    assert len(closed) == 3
