"""Two gardener processes started at once on one database run each job once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ucma.sync import Memory

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    from pathlib import Path
    from ucma.engine import AsyncMemory

    async def main() -> None:
        go = Path(sys.argv[2])
        async with AsyncMemory(sys.argv[1]) as memory:
            await memory.open()
            while not go.exists():
                time.sleep(0.01)
            report = await memory.run_gardener()
        print(json.dumps(report.to_dict()))

    asyncio.run(main())
    """
)


def test_two_processes(tmp_path: Path, local_embedder) -> None:
    database = tmp_path / "shared.db"
    with Memory(database, user_id="alice", embedder=local_embedder) as memory:
        memory.observe("Remember that Noor works at Tailspin Toys.")
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(database), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)
    go.touch()
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    ran = [set(r["ran"]) for r in reports]
    assert ran[0] | ran[1] == {"decay", "consolidate", "prune", "identity"}
    assert not ran[0] & ran[1], reports
    with Memory(database, user_id="alice", embedder=local_embedder) as memory:
        assert [f.object for f in memory.facts_about("Noor")] == ["Tailspin Toys"]
