"""Behaviour specific to the SQLite backend (not part of the ABC contract).

Opening files, text analysis and the keyword cache across connections, the
bucket index plan, WAL mode and calls from several threads.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from ucma.errors import StorageError, ValidationError
from ucma.storage.base import Bm25
from ucma.storage.sql.codec import SELECT_EPISODES
from ucma.storage.sqlite import SQLiteStorage
from ucma.types import Episode, Scope

ALICE = Scope("alice", "assistant")


def episode(i: int, content: str, timestamp: float = 1000.0) -> Episode:
    return Episode(
        id=f"ep-{i}",
        user_id="alice",
        agent_id="assistant",
        content=content,
        created_at=float(i),
        session_id="s",
        timestamp=timestamp,
    )


def unit(dimension: int = 4) -> np.ndarray:
    return np.eye(dimension, dtype=np.float32)[:1]


def test_missing_directory_is_a_clear_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        SQLiteStorage(tmp_path / "missing" / "ucma.db", dimension=4)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError):
        SQLiteStorage(path, dimension=4)


@pytest.mark.parametrize("dimension", [0, -3, 2.5, True, "8"])
def test_dimension_must_be_a_positive_integer(tmp_path: Path, dimension: object) -> None:
    with pytest.raises(ValidationError):
        SQLiteStorage(tmp_path / "x.db", dimension=dimension)  # type: ignore[arg-type]


def test_in_memory_database_works() -> None:
    with SQLiteStorage(":memory:", dimension=4) as storage:
        storage.episodes.add([episode(1, "hello")], unit())
        assert storage.memories.vector_search(ALICE, unit()[0], 1)[0][0] == "ep-1"


def test_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    SQLiteStorage(path, dimension=4).close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_tokenizer_stems_english_and_folds_diacritics(tmp_path: Path) -> None:
    with SQLiteStorage(tmp_path / "fts.db", dimension=4) as storage:
        storage.episodes.add(
            [episode(1, "she runs every morning"), episode(2, "a naïve café owner")],
            np.repeat(unit(), 2, axis=0),
        )
        search = storage.memories.keyword_search
        own_words = Bm25(context_weight=0.0)
        assert [i for i, _ in search(ALICE, ["running"], 5, bm25=own_words)] == ["ep-1"]
        assert [i for i, _ in storage.memories.keyword_search(ALICE, ["CAFE"], 5)] == ["ep-2"]
        assert [i for i, _ in storage.memories.keyword_search(ALICE, ["naive"], 5)] == ["ep-2"]


def _found(storage: SQLiteStorage, word: str) -> list[str]:
    """Ids whose own content has ``word`` (an episode's context holds its predecessor)."""
    own = Bm25(context_weight=0.0)
    return sorted(i for i, _ in storage.memories.keyword_search(ALICE, [word], 50, bm25=own))


def test_keyword_index_follows_updates_deletes_and_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "keywords.db"
    records = [episode(i, f"text number {i} with 'quotes' and \x00 nul") for i in range(20)]
    quoted = sorted(r.id for r in records[15:])
    rewritten = sorted(r.id for r in records[:5])
    with SQLiteStorage(path, dimension=4) as storage, SQLiteStorage(path, dimension=4) as other:
        storage.episodes.add(records, np.repeat(unit(), 20, axis=0))
        assert len(_found(storage, "quotes")) == len(_found(other, "quotes")) == 20
        for record in records[:10]:
            storage.episodes.update(dataclasses.replace(record, content=f"rewritten {record.id}"))
        for record in records[5:15]:
            storage.memories.delete(ALICE, record.id)
        for reader in (storage, other):  # its own cache, and one another connection filled
            assert _found(reader, "quotes") == quoted
            assert _found(reader, "rewritten") == rewritten
            assert _found(reader, "nul") == quoted
    with SQLiteStorage(path, dimension=4) as reopened:
        assert _found(reopened, "quotes") == quoted
        assert _found(reopened, "rewritten") == rewritten


def test_the_log_is_checkpointed_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    before = {t.name for t in threading.enumerate()}
    with SQLiteStorage(path, dimension=4) as storage:
        assert any(t.name.startswith("ucma-checkpoint:") for t in threading.enumerate())
        time.sleep(0.5)  # the schema's pages are checkpointed
        size = path.stat().st_size
        # ~60 pages: far below the writer's own threshold (10,000), so only the
        # background thread copies them into the file.
        storage.episodes.add([episode(i, "x" * 3000) for i in range(60)], np.repeat(unit(), 60, 0))
        deadline = time.monotonic() + 10
        while path.stat().st_size <= size and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.stat().st_size > size + 60 * 3000
    assert {t.name for t in threading.enumerate()} == before  # close joined the thread
    with SQLiteStorage(":memory:", dimension=4):
        assert {t.name for t in threading.enumerate()} == before


def test_vectors_read_from_a_loaded_cache_match_the_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((30, 4)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    records = [episode(i, f"row {i}") for i in range(30)]
    with SQLiteStorage(tmp_path / "v.db", dimension=4) as storage:
        storage.episodes.add(records[:20], matrix[:20])
        ids = [r.id for r in records]
        assert storage.memories._index.cached_vectors(ALICE, ids) is None  # none loaded yet
        from_table = storage.memories.vectors(ALICE, ids)
        storage.memories.vector_search(ALICE, matrix[0], 1)  # loads it
        storage.episodes.add(records[20:], matrix[20:])
        storage.memories.delete(ALICE, records[3].id)
        storage.memories.set_archived(ALICE, [records[4].id], 1.0)
        assert storage.memories._index.cached_vectors(ALICE, ids) is not None  # kept current
        from_cache = storage.memories.vectors(ALICE, [*reversed(ids), "missing"])
        assert list(from_cache) == [i for i in reversed(ids) if i != records[3].id]
        for memory_id, vector in from_cache.items():
            np.testing.assert_array_equal(vector, matrix[ids.index(memory_id)])
        for memory_id, vector in from_table.items():
            np.testing.assert_array_equal(vector, from_cache.get(memory_id, vector))


def test_fts_table_is_gone_after_migration(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    SQLiteStorage(path, dimension=4).close()
    with closing(sqlite3.connect(path)) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert not {n for n in names if n.startswith("memories_fts")}


def test_time_range_reads_the_bucket_index(tmp_path: Path) -> None:
    path = tmp_path / "plan.db"
    SQLiteStorage(path, dimension=4).close()
    where = (
        " WHERE t.user_id = ? AND t.agent_id = ? AND t.bucket BETWEEN ? AND ?"
        " AND t.timestamp BETWEEN ? AND ? AND m.archived_at IS NULL"
        " ORDER BY t.bucket, t.timestamp, t.seq LIMIT ?"
    )
    with closing(sqlite3.connect(path)) as conn:
        plan = " ".join(
            row[3]
            for row in conn.execute(
                "EXPLAIN QUERY PLAN " + SELECT_EPISODES + where, ("a", "b", 1, 2, 1.0, 2.0, -1)
            )
        )
    assert "episodes_bucket" in plan
    assert "TEMP B-TREE" not in plan  # index order, no sort


def test_calls_from_several_threads_are_serialised(tmp_path: Path) -> None:
    with SQLiteStorage(tmp_path / "threads.db", dimension=4) as storage:
        inside = threading.Event()
        release = threading.Event()
        order: list[str] = []

        def hold_a_transaction() -> None:
            with storage.transaction():
                storage.episodes.add([episode(1, "first")], unit())
                inside.set()
                release.wait(5)
                order.append("first committed")

        def write() -> None:
            inside.wait(5)
            storage.episodes.add([episode(2, "second")], unit())
            order.append("second written")

        threads = [threading.Thread(target=hold_a_transaction), threading.Thread(target=write)]
        for thread in threads:
            thread.start()
        inside.wait(5)
        release.set()
        for thread in threads:
            thread.join(10)
        assert order == ["first committed", "second written"]
        assert set(storage.memories.get_many(ALICE, ["ep-1", "ep-2"])) == {"ep-1", "ep-2"}


def test_other_threads_read_beside_an_open_transaction(tmp_path: Path) -> None:
    """A file database reads in other threads on connections of their own: they
    are not held up by a transaction open in one thread, see what was committed
    (not its uncommitted rows, in the tables or the search caches), and see its
    rows once it commits; the transaction's own thread sees them at once."""
    with SQLiteStorage(tmp_path / "readers.db", dimension=4) as storage:
        assert storage.concurrency > 1
        storage.episodes.add([episode(1, "committed harbour")], unit())
        query = unit()[0]

        def seen() -> tuple[set[str], set[str], set[str]]:
            rows = set(storage.memories.get_many(ALICE, ["ep-1", "ep-2"]))
            dense = {i for i, _ in storage.memories.vector_search(ALICE, query, 5)}
            words = {i for i, _ in storage.memories.keyword_search(ALICE, ["harbour"], 5)}
            return rows, dense, words

        with ThreadPoolExecutor(2) as pool:
            with storage.transaction():
                storage.episodes.add([episode(2, "uncommitted harbour")], unit())
                others = [pool.submit(seen) for _ in range(2)]
                assert [f.result(timeout=10) for f in others] == [({"ep-1"},) * 3] * 2
                assert seen() == ({"ep-1", "ep-2"},) * 3
            assert pool.submit(seen).result(timeout=10) == ({"ep-1", "ep-2"},) * 3


def test_a_database_in_memory_takes_one_call_at_a_time() -> None:
    with SQLiteStorage(":memory:", dimension=4) as storage:
        assert storage.concurrency == 1


WRITER = """
import sys
import numpy as np
from ucma.storage.base import Bm25
from ucma.storage.sqlite import SQLiteStorage
from ucma.types import Episode, Scope
with SQLiteStorage(sys.argv[1], dimension=4) as storage:
    storage.episodes.add(
        [Episode(id="from-child", user_id="alice", agent_id="assistant", content="child",
                 created_at=5.0, session_id="s", timestamp=5.0)],
        np.eye(4, dtype=np.float32)[1:2],
    )
    storage.memories.delete(Scope("alice", "assistant"), "ep-1")
"""


def test_another_process_writes_are_seen_by_the_vector_cache(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with SQLiteStorage(path, dimension=4) as storage:
        storage.episodes.add([episode(1, "parent")], unit())
        assert [i for i, _ in storage.memories.vector_search(ALICE, unit()[0], 5)] == ["ep-1"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        subprocess.run([sys.executable, "-c", WRITER, str(path)], check=True, env=env, timeout=120)
        assert [i for i, _ in storage.memories.vector_search(ALICE, unit()[0], 5)] == ["from-child"]
