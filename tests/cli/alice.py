"""Running CLI commands as user alice on a home folder, through Typer's runner: the helper
the CLI tests share."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ucma.cli.main import app

runner = CliRunner()


def run(home: Path, *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``ucma <args> --user alice --home <home>``."""
    result = runner.invoke(app, [*args, "--user", "alice", "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


def run_json(home: Path, *args: str) -> dict[str, object]:
    """The JSON object a command prints with ``--json``; fails the test on an error."""
    code, out, err = run(home, *args, "--json")
    assert code == 0, (args, err)
    found = json.loads(out)
    assert isinstance(found, dict)
    return found
