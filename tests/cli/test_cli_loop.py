"""``ucma link / related / links / decide / outcome / events list / episodes-between`` through
Typer's runner on a real SQLite file: each command calls its Python method of the same
name, and what it wrote reads back through ``Memory``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.alice import run, run_json

from ucma.sync import Memory

pytestmark = pytest.mark.integration

NOTE = "The staging database listens on port 5433 since the upgrade."


def test_decisions_outcomes_links_and_the_event_log(tmp_path: Path) -> None:
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        first = memory.observe(NOTE).id
        second = memory.observe("The production database still listens on port 5432.").id

    edge = run_json(tmp_path, "link", first, second, "contrasts", "--weight", "0.7")
    assert (edge["source_id"], edge["target_id"], edge["weight"]) == (first, second, 0.7)
    related = run_json(tmp_path, "related", first, "--edge-type", "contrasts")
    assert [r["memory"]["id"] for r in related["results"]] == [second]  # type: ignore[attr-defined]
    run_json(tmp_path, "link", first, second, "supports", "--weight", "0.9")
    shown = run_json(tmp_path, "links", first)
    assert [(x["edge_type"], x["weight"]) for x in shown["links"]][:2] == [  # type: ignore[attr-defined]
        ("supports", 0.9),
        ("contrasts", 0.7),
    ]
    only = run_json(tmp_path, "links", first, "--edge-type", "contrasts")
    assert [x["memory"]["id"] for x in only["links"]] == [second]  # type: ignore[attr-defined]

    trace = run_json(
        tmp_path, "decide", first, second, "--summary", "Used port 5433",
        "--score", "0.75", "--score", "0.25",
    )  # fmt: skip
    report = run_json(
        tmp_path, "outcome", str(trace["id"]), "--quality=-0.5", "--signal", "user_rejected"
    )
    assert report["trace"]["id"] == trace["id"]  # type: ignore[index]
    assert {u["memory_id"] for u in report["salience_updates"]} == {first, second}  # type: ignore[attr-defined]

    page = run_json(tmp_path, "events", "list", "--type", "outcome.observed")
    assert [e["type"] for e in page["items"]] == ["outcome.observed"]  # type: ignore[attr-defined]
    first_page = run_json(tmp_path, "events", "list", "--limit", "1")
    assert first_page["next_after_seq"] is not None
    code, out, err = run(tmp_path, "events", "list")
    assert code == 0 and "outcome.observed" in out, err

    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        assert memory.trace(str(trace["id"])).outcome_quality == -0.5
        start = memory.get(first).created_at
    episodes = run_json(tmp_path, "episodes-between", str(start - 60), str(start + 3600))
    assert [e["id"] for e in episodes["episodes"]] == [first, second]  # type: ignore[attr-defined]
    code, _, err = run(tmp_path, "episodes-between", "2026-01-01", "2026-01-02T00:00+01:00")
    assert code == 0, err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("decide", "ep_a", "--summary", "s", "--score", "1", "--score", "1"), "score"),
        (("episodes-between", "yesterday", "now"), "START must be"),
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
