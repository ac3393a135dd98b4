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
