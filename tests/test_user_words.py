"""No internal document names where a user reads: the README, every ``ucma`` help page,
the OpenAPI schema, and the strings the package raises, logs or prints.

The specification's documents ("seed 002") and their rule ids ("R20") mean nothing to a
user. Docstrings and comments may cite them (they are for the people who change the code):
only docstrings that become user text (routes, schemas) are checked, through OpenAPI.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.engine import AsyncMemory
from ucma.server import create_app

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ucma"
INTERNAL = re.compile(
    r"\bseed[ _-]?0\d\d\b|\bseed[ _-]?00x\b|\bthe seeds?\b|\bseeds? (?:document|spec)|\bR\d{1,2}\b",
    re.IGNORECASE,
)
#: Strings allowed to match: the ranking presets' configuration names (values a user sets,
#: named after the formula's source; renaming them is a configuration change of its own).
ALLOWED = {"seed001", "seed003", "seed004"}


def internal_names(text: str) -> list[str]:
    return [m.group(0) for m in INTERNAL.finditer(text)]


def test_readme_names_no_internal_document() -> None:
    assert internal_names((ROOT / "README.md").read_text(encoding="utf-8")) == []


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and subcommand of the CLI (groups have ``commands``)."""
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _command_paths(sub, (*path, name))


COMMAND_PATHS = list(_command_paths(typer.main.get_command(app)))


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p) or "ucma")
def test_cli_help_names_no_internal_document(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert internal_names(result.output) == []


def test_openapi_names_no_internal_document(tmp_path: Path) -> None:
    schema = create_app(AsyncMemory(tmp_path / "never-opened.db"), mcp=False).openapi()
    found: list[tuple[str, str]] = []

    def walk(value: object, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}/{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")
        elif isinstance(value, str) and value not in ALLOWED:
            found.extend((where, name) for name in internal_names(value))

    walk(schema, "")
    assert found == [], json.dumps(found, indent=1)


def _user_strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """String literals that can reach a user: everything but docstrings and attribute
    docstrings (string expression statements). f-string parts are literals too."""
    statements = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in statements
        ):
            yield node


def test_messages_in_the_package_name_no_internal_document() -> None:
    """Error messages (every ``raise``), log lines, CLI output, reasons in reports."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in _user_strings(ast.parse(path.read_text(encoding="utf-8")))
        if node.value not in ALLOWED and internal_names(node.value)
    ]
    assert found == [], "\n".join(found)


def test_the_checks_catch_what_they_look_for() -> None:
    assert internal_names("resolved by seed 002's rules (R21)") == ["seed 002", "R21"]
    assert internal_names("Seed 00x and the seed documents") == ["Seed 00x", "the seed"]
    tree = ast.parse('"""Docstring: seed 003."""\nraise ValueError(f"bad (seed 003 R13) {x}")')
    assert [n.value for n in _user_strings(tree)] == ["bad (seed 003 R13) "]
