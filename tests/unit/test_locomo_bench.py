"""bench/locomo.py's store: a temporary SQLite file by default (removed after the run),
or the database ``--database`` names, which gets a vault key made for the run when it has
no local file for the key."""

from __future__ import annotations

from tests.bench_modules import load_bench

locomo = load_bench("locomo")


def test_the_default_store_is_a_temporary_sqlite_file() -> None:
    with locomo.bench_store(None) as location:
        assert location.scheme == "sqlite" and location.path is not None
        folder = location.path.parent
        assert folder.is_dir() and not location.path.exists()
    assert not folder.exists()
    assert locomo.store_config(location).privacy.vault_key is None  # the key file beside it


def test_a_named_database_is_used_as_given() -> None:
    with locomo.bench_store("postgresql://bench@127.0.0.1:5432/locomo") as location:
        assert location.scheme == "postgresql" and location.path is None
    first = locomo.store_config(location).privacy.vault_key
    assert first and first != locomo.store_config(location).privacy.vault_key  # one per run
    with locomo.bench_store("sqlite:///runs/locomo.db") as location:
        assert str(location.path) == "runs/locomo.db"
