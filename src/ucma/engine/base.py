"""The plumbing every part of ``AsyncMemory`` shares: construction, opening and
closing, the storage threads, the embedders, scopes, sessions and working memory.

Threading model: storage calls run on the store's own worker threads, as many
as the backend declares (``Storage.concurrency``: a SQLite file several, reading
at once beside its one writer; a pooled backend one per connection; a store of
one connection one, so its calls run one at a time in order), embeddings on the
embedder's own threads, so the event loop never blocks; concurrent callers'
texts share model calls (``ucma.embeddings.batching``). Each public write
validates everything first, computes embeddings second, and writes in one
storage transaction last: a failure at any step leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import math
import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, Self, TypeVar

import numpy as np

from ucma.config import UCMAConfig
from ucma.conflicts.predicates import PredicateRegistry
from ucma.conflicts.resolver import ConflictResolver
from ucma.conflicts.sources import SourceOfTruth
from ucma.embeddings import (
    BatchingEmbedder,
    CachedEmbedder,
    Embedder,
    EmbedderLike,
    TokenCounter,
    as_embedder,
)
from ucma.engine.synthesis_cache import ScopeCache
from ucma.errors import ConfigError, TransientStorageError, ValidationError
from ucma.lifecycle.clock import Clock, as_clock
from ucma.lifecycle.consolidation import SleepReport
from ucma.lifecycle.leases import Claim, Leases, process_owner
from ucma.lru import LruMap
from ucma.memory.retention import initial_stability
from ucma.memory.sensory import SensoryBuffer
from ucma.memory.working import WorkingMemory
from ucma.providers.base import Providers
from ucma.retrieval.directives import Instructions
from ucma.storage import open_storage, parse_location, storage_concurrency
from ucma.storage.base import Storage
from ucma.types import MemoryRecord, Provenance, RetentionInfo, Scope
from ucma.validation import check_scope, check_timestamp

__all__ = ["EngineBase"]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")
TRANSIENT_RETRIES = 3
"""How many times more a call that is one transaction is made when it lost to a
concurrent one (``EngineBase._run_transaction``)."""


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclasses.dataclass(slots=True)
class _ScopeLock:
    """A scope's sleep-cycle lock and how many tasks hold or await it."""

    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    users: int = 0


