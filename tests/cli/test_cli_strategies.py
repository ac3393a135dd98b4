"""``ucma learn-from-trajectory / strategies-for / has-strategy-for`` and
``record-procedure-outcome --task`` through Typer's runner on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.alice import run, run_json

from ucma.sync import Memory

pytestmark = pytest.mark.integration

TASK = "Collect every review from the bookshop"


def test_a_trajectory_is_kept_listed_shown_and_applied(tmp_path: Path) -> None:
    site = json.dumps([{"subject": "target site", "predicate": "pagination", "object": "links"}])
    learned = run_json(
        tmp_path, "learn-from-trajectory", TASK, "--step", "follow the next links",
        "--step", "parse the reviews", "--success", "--domain", "scraping", "--context", site,
    )  # fmt: skip
    [item] = learned["items"]  # type: ignore[misc]
    assert item["procedure_type"] == "strategy"
    assert item["preconditions"] == [
        {"subject": "target site", "predicate": "pagination", "object": "links"}
    ]
    pitfall = run_json(
        tmp_path, "learn-from-trajectory", TASK, "--step", "download the dump", "--failure",
        "--reason", "'download the dump' failed: 429", "--domain", "scraping",
    )  # fmt: skip
    found = run_json(
        tmp_path, "strategies-for", "Gather the reviews of the deli", "--domain", "scraping"
    )
    ids = [m["procedure"]["id"] for m in found["strategies"]]  # type: ignore[attr-defined]
    assert set(ids) == {item["id"], pitfall["items"][0]["id"]}  # type: ignore[index]
    assert run_json(tmp_path, "has-strategy-for", TASK) == {"has_strategy": True}
    shown = run_json(tmp_path, "get", item["id"])
    assert shown["name"] == "follow the next links then parse the reviews"

    applied = run_json(
        tmp_path, "record-procedure-outcome", item["id"], "--failure", "--task",
        "the deli reviews", "--reason", "no next link",
    )  # fmt: skip
    assert applied["failure_modes"] == ["no next link"]
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        assert memory.get(item["id"]).execution_count == 1  # type: ignore[union-attr]

    code, _, err = run(tmp_path, "learn-from-trajectory", TASK, "--step", "x", "--success",
                       "--context", "{not json")  # fmt: skip
    assert code == 1 and "--context" in err
