"""Restoring a backup (``AsyncMemory.backup`` / ``Memory.backup`` write them).

``restore_backup(backup, target)`` checks the backup (``PRAGMA integrity_check``, a UCMA
schema), copies it into the new file ``target`` through SQLite's backup API, and checks
the copy; ``target`` either ends up a whole, checked database or does not exist. Open it
afterwards as any store (``Memory(target)``); its migrations run then if the backup came
from an older release. A restore never overwrites: move the damaged file away first.
"""

from __future__ import annotations

import logging
import os

from ucma.types import BackupReport

__all__ = ["restore_backup"]

logger = logging.getLogger(__name__)


def restore_backup(backup: str | os.PathLike[str], target: str | os.PathLike[str]) -> BackupReport:
    """Restore ``backup`` into the new file ``target``; ValidationError when ``target``
    exists or ``backup`` does not, StorageError when either fails its checks."""
    from ucma.storage.sqlite.backup import restore_database

    size = restore_database(backup, target)
    logger.info("restore_backup: %s -> %s (%d bytes)", backup, target, size)
    return BackupReport(path=os.fspath(target), bytes=size)
