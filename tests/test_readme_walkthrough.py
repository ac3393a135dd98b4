"""The README's Python examples (the first example and the walkthrough of the familiar
calls) run as written, on a fresh store in a temporary folder with the packaged model, and
do what their comments say."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from tests.readme_blocks import block

HEADING = "### The calls you know from other memory libraries"


def walkthrough() -> str:
    return block(HEADING, "python")


def run_as_written(code: str, folder: Path) -> str:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    return out.getvalue()


@pytest.mark.integration
def test_the_first_python_example_runs_and_finds_the_theme(tmp_path: Path) -> None:
    printed = run_as_written(block("## Python", "python"), tmp_path).splitlines()
    # remember's best hit is the observed preference; recall is confident about it.
    assert "dark mode" in printed[0]
    confidence, low = printed[-1].split()[:2]
    assert float(confidence) >= 0.5
    assert low == "False"


def test_the_walkthrough_uses_every_familiar_call() -> None:
    code = walkthrough()
    for call in (".add(", ".search(", "filters=", ".get_all(", ".update(", ".history(",
                 ".delete(", ".delete_all("):  # fmt: skip
        assert call in code, call


@pytest.mark.integration
def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    printed = run_as_written(walkthrough(), tmp_path)
    assert "vegetarian" in printed  # the filtered search found the food message
    assert re.search(r"3 of 3|\d+ of \d+; next offset None", printed)
    assert (
        'v2: "I\'m planning a trip to Lisbon in October." -> "I\'m planning a trip to Porto'
        in printed
    )
    assert re.search(r"^2 deleted from the run$", printed, re.MULTILINE)
    assert printed.rstrip().endswith("0 left")
    from ucma import Memory

    with Memory(tmp_path / "agent.db", user_id="alice") as mem:
        assert mem.get_all(include_archived=True).total == 0
