"""The README's CLI examples run as written (in a temporary home and folder), apart from
the long-running and benchmark commands, which have tests of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.readme_blocks import shell_commands
from typer.testing import CliRunner

from ucma.cli.main import app

pytestmark = pytest.mark.integration

# A service and a worker that run until stopped, and benchmarks: tested elsewhere.
NOT_RUN_HERE = {"serve", "worker", "bench"}


def _memory_id(runner: CliRunner, env: dict[str, str], text: str) -> str:
    result = runner.invoke(app, ["get-all", "--user", "alice", "--json"], env=env)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    items = body["items"] if isinstance(body, dict) else body
    return next(item["id"] for item in items if text in item["content"])


def test_the_cli_examples_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    env = {"UCMA_HOME": str(tmp_path / "home")}
    runner = CliRunner()
    ran = []
    chosen: str | None = None  # the memory the examples' <id> stands for
    for words in shell_commands("## CLI"):
        assert words[0] == "ucma", words
        if words[1] in NOT_RUN_HERE:
            continue
        args = [w.replace("/tmp/", f"{tmp_path}/") for w in words[1:]]
        if "<id>" in args:
            chosen = chosen or _memory_id(runner, env, "vegetarian")
            args = [chosen if a == "<id>" else a for a in args]
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0, (words, result.output)
        ran.append((words[1], result.stdout))
    commands = [name for name, _ in ran]
    assert {"observe", "recall", "add", "search", "update", "history", "export", "import"} <= set(
        commands
    )
    history = next(out for name, out in ran if name == "history")
    assert "I'm vegan." in history
    assert (tmp_path / "alice.jsonl").stat().st_size > 0
    assert (tmp_path / "restored.db").exists()
