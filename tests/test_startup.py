"""Start-up pays only for what is used: which modules a fresh interpreter imports.

No timings here (bench/startup.py measures them); these tests pin the behaviour that
makes start-up fast: ``import ucma`` and ``ucma --help`` load no engine, numpy, SciPy or
model runtime, and ``from ucma import Memory`` leaves SciPy and onnxruntime for first use.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ucma

HEAVY = ("scipy", "onnxruntime", "fastapi", "mcp", "uvicorn", "openai")


def imported_after(code: str) -> set[str]:
    """Top-level and ucma modules loaded by a fresh interpreter running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_import_ucma_loads_nothing_heavy() -> None:
    loaded = imported_after("import ucma")
    assert not {*HEAVY, "numpy", "ucma.engine", "ucma.sync"} & loaded


def test_from_ucma_import_memory_leaves_scipy_and_the_model_runtime_for_later() -> None:
    loaded = imported_after("from ucma import Memory, UCMAError, Experiment")
    assert "ucma.engine" in loaded
    assert not set(HEAVY) & loaded


def test_cli_help_loads_no_engine() -> None:
    code = (
        "from ucma.cli.main import app\n"
        "try:\n    app(['--help'], prog_name='ucma')\nexcept SystemExit:\n    pass"
    )
    loaded = imported_after(code)
    assert not {*HEAVY, "numpy", "ucma.engine", "ucma.sync", "ucma.server"} & loaded


def test_lazy_names_resolve_to_the_modules_type_checkers_see() -> None:
    """The ``TYPE_CHECKING`` imports, ``_EXPORTS`` and ``__all__`` name the same things."""
    tree = ast.parse(Path(ucma.__file__).read_text(encoding="utf-8"))
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    seen = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom) and node.module != "typing"
        for alias in node.names
    }
    assert seen == ucma._EXPORTS
    assert set(ucma.__all__) == {*ucma._EXPORTS, "__version__"}
    for name, module in ucma._EXPORTS.items():
        assert getattr(ucma, name) is getattr(sys.modules[module], name), name
    assert set(ucma.__all__) <= set(dir(ucma))


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        ucma.Nope  # noqa: B018
    assert not hasattr(ucma, "Nope")


def test_version_is_the_installed_distribution_version() -> None:
    assert ucma.__version__ == importlib.metadata.version("ucma")
