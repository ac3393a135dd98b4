"""``ucma reveal / detokenise`` through Typer's runner on a real SQLite file: the owner
of a memory reads the originals of its tokens; another user learns nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.alice import run, run_json, runner

from ucma.cli.main import app
from ucma.privacy.tokens import TOKEN_PATTERN
from ucma.sync import Memory

pytestmark = pytest.mark.integration


def test_a_malformed_token_is_one_error_line(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "reveal", "not-a-token")
    assert code == 1 and out == "" and err.startswith("error:") and "token" in err


def test_the_owner_reveals_the_originals_of_tokens(tmp_path: Path) -> None:
    email = "greta@example.org"
    with Memory(tmp_path / "ucma.db", user_id="alice") as memory:
        content = memory.get(memory.observe(f"Greta's email is {email}").id).content
    [token] = [m.group() for m in TOKEN_PATTERN.finditer(content)]

    assert run_json(tmp_path, "reveal", token) == {"token": token, "value": email}
    assert run_json(tmp_path, "detokenise", content) == {"text": f"Greta's email is {email}"}
    code, out, _ = run(tmp_path, "detokenise", content)
    assert code == 0 and email in out
    result = runner.invoke(app, ["reveal", token, "--user", "mallory", "--home", str(tmp_path)])
    assert result.exit_code == 1 and token in result.stderr


def test_an_export_with_a_transfer_key_resolves_its_tokens_in_another_home(
    tmp_path: Path,
) -> None:
    email = "greta@example.org"
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir()
    with Memory(source / "ucma.db", user_id="alice") as memory:
        content = memory.get(memory.observe(f"Greta's email is {email}").id).content
    [token] = [m.group() for m in TOKEN_PATTERN.finditer(content)]
    dump, key = tmp_path / "alice.jsonl", tmp_path / "transfer.key"

    code, out, err = run(source, "export", str(dump), "--transfer-key", str(key))
    assert code == 0, err
    assert key.stat().st_mode & 0o077 == 0  # created for the owner only
    assert email.encode() not in dump.read_bytes()
    code, _, err = run(target, "import", str(dump))
    assert code == 1 and "transfer_key" in err  # refused without the key
    code, _, err = run(target, "import", str(dump), "--transfer-key", str(tmp_path / "none"))
    assert code == 1 and "no transfer key" in err
    report = run_json(target, "import", str(dump), "--transfer-key", str(key))
    assert report["vault_entries"] == 1 and report["imported"] >= 1
    assert run_json(target, "reveal", token) == {"token": token, "value": email}
