"""The ``ucma`` command line through Typer's runner, on a real SQLite file in a tmp home."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.config import ServiceConfig
from ucma.serialization import iso_time

COMMANDS = [
    "serve",
    "worker",
    "mcp",
    "demo",
    "observe",
    "recall",
    "facts",
    "stats",
    "export",
    "import",
    "keys",
    "bench",
    "events",
    "sleep",
    "gardener",
    "forget",
    "forget-person",
    "forget-scope",
    "backup",
    "restore",
    "migrate",
    "add",
    "search",
    "get",
    "get-all",
    "update",
    "delete",
    "delete-all",
    "archive",
    "unarchive",
    "history",
    "retention",
    "sources",
    "duplicates",
    "sleep-runs",
    "salience-history",
    "memory-influence",
    "trace",
    "traces",
    "counterfactuals",
    "replay",
    "extract-patterns",
    "share-patterns",
    "review-flags",
    "clear-review",
    "fact-history",
    "conflicts",
    "find-learnings",
    "answer",
    "learn-from-trajectory",
    "strategies-for",
    "has-strategy-for",
    "learn",
    "validate-learning",
    "assert-fact",
    "resolve-conflict",
    "add-procedure",
    "find-procedures",
    "record-procedure-outcome",
    "episodes-between",
    "related",
    "links",
    "link",
    "decide",
    "outcome",
    "reveal",
    "detokenise",
    "retain",
    "find-opinion",
    "opinions",
    "opinions-below",
    "get-opinion",
    "opinion-history",
    "reinforce-opinion",
    "weaken-opinion",
    "observe-transition",
    "transitions",
    "simulate",
    "record-competence",
    "competences",
    "introspect",
    "should-attempt",
    "learning-priorities",
    "add-goal",
    "get-goal",
    "goals",
    "get-active-goals",
    "decompose-goal",
    "update-progress",
    "resume-goal",
    "abandon-goal",
    "anticipate",
    "pursue-goal",
    "synthesize",
    "post-interaction",
]
SUBCOMMANDS = [
    ("keys", "create"),
    ("keys", "list"),
    ("keys", "revoke"),
    ("events", "publish"),
    ("events", "list"),
    ("gardener", "run"),
    ("gardener", "schedule"),
]

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_help_lists_every_command() -> None:
    code, out, _ = run("--help")
    assert code == 0
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", [(c,) for c in COMMANDS] + SUBCOMMANDS)
def test_help_of_each_command_runs(command: tuple[str, ...]) -> None:
    code, out, err = run(*command, "--help")
    assert code == 0, err
    assert "Usage" in out


def test_version_prints_the_installed_version() -> None:
    code, out, _ = run("--version")
    assert code == 0
    assert out.strip() == f"ucma {importlib.metadata.version('ucma')}"


def test_every_registered_command_is_checked() -> None:
    import typer.main

    group = typer.main.get_command(app)
    assert set(group.commands) == set(COMMANDS)  # type: ignore[attr-defined]


@pytest.mark.integration
def test_observe_recall_stats_export_import_round_trip(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out, err = run(
        "observe",
        "The deploy key for the billing service rotates every 90 days.",
        "--user",
        "alice",
        "--home",
        str(home),
        "--json",
    )
    assert code == 0, err
    observation = json.loads(out)
    assert observation["stored"] is True
    assert (home / "ucma.db").exists()

    code, out, err = run(
        "recall",
        "how often does the billing deploy key rotate",
        "--user",
        "alice",
        "--home",
        str(home),
        "--limit",
        "3",
        "--json",
    )
    assert code == 0, err
    results = json.loads(out)["results"]
    assert results[0]["id"] == observation["id"]
    assert len(results) <= 3

    code, out, err = run("recall", "billing deploy key", "--user", "alice", "--home", str(home))
    assert code == 0, err
    assert "billing" in out and "confidence" in out

    code, out, err = run("stats", "--user", "alice", "--home", str(home), "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), dict)
    code, out, err = run("stats", "--user", "alice", "--home", str(home))
    assert code == 0, err

    dump = tmp_path / "alice.jsonl"
    code, out, err = run("export", str(dump), "--user", "alice", "--home", str(home))
    assert code == 0, err
    assert dump.exists() and dump.read_text(encoding="utf-8").strip()
    assert "exported" in out

    # UCMA_HOME is honoured when --home is absent.
    other_home = tmp_path / "other"
    env = {"UCMA_HOME": str(other_home)}
    code, out, err = run("import", str(dump), "--user", "alice", env=env)
    assert code == 0, err
    assert "imported" in out
    assert (other_home / "ucma.db").exists()

    code, out, err = run(
        "recall", "billing deploy key rotation", "--user", "alice", "--json", env=env
    )
    assert code == 0, err
    result = json.loads(out)
    contents = [hit["content"] for hit in result["results"]]
    assert any("90 days" in content for content in contents)
    assert result["retrieval_id"].startswith("ret_") and isinstance(result["low_confidence"], bool)
    assert "primary_layer" in result["cascade_path"]
    assert "overall" in result["results"][0]["confidence"]


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "--user", ""),
        ("observe", "", "--user", "alice"),
        ("recall", "anything", "--user", "   "),
    ],
)
def test_ucma_error_is_one_red_line_and_exit_1(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, out, err = run(*args, "--home", str(tmp_path))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in out + err


def test_import_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run(
        "import", str(tmp_path / "nope.jsonl"), "--user", "alice", "--home", str(tmp_path)
    )
    assert code == 2
    assert "Traceback" not in err


def test_demo_refuses_both_home_and_db(tmp_path: Path) -> None:
    code, _, _ = run("demo", "--home", str(tmp_path), "--db", str(tmp_path / "x.db"))
    assert code == 2


def test_file_system_errors_are_one_line_too(tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "out.jsonl"
    code, out, err = run("export", str(target), "--user", "alice", "--home", str(tmp_path))
    assert code == 1
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ")
    assert "Traceback" not in out + err


def test_serve_prints_the_database_and_binds_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    served: dict[str, object] = {}

    def fake_run(
        app: object, *, host: str, port: int, h11_max_incomplete_event_size: int, http: object
    ) -> None:
        served.update(app=app, host=host, port=port, headers=h11_max_incomplete_event_size)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    home = tmp_path / "fresh" / "home"
    code, out, err = run("serve", "--home", str(home), "--port", "9999")
    assert code == 0, err
    assert home.is_dir()
    assert str(home / "ucma.db") in out.replace("\n", "")
    assert "127.0.0.1" in out
    assert served["host"] == "127.0.0.1" and served["port"] == 9999
    assert served["headers"] == ServiceConfig().max_header_bytes
    assert served["app"].state.memory.path == home / "ucma.db"  # type: ignore[attr-defined]


def test_serve_flags_set_the_service_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from ucma.server.limits import RequestLimits

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    code, _, err = run(
        "serve", "--home", str(tmp_path), "--max-body-bytes", "4096", "--max-header-bytes",
        "2048", "--body-timeout", "6", "--max-concurrent-requests", "3", "--max-batch-items", "7",
    )  # fmt: skip
    assert code == 0, err
    app = served["app"]
    [guard] = [m for m in app.user_middleware if m.cls is RequestLimits]
    assert guard.kwargs["limits"] == ServiceConfig(
        max_body_bytes=4096,
        max_header_bytes=2048,
        body_timeout=6.0,
        body_idle_timeout=2.0,
        max_concurrent_requests=3,
    )
    assert app.state.memory.config.limits.max_batch_size == 7
    assert served["h11_max_incomplete_event_size"] == 2048
    code, _, err = run("serve", "--home", str(tmp_path), "--max-body-bytes", "10")
    assert code == 2 and "1024" in err


def fake_uvicorn(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    import uvicorn

    served: dict[str, object] = {}

    def fake_run(app: object, *, host: str, port: int, **options: object) -> None:
        served.update(app=app, host=host, port=port)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    return served


def test_serve_refuses_a_public_host_without_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = fake_uvicorn(monkeypatch)
    for extra in ((), ("--no-auth",)):
        code, out, err = run("serve", "--home", str(tmp_path), "--host", "0.0.0.0", *extra)
        assert code == 1
        assert "refusing to bind 0.0.0.0 without API keys" in err.replace("\n", " ")
    assert served == {}


def test_keys_lifecycle_and_serve_requires_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = ("--home", str(tmp_path))
    code, out, err = run("keys", "list", *home)
    assert code == 0 and "no API keys" in out

    code, out, err = run("keys", "create", "--user", "alice", "--label", "laptop", *home)
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    assert token.startswith("ucma_") and "not stored" in err
    code, out, err = run("keys", "create", "--user", "bob", "--agent", "planner", *home, "--json")
    assert code == 0, err
    bob = json.loads(out)
    assert bob["user_id"] == "bob" and bob["agent_id"] == "planner" and bob["token"]
    assert token.encode() not in (tmp_path / "ucma.db").read_bytes()  # only its hash is stored

    code, out, err = run("keys", "list", *home, "--json")
    listed = json.loads(out)
    assert [k["user_id"] for k in listed] == ["alice", "bob"]
    assert all("token" not in k for k in listed)
    assert all(k["created_at_iso"] == iso_time(k["created_at"]) for k in listed)
    code, out, err = run("keys", "list", *home)
    assert "alice" in out and "laptop" in out
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out)  # ISO 8601 times

    served = fake_uvicorn(monkeypatch)
    code, out, err = run("serve", *home, "--host", "0.0.0.0", "--port", "9001")
    assert code == 0, err
    assert "API keys required (2 active" in out
    assert served["host"] == "0.0.0.0"
    assert served["app"].state.access.require_keys is True  # type: ignore[attr-defined]

    code, out, err = run("keys", "revoke", bob["id"], *home)
    assert code == 0 and "revoked" in out
    code, out, err = run("keys", "revoke", "nope", *home)
    assert code == 1 and err.startswith("error: ")
    code, out, err = run("keys", "list", "--all", *home, "--json")
    assert [k["revoked_at"] is not None for k in json.loads(out)] == [False, True]

    code, out, err = run("serve", *home, "--no-auth")
    assert code == 0 and "local mode" in out
    assert served["app"].state.access.require_keys is False  # type: ignore[attr-defined]
    # On loopback, keys are asked of the database per request (tests/server/test_keys_live.py).
    code, out, err = run("serve", *home)
    assert code == 0 and "API keys required (1 active" in out
    assert served["app"].state.access.require_keys is None  # type: ignore[attr-defined]


@pytest.mark.integration
def test_observe_says_what_happened_and_facts_says_where_facts_come_from(
    tmp_path: Path,
) -> None:
    home = ("--user", "alice", "--home", str(tmp_path))
    note = "The deploy key for the billing service rotates every 90 days."
    code, out, err = run("observe", note, *home)
    assert code == 0, err
    stored = re.fullmatch(r"stored (ep_\w+) \(importance 0\.\d\d, level \d\)", out.strip())
    assert stored, out
    code, out, err = run("observe", note, *home)
    assert code == 0, err
    assert out.startswith(f"merged into existing memory {stored.group(1)}: a near-duplicate")
    code, out, err = run("observe", "ok thanks", *home)
    assert code == 0, err
    assert out.startswith("skipped as chit-chat: importance 0.") and "nothing was written" in out

    code, out, err = run("facts", "Zoltan", *home)
    assert code == 0, err
    assert "no facts about 'Zoltan' yet" in out and "ucma sleep --user alice" in out
    assert "\n" not in out.strip()  # one line, not wrapped at 80 columns


@pytest.mark.integration
def test_import_shows_progress_and_resumes_after_an_interruption(tmp_path: Path) -> None:
    from ucma import exchange
    from ucma.embeddings import LocalEmbedder
    from ucma.sync import Memory

    source = tmp_path / "source.db"
    with Memory(source, user_id="alice", embedder=LocalEmbedder()) as memory:
        memory.observe_many(
            [f"Meeting note {i}: we agreed on plan {i} for the launch." for i in range(520)]
        )
        lines = list(memory.export_lines())
    dump = tmp_path / "alice.jsonl"
    dump.write_text("".join(lines), encoding="utf-8")
    # An interrupted run: the first chunk's worth of lines only.
    cut = 1 + 2 * exchange.CHUNK  # header, then a memory and its retention line each
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(lines[:cut]), encoding="utf-8")
    home = ("--home", str(tmp_path / "copy"))

    code, out, err = run("import", str(partial), "--user", "alice", *home, "--json")
    assert code == 0, err
    assert json.loads(out)["imported"] == exchange.CHUNK

    code, out, err = run("import", str(dump), "--user", "alice", *home)
    assert code == 0, err
    assert "import" in err and "100%" in err  # the progress bar, on stderr
    assert f"imported 20 records from {dump} ({exchange.CHUNK} already present" in out.replace(
        "\n", ""
    )
    code, out, err = run("stats", "--user", "alice", *home, "--json")
    assert json.loads(out)["memories"]["episodic"] == 520

    code, out, err = run("export", str(tmp_path / "again.jsonl"), "--user", "alice", *home)
    assert code == 0, err
    assert (tmp_path / "again.jsonl").read_text(encoding="utf-8") == dump.read_text(
        encoding="utf-8"
    )


@pytest.mark.integration
def test_facts_command(tmp_path: Path) -> None:
    from ucma.embeddings import LocalEmbedder
    from ucma.sync import Memory

    with Memory(tmp_path / "ucma.db", user_id="alice", embedder=LocalEmbedder()) as memory:
        memory.assert_fact("staging database", "listens on", "port 5433")
        memory.assert_fact("port 5433", "serves", "postgres")
    home = ("--home", str(tmp_path))
    code, out, err = run("facts", "Staging Database", "--user", "alice", *home, "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)["facts"]] == ["port 5433"]
    code, out, err = run("facts", "staging database", "--user", "alice", "--hops", "2", *home)
    assert code == 0 and "postgres" in out
    code, out, err = run("facts", "nothing", "--user", "alice", *home)
    assert code == 0 and "no facts" in out


def test_bench_refuses_an_unknown_benchmark() -> None:
    code, out, err = run("bench", "nonsense")
    assert code == 1 and "unknown benchmark" in err


def test_mcp_needs_a_user(tmp_path: Path) -> None:
    code, out, err = run("mcp", "--user", " ", "--home", str(tmp_path))
    assert code == 1 and err.startswith("error: ")


@pytest.mark.integration
def test_observe_and_add_take_the_store_step_overrides(tmp_path: Path) -> None:
    home = ("--user", "alice", "--home", str(tmp_path), "--json")
    steer = ("--content-type", "event", "--temporal-level", "4", "--salience", "0.3")
    code, out, err = run("observe", "ok thanks", *steer, "--bank", "world", *home)
    assert code == 0, err
    observed = json.loads(out)
    # A starting salience of 0.3 is above the storage threshold (0.2): stored as it says.
    assert observed["stored"] and observed["temporal_level"] == 4
    assert observed["importance"] == pytest.approx(0.3)
    code, out, err = run("add", "The office plants need water", "--bank", "world", *steer, *home)
    assert code == 0, err
    [added] = json.loads(out)["results"]
    assert added["temporal_level"] == 4
    code, out, err = run("get", added["id"], *home)
    assert code == 0, err
    assert json.loads(out)["bank"] == "world"
    code, out, err = run("observe", "note", "--temporal-level", "5", *home)
    assert code == 2 and "--temporal-level" in err
