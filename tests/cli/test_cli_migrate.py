"""``ucma migrate SOURCE TARGET`` through Typer's runner: a store copied into a new
SQLite file answers the same, a second run finds its own earlier one and writes
nothing twice, and a target holding other data is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ucma.cli.main import app

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_migrate_copies_resumes_and_refuses_other_data(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    for text in ("Ines Duarte lives in Porto.", "The printer on floor 2 jams on A3 paper."):
        code, _, err = run("observe", text, "--user", "alice", "--database", str(source))
        assert code == 0, err
    code, out, err = run("observe", "Rui teaches Portuguese.", "--user", "rui", "--database",
                         str(source))  # fmt: skip
    assert code == 0, err

    code, out, err = run("migrate", str(source), f"sqlite:///{target}")
    assert code == 0, err
    assert out.startswith("migrated 2 scopes, ") and f"to sqlite:///{target}" in out
    code, out, err = run("migrate", f"sqlite:///{source}", str(target), "--json")
    assert code == 0, err
    report = json.loads(out)  # the same source and target, spelled otherwise
    assert report["resumed"] and report["scopes"] == 2 and report["memories"] >= 3

    code, out, err = run(
        "recall", "Who jams the printer?", "--user", "alice", "--database", str(target), "--json"
    )
    assert code == 0, err
    assert "printer" in out
    code, out, err = run("stats", "--user", "alice", "--database", str(target), "--json")
    assert code == 0, err
    before = json.loads(out)["memories"]
    code, out, err = run("stats", "--user", "alice", "--database", str(source), "--json")
    assert json.loads(out)["memories"] == before

    code, _, err = run("migrate", str(target), str(source))
    assert code == 1
    assert "already holds data" in err and "empty database" in err
