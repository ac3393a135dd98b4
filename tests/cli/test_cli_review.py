"""``ucma retention / sources / duplicates / sleep-runs / salience-history / trace / traces / replay
...`` through Typer's runner on a real SQLite file written through ``Memory``: each
command prints what its Python method of the same name returns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.sync import Memory

pytestmark = pytest.mark.integration

runner = CliRunner()
NOTE = "The staging database listens on port 5433 since the upgrade."


def run(home: Path, *args: str, user: bool = True) -> tuple[int, str, str]:
    scope = ["--user", "alice"] if user else []
    result = runner.invoke(app, [*args, *scope, "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


def test_the_review_commands_show_what_the_engine_holds(tmp_path: Path) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        first = memory.observe(NOTE).id
        memory.observe(NOTE)
        trace = memory.decide([first], summary="Used port 5433")
        memory.outcome(trace.id, 0.9, "user_accepted")
        memory.assert_fact("Zephyr", "deploy_day", "Thursday")
        memory.assert_fact("Zephyr", "deploy_day", "Friday")
        retained = round(memory.retention(first), 4)
        slept = memory.sleep()

    code, out, err = run(tmp_path, "retention", first, "--json")
    assert code == 0, err
    assert json.loads(out) == {"memory_id": first, "retention": retained}
    code, out, err = run(tmp_path, "duplicates", "--json")
    assert code == 0, err
    assert [d["existing_id"] for d in json.loads(out)["duplicates"]] == [first]
    code, out, err = run(tmp_path, "sleep-runs", "--json")
    assert code == 0, err
    [run_shown] = json.loads(out)["sleep_runs"]
    assert run_shown["trigger"] == "request" and run_shown["phases"] == slept.phases
    assert run_shown["changes"]["compress"] == slept.compress
    code, out, err = run(tmp_path, "sleep-runs", "--offset", "1", "--json")
    assert code == 0 and json.loads(out) == {"sleep_runs": []}, err
    code, out, err = run(tmp_path, "sources", first)
    assert code == 0 and "sources" in out, err
    code, out, err = run(tmp_path, "salience-history", first, "--json")
    assert code == 0, err
    assert [u["trace_id"] for u in json.loads(out)["salience_history"]] == [trace.id]
    code, out, err = run(tmp_path, "trace", trace.id, "--json")
    assert code == 0 and json.loads(out)["id"] == trace.id, err
    code, out, err = run(tmp_path, "traces", "--observed")
    assert code == 0 and trace.id in out, err
    code, out, err = run(tmp_path, "replay", "--json")
    assert code == 0, err
    assert json.loads(out)["matches_live"] is True
    code, out, err = run(tmp_path, "fact-history", "Zephyr", "deploy_day", "--json")
    assert code == 0, err
    assert {f["object"] for f in json.loads(out)["facts"]} == {"Thursday", "Friday"}
    code, out, err = run(tmp_path, "clear-review", first, "--json")
    assert code == 0 and json.loads(out) == {"memory_id": first, "cleared": 0}, err
    for command in ("memory-influence", "extract-patterns", "review-flags", "conflicts"):
        code, _, err = run(tmp_path, command)
        assert code == 0, (command, err)
    code, out, err = run(tmp_path, "share-patterns", "--json", user=False)
    assert code == 0, err
    assert isinstance(json.loads(out), dict)


def test_an_unknown_id_is_one_error_line(tmp_path: Path) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        memory.observe(NOTE)
    code, out, err = run(tmp_path, "retention", "ep_missing")
    assert code == 1 and out == ""
    assert err.startswith("error:") and "ep_missing" in err
