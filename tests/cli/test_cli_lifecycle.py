"""``ucma sleep``, ``ucma gardener run``, ``ucma gardener schedule`` and ``ucma forget``
through Typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app

runner = CliRunner()


@pytest.mark.parametrize(
    "command", [["sleep"], ["gardener", "run"], ["gardener", "schedule"], ["forget"]]
)
def test_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.stdout


@pytest.mark.integration
def test_gardener_and_forget_commands(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    empty = runner.invoke(app, ["sleep", "--home", home])
    assert empty.exit_code == 0 and "nothing to consolidate" in empty.stdout
    observed = runner.invoke(
        app, ["observe", "Remember that Ines lives in Braga.", "--user", "ines", "--home", home]
    )
    assert observed.exit_code == 0, observed.stderr
    first = runner.invoke(app, ["gardener", "run", "--home", home, "--json"])
    assert first.exit_code == 0, first.stderr
    assert set(json.loads(first.stdout)["ran"]) == {"decay", "consolidate", "prune", "identity"}
    second = runner.invoke(app, ["gardener", "run", "--home", home])
    assert second.exit_code == 0 and "skipped decay: not due" in second.stdout
    schedule = runner.invoke(app, ["gardener", "schedule", "--home", home, "--json"])
    assert schedule.exit_code == 0, schedule.stderr
    jobs = {j["job"]: j for j in json.loads(schedule.stdout)["jobs"]}
    assert jobs["decay"]["last_summary"]["scopes"] == 1 and not jobs["decay"]["running"]
    table = runner.invoke(app, ["gardener", "schedule", "--home", home])
    assert table.exit_code == 0 and "identity" in table.stdout and "30 d" in table.stdout
    forced = runner.invoke(app, ["gardener", "run", "--job", "decay", "--home", home])
    assert forced.exit_code == 0 and "ran decay" in forced.stdout
    bad = runner.invoke(app, ["gardener", "run", "--job", "weed", "--home", home])
    assert bad.exit_code == 1 and "unknown job" in bad.stderr
    dry = runner.invoke(app, ["forget", "--user", "ines", "--dry-run", "--home", home, "--json"])
    assert dry.exit_code == 0, dry.stderr
    assert json.loads(dry.stdout)["dry_run"] is True
    text = runner.invoke(app, ["forget", "--user", "ines", "--home", home])
    assert text.exit_code == 0 and "examined" in text.stdout
