"""The synthesize and post-interaction commands through Typer's runner, on a real home
folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from .alice import run, run_json

pytestmark = pytest.mark.integration


def test_synthesis_commands(tmp_path: Path) -> None:
    learned = run_json(
        tmp_path,
        "post-interaction",
        "Book a flight to Lisbon",
        "Booked the refundable fare.",
        "--success",
        "--capability",
        "travel",
        "--predicted",
        "0.8",
        "--step",
        "compare fares",
        "--step",
        "book the refundable fare",
        "--preference",
        "I prefer refundable fares.",
        "--domain",
        "travel",
    )
    assert learned["competence"]["attempts"] == 1  # type: ignore[index]
    assert learned["opinions"] and learned["strategies_extracted"]
    found = run_json(
        tmp_path,
        "synthesize",
        "How do I book a flight?",
        "--task",
        "book a flight to Lisbon",
        "--context",
        '{"season": "summer"}',
    )
    assert found["competence"]["task"] == "book a flight to Lisbon"  # type: ignore[index]
    assert [s["domain"] for s in found["strategies"]] == ["travel"]  # type: ignore[union-attr]
    code, out, _ = run(tmp_path, "synthesize", "How do I book a flight?")
    assert code == 0 and "refundable" in out
    code, _, err = run(tmp_path, "post-interaction", "x", "y", "--success", "--reason", "z")
    assert code == 1 and "failed interaction only" in err
