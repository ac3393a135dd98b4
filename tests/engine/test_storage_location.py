"""Opening a store by location through the engine: SQLite URLs on real files, unknown
schemes, a backend missing from the installation or its driver, the backend hook, and
an engine whose store is not a local file."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError
from ucma.storage import BACKENDS, StorageLocation, open_storage
from ucma.storage.base import AnnSettings, Storage
from ucma.storage.sqlite import SQLiteStorage
from ucma.sync import Memory

pytestmark = pytest.mark.anyio


def test_memory_opens_a_sqlite_url_relative_and_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    monkeypatch.chdir(tmp_path)
    with Memory("sqlite:///nested/rel.db", user_id="alice", embedder=local_embedder) as memory:
        memory.observe("The billing service deploys on Tuesdays")
        assert memory.engine.path == Path("nested/rel.db")
    assert (tmp_path / "nested" / "rel.db").is_file()

    absolute = tmp_path / "abs.db"
    with Memory(f"sqlite:///{absolute}", user_id="alice", embedder=local_embedder) as memory:
        memory.observe("The billing service deploys on Tuesdays")
    assert absolute.is_file()
    with Memory(absolute, user_id="alice", embedder=local_embedder) as memory:
        hits = memory.recall("when does billing deploy")
    assert any("Tuesdays" in hit.content for hit in hits.hits)


def test_an_unknown_scheme_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match="unknown database URL scheme 'mysql'"):
        AsyncMemory("mysql://root@localhost/ucma")


async def test_a_backend_not_in_this_installation_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    monkeypatch.setitem(BACKENDS, "nodb", "ucma.storage.no_such_backend")
    memory = AsyncMemory("nodb://somewhere/ucma", embedder=local_embedder)
    with pytest.raises(ConfigError, match=r"nodb backend \(ucma.storage.no_such_backend\)"):
        await memory.open()
    await memory.close()


def test_a_missing_driver_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ucma_test_needs_driver.py").write_text("import ucma_test_absent_driver\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(BACKENDS, "needy", "ucma_test_needs_driver")
    with pytest.raises(ConfigError, match="needs the ucma_test_absent_driver package"):
        open_storage("needy://host/db", dimension=8)


def test_a_backend_without_the_hook_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ucma_test_hookless", types.ModuleType("ucma_test_hookless"))
    monkeypatch.setitem(BACKENDS, "hookless", "ucma_test_hookless")
    with pytest.raises(ConfigError, match="defines no open_storage"):
        open_storage("hookless://host/db", dimension=8)


@pytest.fixture
def served_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[StorageLocation]:
    """A scheme ``elsewhere://`` whose hook opens a SQLite file the URL does not name,
    standing in for a database server: the engine sees a store without a local file."""
    opened: list[StorageLocation] = []

    def hook(
        location: StorageLocation, *, dimension: int, ann: AnnSettings, cached_scopes: int
    ) -> Storage:
        opened.append(location)
        return SQLiteStorage(
            tmp_path / "server.db", dimension=dimension, ann=ann, cached_scopes=cached_scopes
        )

    module = types.ModuleType("ucma_test_elsewhere")
    module.open_storage = hook  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ucma_test_elsewhere", module)
    monkeypatch.setitem(BACKENDS, "elsewhere", "ucma_test_elsewhere")
    return opened


async def test_the_hook_gets_the_location_and_the_engine_settings(
    served_elsewhere: list[StorageLocation], tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    url = "elsewhere://ucma:pw@server/memories"
    async with AsyncMemory(url, user_id="alice", embedder=local_embedder) as memory:
        assert memory.path is None
        assert str(memory.location) == "elsewhere://ucma:***@server/memories"
        await memory.observe("Greta prefers tea in the morning")
        hits = await memory.recall("what does Greta drink")
        assert any("tea" in hit.content for hit in hits.hits)
        # No file to compare with: a backup to any new file is allowed.
        report = await memory.backup(tmp_path / "copy.db")
        assert report.bytes > 0
    assert served_elsewhere == [StorageLocation("elsewhere", url, None)]
    assert (tmp_path / "server.db").is_file()


async def test_a_store_without_a_file_needs_a_configured_vault_key(
    served_elsewhere: list[StorageLocation], tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(
        "elsewhere://server/memories", user_id="alice", embedder=local_embedder
    ) as memory:
        assert await memory.detokenise("no tokens here") == "no tokens here"
        with pytest.raises(ConfigError, match="vault_key"):
            await memory.observe("write to greta.lindqvist@example.org about the invoice")
        assert await memory.list() == []
    assert not list(tmp_path.glob("*.key"))
