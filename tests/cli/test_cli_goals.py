"""The goal commands through Typer's runner on a real home folder: add, decompose,
progress, list, suspension by an observed statement, resume, anticipate, pursue and
abandon; a bad call is one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from .alice import run, run_json

pytestmark = pytest.mark.integration


def test_goal_commands(tmp_path: Path) -> None:
    goal = run_json(
        tmp_path,
        "add-goal",
        "Book flights and reserve a hotel for the Lisbon conference",
        "--priority",
        "0.9",
    )
    assert goal["status"] == "active"
    parts = run_json(tmp_path, "decompose-goal", goal["id"])["goals"]
    assert len(parts) == 2  # type: ignore[arg-type]
    first = parts[0]["id"]  # type: ignore[index]
    done = run_json(tmp_path, "update-progress", first, "--progress", "1")
    assert done["status"] == "completed"
    assert run_json(tmp_path, "get-goal", goal["id"])["progress"] == pytest.approx(0.5)
    active = run_json(tmp_path, "get-active-goals")["goals"]
    assert [g["id"] for g in active][0] == goal["id"]  # type: ignore[union-attr,index]

    run(tmp_path, "observe", "The Lisbon conference was called off.")
    suspended = run_json(tmp_path, "goals", "--status", "suspended")["goals"]
    assert goal["id"] in [g["id"] for g in suspended]  # type: ignore[union-attr,index]
    assert run_json(tmp_path, "resume-goal", goal["id"])["status"] == "active"
    gaps = run_json(tmp_path, "anticipate", goal["id"])
    assert "knowledge: hotel" in gaps["gaps"]  # type: ignore[operator]
    plan = run_json(tmp_path, "pursue-goal", goal["id"])
    assert len(plan["steps"]) == 1  # type: ignore[arg-type]
    code, out, _ = run(tmp_path, "goals")
    assert code == 0 and "Lisbon conference" in out
    assert run_json(tmp_path, "abandon-goal", goal["id"])["status"] == "abandoned"

    code, _, err = run(tmp_path, "get-goal", "goal_missing")
    assert code == 1 and "goal_missing" in err
    code, _, err = run(tmp_path, "update-progress", first, "--progress", "1", "--delta", "0.1")
    assert code == 1 and "exactly one" in err
