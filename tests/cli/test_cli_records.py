"""``ucma add / search / get / get-all / update / history / delete / delete-all / archive /
unarchive`` through Typer's runner on a real SQLite file: what each prints, in words and as
JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.alice import run

pytestmark = pytest.mark.integration


def test_the_record_commands_end_to_end(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        "add",
        "I am planning a trip to Lisbon in October.",
        "I need vegetarian restaurants there.",
        "--run",
        "trip",
        "--metadata",
        '{"topic": "travel"}',
        "--json",
    )
    assert code == 0, err
    ids = [r["id"] for r in json.loads(out)["results"]]
    assert len(ids) == 2

    code, out, err = run(
        tmp_path, "search", "vegetarian food", "--filter", "topic=travel", "--json"
    )
    assert code == 0, err
    assert {r["id"] for r in json.loads(out)["results"]} == set(ids)
    code, out, _ = run(tmp_path, "search", "vegetarian food", "--filter", "topic=work")
    assert "no memories match" in out
    code, out, _ = run(tmp_path, "search", "x", "--filter", "novalue")
    assert code == 1

    code, out, err = run(tmp_path, "get-all", "--run", "trip", "--limit", "1")
    assert code == 0, err
    assert "1-1 of 2 memories; next page: --offset 1" in out
    code, out, _ = run(tmp_path, "get", ids[0], "--json")
    assert json.loads(out)["metadata"] == {"topic": "travel", "run_id": "trip"}

    code, out, err = run(tmp_path, "update", ids[0], "I am planning a trip to Porto in October.")
    assert code == 0, err
    assert f"ucma history {ids[0]}" in out
    code, out, _ = run(tmp_path, "history", ids[0], "--json")
    [change] = json.loads(out)["history"]
    assert change["details"]["new"] == "I am planning a trip to Porto in October."
    code, out, _ = run(tmp_path, "history", ids[0])
    assert "Lisbon" in out and "Porto" in out

    code, out, _ = run(tmp_path, "delete", ids[1])
    assert out.strip() == f"deleted {ids[1]}"
    code, _, err = run(tmp_path, "delete-all")
    assert code == 1 and "add --yes to confirm" in err
    code, out, _ = run(tmp_path, "delete-all", "--yes", "--json")
    assert json.loads(out)["deleted"] >= 1
    code, out, _ = run(tmp_path, "get-all", "--json")
    assert json.loads(out)["total"] == 0


def test_archive_and_unarchive(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "add", "The office wifi password rotates monthly.", "--json")
    assert code == 0, err
    [memory_id] = [r["id"] for r in json.loads(out)["results"]]
    code, out, err = run(tmp_path, "archive", memory_id)
    assert code == 0, err
    assert out.strip() == f"archived {memory_id}"
    code, out, _ = run(tmp_path, "search", "wifi password", "--json")
    assert memory_id not in [r["id"] for r in json.loads(out)["results"]]
    code, out, err = run(tmp_path, "unarchive", memory_id, "--json")
    assert code == 0, err
    assert json.loads(out) == {"id": memory_id, "archived_at": None}
    code, out, _ = run(tmp_path, "search", "wifi password", "--json")
    assert memory_id in [r["id"] for r in json.loads(out)["results"]]
    code, _, err = run(tmp_path, "archive", "ep_nowhere")
    assert code == 1 and "ep_nowhere" in err
