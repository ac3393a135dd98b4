"""``ucma worker`` and ``ucma serve --no-maintenance`` on a real SQLite file: workers
run the maintenance of every scope, two of them at once never consolidate one scope at
the same time, and each gardener job runs in one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.sync import Memory

pytestmark = [pytest.mark.integration]

runner = CliRunner()
USERS = ("alice", "bob", "chen", "dana")


@pytest.fixture
def store(tmp_path: Path, local_embedder) -> Path:
    path = tmp_path / "shared.db"
    with Memory(path, embedder=local_embedder) as memory:
        for user in USERS:
            memory.observe(f"Remember that {user} works at Tailspin Toys.", user_id=user)
    return path


def test_a_worker_runs_rounds_of_maintenance_and_reports_them(store: Path, local_embedder) -> None:
    result = runner.invoke(
        app, ["worker", "--database", str(store), "--rounds", "2", "--interval", "0.05", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    # Every round runs every scope: a round's cycles all finished before the next began.
    assert report["rounds"] == 2 and report["cycles"] == 2 * len(USERS)
    assert sorted(report["gardener_jobs"]) == ["consolidate", "decay", "identity", "prune"]
    assert report["failed_scopes"] == [] and report["events_published"] == 0
    with Memory(store, embedder=local_embedder) as memory:
        runs = memory.sleep_runs(user_id="alice")
        assert {run.trigger for run in runs} == {"all_scopes", "gardener"}


def test_bad_worker_options_are_refused(store: Path) -> None:
    result = runner.invoke(app, ["worker", "--database", str(store), "--interval", "0"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["worker", "--database", str(store), "--nats", "http://x"])
    assert result.exit_code == 1 and "nats://" in result.stderr


def test_two_workers_at_once_share_the_scopes(store: Path, local_embedder) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "ucma.cli.main", "worker", "--database", str(store),
               "--rounds", "3", "--interval", "0.01", "--json"]  # fmt: skip
    workers = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )  # fmt: skip
        for _ in range(2)
    ]
    reports: list[dict[str, Any]] = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        reports.append(json.loads(out))
    jobs = [set(r["gardener_jobs"]) for r in reports]
    assert jobs[0] | jobs[1] == {"consolidate", "decay", "identity", "prune"}
    assert not jobs[0] & jobs[1]
    with Memory(store, embedder=local_embedder) as memory:
        for user in USERS:
            runs = sorted(memory.sleep_runs(user_id=user), key=lambda run: run.started_at)
            assert runs, user
            for before, after in zip(runs, runs[1:], strict=False):
                assert after.started_at >= before.started_at + before.seconds - 0.002, runs


def test_serve_can_leave_maintenance_to_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    import ucma.server

    made: list[dict[str, Any]] = []
    real = ucma.server.create_app

    def spy(**options: Any) -> Any:
        made.append(options)
        return real(**options)

    monkeypatch.setattr(ucma.server, "create_app", spy)
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: None)
    result = runner.invoke(app, ["serve", "--home", str(tmp_path), "--no-maintenance"])
    assert result.exit_code == 0, result.stderr
    assert "maintenance left to ucma worker processes" in result.stdout
    result = runner.invoke(app, ["serve", "--home", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    assert [options["maintenance"] for options in made] == [False, True]
