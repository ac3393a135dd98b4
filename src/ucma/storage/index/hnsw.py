"""Approximate dense search for large scopes: an HNSW graph (usearch) per scope.

Exact search (``ScopeVectors.search``) streams every row of the scope through
a matrix product, linear in its size: ~1.5 ms at 20,000 x 384 and ~6.5 ms at
100,000 on this project's reference machine. From ``AnnSettings.threshold``
live rows a scope also gets an HNSW graph over half-precision copies of its
vectors, whose search cost barely grows with size (0.5 ms at 20,000, 0.75 ms
at 100,000, re-scoring included). The threshold and the graph's parameters
were chosen with bench/vector_index.py (docs/retrieval.md).

- The graph is built on a background thread from the scope's cached rows;
  searches stay exact until it is published.
- Keys are the rows' ``seq``. A row's vector never changes, so a graph stays
  valid when the cache reloads, and rows deleted since the build are skipped
  through the cache's liveness flags.
- Rows added after the build (seq above ``HnswIndex.max_seq``) are scanned
  exactly. When they outgrow ``AnnSettings.tail_rows`` or
  ``AnnSettings.tail_fraction`` of the graph, the builder extends a copy of
  the graph (dropping keys of deleted rows) and swaps it in; a graph with
  more than ``tail_fraction`` of its keys dead is rebuilt from scratch.
- A published graph is never modified, so searches need no lock.

The graph only proposes candidates: ``ScopeVectors`` re-scores them with the
float32 rows, so reported cosines are exact and only recall is approximate.
This module holds no SQL and no knowledge of filters.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ucma.lru import SCOPES_IN_MEMORY, LruMap
from ucma.storage.base import AnnSettings
from ucma.types import Scope

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = ["HnswBuilder", "HnswIndex", "needs_build"]

logger = logging.getLogger(__name__)

ADD_CHUNK = 1024
"""Rows per ``Index.add`` call: the builder checks for shutdown between calls."""

RETRY_AFTER_S = 600.0
"""A scope whose build failed is not tried again for this long (searches stay exact)."""


@dataclass(frozen=True, slots=True)
class HnswIndex:
    """A published graph: every row that was alive when it was built and has
    ``seq <= max_seq`` is a key of ``graph``."""

    graph: Index
    max_seq: int
    keys: int

    def nearest(self, query: np.ndarray, count: int) -> np.ndarray:
        """The seqs of up to ``count`` approximate nearest rows, nearest first."""
        if count <= 0 or self.keys == 0:
            return np.empty(0, dtype=np.int64)
        matches = self.graph.search(query, min(count, self.keys), threads=1)
        return np.asarray(matches.keys, dtype=np.int64)


def needs_build(
    settings: AnnSettings,
    live_rows: int,
    tail_rows: int,
    indexed_alive: int,
    current: HnswIndex | None,
) -> bool:
    """Whether a scope of ``live_rows`` should get a new or extended graph, given
    its current one (if any), the rows added since (``tail_rows``) and how many
    of the graph's keys are still alive."""
    if not settings.enabled or live_rows < settings.threshold:
        return False
    if current is None:
        return True
    return tail_rows > max(
        settings.tail_rows, settings.tail_fraction * current.keys
    ) or not _extendable(settings, current, indexed_alive)


def _extendable(settings: AnnSettings, graph: HnswIndex, indexed_alive: int) -> bool:
    """Whether few enough of the graph's keys belong to deleted rows to extend
    it rather than build a new one."""
    return graph.keys - indexed_alive <= settings.tail_fraction * graph.keys


@dataclass(slots=True)
class _Snapshot:
    """What the builder needs from a scope's cache, taken on the caller's thread.

    ``blocks`` are the cache's row matrices in position order; the cache never
    writes into rows it already holds (appends go past them, compaction makes
    new arrays), so the builder may read them while the cache moves on.
    """

    scope: Scope
    blocks: list[np.ndarray]
    seqs: np.ndarray
    alive: np.ndarray
    base: HnswIndex | None


class HnswBuilder:
    """Builds and extends graphs on one background thread, one scope at a time."""

    def __init__(
        self, settings: AnnSettings, dimension: int, publish: Callable[[Scope, HnswIndex], None]
    ) -> None:
        self._settings = settings
        self._dimension = dimension
        self._publish = publish
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # scope -> time.monotonic() of its last failure, for the scopes that failed lately
        self._failed: LruMap[Scope, float] = LruMap(SCOPES_IN_MEMORY)

    @property
    def busy(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def start(
        self,
        scope: Scope,
        blocks: list[np.ndarray],
        seqs: np.ndarray,
        alive: np.ndarray,
        base: HnswIndex | None,
    ) -> bool:
        """Build or extend ``scope``'s graph in the background from these rows
        (``seqs`` and ``alive`` are copied); False when a build is already running,
        the builder was stopped, or the scope's last build failed recently."""
        with self._lock:
            failed = self._failed.get(scope)
            if failed is not None and time.monotonic() - failed < RETRY_AFTER_S:
                return False
            if self.busy or self._stop.is_set():
                return False
            snapshot = _Snapshot(scope, list(blocks), seqs.copy(), alive.copy(), base)
            self._thread = threading.Thread(
                target=self._run, args=(snapshot,), name="ucma-hnsw", daemon=True
            )
            self._thread.start()
            return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running build, if any; False if it is still running."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.busy

    def stop(self) -> None:
        """Stop the running build at its next chunk and refuse new ones."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self, snapshot: _Snapshot) -> None:
        try:
            built = self._build(snapshot)
        except Exception:  # a failed build leaves searches exact; never the caller's error
            self._failed[snapshot.scope] = time.monotonic()
            logger.exception("building the HNSW index of %s failed", snapshot.scope)
            return
        if built is not None and not self._stop.is_set():
            self._publish(snapshot.scope, built)

    def _new_graph(self) -> Index:
        from usearch.index import Index  # ~0.1 s to import: only once a scope needs a graph

        settings = self._settings
        return Index(
            ndim=self._dimension,
            metric="cos",
            dtype="f16",
            connectivity=settings.connectivity,
            expansion_add=settings.expansion_add,
            expansion_search=settings.expansion_search,
        )

    def _build(self, snapshot: _Snapshot) -> HnswIndex | None:
        seqs, alive, base = snapshot.seqs, snapshot.alive, snapshot.base
        alive_seqs = seqs[alive]
        indexed_alive = 0 if base is None else int(np.count_nonzero(alive & (seqs <= base.max_seq)))
        if base is not None and _extendable(self._settings, base, indexed_alive):
            graph = base.graph.copy()
            stale = np.setdiff1d(np.asarray(graph.keys, dtype=np.int64), alive_seqs)
            if stale.size:
                graph.remove(stale)
            wanted = alive & (seqs > base.max_seq)
        else:
            graph = self._new_graph()
            wanted = alive
        added = 0
        start = 0
        for block in snapshot.blocks:
            end = start + len(block)
            rows = np.flatnonzero(wanted[start:end])
            for chunk in range(0, rows.size, ADD_CHUNK):
                if self._stop.is_set():
                    return None
                picked = rows[chunk : chunk + ADD_CHUNK]
                graph.add(seqs[start + picked], block[picked], threads=1)
                added += picked.size
            start = end
        max_seq = int(seqs[-1]) if seqs.size else 0
        logger.info(
            "HNSW index of %s: %d keys (%d added), up to seq %d",
            snapshot.scope,
            len(graph),
            added,
            max_seq,
        )
        return HnswIndex(graph=graph, max_seq=max_seq, keys=len(graph))
