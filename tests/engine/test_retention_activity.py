"""Seed 003 R20 on the stored state: a recall and an outcome each change what is in
the retention table, through the public API on a real SQLite file."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock
from ucma.memory.retention import SECONDS_PER_DAY

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

T0 = 1_700_000_000.0
CONFIG = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))


async def stored(memory: AsyncMemory, path: Path, memory_id: str) -> tuple[float, float, int]:
    """The row the engine wrote: (stability in days, last review, review count). A
    recall records its review in the background; the storage thread takes work in
    order, so a read through the engine first waits for what was queued before it."""
    await memory.retention(memory_id)
    with closing(sqlite3.connect(path)) as db:
        row = db.execute(
            "SELECT stability, last_reviewed, review_count FROM retention WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
    assert row is not None, memory_id
    return float(row[0]), float(row[1]), int(row[2])


async def test_recall_and_outcomes_change_stored_retention(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path = tmp_path / "r20.db"
    clock = SimulatedClock(T0)
    async with AsyncMemory(
        path, user_id="alice", embedder=local_embedder, clock=clock, config=CONFIG
    ) as memory:
        canary = (await memory.observe("The canary deploy strategy avoided an outage.")).id
        dry_run = (await memory.observe("Skipping the migration dry run caused downtime.")).id
        created = await stored(memory, path, canary)
        assert created[1:] == (T0, 0)

        # A recall is a review: the clock restarts and stability grows (spacing effect).
        clock.advance(days=5)
        faded = await memory.retention(canary)
        assert faded < 1.0
        result = await memory.recall("canary deploy strategy outage", limit=5)
        assert canary in [hit.id for hit in result.hits]
        stability, last_reviewed, reviews = await stored(memory, path, canary)
        assert stability == pytest.approx(created[0] + 0.5 * 5)
        assert (last_reviewed, reviews) == (T0 + 5 * SECONDS_PER_DAY, 1)
        assert await memory.retention(canary) == 1.0 > faded

        # A good outcome lengthens the stability of the memory that fed the decision and
        # a bad one shortens it; neither is a review.
        clock.advance(days=1)
        before = {m: await stored(memory, path, m) for m in (canary, dry_run)}
        retention_before = {m: await memory.retention(m) for m in (canary, dry_run)}
        good = await memory.decide([canary], [1.0], summary="Use a canary deploy")
        bad = await memory.decide([dry_run], [1.0], summary="Skip the dry run")
        await memory.outcome(good.id, 1.0, "user_accepted")
        await memory.outcome(bad.id, -1.0, "user_rejected")
        after = {m: await stored(memory, path, m) for m in (canary, dry_run)}
        # attribution 1.0, level 1 (dampening 1.0), gain 0.5: x 1.5 and / 1.5
        assert after[canary][0] == pytest.approx(before[canary][0] * 1.5)
        assert after[dry_run][0] == pytest.approx(before[dry_run][0] / 1.5)
        assert after[canary][1:] == before[canary][1:]
        assert after[dry_run][1:] == before[dry_run][1:]
        assert await memory.retention(canary) > retention_before[canary]
        assert await memory.retention(dry_run) < retention_before[dry_run]
        history = await memory.history(canary)
        assert [h.event for h in history] == ["outcome"]
        assert history[0].details["stability"] == pytest.approx(after[canary][0])
