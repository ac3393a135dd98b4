"""Unified retrieval over every memory kind (seed 001 chapter 19).

One pass per query, run on the storage thread with the query vector already
computed:

1. channels chosen by the plan: dense vectors, keyword (BM25), entity index,
   tag indexes (procedures, learnings), temporal buckets; a dense supplement
   when a non-dense plan finds fewer than three candidates (seed 001);
2. per-candidate relevance: hybrid ``w * cosine + (1 - w) * BM25 / max BM25``
   for text matches, the structural score for index matches, the larger of
   the two when both apply; dense-only candidates below the seed's minimum
   similarity are dropped; only the best ``limit * rank_pool_factor`` (at
   least 30) go on, so full records are read for a small pool;
3. graph expansion (spreading activation): neighbours of the top candidates
   along memory-graph edges (both directions, since association is
   symmetric) inherit ``parent * edge weight * discount`` (seed 001). A
   neighbour found by no channel enters with that relevance; one already
   found combines both as a noisy OR, ``r + inherited * (1 - r)``, so the
   evidence behind a relevant lesson and the turns around a relevant turn
   rise together;
4. seed 001's multi-factor ranking (``ranking.seed001_score``).

Returned hits are then counted as a review (access statistics and retention,
one transaction) by ``record_access``. Seed 003's fusion and seed 004's
cascade replace steps 2 and 4 as ranking presets; the seam is ``_relevance``
and ``_rank``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ucma.config import UCMAConfig
from ucma.memory.graph_maths import best_first_related
from ucma.memory.retention import reinforced_stability, retention
from ucma.retrieval.ranking import RankFactors, review_weight, seed001_score
from ucma.retrieval.router import QueryPlan
from ucma.storage.base import Storage
from ucma.types import (
    Episode,
    Fact,
    Hit,
    MemoryKind,
    MemoryRecord,
    QueryMode,
    RetentionInfo,
    Scope,
)

__all__ = ["Retriever", "record_access"]

logger = logging.getLogger(__name__)

_DAY = 86_400.0
_MIN_CANDIDATES = 3
_MIN_POOL = 30


@dataclass(slots=True)
class _Candidate:
    channels: dict[str, float] = field(default_factory=dict)
    structural: float = 0.0
    graph_distance: int = 0
    source: str = ""


class Retriever:
    """Runs a ``QueryPlan`` against a ``Storage``; synchronous, storage-thread only."""

    def __init__(self, storage: Storage, config: UCMAConfig) -> None:
        self._storage = storage
        self._config = config

    def retrieve(
        self,
        scope: Scope,
        plan: QueryPlan,
        vector: np.ndarray | None,
        *,
        limit: int,
        now: float,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
    ) -> list[Hit]:
        candidates = self._gather(scope, plan, vector)
        if not candidates:
            return []
        relevance = self._relevance(scope, candidates, vector)
        # Full records only for the pool that can still make the top ``limit``.
        pool = max(limit * self._config.retrieval.rank_pool_factor, _MIN_POOL)
        relevance = dict(sorted(relevance.items(), key=lambda kv: (-kv[1], kv[0]))[:pool])
        if include_graph_neighbors and relevance:
            self._expand(scope, candidates, relevance)
        records = self._storage.memories.get_many(scope, list(relevance))
        relevance = {
            i: r for i, r in relevance.items() if i in records and records[i].archived_at is None
        }
        if plan.mode is QueryMode.TEMPORAL and plan.time_range is not None:
            # An explicit time range filters every channel's candidates, not only its own.
            start, end = plan.time_range
            relevance = {
                i: r for i, r in relevance.items() if start <= _event_time(records[i]) <= end
            }
        hits = self._rank(scope, candidates, records, relevance, now, min_importance)
        logger.debug(
            "retrieved %d of %d candidates for %r",
            min(limit, len(hits)),
            len(candidates),
            plan.text[:60],
        )
        return hits[:limit]

    # -- channels ---------------------------------------------------------------

    def _gather(
        self, scope: Scope, plan: QueryPlan, vector: np.ndarray | None
    ) -> dict[str, _Candidate]:
        cfg = self._config.retrieval
        store = self._storage
        candidates: dict[str, _Candidate] = {}

        def add(items: Iterable[tuple[str, float]], channel: str, *, structural: bool) -> None:
            for memory_id, score in items:
                cand = candidates.setdefault(memory_id, _Candidate(source=channel))
                cand.channels[channel] = max(score, cand.channels.get(channel, 0.0))
                if structural:
                    cand.structural = max(cand.structural, score)

        def dense() -> None:
            if vector is not None:
                found = store.memories.vector_search(
                    scope, vector, cfg.vector_candidates, kinds=plan.kinds
                )
                add(found, "dense", structural=False)

        if plan.runs_dense:
            dense()
        if plan.runs_keyword and plan.terms:
            found = store.memories.keyword_search(
                scope, plan.terms, cfg.keyword_candidates, kinds=plan.kinds
            )
            if found:
                top = found[0][1]
                add(((i, s / top) for i, s in found), "keyword", structural=False)
        if plan.entity and _wants(plan, MemoryKind.SEMANTIC):
            facts = store.facts.about(scope, plan.entity)
            add(((f.id, f.confidence) for f in facts), "entity", structural=True)
        if plan.tags:
            # A tag match is evidence of relevance in itself; the record's track
            # record decides the rest (seed 001 sorts by success and confidence).
            if _wants(plan, MemoryKind.PROCEDURAL):
                procs = store.procedures.find_by_tags(scope, plan.tags)
                add(((p.id, 0.5 + 0.5 * p.ranking_score) for p in procs), "tags", structural=True)
            if _wants(plan, MemoryKind.LEARNING):
                lessons = store.learnings.relevant(scope, plan.tags, limit=cfg.keyword_candidates)
                add(((lr.id, 0.5 + 0.5 * lr.confidence) for lr in lessons), "tags", structural=True)
        if plan.time_range is not None and _wants(plan, MemoryKind.EPISODIC):
            start, end = plan.time_range
            episodes = store.episodes.time_range(scope, start, end, limit=cfg.vector_candidates)
            add(((e.id, e.effective_salience) for e in episodes), "temporal", structural=True)
        if len(candidates) < _MIN_CANDIDATES and not plan.runs_dense:
            dense()
        return candidates

    # -- scoring ------------------------------------------------------------------

    def _relevance(
        self,
        scope: Scope,
        candidates: dict[str, _Candidate],
        vector: np.ndarray | None,
    ) -> dict[str, float]:
        cfg = self._config.retrieval
        cosines: dict[str, float] = {}
        if vector is not None:
            missing = [i for i, c in candidates.items() if "dense" not in c.channels]
            stored = self._storage.memories.vectors(scope, missing) if missing else {}
            for memory_id, cand in candidates.items():
                if "dense" in cand.channels:
                    cosines[memory_id] = cand.channels["dense"]
                elif memory_id in stored:
                    cosines[memory_id] = float(np.dot(stored[memory_id], vector))
        relevance: dict[str, float] = {}
        w = cfg.hybrid_dense_weight
        for memory_id, cand in candidates.items():
            cosine = cosines.get(memory_id)
            keyword = cand.channels.get("keyword", 0.0)
            if cand.channels.keys() <= {"dense"} and (
                cosine is None or cosine < cfg.semantic_min_similarity
            ):
                continue
            text_score = 0.0
            if cosine is not None:
                text_score = w * max(cosine, 0.0) + (1.0 - w) * keyword
                cand.channels.setdefault("cosine", cosine)
            elif keyword:
                text_score = (1.0 - w) * keyword
            relevance[memory_id] = max(text_score, cand.structural)
        return relevance

    def _expand(
        self, scope: Scope, candidates: dict[str, _Candidate], relevance: dict[str, float]
    ) -> None:
        cfg = self._config.retrieval
        graph = self._storage.graph

        def neighbors(node_id: str) -> list[tuple[str, str, float]]:
            out = [(e.target_id, e.edge_type, e.weight) for e in graph.edges_from(scope, node_id)]
            out += [(e.source_id, e.edge_type, e.weight) for e in graph.edges_to(scope, node_id)]
            return out

        seeds = sorted(relevance, key=lambda i: (-relevance[i], i))[: cfg.graph_expansion_top_k]
        inherited: dict[str, tuple[float, int]] = {}
        for seed in seeds:
            for node_id, weight, hops in best_first_related(
                seed, neighbors, cfg.graph_expansion_hops, min_weight=cfg.graph_expansion_min_weight
            ):
                score = relevance[seed] * weight * cfg.graph_expansion_discount
                if node_id != seed and score > inherited.get(node_id, (-1.0, 0))[0]:
                    inherited[node_id] = (score, hops)
        for node_id, (score, hops) in inherited.items():
            if node_id in relevance:
                # Two independent signs of relevance combine like a noisy OR.
                own = relevance[node_id]
                relevance[node_id] = own + score * (1.0 - own)
                candidates[node_id].channels["graph"] = score
                continue
            relevance[node_id] = score
            candidates[node_id] = _Candidate(
                channels={"graph": score}, graph_distance=hops, source="graph_expansion"
            )

    def _rank(
        self,
        scope: Scope,
        candidates: dict[str, _Candidate],
        records: dict[str, MemoryRecord],
        relevance: dict[str, float],
        now: float,
        min_importance: float,
    ) -> list[Hit]:
        states = self._storage.retention.get_many(scope, list(relevance))
        flagged = self._storage.conflicts.flagged(scope, list(relevance))
        hits: list[Hit] = []
        for memory_id, rel in relevance.items():
            record = records[memory_id]
            if record.effective_salience < min_importance:
                continue
            state = states.get(memory_id)
            factors = RankFactors(
                relevance=rel,
                importance=record.effective_salience,
                age_days=(now - _event_time(record)) / _DAY,
                retention=(
                    retention(state.stability, (now - state.last_reviewed) / _DAY)
                    if state
                    else None
                ),
            )
            cand = candidates[memory_id]
            stale = memory_id in flagged or (isinstance(record, Fact) and not record.is_current)
            score = seed001_score(factors, self._config.retrieval)
            hits.append(
                Hit(
                    memory=record,
                    score=review_weight(score, stale, self._config.conflicts.review_rank_factor),
                    relevance=rel,
                    source=cand.source,
                    graph_distance=cand.graph_distance,
                    channels=dict(cand.channels),
                    needs_review=stale,
                )
            )
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        return hits


def record_access(
    storage: Storage, scope: Scope, memory_ids: Sequence[str], now: float, boost_base: float
) -> None:
    """Count a retrieval as a review: access statistics plus Ebbinghaus
    reinforcement with the spacing effect (seed 001), in one transaction."""
    if not memory_ids:
        return
    with storage.transaction():
        storage.memories.touch(scope, memory_ids, now)
        states = storage.retention.get_many(scope, memory_ids)
        updated = [
            RetentionInfo(
                memory_id=s.memory_id,
                stability=reinforced_stability(
                    s.stability, (now - s.last_reviewed) / _DAY, boost_base
                ),
                last_reviewed=now,
                review_count=s.review_count + 1,
            )
            for s in states.values()
        ]
        storage.retention.put_many(scope, updated)


def _wants(plan: QueryPlan, kind: MemoryKind) -> bool:
    return plan.kinds is None or kind in plan.kinds


def _event_time(record: MemoryRecord) -> float:
    return record.timestamp if isinstance(record, Episode) else record.created_at
