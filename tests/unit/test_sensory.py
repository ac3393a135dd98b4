"""Sensory buffer: ring overflow, atomic drain under concurrency, validation."""

import asyncio
import threading

import anyio
import pytest

from ucma.errors import ValidationError
from ucma.memory.sensory import SensoryBuffer, SensoryEntry


class FakeClock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.anyio
async def test_ingest_returns_a_stamped_frozen_entry() -> None:
    buffer = SensoryBuffer(4, clock=FakeClock(42.0))
    metadata = {"turn": 1}
    entry = await buffer.ingest("hello", "user", metadata=metadata)
    metadata["turn"] = 2

    assert isinstance(entry, SensoryEntry)
    assert (entry.content, entry.source, entry.modality, entry.timestamp) == (
        "hello",
        "user",
        "text",
        42.0,
    )
    assert entry.metadata == {"turn": 1}
    with pytest.raises(TypeError):
        entry.metadata["turn"] = 3  # type: ignore[index]
    with pytest.raises(AttributeError):
        entry.content = "changed"  # type: ignore[misc]
    assert buffer.size == 1
    assert buffer.total_ingested == 1


@pytest.mark.anyio
async def test_overflow_drops_the_oldest_and_counts_it() -> None:
    buffer = SensoryBuffer(3)
    for index in range(5):
        await buffer.ingest(f"m{index}", "tool_result")

    assert buffer.size == 3
    assert buffer.dropped == 2
    assert buffer.total_ingested == 5
    drained = await buffer.drain()
    assert [entry.content for entry in drained] == ["m2", "m3", "m4"]
    assert buffer.size == 0
    assert await buffer.drain() == []


@pytest.mark.anyio
async def test_ingest_many_is_contiguous_and_all_or_nothing() -> None:
    buffer = SensoryBuffer(3)
    await buffer.ingest("first", "user")
    with pytest.raises(ValidationError):
        await buffer.ingest_many(["ok", 7], "user")  # type: ignore[list-item]
    assert buffer.size == 1
    assert buffer.total_ingested == 1

    entries = await buffer.ingest_many(["a", "b", "c", "d"], "environment")
    assert len(entries) == 4
    assert buffer.dropped == 2
    assert [entry.content for entry in await buffer.drain()] == ["b", "c", "d"]
    assert await buffer.ingest_many([], "user") == []


@pytest.mark.anyio
async def test_invalid_arguments_raise_validation_error() -> None:
    for capacity in (0, -1, True, 2.5):
        with pytest.raises(ValidationError):
            SensoryBuffer(capacity)  # type: ignore[arg-type]
    buffer = SensoryBuffer(2)
    with pytest.raises(ValidationError):
        await buffer.ingest(None, "user")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        await buffer.ingest("text", "")
    with pytest.raises(ValidationError):
        await buffer.ingest("text", "user", modality=" ")
    with pytest.raises(ValidationError):
        await buffer.ingest("text", "user", metadata=[("a", 1)])  # type: ignore[arg-type]
    assert buffer.total_ingested == 0


@pytest.mark.anyio
async def test_drain_is_atomic_under_concurrent_ingest_tasks() -> None:
    buffer = SensoryBuffer(10_000)
    producers, per_producer = 50, 40
    ingested: list[str] = []
    drained: list[str] = []
    done = anyio.Event()

    async def produce(producer: int) -> None:
        for index in range(per_producer):
            entry = await buffer.ingest(f"{producer}:{index}", "tool_result")
            ingested.append(entry.entry_id)
            await anyio.sleep(0)

    async def consume() -> None:
        while not done.is_set():
            drained.extend(entry.entry_id for entry in await buffer.drain())
            await anyio.sleep(0)

    async with anyio.create_task_group() as outer:
        outer.start_soon(consume)
        async with anyio.create_task_group() as inner:
            for producer in range(producers):
                inner.start_soon(produce, producer)
        done.set()
    drained.extend(entry.entry_id for entry in await buffer.drain())

    assert buffer.dropped == 0
    assert len(ingested) == producers * per_producer
    assert len(drained) == len(set(drained))
    assert sorted(drained) == sorted(ingested)


def test_drain_is_atomic_across_threads_and_event_loops() -> None:
    """Each thread runs its own event loop, which an asyncio.Lock could not serve."""
    buffer = SensoryBuffer(500)
    threads, per_thread = 8, 300
    ingested: list[str] = []
    drained: list[str] = []
    record_lock = threading.Lock()
    stop = threading.Event()

    def produce(worker: int) -> None:
        async def run() -> None:
            for index in range(per_thread):
                entry = await buffer.ingest(f"{worker}:{index}", "user")
                with record_lock:
                    ingested.append(entry.entry_id)

        asyncio.run(run())

    def consume() -> None:
        while not stop.is_set():
            drained.extend(entry.entry_id for entry in asyncio.run(buffer.drain()))

    consumer = threading.Thread(target=consume)
    consumer.start()
    workers = [threading.Thread(target=produce, args=(worker,)) for worker in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    consumer.join()
    drained.extend(entry.entry_id for entry in asyncio.run(buffer.drain()))

    assert buffer.total_ingested == threads * per_thread == len(ingested)
    assert len(drained) == len(set(drained))
    assert set(drained) <= set(ingested)
    assert len(drained) + buffer.dropped == buffer.total_ingested
