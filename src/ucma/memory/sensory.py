"""Sensory buffer: the bounded entry point that holds raw input until the engine drains it.

The buffer receives; it does not judge. The engine drains it and decides what each entry
becomes (importance, temporal level, episodic write). It is a ring: at capacity, a new entry
evicts the oldest one, and ``dropped`` counts those losses so they are visible in metrics.

Concurrency contract: ``ingest``, ``ingest_many`` and ``drain`` are atomic with respect to each
other. Every entry that was ingested and not dropped by overflow is returned by exactly one
``drain`` call. The guard is a ``threading.Lock``, not an ``asyncio.Lock``:

- the critical sections are a few deque operations with no ``await`` inside, so holding the
  lock never blocks the event loop for longer than those operations;
- an ``asyncio.Lock`` belongs to one event loop, while the synchronous ``Memory`` wrapper and
  background workers may reach the same buffer from other threads or loops; a thread lock is
  correct in all of those cases, and under anyio backends other than asyncio as well.

The methods stay ``async`` so the engine's call sites do not change if ingestion ever gains
I/O (for example, spilling to disk).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ucma.errors import ValidationError

__all__ = ["DEFAULT_CAPACITY", "SensoryBuffer", "SensoryEntry"]

logger = logging.getLogger(__name__)

DEFAULT_CAPACITY = 512
"""Seed 001's default ``sensory_buffer_capacity``."""


@dataclass(frozen=True, slots=True)
class SensoryEntry:
    """One raw input, as received.

    ``timestamp`` is epoch seconds from the buffer's clock. ``metadata`` is a read-only copy
    of what the caller passed, so an entry cannot change after it is ingested; it takes no
    part in hashing (mappings are unhashable) but does take part in equality.
    """

    entry_id: str
    content: str
    source: str
    modality: str
    timestamp: float
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)


def _require_text(name: str, value: object, *, allow_empty: bool) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a str, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValidationError(f"{name} must be a non-empty string")
    return value


class SensoryBuffer:
    """A fixed-capacity ring buffer of ``SensoryEntry`` records.

    ``capacity`` is the number of entries held before the oldest is evicted (at least 1).
    ``clock`` returns epoch seconds and stamps each entry; tests pass a fake one.
    """

    def __init__(
        self, capacity: int = DEFAULT_CAPACITY, *, clock: Callable[[], float] = time.time
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValidationError(f"capacity must be an int >= 1, got {capacity!r}")
        self._capacity = capacity
        self._clock = clock
        self._buffer: deque[SensoryEntry] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._total_ingested = 0
        self._dropped = 0

    @property
    def capacity(self) -> int:
        """Maximum number of entries held at once."""
        return self._capacity

    @property
    def size(self) -> int:
        """Entries currently held (a snapshot; it may change as soon as it is read)."""
        return len(self._buffer)

    @property
    def total_ingested(self) -> int:
        """Entries ever ingested, dropped ones included (monotonic)."""
        return self._total_ingested

    @property
    def dropped(self) -> int:
        """Entries evicted by overflow before any drain saw them (monotonic)."""
        return self._dropped

    def _make_entry(
        self,
        content: object,
        source: object,
        modality: object,
        metadata: Mapping[str, Any] | None,
    ) -> SensoryEntry:
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValidationError(
                f"metadata must be a mapping or None, got {type(metadata).__name__}"
            )
        return SensoryEntry(
            entry_id=str(uuid.uuid4()),
            content=_require_text("content", content, allow_empty=True),
            source=_require_text("source", source, allow_empty=False),
            modality=_require_text("modality", modality, allow_empty=False),
            timestamp=float(self._clock()),
            metadata=MappingProxyType(dict(metadata or {})),
        )

    def _append_locked(self, entries: list[SensoryEntry]) -> int:
        """Append under the held lock; returns how many older entries were evicted.

        Eviction of the oldest entry is the ring buffer's contract (seed 001), not a
        fault: the engine processes every entry as it arrives, so it is logged at DEBUG.
        """
        evicted = 0
        for entry in entries:
            if len(self._buffer) == self._capacity:
                evicted += 1
            self._buffer.append(entry)
        self._total_ingested += len(entries)
        self._dropped += evicted
        return evicted

    def _report_overflow(self, evicted: int) -> None:
        if evicted:
            logger.debug("sensory buffer dropped %d entries (total %d)", evicted, self._dropped)

    async def ingest(
        self,
        content: str,
        source: str,
        modality: str = "text",
        metadata: Mapping[str, Any] | None = None,
    ) -> SensoryEntry:
        """Append one entry and return it; at capacity the oldest entry is dropped.

        ``content`` may be empty (judging it is the engine's job); ``source`` and ``modality``
        must be non-empty. Raises ``ValidationError`` for wrong types, before anything changes.
        """
        entry = self._make_entry(content, source, modality, metadata)
        with self._lock:
            evicted = self._append_locked([entry])
        self._report_overflow(evicted)
        logger.debug("sensory ingest id=%s source=%s modality=%s", entry.entry_id, source, modality)
        return entry

    async def ingest_many(
        self,
        contents: Iterable[str],
        source: str,
        modality: str = "text",
        metadata: Mapping[str, Any] | None = None,
    ) -> list[SensoryEntry]:
        """Append several entries from one source as one contiguous, atomic batch.

        All entries are validated before any is appended, so a bad item leaves the buffer
        unchanged. A batch larger than the capacity keeps only its newest entries in the
        buffer (the rest count as ``dropped``); every created entry is still returned.
        """
        entries = [self._make_entry(content, source, modality, metadata) for content in contents]
        if not entries:
            return []
        with self._lock:
            evicted = self._append_locked(entries)
        self._report_overflow(evicted)
        logger.debug("sensory ingest_many count=%d source=%s", len(entries), source)
        return entries

    async def drain(self) -> list[SensoryEntry]:
        """Remove and return every held entry, oldest first, as one atomic step."""
        with self._lock:
            entries = list(self._buffer)
            self._buffer.clear()
        logger.debug("sensory drain count=%d", len(entries))
        return entries

    def discard(self, doomed: Callable[[SensoryEntry], bool]) -> int:
        """Remove the held entries ``doomed`` picks (an erasure); returns how many."""
        with self._lock:
            kept = [entry for entry in self._buffer if not doomed(entry)]
            removed = len(self._buffer) - len(kept)
            self._buffer.clear()
            self._buffer.extend(kept)
        return removed

    def __repr__(self) -> str:
        return (
            f"SensoryBuffer(capacity={self._capacity}, size={self.size}, "
            f"total_ingested={self._total_ingested}, dropped={self._dropped})"
        )
