"""Load a module of bench/ in a test: the bench scripts import their siblings (``from
core import ...``), so bench/ goes on ``sys.path`` first, and the module is registered
under its name before it runs (dataclasses look their module up by name)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py``, imported once (a second call returns the same module)."""
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(BENCH / f"{name}.py"):
        return loaded
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
