"""Online backup and restore on real SQLite files: a backup taken while another writer
keeps writing holds every write acknowledged before it started, passes its integrity
check, restores into a new file, and that store opens and recalls."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ucma import restore_backup
from ucma.embeddings import LocalEmbedder
from ucma.errors import StorageError, ValidationError
from ucma.sync import Memory


def integrity(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


class Writer(threading.Thread):
    """Asserts facts through its own Memory (its own connection) until stopped, and
    records the id of every write once it was acknowledged."""

    def __init__(self, db: Path, embedder: LocalEmbedder, ready_after: int) -> None:
        super().__init__(daemon=True)
        self.db, self.embedder = db, embedder
        self.acknowledged: list[str] = []
        self.lock = threading.Condition()
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.ready_after = ready_after
        self.error: BaseException | None = None

    def acked(self) -> list[str]:
        with self.lock:
            return list(self.acknowledged)

    def run(self) -> None:
        try:
            with Memory(self.db, user_id="writer", embedder=self.embedder) as mem:
                i = 0
                while not self.stop.is_set():
                    fact = mem.assert_fact(f"crate {i}", "stored_in", f"bay {i % 17} row {i}")
                    with self.lock:
                        self.acknowledged.append(fact.id)
                        self.lock.notify_all()
                    i += 1
                    if i >= self.ready_after:
                        self.ready.set()
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.ready.set()
            with self.lock:
                self.lock.notify_all()

    def wait_beyond(self, count: int) -> bool:
        """Wait until more than ``count`` writes are acknowledged (False if it died)."""
        with self.lock:
            return (
                self.lock.wait_for(
                    lambda: len(self.acknowledged) > count or self.error is not None, 120
                )
                and self.error is None
            )


def test_a_backup_during_writes_restores_every_acknowledged_write(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    db = tmp_path / "live.db"
    with Memory(db, user_id="alice", embedder=local_embedder) as mem:
        kept = mem.observe("Alice keeps the spare keys in the blue tin by the door.")
        writer = Writer(db, local_embedder, ready_after=20)
        writer.start()
        assert writer.ready.wait(120), "the writer never got going"
        assert writer.error is None
        before = writer.acked()

        report = mem.backup(tmp_path / "backup.db")

        # The writer was still going: it acknowledges another write after the backup.
        count = len(writer.acked())
        assert writer.wait_beyond(count)
        writer.stop.set()
        writer.join(120)
        assert writer.error is None and len(writer.acked()) > count

    assert report.bytes == (tmp_path / "backup.db").stat().st_size > 0
    assert integrity(tmp_path / "backup.db") == ["ok"]
    restored = restore_backup(tmp_path / "backup.db", tmp_path / "restored.db")
    assert restored.path == str(tmp_path / "restored.db")
    assert integrity(tmp_path / "restored.db") == ["ok"]

    with Memory(tmp_path / "restored.db", user_id="alice", embedder=local_embedder) as back:
        present = back.list(user_id="writer", limit=10_000)
        assert set(before) <= {r.id for r in present}
        hits = back.remember("Where are the spare keys?")
        assert hits[0].id == kept.id
        back.observe("The restored store takes new writes too.")


def test_backup_and_restore_never_overwrite_and_refuse_what_is_not_a_store(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    with Memory(tmp_path / "m.db", user_id="alice", embedder=local_embedder) as mem:
        mem.observe("Alice waters the ferns on Sundays.")
        (tmp_path / "taken.db").write_bytes(b"precious")
        with pytest.raises(ValidationError, match="exists"):
            mem.backup(tmp_path / "taken.db")
        with pytest.raises(ValidationError):
            mem.backup(tmp_path / "m.db")
        with pytest.raises(ValidationError, match="does not exist"):
            mem.backup(tmp_path / "missing" / "b.db")
    assert (tmp_path / "taken.db").read_bytes() == b"precious"
    with pytest.raises(ValidationError, match="exists"):
        restore_backup(tmp_path / "m.db", tmp_path / "taken.db")
    with pytest.raises(ValidationError, match="no backup"):
        restore_backup(tmp_path / "none.db", tmp_path / "new.db")
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StorageError):
        restore_backup(tmp_path / "junk.db", tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()
    assert not (tmp_path / "new.db.partial").exists()
