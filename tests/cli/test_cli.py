"""The ``ucma`` command line through Typer's runner, on a real SQLite file in a tmp home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app

COMMANDS = ["serve", "demo", "observe", "recall", "stats", "export", "import"]

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_help_lists_every_command() -> None:
    code, out, _ = run("--help")
    assert code == 0
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command_runs(command: str) -> None:
    code, out, err = run(command, "--help")
    assert code == 0, err
    assert "Usage" in out


@pytest.mark.integration
def test_observe_recall_stats_export_import_round_trip(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out, err = run(
        "observe",
        "The deploy key for the billing service rotates every 90 days.",
        "--user",
        "alice",
        "--home",
        str(home),
        "--json",
    )
    assert code == 0, err
    observation = json.loads(out)
    assert observation["stored"] is True
    assert (home / "ucma.db").exists()

    code, out, err = run(
        "recall",
        "how often does the billing deploy key rotate",
        "--user",
        "alice",
        "--home",
        str(home),
        "--limit",
        "3",
        "--json",
    )
    assert code == 0, err
    results = json.loads(out)["results"]
    assert results[0]["id"] == observation["id"]
    assert len(results) <= 3

    code, out, err = run("recall", "billing deploy key", "--user", "alice", "--home", str(home))
    assert code == 0, err
    assert "billing" in out

    code, out, err = run("stats", "--user", "alice", "--home", str(home), "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), dict)
    code, out, err = run("stats", "--user", "alice", "--home", str(home))
    assert code == 0, err

    dump = tmp_path / "alice.jsonl"
    code, out, err = run("export", str(dump), "--user", "alice", "--home", str(home))
    assert code == 0, err
    assert dump.exists() and dump.read_text(encoding="utf-8").strip()
    assert "exported" in out

    # UCMA_HOME is honoured when --home is absent.
    other_home = tmp_path / "other"
    env = {"UCMA_HOME": str(other_home)}
    code, out, err = run("import", str(dump), "--user", "alice", env=env)
    assert code == 0, err
    assert "imported" in out
    assert (other_home / "ucma.db").exists()

    code, out, err = run(
        "recall", "billing deploy key rotation", "--user", "alice", "--json", env=env
    )
    assert code == 0, err
    contents = [hit["content"] for hit in json.loads(out)["results"]]
    assert any("90 days" in content for content in contents)


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "--user", ""),
        ("observe", "", "--user", "alice"),
        ("recall", "anything", "--user", "   "),
    ],
)
def test_ucma_error_is_one_red_line_and_exit_1(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, out, err = run(*args, "--home", str(tmp_path))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in out + err


def test_import_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run(
        "import", str(tmp_path / "nope.jsonl"), "--user", "alice", "--home", str(tmp_path)
    )
    assert code == 2
    assert "Traceback" not in err


def test_demo_refuses_both_home_and_db(tmp_path: Path) -> None:
    code, _, _ = run("demo", "--home", str(tmp_path), "--db", str(tmp_path / "x.db"))
    assert code == 2


def test_file_system_errors_are_one_line_too(tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "out.jsonl"
    code, out, err = run("export", str(target), "--user", "alice", "--home", str(tmp_path))
    assert code == 1
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ")
    assert "Traceback" not in out + err


def test_serve_prints_the_database_and_binds_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    served: dict[str, object] = {}

    def fake_run(app: object, *, host: str, port: int) -> None:
        served.update(app=app, host=host, port=port)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    home = tmp_path / "fresh" / "home"
    code, out, err = run("serve", "--home", str(home), "--port", "9999")
    assert code == 0, err
    assert home.is_dir()
    assert str(home / "ucma.db") in out.replace("\n", "")
    assert "127.0.0.1" in out
    assert served["host"] == "127.0.0.1" and served["port"] == 9999
    assert served["app"].state.memory.path == home / "ucma.db"  # type: ignore[attr-defined]
