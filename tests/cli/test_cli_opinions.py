"""The opinion commands through Typer's runner: retain, list, find, show, history,
reinforce and weaken, on a real home folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from .alice import run, run_json

pytestmark = pytest.mark.integration


def test_opinion_commands(tmp_path: Path) -> None:
    retained = run_json(
        tmp_path, "retain", "Alice prefers dark mode.", "--bank", "opinion", "--topic", "theme"
    )
    assert retained["stored"] is True
    [held] = run_json(tmp_path, "opinions")["opinions"]  # type: ignore[misc]
    assert held["topic"] == "theme" and held["confidence"] == pytest.approx(0.6)
    found = run_json(tmp_path, "find-opinion", "theme")["opinion"]
    assert found["id"] == held["id"]  # type: ignore[index]
    up = run_json(tmp_path, "reinforce-opinion", held["id"], "--weight", "1")
    assert up["confidence"] == pytest.approx(0.8)
    run_json(tmp_path, "weaken-opinion", held["id"], "--weight", "1")
    run_json(tmp_path, "weaken-opinion", held["id"], "--weight", "1")
    replaced = run_json(
        tmp_path, "weaken-opinion", held["id"], "--weight", "1", "--stance", "light mode"
    )
    assert replaced["stance"] == "light mode" and replaced["replaces"] == held["id"]
    chain = run_json(tmp_path, "opinion-history", replaced["id"])["opinions"]
    assert [o["status"] for o in chain] == ["replaced", "current"]  # type: ignore[union-attr]
    shown = run_json(tmp_path, "get-opinion", held["id"])
    assert shown["status"] == "replaced"
    assert run_json(tmp_path, "opinions-below", "0.5")["opinions"] == []
    code, out, _ = run(tmp_path, "opinions", "--include-replaced")
    assert code == 0 and "light mode" in out and "theme" in out
    code, _, err = run(tmp_path, "get-opinion", "op_missing")
    assert code == 1 and "op_missing" in err
