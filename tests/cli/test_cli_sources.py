"""`ucma serve --sources`: a bad sources file stops the service before it starts, with one
line saying what is wrong."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ucma.cli.main import app


def test_serve_refuses_a_bad_sources_file(tmp_path: Path) -> None:
    bad = tmp_path / "sources.toml"
    bad.write_text('[[source]]\nname = "crm"\nurl = "postgresql://db/crm"\n')
    result = CliRunner().invoke(
        app, ["serve", "--home", str(tmp_path / "home"), "--sources", str(bad)]
    )
    assert result.exit_code == 1
    assert "sqlite:///" in result.output and "crm" in result.output
