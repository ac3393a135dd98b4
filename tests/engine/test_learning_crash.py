"""Killing the process in the middle of an outcome leaves all of it or none of it.

A child process records decisions and outcomes on a real SQLite file. In the
child only (the script below, not library code), ``add_updates`` of the trace
store is wrapped so that, on the chosen outcome, it announces itself and
blocks: by then the trace's outcome, the first salience updates and their
events are written inside the open transaction. The parent SIGKILLs it there,
reopens the file and checks that the outcome left no trace at all, that the
earlier outcome is complete, and that replay equals the live state.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ucma.engine import AsyncMemory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from ucma.engine import AsyncMemory

    async def main(path):
        async with AsyncMemory(path, user_id="alice") as mem:
            ids = [(await mem.observe(f"Advice {i}: pin the database snapshot {i}")).id
                   for i in range(3)]
            first = await mem.decide(ids, [0.5, 0.3, 0.2], summary="first decision")
            await mem.outcome(first.id, 0.8, "task_completed")
            second = await mem.decide(ids, [0.2, 0.3, 0.5], summary="second decision")
            print(json.dumps({"ids": ids, "first": first.id, "second": second.id}), flush=True)

            store = mem._storage.traces
            original = store.add_updates

            def add_updates_then_hang(scope, updates):
                original(scope, updates)
                print("IN_TRANSACTION", flush=True)
                time.sleep(600)

            store.add_updates = add_updates_then_hang
            await mem.outcome(second.id, -0.9, "task_failed")

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_sigkill_during_outcome_is_all_or_nothing(tmp_path: Path, local_embedder) -> None:
    db = tmp_path / "crash.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        info = json.loads(child.stdout.readline())
        assert child.stdout.readline().strip() == "IN_TRANSACTION"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
        if child.stderr is not None:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    async with AsyncMemory(db, user_id="alice", embedder=local_embedder) as mem:
        killed = await mem.trace(info["second"])
        assert killed.outcome_observed is False
        done = await mem.trace(info["first"])
        assert done.outcome_quality == pytest.approx(0.8)
        for memory_id, share in zip(info["ids"], [0.5, 0.3, 0.2], strict=True):
            history = await mem.salience_history(memory_id)
            assert [u.trace_id for u in history] == [info["first"]]
            expected = 0.8 * share * 0.1  # level 1: dampening 1.0
            assert (await mem.get(memory_id)).outcome_adjustment == pytest.approx(expected)
        events = await mem.events()
        outcomes = [e for e in events if e.type == "outcome.observed"]
        assert [e.payload["trace_id"] for e in outcomes] == [info["first"]]
        assert sum(e.type == "salience.adjusted" for e in events) == 3
        projection = await mem.replay()
        assert projection.matches_live, projection.mismatches
        # The interrupted decision can still be judged after the crash.
        report = await mem.outcome(info["second"], -0.9, "task_failed")
        assert len(report.updates) == 3
        assert (await mem.replay()).matches_live
