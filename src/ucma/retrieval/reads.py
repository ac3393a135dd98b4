"""What one recall reads of its scope, each row read once.

A recall runs on a storage thread as one call (``run_recall``): the time
anchor's probe, the primary layer and the cascade's deeper looks each gather
candidates, read their records, episode briefs, vectors, retention states,
session neighbours and graph edges, and most of those are the same memories
(on LoCoMo dev two thirds of the records a recall read it had read already in
the same recall). ``RecallReads`` keeps what it read for the rest of the
recall, one per scope, and reads only the rows it has not seen: the recall
answers from the state it first read of each row, as one read of a store that
takes calls at once (``Storage.concurrency``) reads each row as last committed
when it ran. It is dropped with the recall.

Each lookup by ids returns what the store's own method returns for those ids,
in the order asked (deduplicated); an id the store does not hold is remembered
as absent. Reads that depend on the moment they run (``superseded`` without an
explicit time) are not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from ucma.storage.base import DEFAULT_BM25, Bm25, EpisodeBrief, ScoredId, Storage
from ucma.types import Fact, MemoryKind, MemoryRecord, RetentionInfo, ReviewFlag, Scope

__all__ = ["RecallReads"]

_V = TypeVar("_V")
_ABSENT = object()


class RecallReads:
    """A read-through memo of one scope's storage reads for one recall (storage
    thread only; see the module docstring)."""

    def __init__(self, storage: Storage, scope: Scope) -> None:
        self._storage = storage
        self._scope = scope
        self._records: dict[str, object] = {}
        self._briefs: dict[str, object] = {}
        self._vectors: dict[str, object] = {}
        self._retention: dict[str, object] = {}
        self._flags: dict[str, object] = {}
        self._superseded: dict[float, dict[str, object]] = {}
        self._neighbors: dict[int, dict[str, object]] = {}
        self._edges: dict[str, list[tuple[str, str, float]]] = {}
        self._searches: dict[Hashable, list[ScoredId]] = {}
        self._facts: dict[str, list[Fact]] = {}

    @property
    def storage(self) -> Storage:
        return self._storage

    # -- by id ----------------------------------------------------------------------

    def records(self, memory_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """``memories.get_many``."""
        return _by_id(
            self._records,
            memory_ids,
            lambda ids: self._storage.memories.get_many(self._scope, ids),
        )

    def briefs(self, episode_ids: Iterable[str]) -> dict[str, EpisodeBrief]:
        """``episodes.briefs``."""
        return _by_id(
            self._briefs, episode_ids, lambda ids: self._storage.episodes.briefs(self._scope, ids)
        )

    def vectors(self, memory_ids: Iterable[str]) -> dict[str, np.ndarray]:
        """``memories.vectors``."""
        return _by_id(
            self._vectors,
            memory_ids,
            lambda ids: self._storage.memories.vectors(self._scope, ids),
        )

    def retention(self, memory_ids: Iterable[str]) -> dict[str, RetentionInfo]:
        """``retention.get_many``."""
        return _by_id(
            self._retention,
            memory_ids,
            lambda ids: self._storage.retention.get_many(self._scope, ids),
        )

    def flagged(self, memory_ids: Iterable[str]) -> dict[str, ReviewFlag]:
        """``conflicts.flagged``."""
        return _by_id(
            self._flags,
            memory_ids,
            lambda ids: self._storage.conflicts.flagged(self._scope, ids),
        )

    def superseded(self, memory_ids: Iterable[str], at: float | None = None) -> dict[str, str]:
        """``conflicts.superseded``; kept only for an explicit ``at``."""
        if at is None:
            return self._storage.conflicts.superseded(self._scope, list(memory_ids))
        return _by_id(
            self._superseded.setdefault(at, {}),
            memory_ids,
            lambda ids: self._storage.conflicts.superseded(self._scope, ids, at=at),
        )

    def neighbors(
        self, episode_ids: Iterable[str], window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """``episodes.neighbors``."""
        return _by_id(
            self._neighbors.setdefault(window, {}),
            episode_ids,
            lambda ids: self._storage.episodes.neighbors(self._scope, ids, window),
        )

    # -- other reads ------------------------------------------------------------------

    def edges(self, node_id: str) -> list[tuple[str, str, float]]:
        """The node's edges as ``(other node, edge type, weight)``: those from it
        (``graph.edges_from``), then those to it (``graph.edges_to``)."""
        found = self._edges.get(node_id)
        if found is None:
            graph, scope = self._storage.graph, self._scope
            found = [(e.target_id, e.edge_type, e.weight) for e in graph.edges_from(scope, node_id)]
            found += [(e.source_id, e.edge_type, e.weight) for e in graph.edges_to(scope, node_id)]
            self._edges[node_id] = found
        return found

    def keyword_search(
        self,
        terms: Sequence[str],
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
        bm25: Bm25 = DEFAULT_BM25,
    ) -> list[ScoredId]:
        """``memories.keyword_search``."""
        key = (tuple(terms), k, None if kinds is None else tuple(kinds), include_archived, bm25)
        found = self._searches.get(key)
        if found is None:
            found = self._searches[key] = self._storage.memories.keyword_search(
                self._scope, terms, k, kinds=kinds, include_archived=include_archived, bm25=bm25
            )
        return list(found)

    def facts_about(self, entity: str) -> list[Fact]:
        """``facts.about``."""
        found = self._facts.get(entity)
        if found is None:
            found = self._facts[entity] = self._storage.facts.about(self._scope, entity)
        return list(found)


def _by_id(
    kept: dict[str, object],
    wanted: Iterable[str],
    read: Callable[[list[str]], Mapping[str, _V]],
) -> dict[str, _V]:
    """``read`` of the ids in ``wanted`` that ``kept`` lacks, remembered there (an id
    read but not found as absent); what ``kept`` holds of ``wanted``, in its order."""
    ids = list(dict.fromkeys(wanted))
    missing = [i for i in ids if i not in kept]
    if missing:
        found = read(missing)
        for memory_id in missing:
            kept[memory_id] = found.get(memory_id, _ABSENT)
    result: dict[str, _V] = {}
    for memory_id in ids:
        value = kept[memory_id]
        if value is not _ABSENT:
            result[memory_id] = value  # type: ignore[assignment]
    return result
