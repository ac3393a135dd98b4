"""A mapping that keeps its most recently used entries only: the bound on every in-process
structure that grows with the scopes a process serves.

Any caller of the service can name a new scope (an ``agent_id`` is free text), so a
mapping keyed by scope that is never trimmed grows for as long as callers invent them.
``LruMap(capacity)`` holds at most ``capacity`` entries; storing one more drops the
least recently used (read or written). What each owner keeps in one, and what a dropped
entry means for it, is written where the map is made; none holds anything storage does
not also hold or cannot rebuild.

Reads and writes take a lock, so a map may be shared between the event loop and the
storage thread. ``on_evict(key, value)`` runs after the lock is released.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from typing import TypeVar

from ucma.errors import ConfigError

__all__ = ["SCOPES_IN_MEMORY", "LruMap"]

SCOPES_IN_MEMORY = 1_000
"""The default capacity of the maps keyed by scope (``LimitsConfig.max_scopes_in_memory``)."""

K = TypeVar("K")
V = TypeVar("V")


class LruMap(MutableMapping[K, V]):
    """At most ``capacity`` entries, the least recently used dropped first. Reading an
    entry (``m[key]``, ``get``, ``setdefault``) or writing it makes it the most recent;
    ``in``, ``len`` and iteration do not."""

    def __init__(self, capacity: int, on_evict: Callable[[K, V], object] | None = None) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ConfigError(f"an LruMap's capacity must be a positive integer, got {capacity!r}")
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._on_evict = on_evict

    def __getitem__(self, key: K) -> V:
        with self._lock:
            value = self._entries[key]
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            evicted = self._trim()
        self._evicted(evicted)

    def setdefault(self, key: K, default: V) -> V:
        """The value of ``key``, stored as ``default`` first if absent (one locked step)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            self._entries[key] = default
            evicted = self._trim()
        self._evicted(evicted)
        return default

    def __delitem__(self, key: K) -> None:
        with self._lock:
            del self._entries[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            keys = list(self._entries)
        return iter(keys)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _trim(self) -> list[tuple[K, V]]:
        evicted = []
        while len(self._entries) > self.capacity:
            evicted.append(self._entries.popitem(last=False))
        return evicted

    def _evicted(self, evicted: list[tuple[K, V]]) -> None:
        if self._on_evict is not None:
            for key, value in evicted:
                self._on_evict(key, value)
