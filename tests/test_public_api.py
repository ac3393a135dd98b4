"""The public API: ``__all__`` is sorted, complete and importable."""

from __future__ import annotations

import ucma


def test_all_is_sorted_and_importable():
    names = [n for n in ucma.__all__ if n != "__version__"]
    assert names == sorted(names)
    for name in ucma.__all__:
        assert hasattr(ucma, name), name


def test_every_public_class_is_exported():
    public = {
        name
        for name, value in vars(ucma).items()
        if isinstance(value, type) and not name.startswith("_")
    }
    assert public <= set(ucma.__all__)


def test_sync_facade_wraps_every_public_engine_method():
    engine_methods = {
        name
        for name in dir(ucma.AsyncMemory)
        if not name.startswith("_") and callable(getattr(ucma.AsyncMemory, name))
    }
    lifecycle = {"open", "close"}
    missing = {n for n in engine_methods - lifecycle if not hasattr(ucma.Memory, n)}
    assert not missing
