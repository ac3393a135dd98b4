"""Several engines on one database, as several processes would open it: a scope's
sleep cycles are left to whoever holds its lease (taken over when that holder dies or
its claim expires), and an outcome requested at once through two engines is applied
once. Runs on SQLite and, under ``make test-postgres``, on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.conftest import _engine_config

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.engine import AsyncMemory
from ucma.errors import OutcomeAlreadyRecorded
from ucma.events.log import EventType
from ucma.lifecycle.clock import SimulatedClock
from ucma.lifecycle.leases import owner_is_gone, process_owner, scope_lease_name
from ucma.storage import open_storage
from ucma.storage.base import Storage
from ucma.types import Scope

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

ALICE = Scope("alice", "default")
LEASE = 60.0


def _config(database: str | Path) -> UCMAConfig:
    base = _engine_config(database) or UCMAConfig()
    return UCMAConfig(
        privacy=base.privacy,
        consolidation=ConsolidationConfig(on_new_session="off", lease_seconds=LEASE),
    )


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(1_700_000_000.0)


@pytest.fixture
async def engine(database, local_embedder, clock) -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(
        database, user_id="alice", embedder=local_embedder, clock=clock, config=_config(database)
    ) as memory:
        await memory.observe("Remember that Noor works at Tailspin Toys.")
        yield memory


@pytest.fixture
def other_process(database, local_embedder) -> AsyncIterator[Storage]:
    """The database as another process opens it."""
    storage = open_storage(database, dimension=local_embedder.dimension)
    try:
        yield storage
    finally:
        storage.close()


async def test_a_scope_another_process_consolidates_is_left_to_it(
    engine: AsyncMemory, other_process: Storage, clock: SimulatedClock
) -> None:
    name = scope_lease_name(ALICE)
    assert other_process.leases.claim(name, "engine@elsewhere:1:1/x", clock(), lease_seconds=LEASE)
    assert await engine.sleep_all() == []
    report = await engine.run_gardener("consolidate")
    assert report.ran["consolidate"]["held_elsewhere"] == 1
    assert await engine.sleep_runs() == []
    # Its holder stopped renewing: once the claim expires, the scope is taken over.
    clock.advance(seconds=LEASE + 1)
    [taken] = await engine.sleep_all()
    assert (taken.user_id, taken.error) == ("alice", None)
    [lease] = other_process.leases.list(name)
    assert (lease.owner, lease.finished_at, lease.claims) == (None, clock(), 2)


async def test_a_requested_sleep_waits_for_the_other_process_cycle(
    engine: AsyncMemory, other_process: Storage, clock: SimulatedClock
) -> None:
    name = scope_lease_name(ALICE)
    holder = "engine@elsewhere:1:1/x"
    assert other_process.leases.claim(name, holder, clock(), lease_seconds=LEASE)
    sleeping = asyncio.create_task(engine.sleep())
    done, _ = await asyncio.wait({sleeping}, timeout=1.0)
    assert not done  # polling the lease the other process holds
    clock.advance(seconds=5)
    released_at = clock()
    other_process.leases.release(name, holder, released_at, finished=True)
    report = await asyncio.wait_for(sleeping, timeout=60)
    assert report.error is None
    [run] = await engine.sleep_runs()
    assert run.started_at >= released_at


async def test_a_dead_holder_on_this_machine_is_taken_over_at_once(
    engine: AsyncMemory, other_process: Storage, clock: SimulatedClock
) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                              capture_output=True, text=True)  # fmt: skip
    pid = int(finished.stdout)
    mine = process_owner("engine")
    dead = mine.replace(f":{os.getpid()}/", f":{pid}/")
    assert owner_is_gone(dead)
    assert not owner_is_gone(mine)
    assert not owner_is_gone("engine@another-host:1:1/x")
    assert not owner_is_gone("not an owner name")
    name = scope_lease_name(ALICE)
    assert other_process.leases.claim(name, dead, clock(), lease_seconds=LEASE)
    [report] = await engine.sleep_all()  # the claim has not expired, its holder is gone
    assert report.error is None


async def test_an_outcome_requested_at_once_through_two_engines_is_applied_once(
    database, local_embedder, clock: SimulatedClock
) -> None:
    config = _config(database)
    async with (
        AsyncMemory(database, user_id="alice", embedder=local_embedder, clock=clock,
                    config=config) as first,
        AsyncMemory(database, user_id="alice", embedder=local_embedder, clock=clock,
                    config=config) as second,
    ):  # fmt: skip
        lesson = await first.learn("Redis works well for the caching layer", impact_score=0.6)
        traces = [await first.decide([lesson.id], summary=f"decision {i}") for i in range(12)]
        for trace in traces:
            results = await asyncio.gather(
                first.outcome(trace.id, 0.5, "user_accepted"),
                second.outcome(trace.id, 0.5, "user_accepted"),
                second.outcome(trace.id, -0.5, "user_rejected"),
                return_exceptions=True,
            )
            applied = [r for r in results if not isinstance(r, BaseException)]
            refused = [r for r in results if isinstance(r, BaseException)]
            assert len(applied) == 1, results
            assert all(isinstance(r, OutcomeAlreadyRecorded) for r in refused), results
        updates = await first.salience_history(lesson.id)
        assert sorted(u.trace_id for u in updates) == sorted(t.id for t in traces)
        observed = await second.events(types=[EventType.OUTCOME_OBSERVED.value])
        assert sorted(e.payload["trace_id"] for e in observed) == sorted(t.id for t in traces)
