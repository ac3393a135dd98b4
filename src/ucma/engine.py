"""AsyncMemory: the memory controller, the one place that wires UCMA together.

Seed 001's controller API (observe, remember, learn, new_session, stats) plus
the typed writes and reads a user needs (assert_fact, facts_about,
add_procedure, record_procedure_outcome, find_procedures, get, list, delete,
export and import), seed 002's conflict resolution (assert_fact_detailed,
conflicts, resolve_conflict, sources of truth, answer; logic in
``ucma.conflicts``), seed 004's cascading recall (``ucma.retrieval``), seed
003's learning loop (decide, outcome, events; ``ucma.learning``), and the
lifecycle (sleep, forget, run_gardener, history; ``ucma.lifecycle``).
``ucma.sync.Memory`` wraps every method one-to-one. Every notion of "now"
comes from ``self.clock``.

Threading model: storage calls run on one dedicated worker thread (SQLite
connections are single-writer), embeddings on the embedder's own threads, so
the event loop never blocks. Each public write validates everything first,
computes embeddings second, and writes in one storage transaction last: a
failure at any step leaves nothing half-written.

Scope: every method takes ``user_id`` / ``agent_id``; the values given when
the memory was opened are the defaults. A call with no user_id at all raises
``ScopeError``.

Administration: ``create_key``, ``list_keys``, ``count_keys``, ``revoke_key``,
``authenticate`` and ``scopes`` are not scoped. They manage the API keys of the service
(``ucma keys``, ``ucma.server.auth``) and list the scopes a database holds (the local-mode
inspector page); the server and CLI reach the key store only through them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ucma import apikeys, exchange
from ucma.config import UCMAConfig
from ucma.conflicts.answer import Answer, compose_answer
from ucma.conflicts.predicates import PredicateRegistry
from ucma.conflicts.reports import FactAssertion, FactList
from ucma.conflicts.resolver import ConflictResolver, SourceMismatch
from ucma.conflicts.sources import SourceOfTruth
from ucma.embeddings import CachedEmbedder, Embedder, TokenCounter
from ucma.errors import (
    AuthenticationError,
    ConfigError,
    NotFoundError,
    UCMAError,
    ValidationError,
)
from ucma.events.log import Event, SalienceProjection, replay_salience
from ucma.learning import causal, patterns
from ucma.learning.decisions import (
    check_quality,
    normalised_memory_scores,
    observe_outcome,
    track_decision,
)
from ucma.learning.records import DecisionTrace, OutcomeReport, OutcomeSignal, SalienceUpdate
from ucma.lifecycle.clock import Clock, as_clock
from ucma.lifecycle.consolidation import PHASES, SleepCycle, SleepReport, graph_importance
from ucma.lifecycle.dedup import find_duplicates, merge_duplicates
from ucma.lifecycle.forgetting import ForgettingReport, forgetting_pass
from ucma.lifecycle.gardener import Gardener, GardenerReport, promote_identity_patterns
from ucma.memory.graph_maths import best_first_related
from ucma.memory.importance import classify_importance
from ucma.memory.levels import initial_salience, select_temporal_level
from ucma.memory.retention import SECONDS_PER_DAY, initial_stability, retention
from ucma.memory.sensory import SensoryBuffer
from ucma.memory.working import WorkingMemory
from ucma.providers.base import Providers
from ucma.providers.registry import providers_from_config
from ucma.retrieval.cascade import RecallResult
from ucma.retrieval.recall import RecallRequest, record_recall, run_recall
from ucma.retrieval.router import Layer, route
from ucma.storage.base import Storage
from ucma.types import (
    ApiKey,
    Conflict,
    ConflictStatus,
    DuplicateAttempt,
    Episode,
    Fact,
    GraphEdge,
    HistoryEntry,
    Hit,
    ImportReport,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    MemorySource,
    Observation,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    QueryMode,
    RetentionInfo,
    ReviewFlag,
    Scope,
    fact_id_for,
)
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_metadata,
    check_query,
    check_scope,
    check_strings,
    check_timestamp,
)

__all__ = ["AsyncMemory"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_OBSERVE_KEYS = frozenset(
    {
        "content",
        "source",
        "timestamp",
        "metadata",
        "session_id",
        "tags",
        "participants",
        "provenance",
    }
)
_NAME_SCOPES = 10_000  # scopes whose participant names are kept for routing


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


class AsyncMemory:
    """Long-term memory for one database file; async, safe to share between tasks."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        config: UCMAConfig | None = None,
        user_id: str | None = None,
        agent_id: str = "default",
        embedder: Embedder | None = None,
        storage: Storage | None = None,
        clock: Clock | Callable[[], float] | None = None,
        providers: Providers | None = None,
        sources: Sequence[SourceOfTruth] = (),
    ) -> None:
        self.path = Path(path)
        self.config = config or UCMAConfig()
        self.predicates = PredicateRegistry.from_config(self.config.conflicts)
        self._resolver = ConflictResolver(self.config.conflicts, self.predicates)
        self._sources: list[SourceOfTruth] = []
        for source in sources:
            self.add_source_of_truth(source)
        self._default_user = user_id
        self._default_agent = agent_id
        # Every notion of "now" comes from here (ucma.lifecycle.clock).
        self.clock: Clock = as_clock(clock)
        self._clock = self.clock
        self._providers = providers
        self._interrupt = asyncio.Event()
        self._consolidation: asyncio.Task[SleepReport] | None = None
        self._gardener_owner = _new_id("gardener")
        self._inner_embedder = embedder or _embedder_from_config(self.config)
        self._owns_embedder = embedder is None
        self._storage: Storage | None = storage
        self._embedder: Embedder | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._queued: set[asyncio.Future[None]] = set()
        self._open_lock = asyncio.Lock()
        self._closed = False
        self.sensory = SensoryBuffer(self.config.sensory.capacity, clock=self.clock)
        self._tokens = TokenCounter()
        self._working: dict[Scope, WorkingMemory] = {}
        self._sessions: dict[Scope, str] = {}
        self._last_episode: dict[tuple[Scope, str], str] = {}
        # The people each scope's episodes involve, for the router (see _known_names).
        self._names: dict[Scope, list[str]] = {}

    # -- lifecycle ----------------------------------------------------------------

    async def open(self) -> AsyncMemory:
        """Open the database (idempotent); every other method opens on first use."""
        async with self._open_lock:
            if self._closed:
                raise ValidationError("this memory is closed; create a new one")
            if self._executor is not None:
                return self
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="ucma-storage")
            if self._storage is None:
                self._storage = await self._run(self._open_storage)
            self._embedder = CachedEmbedder(
                self._inner_embedder,
                max_size=self.config.embedding.lru_size,
                store=self._storage.embedding_cache
                if self.config.embedding.persistent_cache
                else None,
                write_batch=self.config.embedding.persistent_cache_batch,
            )
            logger.info("opened %s (embedder %s)", self.path, self._inner_embedder.model_id)
        return self

    def _open_storage(self) -> Storage:
        from ucma.storage.sqlite import SQLiteStorage

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return SQLiteStorage(
            self.path,
            dimension=self._inner_embedder.dimension,
            ann=self.config.retrieval.ann_settings(),
        )

    async def close(self) -> None:
        async with self._open_lock:
            if self._closed:
                return
            self._closed = True
            if self._consolidation is not None and not self._consolidation.done():
                self._interrupt.set()
                await asyncio.gather(self._consolidation, return_exceptions=True)
            await asyncio.gather(*self._queued, return_exceptions=True)
            if self._embedder is not None:
                await self._embedder.flush()
            if self._executor is not None:
                if self._storage is not None:
                    await self._run(self._storage.close)
                self._executor.shutdown(wait=True)
            if self._owns_embedder:
                await self._inner_embedder.aclose()

    async def __aenter__(self) -> AsyncMemory:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def embedder(self) -> Embedder:
        return self._inner_embedder

    async def _run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self._executor is None:
            raise ValidationError("memory is not open")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def _queue(self, fn: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run ``fn`` on the storage thread without waiting for it: a write a
        caller's answer does not depend on. The one storage thread takes work in
        order, so every later storage call sees it; a failure is logged."""
        if self._executor is None:
            raise ValidationError("memory is not open")
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))
        self._queued.add(future)
        future.add_done_callback(self._dequeue)

    def _dequeue(self, future: asyncio.Future[None]) -> None:
        self._queued.discard(future)
        if not future.cancelled() and future.exception() is not None:
            logger.error("queued storage write failed", exc_info=future.exception())

    async def _ready(self) -> Storage:
        if self._executor is None or self._storage is None:
            await self.open()
        assert self._storage is not None
        return self._storage

    async def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for memory content. They are stored with their memories, so
        the embedding caches (kept for queries) would only hold second copies."""
        await self._ready()
        return await self._inner_embedder.embed(texts)

    async def _embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors through the LRU and the persistent (model, text) cache,
        in one batch (one model call for what the caches miss)."""
        await self._ready()
        assert self._embedder is not None
        vectors: np.ndarray = await self._embedder.embed(texts)
        return vectors

    def _scope(self, user_id: str | None, agent_id: str | None) -> Scope:
        return check_scope(
            user_id if user_id is not None else self._default_user,
            agent_id if agent_id is not None else self._default_agent,
        )

    def session_id(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """The current session of a scope (one is started on first use)."""
        scope = self._scope(user_id, agent_id)
        return self._sessions.setdefault(scope, _new_id("ses"))

    def working_memory(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> WorkingMemory:
        """The scope's working memory: three token-budgeted zones of the LLM context."""
        scope = self._scope(user_id, agent_id)
        if scope not in self._working:
            cfg = self.config.working
            self._working[scope] = WorkingMemory(
                {
                    "system": cfg.system_tokens,
                    "active": cfg.active_tokens,
                    "staging": cfg.staging_tokens,
                },
                self._tokens.count,
                self._clock,
            )
        return self._working[scope]

    # -- writes -------------------------------------------------------------------

    async def observe(
        self,
        content: str,
        *,
        source: str = "user",
        timestamp: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        tags: Sequence[str] | None = None,
        participants: Sequence[str] | None = None,
        provenance: Provenance | str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Observation:
        """Observe one input; store it as an episode if it is important enough.

        ``timestamp`` is when the event happened (default now), so history can
        be imported; ``source`` is who or what produced it ("user", "tool_result",
        a speaker's name ...). Returns what was done with it.
        """
        item = {
            "content": content,
            "source": source,
            "timestamp": timestamp,
            "metadata": metadata,
            "session_id": session_id,
            "tags": tags,
            "participants": participants,
            "provenance": provenance,
        }
        [observation] = await self.observe_many([item], user_id=user_id, agent_id=agent_id)
        return observation

    async def observe_many(
        self,
        items: Sequence[str | Mapping[str, Any]],
        *,
        source: str = "user",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Observation]:
        """Observe a batch: one embedding call and one transaction for all of it.

        Items are strings or mappings with ``observe``'s keyword arguments. The
        batch is validated whole before anything happens, and written whole or
        not at all.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise ValidationError("items must be a list of strings or mappings")
        if len(items) > limits.max_batch_size:
            raise ValidationError(
                f"batch of {len(items)} items; the limit is {limits.max_batch_size}"
            )
        now = self._clock()
        prepared = [self._prepare_observation(item, source, scope, now) for item in items]
        for p in prepared:
            await self.sensory.ingest(p.content, p.source, metadata={"memory_id": p.id})
        threshold = self.config.episodic.min_importance_to_store
        stored = [p for p in prepared if p.base_importance > threshold]
        merged: dict[str, str] = {}
        if stored:
            vectors = await self._embed([p.content for p in stored])
            storage = await self._ready()
            merged = await self._run(self._write_episodes, storage, scope, stored, vectors, now)
            for p in stored:
                self._last_episode[(scope, p.session_id)] = merged.get(p.id, p.id)
        logger.info(
            "observe: %d items, %d stored, %d merged (user=%s)",
            len(prepared),
            len(stored) - len(merged),
            len(merged),
            scope.user_id,
        )
        return [
            Observation(
                id=merged.get(p.id, p.id),
                stored=p.base_importance > threshold,
                importance=p.base_importance,
                temporal_level=p.temporal_level,
                merged_into=merged.get(p.id),
            )
            for p in prepared
        ]

    def _prepare_observation(
        self, item: str | Mapping[str, Any], default_source: str, scope: Scope, now: float
    ) -> _Prepared:
        if isinstance(item, str):
            fields: Mapping[str, Any] = {"content": item}
        elif isinstance(item, Mapping):
            unknown = set(item) - _OBSERVE_KEYS
            if unknown:
                raise ValidationError(f"unknown observation fields: {sorted(unknown)}")
            fields = item
        else:
            raise ValidationError(
                f"an observation must be a string or mapping, got {type(item).__name__}"
            )
        limits = self.config.limits
        content = check_content(fields.get("content"), limits)
        source = fields.get("source") or default_source
        if not isinstance(source, str) or not source.strip() or len(source) > 256:
            raise ValidationError("source must be a non-empty string of at most 256 characters")
        ts = fields.get("timestamp")
        timestamp = now if ts is None else check_timestamp(ts)
        session = fields.get("session_id")
        session_id = (
            check_id(session, "session_id")
            if session is not None
            else (self._sessions.setdefault(scope, _new_id("ses")))
        )
        provenance = _provenance(fields.get("provenance"), Provenance.OBSERVED)
        importance = classify_importance(content, source)
        level = select_temporal_level(content, "observation")
        participants = check_strings(fields.get("participants"), "participants") or [source]
        return _Prepared(
            id=_new_id("ep"),
            content=content,
            source=source,
            timestamp=timestamp,
            metadata=check_metadata(fields.get("metadata"), limits),
            session_id=session_id,
            tags=check_strings(fields.get("tags"), "tags"),
            participants=participants,
            provenance=provenance,
            base_importance=importance,
            temporal_level=level,
            salience=initial_salience(content, provenance.value, importance),
        )

    def _session_edges(
        self, scope: Scope, batch: Sequence[_Prepared], merged: Mapping[str, str]
    ) -> list[GraphEdge]:
        """``followed_by`` edges between consecutive episodes of a session (a merged
        duplicate stands for the episode it reinforced)."""
        weight = self.config.graph.session_edge_weight
        last: dict[tuple[Scope, str], str] = {}
        edges = []
        for p in batch:
            key = (scope, p.session_id)
            current = merged.get(p.id, p.id)
            previous = last.get(key) or self._last_episode.get(key)
            if previous is not None and previous != current:
                edges.append(GraphEdge(previous, current, "followed_by", weight, p.timestamp))
            last[key] = current
        return edges

    def _write_episodes(
        self,
        storage: Storage,
        scope: Scope,
        all_items: Sequence[_Prepared],
        all_vectors: np.ndarray,
        now: float,
    ) -> dict[str, str]:
        """Write a batch in one transaction; near-duplicates (R4, ``ucma.lifecycle.dedup``)
        reinforce what they duplicate instead. Returns {duplicate id: existing id}."""
        duplicates = find_duplicates(
            storage,
            scope,
            [p.id for p in all_items],
            [p.content for p in all_items],
            [p.source for p in all_items],
            all_vectors,
            self.config.episodic.duplicate_similarity,
            window=self.config.episodic.duplicate_window,
        )
        merged = {d.attempted_id: d.existing_id for d in duplicates}
        keep = [i for i, p in enumerate(all_items) if p.id not in merged]
        batch = [all_items[i] for i in keep]
        vectors = all_vectors[keep]
        edges = self._session_edges(scope, all_items, merged)
        episodes = [
            Episode(
                id=p.id,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                content=p.content,
                provenance=p.provenance,
                temporal_level=p.temporal_level,
                base_salience=p.salience,
                created_at=now,
                updated_at=now,
                metadata=p.metadata,
                session_id=p.session_id,
                timestamp=p.timestamp,
                source=p.source,
                participants=p.participants,
                tags=p.tags,
            )
            for p in batch
        ]
        with storage.transaction():
            storage.episodes.add(episodes, vectors)
            storage.retention.put_many(scope, [_initial_retention(e, now) for e in episodes])
            if edges:
                storage.graph.add_edges(scope, edges)
            merge_duplicates(
                storage, scope, duplicates, now, self.config.forgetting.stability_boost_base
            )
        self._names.pop(scope, None)
        return merged

    async def learn(
        self,
        insight: str,
        *,
        learning_type: LearningType | str = LearningType.DOMAIN_INSIGHT,
        title: str | None = None,
        evidence_ids: Sequence[str] = (),
        applicability: Sequence[str] = (),
        confidence: float = 0.5,
        impact_score: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Learning:
        """Store a lesson drawn from experience, linked to the memories it came from.

        Each evidence id must be a memory of the same scope (NotFoundError
        otherwise); the learning gets a ``derived_from`` edge to each. Lessons
        are at least situational (temporal level 2) and their salience is their
        impact score.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        text = check_content(insight, limits, "insight")
        kind = _enum(LearningType, learning_type, "learning_type")
        evidence = check_strings(evidence_ids, "evidence_ids", max_items=1000)
        tags = [t.lower() for t in check_strings(applicability, "applicability")]
        now = self._clock()
        level = max(2, select_temporal_level(text, "observation"))
        learning = Learning(
            id=_new_id("lrn"),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=Provenance.INFERRED,
            temporal_level=level,
            base_salience=check_fraction(impact_score, "impact_score"),
            created_at=now,
            updated_at=now,
            metadata=check_metadata(metadata, limits),
            learning_type=kind,
            title=check_content(title, limits, "title") if title is not None else text[:80],
            evidence=evidence,
            applicability=tags,
            confidence=check_fraction(confidence, "confidence"),
            impact_score=impact_score,
        )
        [vector] = await self._embed([f"{learning.title}\n{text}" if title else text])
        storage = await self._ready()
        weight = self.config.graph.evidence_edge_weight
        edges = [GraphEdge(learning.id, e, "derived_from", weight, now) for e in evidence]
        await self._run(self._write_typed, storage, scope, learning, vector, edges, evidence, now)
        logger.info("learn: %s (%s, confidence %.2f)", learning.id, kind.value, learning.confidence)
        return learning

    def _write_typed(
        self,
        storage: Storage,
        scope: Scope,
        record: Learning | Procedure,
        vector: np.ndarray,
        edges: Sequence[GraphEdge],
        must_exist: Sequence[str],
        now: float,
    ) -> None:
        if must_exist:
            found = storage.memories.get_many(scope, list(must_exist))
            for memory_id in must_exist:
                if memory_id not in found:
                    raise NotFoundError("memory", memory_id)
        with storage.transaction():
            if isinstance(record, Learning):
                storage.learnings.add(record, vector)
            else:
                storage.procedures.add(record, vector)
            storage.retention.put_many(scope, [_initial_retention(record, now)])
            if edges:
                storage.graph.add_edges(scope, edges)

    async def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,  # noqa: A002 - the triple's own word
        *,
        confidence: float = 0.8,
        source_episode_ids: Sequence[str] = (),
        provenance: Provenance | str = Provenance.USER_STATED,
        valid_from: float | None = None,
        valid_until: float | None = None,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Fact:
        """Assert a subject-predicate-object fact; returns the fact as stored.

        Same contract as ``assert_fact_detailed``, which also returns the
        conflicts the write detected; here they are recorded (see
        ``conflicts``) and reflected in the returned fact's ``status``.
        """
        result = await self.assert_fact_detailed(
            subject,
            predicate,
            object,
            confidence=confidence,
            source_episode_ids=source_episode_ids,
            provenance=provenance,
            valid_from=valid_from,
            valid_until=valid_until,
            content=content,
            metadata=metadata,
            user_id=user_id,
            agent_id=agent_id,
        )
        return result.fact

    async def assert_fact_detailed(
        self,
        subject: str,
        predicate: str,
        object: str,  # noqa: A002 - the triple's own word
        *,
        confidence: float = 0.8,
        source_episode_ids: Sequence[str] = (),
        provenance: Provenance | str = Provenance.USER_STATED,
        valid_from: float | None = None,
        valid_until: float | None = None,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactAssertion:
        """Assert a fact and report what it changed (seed 002).

        The same current triple in a scope is one fact: a repeat reinforces it
        (confidence +0.05, sources merged) and re-runs the decision tree on
        any conflict waiting for the user. A new value for a functional
        predicate (``self.predicates``) that already holds another current
        value is a conflict, resolved by the tree and recorded; the loser is
        superseded or conflicted, keeps its row and points to the winner, and
        memories derived from it are flagged for review. ``valid_from``
        (default now) is when the value became true; the tree compares these
        times. Source episodes get ``derived_from`` edges.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        parts = [
            check_content(v, limits, n).strip()
            for v, n in ((subject, "subject"), (predicate, "predicate"), (object, "object"))
        ]
        subj, pred, obj = parts
        sources = check_strings(source_episode_ids, "source_episode_ids", max_items=1000)
        conf = check_fraction(confidence, "confidence")
        prov = _provenance(provenance, Provenance.USER_STATED)
        start = check_timestamp(valid_from, "valid_from") if valid_from is not None else None
        end = check_timestamp(valid_until, "valid_until") if valid_until is not None else None
        if start is not None and end is not None and end < start:
            raise ValidationError("valid_until must not be before valid_from")
        text = (
            check_content(content, limits)
            if content is not None
            else (f"{subj} {pred.replace('_', ' ')} {obj}")
        )
        meta = check_metadata(metadata, limits)
        storage = await self._ready()
        now = self._clock()
        fact = Fact(
            id=fact_id_for(scope, subj, pred, obj),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=prov,
            temporal_level=select_temporal_level(text, "fact"),
            base_salience=initial_salience(text, prov.value, conf),
            created_at=now,
            updated_at=now,
            metadata=meta,
            subject=subj,
            predicate=pred,
            object=obj,
            confidence=conf,
            source_episode_ids=sources,
            last_verified=now,
            valid_from=start if start is not None else now,
            valid_until=end,
            recorded_at=now,
        )
        [vector] = await self._embed([text])  # a cache hit when the fact is reinforced
        result = await self._run(
            self._resolver.assert_fact,
            storage,
            scope,
            fact,
            vector,
            sources,
            self.config.graph.evidence_edge_weight,
            _initial_retention(fact, now),
            now,
        )
        logger.info(
            "assert_fact: %s %s %s (%s, %d conflicts)",
            subj,
            pred,
            obj,
            result.fact.id,
            len(result.conflicts),
        )
        return result

    async def resolve_conflict(
        self,
        conflict_id: str,
        chosen_value: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactAssertion:
        """Apply the user's answer to a pending (ask_user) conflict: the chosen
        value's fact is reinforced, the other superseded, and the conflict is
        recorded as ``user_resolved``. NotFoundError for an unknown id;
        ValidationError if it is not pending or the value is not an option."""
        scope = self._scope(user_id, agent_id)
        cid = check_id(conflict_id, "conflict_id")
        value = check_content(chosen_value, self.config.limits, "chosen_value").strip()
        storage = await self._ready()
        now = self._clock()
        result = await self._run(self._resolver.resolve, storage, scope, cid, value, now)
        logger.info("resolve_conflict: %s -> %r", cid, value)
        return result

    def add_source_of_truth(self, source: SourceOfTruth) -> None:
        """Register an authority whose values win over memory on reads (seed 002)."""
        if not isinstance(source, SourceOfTruth):
            raise ValidationError(
                f"a source of truth must be a SourceOfTruth, got {type(source).__name__}"
            )
        self._sources.append(source)

    async def _reconcile(self, scope: Scope, facts: Sequence[Fact]) -> list[Conflict]:
        """Check current facts against the sources of truth; record memory_vs_db
        conflicts for mismatches (the source's value is used). Returns them."""
        covered: list[tuple[Fact, SourceOfTruth]] = []
        for fact in facts:
            source = next(
                (
                    s
                    for s in self._sources
                    if fact.is_current and s.covers(fact.subject, fact.predicate)
                ),
                None,
            )
            if source is not None:
                covered.append((fact, source))
        if not covered:
            return []
        values = await asyncio.to_thread(
            lambda: [source.lookup(fact.subject, fact.predicate) for fact, source in covered]
        )
        wrong = [
            (fact, source, value)
            for (fact, source), value in zip(covered, values, strict=True)
            if value is not None and value.strip().lower() != fact.object.strip().lower()
        ]
        if not wrong:
            return []
        now = self._clock()
        texts = [f"{f.subject} {f.predicate.replace('_', ' ')} {v}" for f, _, v in wrong]
        vectors = await self._embed(texts)
        mismatches = [
            SourceMismatch(
                fact.id,
                source.name,
                value,
                self._resolver.source_fact(scope, fact, source.name, value, text, now),
                vectors[i],
            )
            for i, ((fact, source, value), text) in enumerate(zip(wrong, texts, strict=True))
        ]
        storage = await self._ready()
        retention = RetentionInfo("", initial_stability(1), now, 0)
        result = await self._run(
            self._resolver.apply_sources, storage, scope, mismatches, retention, now
        )
        return result.conflicts if result is not None else []

    async def add_procedure(
        self,
        name: str,
        description: str,
        *,
        steps: Sequence[ProcedureStep | Mapping[str, Any]] = (),
        trigger_tags: Sequence[str] = (),
        status: ProcedureStatus | str = ProcedureStatus.DRAFT,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Procedure:
        """Store a reusable workflow, found later by its trigger tags or its text."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        title = check_content(name, limits, "name")
        text = check_content(description, limits, "description")
        parsed_steps = [_step(s) for s in steps]
        now = self._clock()
        procedure = Procedure(
            id=_new_id("proc"),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=f"{title}: {text}",
            provenance=Provenance.USER_STATED,
            temporal_level=max(2, select_temporal_level(text, "observation")),
            base_salience=0.6,
            created_at=now,
            updated_at=now,
            metadata=check_metadata(metadata, limits),
            name=title,
            description=text,
            trigger_tags=[t.lower() for t in check_strings(trigger_tags, "trigger_tags")],
            steps=parsed_steps,
            status=_enum(ProcedureStatus, status, "status"),
        )
        [vector] = await self._embed([procedure.content])
        storage = await self._ready()
        await self._run(self._write_typed, storage, scope, procedure, vector, (), (), now)
        logger.info("add_procedure: %s %r", procedure.id, title)
        return procedure

    async def record_procedure_outcome(
        self,
        procedure_id: str,
        success: bool,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Procedure:
        """Fold one execution into the procedure's running success rate."""
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        return await self._modify(
            procedure_id,
            MemoryKind.PROCEDURAL,
            lambda p, now: p.with_outcome(success, now),
            user_id,
            agent_id,
        )

    async def validate_learning(
        self,
        learning_id: str,
        success: bool,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Learning:
        """Asymmetric validation: +0.10 confidence on success, -0.15 on failure."""
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        return await self._modify(
            learning_id,
            MemoryKind.LEARNING,
            lambda lr, now: lr.applied(now).validated_by(success, now),
            user_id,
            agent_id,
        )

    async def _modify(
        self,
        memory_id: str,
        kind: MemoryKind,
        change: Callable[[Any, float], Any],
        user_id: str | None,
        agent_id: str | None,
    ) -> Any:
        scope = self._scope(user_id, agent_id)
        check_id(memory_id)
        storage = await self._ready()
        now = self._clock()

        def apply() -> Any:
            with storage.transaction():
                record = storage.memories.get(scope, memory_id)
                if record is None or record.kind is not kind:
                    raise NotFoundError(kind.value, memory_id)
                updated = change(record, now)
                store = storage.procedures if kind is MemoryKind.PROCEDURAL else storage.learnings
                store.update(updated)
                return updated

        return await self._run(apply)

    async def link(
        self,
        source_id: str,
        target_id: str,
        edge_type: str,
        *,
        weight: float = 1.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> GraphEdge:
        """Add (or replace) a typed, weighted edge between two memories of a scope."""
        scope = self._scope(user_id, agent_id)
        edge = GraphEdge(
            check_id(source_id, "source_id"),
            check_id(target_id, "target_id"),
            check_id(edge_type, "edge_type"),
            check_fraction(weight, "weight"),
            self._clock(),
        )
        storage = await self._ready()

        def write() -> None:
            found = storage.memories.get_many(scope, [edge.source_id, edge.target_id])
            for memory_id in (edge.source_id, edge.target_id):
                if memory_id not in found:
                    raise NotFoundError("memory", memory_id)
            storage.graph.add_edges(scope, [edge])

        await self._run(write)
        return edge

    async def new_session(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """Start a new session: clear the active and staging zones of working memory."""
        scope = self._scope(user_id, agent_id)
        old = self._sessions.get(scope)
        self._sessions[scope] = new = _new_id("ses")
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        cleared = working.clear_zone("active") + working.clear_zone("staging")
        logger.info("new_session %s (was %s), cleared %d working items", new, old, cleared)
        await self._consolidate_on_new_session(scope)
        return new

    async def delete(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> None:
        """Delete a memory and everything hanging off it; NotFoundError if unknown.
        Its decision traces and salience history stay (they are history); the
        event log records ``memory.deleted``."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        if not await self._run(storage.memories.delete, scope, check_id(memory_id)):
            raise NotFoundError("memory", memory_id)
        logger.info("delete: %s", memory_id)

    # -- reads --------------------------------------------------------------------

    async def remember(
        self,
        query: str,
        *,
        limit: int | None = None,
        mode: QueryMode | str | None = None,
        kinds: Sequence[MemoryKind | str] | None = None,
        time_range: tuple[float, float] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
        reference_time: float | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Hit]:
        """Retrieve memories for ``query`` from every kind at once, best first
        (seed 001 chapter 19; no cascade). The top hits are staged in the scope's
        working memory; retrieval counts as a review of each returned memory."""
        result = await self.recall(
            query,
            limit=limit,
            mode=mode,
            kinds=kinds,
            time_range=time_range,
            entity=entity,
            tags=tags,
            include_graph_neighbors=include_graph_neighbors,
            min_importance=min_importance,
            reference_time=reference_time,
            cascade=False,
            layer=Layer.SEMANTIC,
            user_id=user_id,
            agent_id=agent_id,
        )
        return result.hits

    async def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        cascade: bool = True,
        confidence_threshold: float | None = None,
        max_cascade_depth: int | None = None,
        reference_time: float | None = None,
        explain: bool = False,
        kinds: Sequence[MemoryKind | str] | None = None,
        time_range: tuple[float, float] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        mode: QueryMode | str | None = None,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
        layer: Layer | str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> RecallResult:
        """Cascading recall (seed 004) over hybrid retrieval (seed 003).

        The query is classified (seven classes), searched in its primary layer
        with every channel fused, and, when the best confidence is below
        ``confidence_threshold`` (default 0.5), in secondary layers up to
        ``max_cascade_depth`` (default 2). Time expressions are read relative to
        ``reference_time`` (default now). Every hit carries seed 004's five
        confidence factors and its channel scores; the result carries the
        cascade path and a ``low_confidence`` flag to abstain on. ``explain``
        adds the plan and per-hit channel scores to ``result.explanation``.
        """
        scope = self._scope(user_id, agent_id)
        cfg = self.config
        text = check_query(query, cfg.limits)
        count = check_limit(
            limit if limit is not None else cfg.retrieval.max_results,
            cfg.retrieval.max_results_limit,
        )
        threshold = check_fraction(
            cfg.cascade.confidence_threshold
            if confidence_threshold is None
            else confidence_threshold,
            "confidence_threshold",
        )
        depth = (
            check_limit(
                (cfg.cascade.max_depth if max_cascade_depth is None else max_cascade_depth) + 1,
                11,
                "max_cascade_depth + 1",
            )
            - 1
        )
        now = self._clock()
        reference = (
            now if reference_time is None else check_timestamp(reference_time, "reference_time")
        )
        request = RecallRequest(
            limit=count,
            cascade=bool(cascade),
            threshold=threshold,
            max_depth=depth,
            include_graph_neighbors=bool(include_graph_neighbors),
            min_importance=check_fraction(min_importance, "min_importance"),
            layer=_enum(Layer, layer, "layer") if layer is not None else None,
            explain=bool(explain),
            retrieval_id=_new_id("ret"),
        )
        storage = await self._ready()
        known = self._names.get(scope)
        if known is None:
            known = await self._run(self._known_names, storage, scope)
        plan = route(
            text,
            reference_time=reference,
            known_entities=known,
            mode=_enum(QueryMode, mode, "mode") if mode is not None else None,
            entity=check_content(entity, cfg.limits, "entity") if entity is not None else None,
            tags=[t.lower() for t in check_strings(tags, "tags")] or None,
            time_range=_time_range(time_range),
            kinds=[_enum(MemoryKind, k, "kinds") for k in kinds] if kinds else None,
            drop_entity_terms="entity" in cfg.retrieval.channels,
        )
        wanted = [plan.embedded_text] if text.strip() else []
        if plan.time_anchor is not None and plan.time_range is None:
            wanted.append(plan.time_anchor.event)
        vectors = list(await self._embed_queries(wanted)) if wanted else []
        vector = vectors[0] if text.strip() else None
        anchor_vector = vectors[-1] if len(vectors) == 2 else None
        result = await self._run(
            run_recall,
            storage,
            cfg,
            scope,
            plan,
            vector,
            request,
            now=now,
            anchor_vector=anchor_vector,
        )
        self._queue(record_recall, storage, cfg, scope, result, now=now)
        self._queue(self._known_names, storage, scope)
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        for hit in result.hits[: cfg.working.staged_hits]:
            working.add(hit.id, hit.content, "staging", hit.memory.effective_salience)
        logger.info(
            "recall: %d hits for %r (%s, confidence %.2f%s)",
            len(result.hits),
            text[:60],
            plan.query_class.value,
            result.confidence,
            ", low" if result.low_confidence else "",
        )
        return result

    def _known_names(self, storage: Storage, scope: Scope) -> list[str]:
        """Read the names of the people the scope's episodes involve and keep them
        for routing the scope's next recall without a storage round trip (storage
        thread only).

        Every recall queues this read behind its own bookkeeping, so names that
        another process (or another ``Storage`` on the file) added reach the
        router once the storage thread has run a read queued after them (in
        back-to-back recalls, the second one after); this engine's own episode
        writes drop the scope's names, so its next recall reads them first.
        """
        names = storage.episodes.participants(scope)
        if len(self._names) >= _NAME_SCOPES:
            self._names.clear()
        self._names[scope] = names
        return names

    async def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryRecord:
        """The record with this id in the scope; NotFoundError otherwise."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        record = await self._run(storage.memories.get, scope, check_id(memory_id))
        if record is None:
            raise NotFoundError("memory", memory_id)
        return record

    async def list(
        self,
        *,
        kind: MemoryKind | str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_archived: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[MemoryRecord]:
        """Records of a scope, oldest first, a page at a time."""
        scope = self._scope(user_id, agent_id)
        check_limit(limit, 10_000)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("offset must be an integer >= 0")
        storage = await self._ready()
        return await self._run(
            storage.memories.list,
            scope,
            kind=_enum(MemoryKind, kind, "kind") if kind is not None else None,
            limit=limit,
            offset=offset,
            include_archived=include_archived,
        )

    async def facts_about(
        self,
        entity: str,
        *,
        as_of: float | None = None,
        include_history: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactList:
        """Facts with ``entity`` as subject or object (case-insensitive).

        By default the current beliefs, checked against the sources of truth
        (a mismatch is recorded as a memory_vs_db conflict and the source's
        value is returned). ``as_of`` (epoch seconds, record time) returns what
        memory believed at that moment; ``include_history`` every version.
        The result is a list that also carries ``.conflicts``: every conflict
        touching the returned facts (up to ``as_of`` when given).
        """
        scope = self._scope(user_id, agent_id)
        name = check_content(entity, self.config.limits, "entity").strip()
        moment = check_timestamp(as_of, "as_of") if as_of is not None else None
        if moment is not None and include_history:
            raise ValidationError("as_of and include_history cannot be combined")
        storage = await self._ready()
        read = functools.partial(
            storage.facts.about, scope, name, as_of=moment, include_superseded=include_history
        )
        facts = await self._run(read)
        detected: list[Conflict] = []
        if moment is None and self._sources:
            detected = await self._reconcile(scope, facts)
            if detected:
                facts = await self._run(read)
        conflicts = await self._run(
            self._resolver.touching, storage, scope, facts, moment, detected
        )
        return FactList(facts, conflicts)

    async def fact_history(
        self,
        subject: str,
        predicate: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactList:
        """Every version of (subject, predicate) in record-time order, superseded
        and conflicted ones included, with the conflicts between them."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        subj = check_content(subject, limits, "subject").strip()
        pred = check_content(predicate, limits, "predicate").strip()
        storage = await self._ready()
        facts = await self._run(storage.facts.history, scope, subj, pred)
        conflicts = await self._run(self._resolver.touching, storage, scope, facts, None, [])
        return FactList(facts, conflicts)

    async def conflicts(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        status: ConflictStatus | str | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Conflict]:
        """Recorded conflicts, newest first; filter by subject, predicate or
        status ("pending" lists what waits for the user)."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        storage = await self._ready()
        return await self._run(
            storage.conflicts.list,
            scope,
            subject=check_content(subject, limits, "subject") if subject is not None else None,
            predicate=(
                check_content(predicate, limits, "predicate") if predicate is not None else None
            ),
            status=_enum(ConflictStatus, status, "status") if status is not None else None,
            limit=check_limit(limit, 10_000),
        )

    async def review_flags(
        self,
        *,
        include_cleared: bool = False,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[ReviewFlag]:
        """Memories flagged for review because a premise they rest on was
        superseded, newest first. Flagged memories rank lower until cleared."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            storage.conflicts.flags,
            scope,
            include_cleared=bool(include_cleared),
            limit=check_limit(limit, 10_000),
        )

    async def clear_review(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> int:
        """Mark a flagged memory as reviewed (its rank recovers); returns the
        number of flags closed. NotFoundError if the memory does not exist."""
        scope = self._scope(user_id, agent_id)
        mid = check_id(memory_id)
        storage = await self._ready()
        now = self._clock()

        def clear() -> int:
            if storage.memories.get(scope, mid) is None:
                raise NotFoundError("memory", mid)
            return storage.conflicts.clear_flags(scope, mid, now)

        return await self._run(clear)

    async def answer(
        self,
        query: str,
        *,
        limit: int | None = None,
        entity: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Answer:
        """Answer ``query`` from memory, with conflicts resolved out loud.

        Retrieves like ``remember``, replaces retrieved facts of functional
        predicates by their current values, consults the sources of truth,
        applies seed 000's conflict matrix (``ucma.conflicts.answer``) and
        returns a template-built response with the facts, conflicts, review
        flags and confidence it used. No LLM is called.
        """
        hits = await self.remember(
            query, limit=limit, entity=entity, user_id=user_id, agent_id=agent_id
        )
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        gather = functools.partial(self._resolver.current_facts, storage, scope, hits)
        facts = await self._run(gather)
        detected = await self._reconcile(scope, facts) if self._sources else []
        if detected:
            facts = await self._run(gather)

        def context() -> tuple[list[Conflict], dict[str, ReviewFlag]]:
            conflicts = self._resolver.touching(storage, scope, facts, None, detected)
            ids = [h.id for h in hits] + [f.id for f in facts]
            return conflicts, storage.conflicts.flagged(scope, ids)

        conflicts, flags = await self._run(context)
        result = compose_answer(
            query,
            hits,
            facts,
            conflicts,
            flags,
            review_factor=self.config.conflicts.review_rank_factor,
        )
        logger.info(
            "answer: %d facts, %d conflicts, confidence %.2f",
            len(result.facts),
            len(result.conflicts),
            result.confidence,
        )
        return result

    async def traverse(
        self,
        entity: str,
        *,
        max_hops: int = 3,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Fact]:
        """Facts reachable from ``entity`` along subject -> object links."""
        scope = self._scope(user_id, agent_id)
        name = check_content(entity, self.config.limits, "entity").strip()
        hops = check_limit(max_hops, 10, "max_hops")
        storage = await self._ready()
        return await self._run(storage.facts.traverse, scope, name, hops)

    async def find_procedures(
        self,
        tags: Sequence[str],
        *,
        min_success_rate: float = 0.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Procedure]:
        """Procedures sharing a tag, by confidence-weighted success rate."""
        scope = self._scope(user_id, agent_id)
        wanted = [t.lower() for t in check_strings(tags, "tags")]
        minimum = check_fraction(min_success_rate, "min_success_rate")
        storage = await self._ready()
        return await self._run(
            storage.procedures.find_by_tags, scope, wanted, min_success_rate=minimum
        )

    async def find_learnings(
        self,
        tags: Sequence[str],
        *,
        learning_type: LearningType | str | None = None,
        min_confidence: float = 0.3,
        limit: int = 5,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Learning]:
        """Lessons that apply to ``tags``, by confidence x impact."""
        scope = self._scope(user_id, agent_id)
        wanted = [t.lower() for t in check_strings(tags, "tags")]
        storage = await self._ready()
        return await self._run(
            storage.learnings.relevant,
            scope,
            wanted,
            learning_type=_enum(LearningType, learning_type, "learning_type")
            if learning_type is not None
            else None,
            min_confidence=check_fraction(min_confidence, "min_confidence"),
            limit=check_limit(limit, 1000),
        )

    async def episodes_between(
        self,
        start: float,
        end: float,
        *,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Episode]:
        """Episodes that happened in ``[start, end]``, oldest first."""
        scope = self._scope(user_id, agent_id)
        begin, finish = _time_range((start, end)) or (start, end)
        storage = await self._ready()
        return await self._run(
            storage.episodes.time_range,
            scope,
            begin,
            finish,
            limit=check_limit(limit, 100_000) if limit is not None else None,
        )

    async def related(
        self,
        memory_id: str,
        *,
        max_hops: int = 2,
        edge_types: Sequence[str] | None = None,
        min_weight: float = 0.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[tuple[MemoryRecord, float, int]]:
        """Memories reachable along outgoing graph edges, best path first:
        (record, product of edge weights, hops)."""
        scope = self._scope(user_id, agent_id)
        start = check_id(memory_id)
        hops = check_limit(max_hops, 10, "max_hops")
        types = check_strings(edge_types, "edge_types") or None
        weight = check_fraction(min_weight, "min_weight")
        storage = await self._ready()

        def walk() -> list[tuple[MemoryRecord, float, int]]:
            if storage.memories.get(scope, start) is None:
                raise NotFoundError("memory", start)
            found = best_first_related(
                start,
                lambda n: [
                    (e.target_id, e.edge_type, e.weight) for e in storage.graph.edges_from(scope, n)
                ],
                hops,
                edge_types=types,
                min_weight=weight,
            )
            records = storage.memories.get_many(scope, [n for n, _, _ in found])
            return [(records[n], w, h) for n, w, h in found if n in records]

        return await self._run(walk)

    async def update_graph_importance(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, float]:
        """Recompute PageRank over the scope's memory graph and store it."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(graph_importance, storage, scope, self.config.graph)

    def context(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """The scope's working memory rendered as LLM context."""
        return self.working_memory(user_id=user_id, agent_id=agent_id).render_context()

    async def stats(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Counts and usage of every component for a scope (JSON-serialisable)."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        assert self._embedder is not None

        def gather() -> dict[str, Any]:
            return {
                "memories": {k.value: n for k, n in storage.memories.count(scope).items()},
                "episodic": storage.episodes.stats(scope),
                "semantic": storage.facts.stats(scope),
                "procedural": storage.procedures.stats(scope),
                "learning": storage.learnings.stats(scope),
                "graph": storage.graph.stats(scope),
            }

        result = await self._run(gather)
        cache = self._embedder.stats() if isinstance(self._embedder, CachedEmbedder) else None
        result.update(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=self._sessions.get(scope),
            sensory_buffer={
                "size": self.sensory.size,
                "total_ingested": self.sensory.total_ingested,
                "dropped": self.sensory.dropped,
            },
            working_memory=self.working_memory(
                user_id=scope.user_id, agent_id=scope.agent_id
            ).usage(),
            embedder={
                "model": self._inner_embedder.model_id,
                "dimension": self._inner_embedder.dimension,
                "cache": dataclasses.asdict(cache) if cache is not None else None,
            },
        )
        return result

    async def prepare_search(
        self, *, user_id: str | None = None, agent_id: str | None = None, wait: bool = True
    ) -> dict[str, Any]:
        """Load a scope's search caches now rather than on its first recall, and
        build its approximate (HNSW) index if it has ``retrieval.ann_threshold``
        memories or more; with ``wait``, return once that index is ready.

        Without this, the first recall of a scope loads its caches (seconds at
        100,000 memories) and a large scope's index is built in the background
        while recalls search exactly. Returns the scope's live rows, the rows its
        index covers (the rest are searched exactly) and whether a build is running.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        status = await self._run(storage.memories.prepare_search, scope, wait=False)
        if wait and status.building:
            # Off the storage thread, which other calls keep using meanwhile.
            status = await asyncio.to_thread(storage.memories.prepare_search, scope, wait=True)
        return dataclasses.asdict(status)

    async def prepare_large_scopes(self) -> list[dict[str, Any]]:
        """``prepare_search`` every scope holding ``retrieval.ann_threshold`` memories
        or more, largest first, one at a time: what a service does as it starts, so
        that no user's first recall pays for loading a large scope. Returns each
        prepared scope's ids and status; a scope that fails is logged and skipped."""
        threshold = self.config.retrieval.ann_threshold
        if threshold <= 0:
            return []
        scopes = await self.scopes(limit=100_000)
        sizes = [(sum(counts.values()), scope) for scope, counts in scopes]
        prepared: list[dict[str, Any]] = []
        for size, scope in sorted(sizes, key=lambda item: -item[0]):
            if size < threshold:
                break
            try:
                status = await self.prepare_search(
                    user_id=scope.user_id, agent_id=scope.agent_id, wait=True
                )
            except UCMAError:
                logger.exception("preparing the search of %s failed", scope)
                continue
            prepared.append({"user_id": scope.user_id, "agent_id": scope.agent_id, **status})
        return prepared

    # -- learning loop (seed 003) -------------------------------------------------

    async def decide(
        self,
        memory_ids: Sequence[str],
        memory_scores: Sequence[float] | Mapping[str, float] | None = None,
        *,
        decision_type: str = "recommendation",
        summary: str,
        confidence: float = 0.5,
        alternatives_count: int = 0,
        retrieval_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> DecisionTrace:
        """Record a decision and the memories that fed it (seed 003 R9 to R11).

        ``memory_scores`` (one per id, a list in order or a mapping; default
        equal) are normalised to sum 1 with no share below 0.01 (R10, R18).
        Every id must be a memory of the scope (NotFoundError otherwise);
        ``retrieval_id`` (from ``recall``) must be one of its recalls.
        ``summary`` says what was decided, without personal data. Returns the
        trace; pass its ``id`` to ``outcome`` once the result is known.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        ids = [check_id(m) for m in check_strings(memory_ids, "memory_ids", max_items=100)]
        if not ids:
            raise ValidationError("memory_ids: a decision needs at least one memory")
        scores = normalised_memory_scores(
            ids, memory_scores, self.config.salience.min_attribution
        )
        alternatives = alternatives_count
        if isinstance(alternatives, bool) or not isinstance(alternatives, int) or alternatives < 0:
            raise ValidationError("alternatives_count must be an integer >= 0")
        trace = DecisionTrace(
            id=_new_id("trc"),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=self._sessions.get(scope),
            retrieval_id=check_id(retrieval_id, "retrieval_id") if retrieval_id else None,
            memory_scores=scores,
            decision_type=check_id(decision_type, "decision_type"),
            summary=check_content(summary, limits, "summary"),
            confidence=check_fraction(confidence, "confidence"),
            alternatives_count=alternatives,
            created_at=self._clock(),
            metadata=check_metadata(metadata, limits),
        )
        storage = await self._ready()
        await self._run(track_decision, storage, scope, trace)
        logger.info("decide: %s (%d memories, %s)", trace.id, len(ids), trace.decision_type)
        return trace

    async def outcome(
        self,
        trace_id: str,
        quality: float,
        signal: OutcomeSignal | str,
        feedback: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> OutcomeReport:
        """Record how a decision turned out and learn from it (seed 003 R12 to R20).

        ``quality`` is in [-1, 1] (R13); ``signal`` one of R12's signals. Each
        memory of the trace gets salience delta = quality x attribution x
        learning rate x temporal dampening (R17 table), within R16's bounds;
        its retention stability grows or shrinks (R20); procedures update
        their success rate and learnings their validation (seed 000). All of
        it, with its events, is one transaction. Refused (nothing changes)
        with ``OutcomeWindowClosed`` after ``SalienceConfig.outcome_window_days``
        (7) and ``OutcomeAlreadyRecorded`` for a second outcome.
        """
        scope = self._scope(user_id, agent_id)
        tid = check_id(trace_id, "trace_id")
        value = check_quality(quality)
        kind = _enum(OutcomeSignal, signal, "signal")
        text = check_content(feedback, self.config.limits, "feedback") if feedback else None
        storage = await self._ready()
        report = await self._run(
            observe_outcome, storage, scope, tid, value, kind, text, self.config.salience,
            self._clock(),
        )
        logger.info(
            "outcome: %s quality %+.2f (%s), %d salience updates",
            tid, value, kind.value, len(report.updates),
        )
        return report

    async def trace(
        self, trace_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> DecisionTrace:
        """One decision trace; NotFoundError if the scope has none with this id."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        found = await self._run(storage.traces.get, scope, check_id(trace_id, "trace_id"))
        if found is None:
            raise NotFoundError("trace", trace_id)
        return found

    async def traces(
        self,
        *,
        observed: bool | None = None,
        decision_type: str | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[DecisionTrace]:
        """Decision traces, newest first; ``observed`` filters on having an outcome."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            functools.partial(
                storage.traces.list,
                scope,
                observed=None if observed is None else bool(observed),
                decision_type=check_id(decision_type, "decision_type") if decision_type else None,
                limit=check_limit(limit, 100_000),
            )
        )

    async def salience_history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[SalienceUpdate]:
        """Every outcome-driven salience change of one memory, oldest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        mid = check_id(memory_id)
        return await self._run(functools.partial(storage.traces.updates, scope, memory_id=mid))

    async def events(
        self,
        *,
        after_seq: int = 0,
        types: Sequence[str] | None = None,
        limit: int = 1000,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Event]:
        """The scope's event log after ``after_seq``, in order (event sourcing)."""
        scope = self._scope(user_id, agent_id)
        if isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0:
            raise ValidationError("after_seq must be an integer >= 0")
        wanted = check_strings(types, "types") or None
        storage = await self._ready()
        return await self._run(
            functools.partial(
                storage.events.list,
                scope,
                after_seq=after_seq,
                types=wanted,
                limit=check_limit(limit, 1_000_000),
            )
        )

    async def replay(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> SalienceProjection:
        """Rebuild the scope's salience projection (every memory's outcome
        adjustment) from its events alone, and compare it with the live
        records: ``mismatches`` maps memory id to (replayed, live)."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()

        def rebuild() -> SalienceProjection:
            with storage.transaction():  # one consistent state: events and records
                projection = replay_salience(storage.events.list(scope))
                live = {
                    r.id: r.outcome_adjustment
                    for r in storage.memories.list(
                        scope, limit=2**62, include_archived=True
                    )
                }
            for memory_id in projection.adjustments.keys() | live.keys():
                replayed = projection.adjustments.get(memory_id, float("nan"))
                current = live.get(memory_id, float("nan"))
                if not abs(replayed - current) <= 1e-9:
                    projection.mismatches[memory_id] = (replayed, current)
            return projection

        return await self._run(rebuild)

    async def memory_influence(
        self,
        *,
        min_decisions: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[causal.MemoryInfluence]:
        """Which memories consistently preceded good outcomes and which misled:
        per memory, decisions with outcomes, mean and attribution-weighted
        quality, and a verdict (helpful / misleading / mixed / insufficient)."""
        scope = self._scope(user_id, agent_id)
        cfg = self.config.patterns
        minimum = cfg.min_decisions if min_decisions is None else check_limit(
            min_decisions, 1_000_000, "min_decisions"
        )
        storage = await self._ready()
        traces = await self._run(
            functools.partial(storage.traces.list, scope, observed=True, limit=2**62)
        )
        return causal.memory_influence(
            traces, min_decisions=minimum, threshold=cfg.verdict_threshold
        )

    async def counterfactuals(
        self, trace_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> causal.CounterfactualReport:
        """Similar past decisions whose outcome differed from this trace's, and
        the memories that differed (seed 003 counterfactual analysis)."""
        trace = await self.trace(trace_id, user_id=user_id, agent_id=agent_id)
        if trace.outcome_quality is None:
            raise ValidationError(f"trace {trace_id!r} has no outcome yet; record one first")
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        others = await self._run(storage.traces.involving, scope, trace.memory_ids)
        same_type = await self._run(
            functools.partial(
                storage.traces.list, scope, observed=True, decision_type=trace.decision_type,
                limit=1000,
            )
        )
        seen = {t.id: t for t in [*others, *same_type]}
        return causal.counterfactuals(trace, list(seen.values()))

    async def extract_patterns(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[causal.Pattern]:
        """Clusters of similar memories with consistently good outcomes, each
        summarised by its most central memory and its common terms."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(self._patterns_of, storage, scope)

    def _patterns_of(self, storage: Storage, scope: Scope) -> list[causal.Pattern]:
        cfg = self.config.patterns
        traces = storage.traces.list(scope, observed=True, limit=2**62)
        influence = causal.memory_influence(
            traces, min_decisions=cfg.min_decisions, threshold=cfg.verdict_threshold
        )
        ids = [m.memory_id for m in influence if m.mean_quality > cfg.min_quality]
        records = storage.memories.get_many(scope, ids)
        return causal.extract_patterns(
            influence,
            {i: r.content for i, r in records.items()},
            storage.memories.vectors(scope, list(records)),
            min_decisions=cfg.min_decisions,
            min_quality=cfg.min_quality,
            similarity=cfg.cluster_similarity,
        )

    async def share_patterns(
        self, *, epsilon: float | None = None, seed: int | None = None
    ) -> patterns.SharingReport:
        """Patterns seen across the users of this database, privacy-protected
        for sharing (seed 003 federated learning): only those in at least
        ``PatternConfig.privacy_min_instances`` decisions across at least
        ``privacy_min_users`` users, with Laplace noise at ``epsilon`` and no
        personal data; the others are refused with their reason."""
        cfg = self.config.patterns
        budget = cfg.epsilon if epsilon is None else epsilon
        if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
            raise ValidationError("epsilon must be a number > 0")
        storage = await self._ready()

        def gather() -> dict[str, list[causal.Pattern]]:
            by_user: dict[str, list[causal.Pattern]] = {}
            for scope in storage.memories.scopes():
                by_user.setdefault(scope.user_id, []).extend(self._patterns_of(storage, scope))
            return by_user

        by_user = await self._run(gather)
        candidates = patterns.merge_user_patterns(by_user, similarity=cfg.merge_similarity)
        report = patterns.share_patterns(
            candidates,
            epsilon=float(budget),
            min_instances=cfg.privacy_min_instances,
            min_users=cfg.privacy_min_users,
            rng=np.random.default_rng(seed),
        )
        logger.info(
            "share_patterns: %d shared, %d refused", len(report.shared), len(report.refused)
        )
        return report

    async def event_backlog(self, consumer: str, *, limit: int = 500) -> list[Event]:
        """Events of every scope that the named consumer (a publisher) has not
        acknowledged yet, in global order."""
        name = check_id(consumer, "consumer")
        storage = await self._ready()

        def read() -> list[Event]:
            return storage.events.after(storage.events.cursor(name), check_limit(limit, 100_000))

        return await self._run(read)

    async def acknowledge_events(self, consumer: str, position: int) -> None:
        """Persist that ``consumer`` has delivered every event up to ``position``."""
        name = check_id(consumer, "consumer")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValidationError("position must be an integer >= 0")
        storage = await self._ready()
        await self._run(storage.events.set_cursor, name, position, self._clock())

    # -- lifecycle: sleep, forgetting, gardener (issue 4; logic in ucma.lifecycle) -------

    def _lifecycle_providers(self) -> Providers:
        if self._providers is None:
            cfg = self.config.consolidation
            self._providers = providers_from_config(
                cfg.llm,
                base_url=cfg.llm_base_url,
                classify_importance=cfg.llm_classify_importance,
                timeout=cfg.llm_timeout_seconds,
                attempts=cfg.llm_attempts,
            )
        return self._providers

    def _sleep_cycle(
        self, storage: Storage, progress: Callable[[str, int, int], None] | None
    ) -> SleepCycle:
        return SleepCycle(
            storage=storage,
            run=self._run,
            embed=self._embed,
            providers=self._lifecycle_providers(),
            config=self.config,
            clock=self.clock,
            interrupt=self._interrupt,
            progress=progress,
        )

    async def sleep(
        self,
        *,
        phases: Sequence[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> SleepReport:
        """Run one sleep cycle for a scope: compress, abstract, reinforce, prune, clean
        (``ucma.lifecycle.consolidation``). ``progress(phase, number, total)`` is called
        as each phase starts; ``interrupt_consolidation()`` stops the cycle between
        phases. A provider failure raises ``ProviderError``; the phases before it stay
        committed, nothing of the failing phase is written."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        self._interrupt.clear()
        return await self._sleep_cycle(storage, progress).run(scope, phases or PHASES)

    async def sleep_all(
        self, *, progress: Callable[[str, int, int], None] | None = None
    ) -> list[SleepReport]:
        """A sleep cycle for every scope of the database (``ucma sleep``, the server)."""
        storage = await self._ready()
        self._interrupt.clear()
        reports = []
        for scope in await self._run(storage.memories.scopes):
            report = await self._sleep_cycle(storage, progress).run(scope)
            reports.append(report)
            if report.interrupted:
                break
        return reports

    def interrupt_consolidation(self) -> None:
        """Ask a running sleep cycle to stop after its current phase."""
        self._interrupt.set()

    @property
    def consolidation_task(self) -> asyncio.Task[SleepReport] | None:
        """The background cycle started by ``new_session`` (``on_new_session="background"``)."""
        return self._consolidation

    async def _consolidate_on_new_session(self, scope: Scope) -> None:
        mode = self.config.consolidation.on_new_session
        if mode == "off":
            return
        storage = await self._ready()
        if mode == "sync":
            self._interrupt.clear()
            await self._sleep_cycle(storage, None).run(scope)
        elif self._consolidation is None or self._consolidation.done():
            self._interrupt.clear()
            self._consolidation = asyncio.create_task(
                self._sleep_cycle(storage, None).run(scope), name="ucma-consolidation"
            )

    async def forget(
        self,
        *,
        dry_run: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ForgettingReport:
        """Run the forgetting engine for a scope (``ucma.lifecycle.forgetting``): archive
        what it forgets, purge archives past the retention period. ``dry_run=True``
        lists what would be archived and purged, with the reason for each, and
        changes nothing."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            forgetting_pass,
            storage,
            scope,
            self.clock.now(),
            self.config.forgetting,
            dry_run=bool(dry_run),
        )

    async def run_gardener(self, job: str | None = None) -> GardenerReport:
        """Run the gardener's due jobs over every scope, or only ``job`` ("decay",
        "consolidate", "prune", "identity"; run whether due or not). Jobs that
        another process holds are skipped (``ucma.lifecycle.gardener``)."""
        storage = await self._ready()
        now = self.clock.now
        forgetting = self.config.forgetting

        async def decay(scope: Scope) -> dict[str, Any]:
            report = await self._run(
                forgetting_pass, storage, scope, now(), forgetting, rules={"retention"}
            )
            return {"archived": len(report.archived), "purged": len(report.purged)}

        async def prune(scope: Scope) -> dict[str, Any]:
            report = await self._run(
                forgetting_pass, storage, scope, now(), forgetting, rules={"salience"}, purge=False
            )
            return {"archived": len(report.archived)}

        async def consolidate(scope: Scope) -> dict[str, Any]:
            report = await self._sleep_cycle(storage, None).run(scope)
            return {
                "episodes": report.episodes_processed,
                "facts": report.abstract.get("facts_new", 0),
            }

        async def identity(scope: Scope) -> dict[str, Any]:
            return await self._run(
                promote_identity_patterns, storage, scope, now(), self.config.consolidation
            )

        gardener = Gardener(
            storage=storage,
            run=self._run,
            clock=self.clock,
            jobs={"decay": decay, "consolidate": consolidate, "prune": prune, "identity": identity},
            config=self.config.consolidation,
            owner=self._gardener_owner,
        )
        self._interrupt.clear()
        return await gardener.run(job)

    async def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[HistoryEntry]:
        """Lifecycle events of a memory, oldest first: merged (R4 duplicates), promoted,
        derived, reinforced, archived, purged, level_promoted, outcome. Readable after
        the memory itself was purged."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(storage.lifecycle.history, scope, check_id(memory_id))

    async def sources(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[MemorySource]:
        """The occurrences merged into a memory (its source list), oldest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(storage.lifecycle.sources, scope, check_id(memory_id))

    async def duplicates(
        self, *, limit: int = 100, user_id: str | None = None, agent_id: str | None = None
    ) -> list[DuplicateAttempt]:
        """The duplicate-attempt log (seed 003 R4), newest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            storage.lifecycle.duplicates, scope, limit=check_limit(limit, 10_000)
        )

    async def retention(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> float:
        """Current Ebbinghaus retention of a memory, in [0, 1], at the engine's clock."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        key = check_id(memory_id)
        states = await self._run(storage.retention.get_many, scope, [key])
        if key not in states:
            raise NotFoundError("memory", key)
        state = states[key]
        return retention(
            state.stability, (self.clock.now() - state.last_reviewed) / SECONDS_PER_DAY
        )

    # -- exchange -----------------------------------------------------------------

    async def export_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Write the scope's memories, vectors, edges and retention as JSON Lines.
        Archived memories are included. Returns the number of memories exported."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        embedder = self._inner_embedder
        return await self._run(
            exchange.export_scope, storage, scope, Path(path), embedder.model_id, embedder.dimension
        )

    async def export_lines(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> AsyncIterator[str]:
        """The scope's export, line by line (each ends with a newline), read a page at a
        time: the header, each memory followed by its retention state, then the edges.

        Pages are read by offset, so records written or deleted while an export streams
        may be missed or repeated; import skips repeats.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        embedder = self._inner_embedder
        yield exchange.export_header(scope, embedder.model_id, embedder.dimension)
        offset = 0
        while True:
            page = await self._run(exchange.export_page, storage, scope, offset)
            for line in page.lines:
                yield line
            offset += page.count
            if page.count < exchange.CHUNK:
                break
        for line in await self._run(exchange.export_edges, storage, scope):
            yield line
        logger.info("export: %d records of %s", offset, scope)

    async def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Load an export file into the scope (see ``import_lines``); returns records imported."""
        report = await self.import_lines(
            exchange.iter_lines(Path(path)),
            source=os.fspath(path),
            user_id=user_id,
            agent_id=agent_id,
        )
        return report.imported

    async def import_lines(
        self,
        lines: Iterable[str | bytes] | AsyncIterable[str | bytes],
        *,
        source: str = "input",
        progress: Callable[[ImportReport], object] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ImportReport:
        """Load an export into the scope, streaming: a chunk of records at a time is
        validated, embedded if needed and written in one transaction.

        Ids are kept; records already present are skipped (neither embedded nor
        written), so re-running an interrupted import resumes it. Vectors from another
        embedding model are recomputed. ``progress`` is called after each chunk with
        the totals so far. A bad line raises ValidationError naming it; the chunks
        before it stay written.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        reader = exchange.LineReader(self.config.limits, source=source)
        totals = {"records": 0, "imported": 0, "skipped": 0}
        written: set[str] = set()

        async def write(chunk: exchange.ImportChunk) -> None:
            new = await self._run(exchange.new_ids, storage, scope, chunk)
            same_model = reader.model == self._inner_embedder.model_id
            missing = chunk.needing_vectors(new, same_model, self._inner_embedder.dimension)
            if missing:
                vectors = await self._embed([r.content for r in missing])
                chunk.vectors.update(zip((r.id for r in missing), vectors, strict=True))
            written.update(r.id for r in new)
            states = [s for memory_id, s in chunk.retention.items() if memory_id in written]
            await self._run(exchange.write_chunk, storage, scope, new, chunk.vectors, states)
            self._names.pop(scope, None)
            totals["records"] += len(chunk.records)
            totals["imported"] += len(new)
            totals["skipped"] += len(chunk.records) - len(new)
            if progress is not None:
                progress(ImportReport(lines=reader.number, **totals))

        if isinstance(lines, AsyncIterable):
            async for raw in lines:
                ready = reader.feed(raw)
                if ready is not None:
                    await write(ready)
        else:
            for raw in lines:
                ready = reader.feed(raw)
                if ready is not None:
                    await write(ready)
        last = reader.finish()
        await write(last)
        edges = await self._run(exchange.write_edges, storage, scope, last.edges)
        report = ImportReport(lines=reader.number, edges=edges, **totals)
        if progress is not None:
            progress(report)
        logger.info(
            "import: %d records into %s (%d new, %d present)",
            report.records,
            scope,
            report.imported,
            report.skipped,
        )
        return report

    # -- administration: API keys of the service ------------------------------------

    async def create_key(
        self, user_id: str, *, agent_id: str | None = None, label: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new API key bound to ``user_id`` (and to ``agent_id`` when given).

        Returns the key and its token; the token is not stored (only its sha256) and
        cannot be shown again.
        """
        scope = check_scope(user_id, agent_id)
        if label is not None:
            label = check_content(label, self.config.limits, "label")
        key = ApiKey(
            id=apikeys.new_key_id(),
            user_id=scope.user_id,
            agent_id=scope.agent_id if agent_id is not None else None,
            label=label,
            created_at=self._clock(),
        )
        token = apikeys.new_token(key.id)
        storage = await self._ready()
        await self._run(storage.keys.add, key, apikeys.hash_token(token))
        logger.info("created API key %s for user %s", key.id, key.user_id)
        return key, token

    async def list_keys(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """API keys, oldest first (never their tokens)."""
        storage = await self._ready()
        return await self._run(storage.keys.list, include_revoked=include_revoked)

    async def count_keys(self) -> int:
        """Number of API keys that are not revoked."""
        storage = await self._ready()
        return await self._run(storage.keys.count)

    async def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key for good; NotFoundError if unknown. Revoking twice is harmless."""
        storage = await self._ready()
        key = await self._run(storage.keys.revoke, check_id(key_id, "key_id"), self._clock())
        if key is None:
            raise NotFoundError("API key", key_id)
        logger.info("revoked API key %s", key.id)
        return key

    async def scopes(self, *, limit: int = 1000) -> list[tuple[Scope, dict[str, int]]]:
        """Scopes that hold memories, with their counts per kind (administration: this
        lists every user, so only local tools and the local-mode inspector call it)."""
        storage = await self._ready()
        maximum = check_limit(limit, 100_000)

        def gather() -> list[tuple[Scope, dict[str, int]]]:
            found = sorted(storage.memories.scopes(), key=lambda s: (s.user_id, s.agent_id))
            return [
                (scope, {k.value: n for k, n in storage.memories.count(scope).items()})
                for scope in found[:maximum]
            ]

        return await self._run(gather)

    async def authenticate(self, token: str) -> ApiKey:
        """The live key a token belongs to; AuthenticationError otherwise (the same
        message whatever was wrong, so a caller learns nothing from it)."""
        key_id = apikeys.parse_key_id(token) if isinstance(token, str) else None
        if key_id is not None:
            storage = await self._ready()
            found = await self._run(storage.keys.lookup, key_id)
            if found is not None:
                key, stored_hash = found
                if apikeys.token_matches(token, stored_hash) and not key.revoked:
                    return key
        raise AuthenticationError("invalid or revoked API key")


class _Prepared:
    """A validated observation waiting to be embedded and written."""

    __slots__ = (
        "id",
        "content",
        "source",
        "timestamp",
        "metadata",
        "session_id",
        "tags",
        "participants",
        "provenance",
        "base_importance",
        "temporal_level",
        "salience",
    )

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


def _initial_retention(record: MemoryRecord, now: float) -> RetentionInfo:
    return RetentionInfo(record.id, initial_stability(record.temporal_level), now, 0)


def _embedder_from_config(config: UCMAConfig) -> Embedder:
    spec = config.embedding.model
    if spec == "local":
        from ucma.embeddings import LocalEmbedder

        return LocalEmbedder(batch_size=config.embedding.batch_size)
    provider, _, model = spec.partition(":")
    if provider == "openai" and model:
        from ucma.embeddings import OpenAIEmbedder

        if config.embedding.dimension is None:
            raise ConfigError("EmbeddingConfig.dimension is required for openai embedders")
        return OpenAIEmbedder(
            model=model, dimension=config.embedding.dimension, base_url=config.embedding.base_url
        )
    raise ConfigError(f"unknown embedding model {spec!r}; use 'local' or 'openai:<model>'")


def _enum(enum: Any, value: object, name: str) -> Any:
    try:
        return enum(value)
    except ValueError as exc:
        choices = ", ".join(m.value for m in enum)
        raise ValidationError(f"{name} must be one of: {choices}; got {value!r}") from exc


def _provenance(value: object, default: Provenance) -> Provenance:
    return default if value is None else _enum(Provenance, value, "provenance")


def _step(value: ProcedureStep | Mapping[str, Any]) -> ProcedureStep:
    if isinstance(value, ProcedureStep):
        return value
    if not isinstance(value, Mapping):
        raise ValidationError("each step must be a ProcedureStep or a mapping")
    try:
        step = ProcedureStep(**value)
    except TypeError as exc:
        raise ValidationError(f"invalid procedure step: {exc}") from exc
    if not isinstance(step.description, str) or not step.description.strip():
        raise ValidationError("a procedure step needs a non-empty description")
    return step


def _time_range(value: object) -> tuple[float, float] | None:
    if value is None:
        return None
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValidationError("time_range must be a (start, end) pair of epoch seconds")
    start = check_timestamp(value[0], "time_range start")
    end = check_timestamp(value[1], "time_range end")
    if end < start:
        raise ValidationError("time_range end must not be before its start")
    return start, end
