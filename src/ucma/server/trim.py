"""Give memory the service has freed back to the operating system when it goes idle.

glibc's allocator keeps freed memory in its arenas (one per thread that allocated, up to
eight per core) instead of returning it, so the resident size of a service that has parsed
a few large bodies, or run the embedding model in several worker threads, stays near its
highest point for good. ``malloc_trim(0)`` returns the free pages of every arena. Measured
with ``bench/hostile.py``'s requests against ``ucma serve`` (one 256-item batch, three
rounds of hostile bodies, 1,000 generated cases, three more rounds): resident memory
517 -> 746 MB without trimming, 451 -> 389 MB (305 MB at the lowest) when the service trims
each time it goes idle.

``IdleTrim.request_done(in_flight)`` trims in a worker thread (never on the event loop)
when no request is in progress and no trim is running. A trim costs about 10 ms after
some hundreds of megabytes were freed and 0.06 ms when there is nothing to give back.
Elsewhere than glibc (musl, macOS) there is no ``malloc_trim`` and nothing is done.

Trimming returns whole free pages only. Measured over 6,000 of ``bench/hostile.py``'s
requests (glibc's ``mallinfo2`` after each round): Python's live heap stayed at 100-120 MB and
SQLite's at 4-7 MB while glibc's arenas grew from 364 MB to 1,083 MB of address space, 960 MB
of it free, and resident memory 300 -> 351 MB: free memory scattered over many arenas (one
per thread that allocated, up to eight per core) in pages that still hold a live chunk, and
large transient buffers (request bodies, JSON parsed from them) placed inside arenas once
glibc's adaptive mmap threshold had risen past them. ``limit_arenas()`` therefore sets, as
the service starts, at most ``ARENAS`` arenas and a fixed mmap threshold of
``MMAP_THRESHOLD`` bytes, so each buffer larger than that is its own mapping, returned to
the system whole when freed.
"""

import ctypes
import ctypes.util
from collections.abc import Callable
from typing import Any

import anyio

__all__ = ["ARENAS", "MMAP_THRESHOLD", "IdleTrim", "limit_arenas", "malloc_trim"]

ARENAS = 2
"""glibc malloc arenas the service allows (its default: eight per core)."""

MMAP_THRESHOLD = 256 * 1024
"""Allocations of at least this many bytes get a mapping of their own (glibc's default
starts at 128 KiB and rises up to 32 MiB as large blocks are freed)."""

_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _libc_function(name: str) -> Any | None:
    """A function of glibc by name, or None where the C library has none."""
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        return getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):
        return None


def malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


def limit_arenas() -> bool:
    """Allow ``ARENAS`` malloc arenas and fix the mmap threshold at ``MMAP_THRESHOLD``
    (glibc's ``mallopt``) for this process; False where there is no ``mallopt``. Call it
    before the threads that allocate start: arenas made earlier stay."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, ARENAS)) and bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


class IdleTrim:
    """Trim freed memory each time the service goes idle."""

    def __init__(self) -> None:
        self.trim = malloc_trim()
        self.running = False
        self.trims = 0

    async def request_done(self, in_flight: int) -> None:
        """Called as each request ends; trims (in a worker thread) if the service is idle."""
        if self.trim is None or in_flight or self.running:
            return
        self.running = True
        try:
            await anyio.to_thread.run_sync(self.trim)
            self.trims += 1
        finally:
            self.running = False