class EngineBase:
    """State and plumbing of ``AsyncMemory`` (ucma.engine.memory).

    The engine's other parts are mixins over this class, one module each, and
    only ever used combined as ``AsyncMemory``: they call one another through
    ``self`` (``recall`` of ``remember``, ``scopes`` of ``prepare_large_scopes``),
    and ``__init__`` registers sources of truth through ``add_source_of_truth``.
    """

    def __init__(
        self,
        database: str | os.PathLike[str],
        *,
        config: UCMAConfig | None = None,
        user_id: str | None = None,
        agent_id: str = "default",
        embedder: Embedder | EmbedderLike | None = None,
        storage: Storage | None = None,
        clock: Clock | Callable[[], float] | None = None,
        providers: Providers | None = None,
        sources: Sequence[SourceOfTruth] = (),
    ) -> None:
        # Where the store lives (ucma.storage.location): checked here, opened by open().
        self.location = parse_location(database)
        # The store's local file (for the vault key beside it and backups); None
        # for a database server.
        self.path: Path | None = self.location.path
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
        # Background consolidation (ucma.engine.lifecycle): one task per scope at a
        # time, a rerun flag for requests made while it runs, and a lock per scope
        # so no two sleep cycles of one scope ever overlap.
        self._consolidation: asyncio.Task[SleepReport | None] | None = None
        self._consolidations: dict[Scope, asyncio.Task[SleepReport | None]] = {}
        self._consolidate_again: set[Scope] = set()
        self._cycle_locks: dict[Scope, _ScopeLock] = {}
        # This engine's name in the database's locks and leases (gardener jobs, scopes).
        self._gardener_owner = process_owner("engine")
        # Any object with model_id, dimension and embed() will do: a non-Embedder is
        # wrapped so its vectors get the same shape/NaN/zero checks (ucma.embeddings.base).
        self._inner_embedder = (
            _embedder_from_config(self.config) if embedder is None else as_embedder(embedder)
        )
        self._owns_embedder = embedder is None
        self._storage: Storage | None = storage
        self._batched: Embedder | None = None
        # Query vectors, and vectors of texts derived from memories (name_free.py).
        self._embedder: CachedEmbedder | None = None
        self._derived_embedder: CachedEmbedder | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._threads = 1
        self._queued: set[asyncio.Future[None]] = set()
        self._open_lock = asyncio.Lock()
        self._closed = False
        self.sensory = SensoryBuffer(self.config.sensory.capacity, clock=self.clock)
        self._tokens = TokenCounter()
        # State of the scopes used lately, each map holding max_scopes_in_memory of
        # them (any caller may name a new scope; ucma.lru). A scope dropped from one
        # comes back as after a restart: an empty working memory, a new session on its
        # next observation without a session_id, the last episode of a named session
        # read from storage (for its followed_by edge), names and instructions re-read.
        scopes = self.config.limits.max_scopes_in_memory
        self._working: LruMap[Scope, WorkingMemory] = LruMap(scopes)
        self._sessions: LruMap[Scope, str] = LruMap(scopes)
        self._last_episode: LruMap[tuple[Scope, str], str] = LruMap(scopes)
        # The people each scope's episodes involve, for the router (see _known_names).
        self._names: LruMap[Scope, list[str]] = LruMap(scopes)
        # Each scope's standing instructions, read on its first recall and kept up
        # to date by this engine's observations (see Retrieval._condition_cosines).
        self._instructions: LruMap[Scope, Instructions] = LruMap(scopes)
        # What synthesize reads on every query of a scope (ucma.engine.synthesis_cache):
        # checked against the event log on each read, so a dropped scope only costs
        # its next synthesize the reads.
        self._synthesis: LruMap[Scope, ScopeCache] = LruMap(scopes)

    # -- lifecycle ----------------------------------------------------------------

    async def open(self) -> Self:
        """Open the database (idempotent); every other method opens on first use."""
        async with self._open_lock:
            if self._closed:
                raise ValidationError("this memory is closed; create a new one")
            if self._executor is not None:
                return self
            # The store opens on the thread its calls will use (one, for SQLite); a
            # backend that takes concurrent calls then gets its number of threads.
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="ucma-storage")
            try:
                if self._storage is None:
                    self._storage = await self._run(self._open_storage)
                self._threads = storage_concurrency(self._storage)
            except BaseException:
                self._executor.shutdown(wait=False)
                self._executor = None
                raise
            if self._threads > 1:
                self._executor.shutdown(wait=True)
                self._executor = ThreadPoolExecutor(
                    self._threads, thread_name_prefix="ucma-storage"
                )
            # Concurrent callers (a service's requests) share model calls
            # (ucma.embeddings.batching); queries go through the caches first.
            self._batched = BatchingEmbedder(
                self._inner_embedder, max_batch=self.config.embedding.batch_size
            )
            persistent = self.config.embedding.persistent_cache
            store = self._storage.embedding_cache if persistent else None
            self._embedder = CachedEmbedder(
                self._batched,
                max_size=self.config.embedding.lru_size,
                store=store,
                write_batch=self.config.embedding.persistent_cache_batch,
            )
            self._derived_embedder = CachedEmbedder(
                self._batched,
                max_size=self.config.embedding.derived_lru_size,
                store=store,
                write_batch=self.config.embedding.persistent_cache_batch,
            )
            logger.info("opened %s (embedder %s)", self.location, self._inner_embedder.model_id)
        return self

    def _open_storage(self) -> Storage:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return open_storage(
            self.location,
            dimension=self._inner_embedder.dimension,
            ann=self.config.retrieval.ann_settings(),
            cached_scopes=self.config.limits.max_scopes_in_memory,
        )

    async def close(self) -> None:
        async with self._open_lock:
            if self._closed:
                return
            self._closed = True
            # Background cycles stop after their current phase (each phase commits
            # whole, so the store stays consistent), or are cancelled when one has
            # not within close_timeout_seconds (a provider that never answers);
            # their errors were logged.
            running = [task for task in self._consolidations.values() if not task.done()]
            if running:
                self._interrupt.set()
                _, stuck = await asyncio.wait(
                    running, timeout=self.config.consolidation.close_timeout_seconds
                )
                for task in stuck:
                    logger.warning("close: a sleep cycle did not stop in time; cancelled")
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)
            await asyncio.gather(*self._queued, return_exceptions=True)
            for cached in (self._embedder, self._derived_embedder):
                if cached is not None:
                    await cached.flush()
            if self._executor is not None:
                if self._storage is not None:
                    await self._run(self._storage.close)
                self._executor.shutdown(wait=True)
            if self._owns_embedder:
                await self._inner_embedder.aclose()

    @contextlib.asynccontextmanager
    async def _cycle_lock(self, scope: Scope) -> AsyncIterator[None]:
        """Hold the lock every sleep cycle of ``scope`` holds while it runs. A scope's
        lock exists while it is held or awaited only (event loop only), so the scopes
        a process has slept cost nothing once their cycles are over."""
        entry = self._cycle_locks.get(scope)
        if entry is None:
            entry = self._cycle_locks[scope] = _ScopeLock()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._cycle_locks[scope]

    @contextlib.asynccontextmanager
    async def _lease(
        self, name: str, *, wait: bool, finished_before: float = math.inf
    ) -> AsyncIterator[Claim | None]:
        """Hold the database's lease ``name`` for the block (``ucma.lifecycle.leases``),
        as this engine: None when another process holds it (without ``wait``) or
        finished its work after ``finished_before``."""
        storage = await self._ready()
        leases = Leases(
            storage=storage,
            run=self._run,
            clock=self.clock,
            owner=self._gardener_owner,
            lease_seconds=self.config.consolidation.lease_seconds,
        )
        async with leases.hold(name, wait=wait, finished_before=finished_before) as claim:
            yield claim

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def embedder(self) -> Embedder:
        return self._inner_embedder

    async def _run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run a storage call on a storage thread. With one thread calls run in the
        order made; with several, a call first waits for the queued ones (``_queue``)
        made before it, so it sees their writes."""
        if self._executor is None:
            raise ValidationError("memory is not open")
        if self._threads > 1 and self._queued:
            await asyncio.wait(list(self._queued))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def _run_transaction(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``_run`` for a call that is one transaction, made again (at most
        ``TRANSIENT_RETRIES`` times more) when it lost to a concurrent transaction
        (``TransientStorageError``: rolled back, it wrote nothing)."""
        for attempt in range(1, TRANSIENT_RETRIES + 1):
            try:
                return await self._run(fn, *args, **kwargs)
            except TransientStorageError as exc:
                logger.warning(
                    "storage: %s; made again (%d of %d)", exc, attempt, TRANSIENT_RETRIES
                )
        return await self._run(fn, *args, **kwargs)

    def _queue(self, fn: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run ``fn`` on a storage thread without waiting for it: a write a caller's
        answer does not depend on. Every later storage call sees it (one storage
        thread takes work in order; with several, ``_run`` waits for it); queued
        calls may run at once with each other on several threads. A failure is
        logged."""
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
        assert self._batched is not None
        vectors: np.ndarray = await self._batched.embed(texts)
        return vectors

    async def _embed_queries(self, texts: list[str]) -> np.ndarray:
        """Query vectors through the LRU and the persistent (model, text) cache,
        in one batch (one model call for what the caches miss)."""
        await self._ready()
        assert self._embedder is not None
        vectors: np.ndarray = await self._embedder.embed(texts)
        return vectors

    async def _embed_derived(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts derived from memories (``EmbeddingConfig.derived_lru_size``
        of them kept in memory)."""
        await self._ready()
        assert self._derived_embedder is not None
        vectors: np.ndarray = await self._derived_embedder.embed(texts)
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


def _initial_retention(record: MemoryRecord, now: float) -> RetentionInfo:
    return RetentionInfo(record.id, initial_stability(record.temporal_level), now, 0)


def _embedder_from_config(config: UCMAConfig) -> Embedder:
    spec = config.embedding.model
    if spec == "local":
        from ucma.embeddings import LocalEmbedder

        # One thread per model call and one call per core at once (ucma.embeddings.batching):
        # concurrent requests use every core without a call's threads waiting on each other.
        return LocalEmbedder(batch_size=config.embedding.batch_size, intra_op_threads=1)
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
