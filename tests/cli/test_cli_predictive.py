"""The world-model and self-model commands through Typer's runner, on a real home
folder: transitions observed and simulated, attempts recorded, introspection, the
help-seeking decision and learning priorities."""

from __future__ import annotations

from pathlib import Path

import pytest

from .alice import run, run_json

pytestmark = pytest.mark.integration


def test_predictive_commands(tmp_path: Path) -> None:
    for outcome in ("saved", "saved", "conflict error"):
        seen = run_json(
            tmp_path,
            "observe-transition",
            "save the draft",
            outcome,
            "--context",
            '{"offline": false}',
        )
    assert seen["outcome"] == "conflict error" and seen["errors"] == 2
    predicted = run_json(tmp_path, "simulate", "save the draft", "--context", '{"offline": false}')
    assert predicted["predicted"] == "saved" and predicted["confidence"] == pytest.approx(0.5)
    listed = run_json(tmp_path, "transitions", "--action", "save the draft")["transitions"]
    assert len(listed) == 2  # type: ignore[arg-type]
    run_json(tmp_path, "record-competence", "sql", "--success", "--predicted", "0.9")
    failed = run_json(
        tmp_path, "record-competence", "sql", "--failure", "--reason", "recursive queries"
    )
    assert failed["attempts"] == 2 and failed["successes"] == 1
    [sql] = run_json(tmp_path, "competences")["competences"]  # type: ignore[misc]
    assert sql["capability"] == "sql"
    answer = run_json(tmp_path, "introspect", "Am I good at SQL queries?")
    assert answer["capability"] == "sql" and answer["sample_size"] == 2
    advice = run_json(tmp_path, "should-attempt", "Write a recursive SQL query")
    assert advice["decision"] == "ask_for_help"
    assert advice["failure_modes_applied"] == ["recursive queries"]
    assert run_json(tmp_path, "learning-priorities")["priorities"] == []
    code, out, _ = run(tmp_path, "introspect", "Am I good at SQL queries?")
    assert code == 0 and "sql" in out
    code, _, err = run(tmp_path, "simulate", "save", "--context", "{not json")
    assert code == 1 and "--context" in err
    code, _, err = run(tmp_path, "record-competence", "sql", "--success", "--reason", "x")
    assert code == 1 and "failed attempt only" in err
