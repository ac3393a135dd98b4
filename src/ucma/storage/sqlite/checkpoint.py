"""Copying the write-ahead log back into the database file, off the query path.

SQLite's automatic checkpoint runs inside the commit that crosses its
threshold, so one caller in every few dozen pays for copying the whole log:
at 100,000 memories a recall whose bookkeeping commit triggered it took
~20 ms longer, enough to set the p95. Here a daemon thread with its own
connection runs ``PRAGMA wal_checkpoint(PASSIVE)`` shortly after commits
(PASSIVE never blocks readers or writers: it copies what no reader still
needs and returns). The writing connection keeps an automatic checkpoint as
a safety net, at a threshold it only reaches if this thread falls behind.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SAFETY_NET_PAGES", "Checkpointer"]

logger = logging.getLogger(__name__)

SAFETY_NET_PAGES = 10_000
"""``wal_autocheckpoint`` of the writing connection (40 MB of 4 KiB pages)."""


class Checkpointer:
    """Runs passive checkpoints of one database file after ``poke()``, at most
    once per ``interval`` seconds; ``close()`` stops and joins the thread, and
    ``paused()`` holds them off while the caller needs the log to itself."""

    def __init__(self, path: str, interval: float = 0.25) -> None:
        self._path = path
        self._interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._running = threading.Lock()  # held while a checkpoint runs
        self._thread = threading.Thread(
            target=self._run, name=f"ucma-checkpoint:{path}", daemon=True
        )
        self._thread.start()

    def poke(self) -> None:
        """Some transaction committed: checkpoint soon."""
        self._wake.set()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No background checkpoint runs inside: one running now is waited for. A
        checkpoint of the caller's own (TRUNCATE, then VACUUM) would otherwise find
        the log busy with this thread's and report it not done."""
        with self._running:
            yield

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            logger.warning("no background checkpoints for %s: %s", self._path, exc)
            return
        try:
            while True:
                self._wake.wait()
                if self._stop.is_set():
                    return
                self._wake.clear()
                with self._running:
                    try:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    except sqlite3.Error as exc:  # busy or locked: the next poke retries
                        logger.debug("checkpoint of %s skipped: %s", self._path, exc)
                if self._stop.wait(self._interval):
                    return
        finally:
            conn.close()
