"""``--database`` and ``$UCMA_DATABASE``: every command that takes a store takes a file
path or URL, and the precedence is option, then variable, then ``<home>/ucma.db``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ucma.cli.main import app

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def observe(text: str, *options: str, env: dict[str, str] | None = None) -> None:
    code, _, err = run("observe", text, "--user", "alice", *options, env=env)
    assert code == 0, err


def stored(*options: str, env: dict[str, str] | None = None) -> str:
    """Every memory text of alice in the store the options name, one per line."""
    code, out, err = run("get-all", "--user", "alice", "--json", *options, env=env)
    assert code == 0, err
    return "\n".join(item["content"] for item in json.loads(out)["items"])


def test_database_option_then_variable_then_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    named = tmp_path / "named.db"
    from_env = tmp_path / "from-env.db"
    env = {"UCMA_DATABASE": f"sqlite:///{from_env}"}

    observe("Greta prefers tea", "--home", str(home), "--database", f"sqlite:///{named}")
    observe("Greta flies to Oslo on Friday", "--home", str(home), env=env)
    observe("Greta's badge number is 4411", "--database", str(named), env=env)
    observe("The office closes at six", "--home", str(home), env={"UCMA_DATABASE": ""})

    named_texts = stored("--database", str(named))
    assert "tea" in named_texts and "4411" in named_texts
    assert "Oslo" not in named_texts and "six" not in named_texts
    env_texts = stored("--database", str(from_env))
    assert "Oslo" in env_texts and "tea" not in env_texts and "six" not in env_texts
    assert stored(env=env) == env_texts
    home_texts = stored("--home", str(home))
    assert "six" in home_texts and "tea" not in home_texts and "Oslo" not in home_texts


def test_every_command_with_home_takes_database_too() -> None:
    missing: list[str] = []
    seen: list[str] = []

    def visit(group: Any, prefix: str) -> None:
        for name, sub in group.commands.items():
            if hasattr(sub, "commands"):
                visit(sub, f"{prefix}{name} ")
                continue
            options = {opt for param in sub.params for opt in getattr(param, "opts", [])}
            if "--home" in options:
                seen.append(prefix + name)
                if "--database" not in options and name != "demo":
                    missing.append(prefix + name)

    visit(typer.main.get_command(app), "")
    assert len(seen) > 50
    assert missing == []


@pytest.mark.parametrize(
    ("database", "words"),
    [
        ("mysql://root@localhost/ucma", "unknown database URL scheme"),
        ("sqlite://", "names no file"),
    ],
)
def test_a_bad_database_is_one_red_line(tmp_path: Path, database: str, words: str) -> None:
    code, out, err = run("stats", "--user", "alice", "--database", database)
    assert code == 1
    assert err.startswith("error: ") and words in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in out + err


def test_serve_opens_the_named_database_and_hides_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    served: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app))
    target = tmp_path / "served.db"
    code, out, err = run("serve", "--database", f"sqlite:///{target}", "--port", "9999")
    assert code == 0, err
    assert f"sqlite:///{target}" in out.replace("\n", "")
    assert served["app"].state.memory.path == target  # type: ignore[attr-defined]

    code, out, err = run("serve", "--database", "mysql://root:hunter2@db/ucma")
    assert code == 1
    assert "unknown database URL scheme" in err
    assert "hunter2" not in out + err


def test_backup_of_a_named_database(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    observe("Greta prefers tea", "--database", str(store))
    copy = tmp_path / "copy.db"
    code, out, err = run("backup", str(copy), "--database", f"sqlite:///{store}", "--json")
    assert code == 0, err
    assert json.loads(out)["bytes"] > 0
    assert "tea" in stored("--database", str(copy))
