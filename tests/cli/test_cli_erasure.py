"""``ucma forget-person``, ``forget-scope``, ``backup`` and ``restore`` through Typer's
runner on a real SQLite file in a tmp home."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app

pytestmark = pytest.mark.integration

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_forget_a_person_then_back_up_and_restore(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    for text in ("Ines Duarte lives in Porto.", "The printer on floor 2 jams on A3 paper."):
        code, _, err = run("observe", text, "--user", "alice", *home)
        assert code == 0, err

    code, out, err = run("forget-person", "Ines Duarte", "--user", "alice", *home, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["target"] == "person" and report["counts"]["episodic"] == 1
    assert report["checkpointed"] and report["vacuumed"]

    code, out, err = run("backup", str(tmp_path / "b.db"), *home)
    assert code == 0, err
    assert "backed up" in out
    code, _, err = run("backup", str(tmp_path / "b.db"), *home)
    assert code == 1 and "exists" in err
    code, out, err = run("restore", str(tmp_path / "b.db"), str(tmp_path / "r.db"))
    assert code == 0, err
    assert "restored" in out
    conn = sqlite3.connect(tmp_path / "r.db")
    try:
        contents = [r[0] for r in conn.execute("SELECT content FROM memories")]
    finally:
        conn.close()
    assert any("printer" in c for c in contents)
    assert not any("Ines" in c for c in contents)


def test_forget_scope_needs_yes(tmp_path: Path) -> None:
    home = ("--home", str(tmp_path / "home"))
    code, _, err = run("observe", "Bob parks in bay 14 on weekdays.", "--user", "bob", *home)
    assert code == 0, err
    code, _, err = run("forget-scope", "--user", "bob", *home)
    assert code == 1 and "--yes" in err
    code, out, err = run("forget-scope", "--user", "bob", "--yes", *home)
    assert code == 0, err
    assert "erased" in out
    code, out, err = run("stats", "--user", "bob", *home, "--json")
    assert code == 0, err
    assert sum(json.loads(out)["memories"].values()) == 0
