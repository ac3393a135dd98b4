"""AsyncMemory: the memory controller, the one place that wires UCMA together.

Seed 001's controller API (observe, remember, learn, new_session, stats) plus
the typed writes and reads a user needs (assert_fact, facts_about,
add_procedure, record_procedure_outcome, find_procedures, get, list, delete,
export and import), and the lifecycle (sleep, forget, run_gardener, history;
the logic lives in ``ucma.lifecycle``, docs/lifecycle.md). ``ucma.sync.Memory``
wraps every method one-to-one. Every notion of "now" comes from ``self.clock``.

Threading model: storage calls run on one dedicated worker thread (SQLite
connections are single-writer), embeddings on the embedder's own threads, so
the event loop never blocks. Each public write validates everything first,
computes embeddings second, and writes in one storage transaction last: a
failure at any step leaves nothing half-written.

Scope: every method takes ``user_id`` / ``agent_id``; the values given when
the memory was opened are the defaults. A call with no user_id at all raises
``ScopeError``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ucma import exchange
from ucma.config import UCMAConfig
from ucma.embeddings import CachedEmbedder, Embedder, TokenCounter
from ucma.errors import ConfigError, NotFoundError, ValidationError
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
from ucma.retrieval.retriever import Retriever, record_access
from ucma.retrieval.router import route
from ucma.storage.base import Storage
from ucma.types import (
    DuplicateAttempt,
    Episode,
    Fact,
    GraphEdge,
    HistoryEntry,
    Hit,
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
    ) -> None:
        self.path = Path(path)
        self.config = config or UCMAConfig()
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
        self._open_lock = asyncio.Lock()
        self._closed = False
        self.sensory = SensoryBuffer(self.config.sensory.capacity, clock=self.clock)
        self._tokens = TokenCounter()
        self._working: dict[Scope, WorkingMemory] = {}
        self._sessions: dict[Scope, str] = {}
        self._last_episode: dict[tuple[Scope, str], str] = {}

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
            )
            logger.info("opened %s (embedder %s)", self.path, self._inner_embedder.model_id)
        return self

    def _open_storage(self) -> Storage:
        from ucma.storage.sqlite import SQLiteStorage

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return SQLiteStorage(self.path, dimension=self._inner_embedder.dimension)

    async def close(self) -> None:
        async with self._open_lock:
            if self._closed:
                return
            self._closed = True
            if self._consolidation is not None and not self._consolidation.done():
                self._interrupt.set()
                await asyncio.gather(self._consolidation, return_exceptions=True)
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

    async def _ready(self) -> Storage:
        if self._executor is None or self._storage is None:
            await self.open()
        assert self._storage is not None
        return self._storage

    async def _embed(self, texts: Sequence[str]) -> np.ndarray:
        await self._ready()
        assert self._embedder is not None
        return await self._embedder.embed(texts)

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
        record: Learning | Procedure | Fact,
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
            elif isinstance(record, Procedure):
                storage.procedures.add(record, vector)
            else:
                storage.facts.add(record, vector)
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
        """Assert a subject-predicate-object fact.

        The same triple in the same scope always maps to the same id, so a
        repeat reinforces the stored fact (confidence +0.05, sources merged)
        instead of duplicating it. Source episodes get ``derived_from`` edges.
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
        fact_id = fact_id_for(scope, subj, pred, obj)
        storage = await self._ready()
        now = self._clock()
        existing = await self._run(storage.facts.get, scope, fact_id)
        weight = self.config.graph.evidence_edge_weight
        edges = [GraphEdge(fact_id, s, "derived_from", weight, now) for s in sources]
        if existing is not None:
            fact = existing.reinforced(sources, now)
            await self._run(self._update_fact, storage, scope, fact, edges, sources)
            return fact
        level = select_temporal_level(text, "fact")
        fact = Fact(
            id=fact_id,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=prov,
            temporal_level=level,
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
        )
        [vector] = await self._embed([text])
        await self._run(self._write_typed, storage, scope, fact, vector, edges, sources, now)
        logger.info("assert_fact: %s %s %s (%s)", subj, pred, obj, fact_id)
        return fact

    @staticmethod
    def _update_fact(
        storage: Storage,
        scope: Scope,
        fact: Fact,
        edges: Sequence[GraphEdge],
        sources: Sequence[str],
    ) -> None:
        found = storage.memories.get_many(scope, list(sources))
        for memory_id in sources:
            if memory_id not in found:
                raise NotFoundError("memory", memory_id)
        with storage.transaction():
            storage.facts.update(fact)
            if edges:
                storage.graph.add_edges(scope, edges)

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
        """Delete a memory and everything hanging off it; NotFoundError if unknown."""
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
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Hit]:
        """Retrieve memories for ``query``, best first (seed 001 chapter 19).

        The top hits are staged in the scope's working memory. Retrieval counts
        as a review of each returned memory (access count, retention).
        """
        scope = self._scope(user_id, agent_id)
        cfg = self.config
        text = check_query(query, cfg.limits)
        count = check_limit(
            limit if limit is not None else cfg.retrieval.max_results,
            cfg.retrieval.max_results_limit,
        )
        plan = route(
            text,
            mode=_enum(QueryMode, mode, "mode") if mode is not None else None,
            entity=check_content(entity, cfg.limits, "entity") if entity is not None else None,
            tags=[t.lower() for t in check_strings(tags, "tags")] or None,
            time_range=_time_range(time_range),
            kinds=[_enum(MemoryKind, k, "kinds") for k in kinds] if kinds else None,
        )
        minimum = check_fraction(min_importance, "min_importance")
        vector = (await self._embed([text]))[0] if text.strip() else None
        storage = await self._ready()
        now = self._clock()
        retriever = Retriever(storage, cfg)

        def run() -> list[Hit]:
            hits = retriever.retrieve(
                scope,
                plan,
                vector,
                limit=count,
                now=now,
                include_graph_neighbors=include_graph_neighbors,
                min_importance=minimum,
            )
            if cfg.retrieval.reinforce_on_retrieval:
                record_access(
                    storage, scope, [h.id for h in hits], now, cfg.forgetting.stability_boost_base
                )
            # Issue 4, Hebbian reinforcement: memories retrieved together are counted
            # here; the sleep cycle turns the counts into co_retrieved edge weight.
            top = [h.id for h in hits[: cfg.consolidation.co_retrieval_top_k]]
            if len(top) > 1:
                storage.lifecycle.record_co_retrieval(scope, top, now)
            return hits

        hits = await self._run(run)
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        for hit in hits[: cfg.working.staged_hits]:
            working.add(hit.id, hit.content, "staging", hit.memory.effective_salience)
        logger.info("remember: %d hits for %r (mode %s)", len(hits), text[:60], plan.mode.value)
        return hits

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
        self, entity: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[Fact]:
        """Facts with ``entity`` as subject or object (case-insensitive)."""
        scope = self._scope(user_id, agent_id)
        name = check_content(entity, self.config.limits, "entity").strip()
        storage = await self._ready()
        return await self._run(storage.facts.about, scope, name)

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
        return await self._run(
            exchange.export_scope, storage, scope, Path(path), self._inner_embedder.model_id
        )

    async def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Load an export into the scope, keeping ids; records already present
        are skipped, so re-running an interrupted import resumes it. Vectors
        from another embedding model are recomputed. Returns records imported."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        parsed = await asyncio.to_thread(exchange.read_export, Path(path), self.config.limits)
        missing = parsed.records_needing_vectors(
            self._inner_embedder.model_id, self._inner_embedder.dimension
        )
        if missing:
            vectors = await self._embed([r.content for r in missing])
            parsed.set_vectors(missing, vectors)
        count = await self._run(exchange.import_scope, storage, scope, parsed)
        logger.info("import: %d records into %s", count, scope)
        return count


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
