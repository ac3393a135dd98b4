"""Online backup and restore of a SQLite store with SQLite's backup API.

A backup is taken through a connection of its own, in one step: one read transaction,
so the copy is the snapshot of every write committed before it started, while other
connections (this process's writer, other processes) go on writing into the
write-ahead log. A plain file copy is not a backup: it misses what the log still holds.

Both directions write ``<target>.partial`` first, check it (``PRAGMA integrity_check``)
and rename it into place, so a target either is a whole, checked database or does not
exist. The copy is switched out of WAL mode, so a backup is one self-contained file.
The vault key of the content guard is not in the database: keep it with the backup
(docs/privacy.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path

from ucma.errors import StorageError, ValidationError
from ucma.storage.sqlite.connection import BUSY_TIMEOUT_MS, translate_errors

__all__ = ["backup_database", "check_database", "restore_database"]

logger = logging.getLogger(__name__)


def backup_database(source: sqlite3.Connection | str, target: str | os.PathLike[str]) -> int:
    """Copy ``source`` (an open connection, or a database path to open read-only) to
    the new file ``target``; returns the backup's size in bytes."""
    path = _new_target(target)
    partial = path.with_name(path.name + ".partial")
    _remove(partial)
    try:
        with translate_errors(f"backing up to {os.fspath(path)!r}"):
            if isinstance(source, str):
                conn = sqlite3.connect(source, timeout=BUSY_TIMEOUT_MS / 1000)
                try:
                    _copy(conn, partial)
                finally:
                    conn.close()
            else:
                _copy(source, partial)
        check_database(partial)
        partial.replace(path)
    except BaseException:
        _remove(partial)
        raise
    size = path.stat().st_size
    logger.info("backup: %d bytes to %s", size, path)
    return size


def restore_database(backup: str | os.PathLike[str], target: str | os.PathLike[str]) -> int:
    """Restore ``backup`` into the new file ``target`` (checked before and after);
    returns its size in bytes. Open ``target`` afterwards as any store."""
    source = Path(backup)
    if not source.is_file():
        raise ValidationError(f"no backup at {os.fspath(source)!r}")
    check_database(source)
    size = backup_database(os.fspath(source), target)
    logger.info("restore: %s into %s", source, target)
    return size


def check_database(path: str | os.PathLike[str]) -> None:
    """StorageError unless ``path`` is a SQLite database that passes
    ``integrity_check`` and holds a UCMA schema."""
    with translate_errors(f"checking {os.fspath(path)!r}"):
        conn = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)
        try:
            result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            tables = {
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        finally:
            conn.close()
    if result != ["ok"]:
        raise StorageError(f"{os.fspath(path)!r} fails its integrity check: {result[:3]}")
    if not {"migrations", "memories", "settings"} <= tables:
        raise StorageError(f"{os.fspath(path)!r} is not a UCMA database")


def _copy(source: sqlite3.Connection, partial: Path) -> None:
    target = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(target)  # pages=-1: the whole file in one step, one snapshot
        target.execute("PRAGMA journal_mode=DELETE").fetchall()
    finally:
        target.close()
    with partial.open("rb") as handle:
        os.fsync(handle.fileno())


def _new_target(target: str | os.PathLike[str]) -> Path:
    path = Path(target)
    if path.exists():
        raise ValidationError(
            f"{os.fspath(path)!r} exists; back up or restore into a new file "
            "(move the old one away first)"
        )
    if not path.absolute().parent.is_dir():
        raise ValidationError(f"directory {os.fspath(path.absolute().parent)!r} does not exist")
    return path


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
