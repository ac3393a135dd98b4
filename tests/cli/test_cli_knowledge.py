"""``ucma answer / learn / validate-learning / assert-fact / resolve-conflict /
add-procedure / find-procedures / record-procedure-outcome`` through Typer's runner on a
real SQLite file: each command calls its Python method of the same name, and what it
wrote reads back through ``Memory``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.alice import run, run_json

from ucma.sync import Memory

pytestmark = pytest.mark.integration

NOTE = "The staging database listens on port 5433 since the upgrade."
GAI = "customer_gai_123"
DAY = 86_400.0


def test_facts_lessons_and_procedures_are_written_and_read_back(tmp_path: Path) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        note = memory.observe(NOTE).id

    fact = run_json(tmp_path, "assert-fact", "Zephyr", "deploy_day", "Thursday")
    assert fact["fact"]["object"] == "Thursday"  # type: ignore[index]
    assert fact["disambiguation_required"] is False

    lesson = run_json(
        tmp_path, "learn", "Check the port after an upgrade.", "--evidence", note,
        "--tag", "staging", "--type", "failure_analysis", "--confidence", "0.6",
    )  # fmt: skip
    checked = run_json(tmp_path, "validate-learning", str(lesson["id"]), "--success")
    assert checked["confidence"] > lesson["confidence"]  # type: ignore[operator]

    procedure = run_json(
        tmp_path, "add-procedure", "Rotate the deploy key", "How to rotate it",
        "--step", "generate a new key", "--step", "update CI", "--tag", "deploy",
    )  # fmt: skip
    from_json = run_json(
        tmp_path, "add-procedure", "Restart staging", "How to restart it", "--tag", "deploy",
        "--steps", '[{"description": "drain", "max_retries": 1}, {"description": "start"}]',
    )  # fmt: skip
    run_json(tmp_path, "record-procedure-outcome", str(procedure["id"]), "--failure")
    found = run_json(tmp_path, "find-procedures", "deploy")
    assert {p["id"] for p in found["procedures"]} == {procedure["id"], from_json["id"]}  # type: ignore[attr-defined]

    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        [current] = memory.facts_about("Zephyr")
        assert current.id == fact["fact"]["id"]  # type: ignore[index]
        assert [lr.id for lr in memory.find_learnings(["staging"])] == [lesson["id"]]
        stored = memory.get(str(procedure["id"]))
        assert [s.description for s in stored.steps] == ["generate a new key", "update CI"]  # type: ignore[attr-defined]
        assert (stored.execution_count, stored.success_rate) == (1, 0.0)  # type: ignore[attr-defined]

    code, out, err = run(tmp_path, "answer", "Which port does the staging database use?")
    assert code == 0 and "response" in out, err


def test_a_pending_conflict_is_resolved_with_the_users_choice(tmp_path: Path) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        memory.clock.now = 5 * DAY
        for confidence in (0.70, 0.8, 0.8):
            memory.assert_fact(GAI, "delivery_pref", "Thursday", confidence=confidence)
        memory.clock.now = 8 * DAY
        for confidence in (0.72, 0.8):
            memory.assert_fact(GAI, "delivery_pref", "Friday", confidence=confidence)
        [conflict] = memory.assert_fact_detailed(GAI, "delivery_pref", "Friday").conflicts
    assert conflict.options == ["Thursday", "Friday"]

    code, out, err = run(tmp_path, "resolve-conflict", conflict.id, "Monday")
    assert code == 1 and out == "" and err.startswith("error:")
    chosen = run_json(tmp_path, "resolve-conflict", conflict.id, "friday")
    assert chosen["fact"]["object"] == "Friday"  # type: ignore[index]
    code, out, err = run(tmp_path, "resolve-conflict", conflict.id, "Friday")
    assert code == 1 and "pending" in err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("add-procedure", "N", "D", "--steps", "[{"), "--steps is not JSON"),
        (("add-procedure", "N", "D", "--steps", '{"description": "x"}'), "JSON list"),
        (("add-procedure", "N", "D", "--steps", '[{"text": "x"}]'), "step"),
        (("add-procedure", "N", "D", "--step", "a", "--steps", "[]"), "not both"),
        (("learn", "x", "--metadata", "[1"), "--metadata is not JSON"),
    ],
)
def test_bad_structured_input_is_one_error_line_naming_it(
    tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        memory.observe(NOTE)
    code, out, err = run(tmp_path, *args)
    assert code == 1 and out == "", err
    assert err.startswith("error:") and named in err
