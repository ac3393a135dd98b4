"""The operations the memory inspector added to the engine: archive and unarchive one
memory, and a memory's forgetting curve ahead, on a real SQLite file with a simulated
clock."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, ValidationError
from ucma.lifecycle.clock import SimulatedClock

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

T0 = 1_700_000_000.0
NOTE = "The staging database listens on port 5433 since the upgrade."


async def test_archive_and_unarchive_one_memory(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(
        tmp_path / "ucma.db", embedder=local_embedder, user_id="alice"
    ) as memory:
        stored = await memory.observe(NOTE)
        archived = await memory.archive(stored.id)
        assert archived.archived_at is not None
        assert [h.id for h in await memory.remember("staging database port")] == []
        assert (await memory.get_all()).total == 0
        assert (await memory.get_all(include_archived=True)).total == 1
        assert (await memory.archive(stored.id)).archived_at == archived.archived_at
        restored = await memory.unarchive(stored.id)
        assert restored.archived_at is None
        assert stored.id in [h.id for h in await memory.remember("staging database port")]
        events = [e.event for e in await memory.history(stored.id)]
        assert events[-2:] == ["archived", "restored"]
        with pytest.raises(NotFoundError):
            await memory.archive("ep_nowhere")
        with pytest.raises(NotFoundError):
            await memory.unarchive(stored.id, user_id="bob")


async def test_retention_curve_follows_the_forgetting_curve(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    async with AsyncMemory(
        tmp_path / "ucma.db", embedder=local_embedder, user_id="alice", clock=clock
    ) as memory:
        stored = await memory.observe(NOTE)
        clock.advance(days=2)
        now, later, much_later = await memory.retention_curve(stored.id, [0, 1, 10.5])
        assert now == pytest.approx(await memory.retention(stored.id))
        assert 1 >= now > later > much_later > 0
        # exp(-t / S): equal steps multiply retention by the same factor
        step = await memory.retention_curve(stored.id, [0, 5, 10])
        assert step[1] / step[0] == pytest.approx(step[2] / step[1])
        assert math.log(step[1] / step[0]) < 0
        for bad in ([-1], [math.inf], ["soon"], [True], "0,1", [0.0] * 1001):
            with pytest.raises(ValidationError):
                await memory.retention_curve(stored.id, bad)  # type: ignore[arg-type]
        with pytest.raises(NotFoundError):
            await memory.retention_curve("ep_nowhere", [0])
