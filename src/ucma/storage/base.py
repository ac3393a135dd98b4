"""Storage contracts: one ABC per memory kind, bundled by ``Storage``.

The engine talks only to these classes; no backend name appears outside
``ucma.storage.<backend>``. Every method is synchronous: the engine runs
storage calls on worker threads of its own, as many as ``Storage.concurrency``
says. At 1 (the default; SQLite's ``:memory:``) calls arrive one at a time, so a
backend need not be thread-safe across concurrent calls.

Contracts common to every store:

- Every read takes a ``Scope`` and never returns another scope's records; an
  id that exists only in another scope behaves exactly like an unknown id.
- Records returned are fresh copies: mutating them changes nothing stored.
- Writes issued inside ``Storage.transaction()`` commit together or not at
  all. Outside a transaction each write commits on its own.
- Backend exceptions are translated to ``StorageError`` (``from exc``).
- Archived memories (``archived_at`` set) are excluded from searches and
  typed lookups unless ``include_archived=True``; ``get`` always finds them.

Searchable text and vectors live in one index across kinds (DESIGN.md "One
place to search"): the typed stores' ``add`` methods index the record's
``content`` for keyword search and store its vector for dense search.

What a new backend implements (a package ``ucma.storage.<name>``, opened through
``ucma.storage.location``; its in-process search state may reuse
``ucma.storage.index``):

- ``Storage`` with its three abstract methods (``transaction``, ``close``,
  ``backup``) and one object per store attribute (``memories`` ... ``goals``).
- Every ``@abstractmethod`` of the store ABCs below: 137 in all, listed by
  ``Cls.__abstractmethods__``; the conformance suite (tests/conformance) checks
  them on every backend.
- Nothing else is required. These methods have generic defaults written over the
  abstract ones, correct on any backend, that a backend overrides where it can do
  better (SQLite overrides all but ``VaultStore.taken``):
  ``MemoryCatalog.get_many`` (one ``get`` per id) and ``count`` (pages through
  ``list``); ``EpisodicStore.in_range`` (``time_range``) and ``last_of_session``
  (``session``); ``EventStore.latest`` (``list``); ``KeyStore.count``;
  ``VaultStore.taken`` (``get``); ``GoalStore.get`` (``get_many``) and ``count``;
  ``OpinionStore.count``; ``PredictiveStore.count``. The paging ones read every
  row: override them with a count on a large store.
- The lifecycle events ``EventStore`` describes, appended by the backend itself
  in the transaction of the write that causes them.
"""

from __future__ import annotations

import builtins
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from ucma.errors import ValidationError
from ucma.events.log import Event
from ucma.learning.records import DecisionTrace, OutcomeSignal, Retrieval, SalienceUpdate
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.paradigms.predictive_records import Competence, Transition
from ucma.types import (
    ApiKey,
    Bank,
    Conflict,
    ConflictStatus,
    DuplicateAttempt,
    Episode,
    Fact,
    ForgettingBound,
    GraphEdge,
    HistoryEntry,
    JobRun,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    MemorySource,
    MemoryVitals,
    Opinion,
    OpinionStatus,
    Procedure,
    ProcedureType,
    RetentionInfo,
    ReviewFlag,
    Scope,
    SleepRun,
)

__all__ = [
    "DEFAULT_ANN",
    "DEFAULT_BM25",
    "AnnSettings",
    "Bm25",
    "ConflictStore",
    "EmbeddingCacheStore",
    "EpisodeBrief",
    "EpisodicStore",
    "ErasureStore",
    "EventStore",
    "GoalStore",
    "GraphStore",
    "KeyStore",
    "LearningStore",
    "LeaseRecord",
    "LeaseStore",
    "LifecycleStore",
    "MemoryCatalog",
    "OpinionStore",
    "PredictiveStore",
    "ProceduralStore",
    "RetentionStore",
    "ScoredId",
    "SearchIndexStatus",
    "SemanticStore",
    "Storage",
    "Supersession",
    "TraceStore",
    "VaultEntry",
    "VaultStore",
    "check_lease",
    "lease_expiry",
]

ScoredId = tuple[str, float]
"""A memory id with a channel score; higher is better."""

_PAGE = 1000
"""Rows per call when a default method pages through a listing."""


@dataclass(frozen=True, slots=True)
class Bm25:
    """Keyword scoring parameters: BM25 saturation ``k1`` and length
    normalisation ``b``, and the weight of a record's context field (its
    episode's previous turn and date) relative to its content."""

    k1: float = 1.2
    b: float = 0.75
    context_weight: float = 0.5

    def __post_init__(self) -> None:
        if not (0 < self.k1 <= 10 and 0 <= self.b <= 1 and 0 <= self.context_weight <= 10):
            raise ValidationError(
                "BM25 needs 0 < k1 <= 10, 0 <= b <= 1 and 0 <= context_weight <= 10, got "
                f"k1={self.k1}, b={self.b}, context_weight={self.context_weight}"
            )


DEFAULT_BM25 = Bm25()


@dataclass(frozen=True, slots=True)
class AnnSettings:
    """When a scope's dense search goes approximate, and the HNSW graph's shape.

    A scope with at least ``threshold`` live rows gets a graph (0: always
    exact search); ``connectivity``, ``expansion_add`` and
    ``expansion_search`` are HNSW's M, efConstruction and efSearch. Rows added
    after a build are scanned exactly until they exceed ``tail_rows`` or
    ``tail_fraction`` of the graph's keys (or as many keys belong to deleted
    rows); then the graph is extended in the background.
    """

    threshold: int = 20_000
    connectivity: int = 16
    expansion_add: int = 128
    expansion_search: int = 128
    tail_rows: int = 2048
    tail_fraction: float = 0.05

    def __post_init__(self) -> None:
        if not (
            self.threshold >= 0
            and 2 <= self.connectivity <= 256
            and 1 <= self.expansion_add <= 4096
            and 1 <= self.expansion_search <= 4096
            and self.tail_rows >= 0
            and 0 < self.tail_fraction <= 1
        ):
            raise ValidationError(
                "AnnSettings needs threshold >= 0, 2 <= connectivity <= 256, expansion_add and "
                "expansion_search in 1..4096, tail_rows >= 0 and 0 < tail_fraction <= 1"
            )

    @property
    def enabled(self) -> bool:
        return self.threshold > 0


DEFAULT_ANN = AnnSettings()


@dataclass(frozen=True, slots=True)
class SearchIndexStatus:
    """A scope's dense search: its live rows, how many of them an HNSW graph
    covers (the rest are scanned exactly), and whether a build of its graph is
    under way (running, or waiting for another scope's build to finish)."""

    live_rows: int
    graph_rows: int
    building: bool


@dataclass(frozen=True, slots=True)
class EpisodeBrief:
    """What retrieval needs of an episode without loading the whole record."""

    id: str
    session_id: str
    timestamp: float
    participants: frozenset[str]
    """Lower-cased names of the source and the participants."""


class MemoryCatalog(ABC):
    """Operations common to every kind: lookup, search, access, archive, delete."""

    @abstractmethod
    def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        """The typed record (Episode, Fact, Procedure or Learning), archived or not."""

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Records by id; ids not found in the scope are absent from the result.

        Default: one ``get`` per distinct id."""
        found = {}
        for memory_id in dict.fromkeys(memory_ids):
            record = self.get(scope, memory_id)
            if record is not None:
                found[memory_id] = record
        return found

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        kind: MemoryKind | None = None,
        limit: int = 100,
        offset: int = 0,
        include_archived: bool = False,
        in_insertion_order: bool = False,
        bank: Bank | None = None,
    ) -> list[MemoryRecord]:
        """Records ordered by creation time (oldest first), then id; with
        ``in_insertion_order``, in the order the store received them (what an export
        follows, so an import writes them in the same order: equal timestamps then
        break ties the same way in both stores); of one ``bank`` when given."""

    def count(
        self, scope: Scope, *, include_archived: bool = False, bank: Bank | None = None
    ) -> dict[MemoryKind, int]:
        """Number of records per kind (every kind present, zero if none); of one
        ``bank`` when given.

        Default: pages through ``list`` (reads every record; override with a count)."""
        counts = dict.fromkeys(MemoryKind, 0)
        offset = 0
        while True:
            page = self.list(
                scope, limit=_PAGE, offset=offset, include_archived=include_archived, bank=bank
            )
            for record in page:
                counts[record.kind] += 1
            if len(page) < _PAGE:
                return counts
            offset += _PAGE

    @abstractmethod
    def delete(self, scope: Scope, memory_id: str) -> bool:
        """Remove a record and everything hanging off it (vector, keyword entry,
        graph node and edges, retention state, typed rows). False if unknown."""

    @abstractmethod
    def replace_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> bool:
        """Overwrite one record's unit vector (after its content changed) so every later
        search ranks it by the new text. False if the record is not in the scope."""

    @abstractmethod
    def set_bank(self, scope: Scope, memory_ids: Sequence[str], bank: Bank) -> int:
        """Move memories of the scope to ``bank``; returns how many exist."""

    @abstractmethod
    def touch(self, scope: Scope, memory_ids: Sequence[str], now: float) -> None:
        """Count one access for each id and set ``last_accessed``; unknown ids are ignored."""

    @abstractmethod
    def set_salience(
        self, scope: Scope, memory_id: str, *, base_salience: float, outcome_adjustment: float
    ) -> None:
        """Overwrite the salience pair of one record."""

    @abstractmethod
    def set_archived(
        self, scope: Scope, memory_ids: Sequence[str], archived_at: float | None
    ) -> None:
        """Archive (a timestamp) or restore (None) records."""

    @abstractmethod
    def vector_search(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
    ) -> builtins.list[ScoredId]:
        """Top ``k`` by cosine similarity (vectors are unit length), best first."""

    @abstractmethod
    def prepare_search(self, scope: Scope, *, wait: bool = False) -> SearchIndexStatus:
        """Load what searching the scope needs and start building its approximate
        index when it is large enough; with ``wait``, return once that is built."""

    @abstractmethod
    def vector_search_latest(
        self,
        scope: Scope,
        vectors: np.ndarray,
        k: int,
        *,
        window: int,
        kinds: Sequence[MemoryKind] | None = None,
        min_score: float = -1.0,
    ) -> builtins.list[builtins.list[ScoredId]]:
        """For each row of ``vectors``, the top ``k`` by cosine, at least
        ``min_score``, among the scope's ``window`` most recently added memories
        (live, not archived), best first.
        Batched and bounded, for checks on the write path such as de-duplication."""

    @abstractmethod
    def keyword_search(
        self,
        scope: Scope,
        terms: Sequence[str],
        k: int,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        include_archived: bool = False,
        bm25: Bm25 = DEFAULT_BM25,
    ) -> builtins.list[ScoredId]:
        """Top ``k`` by BM25 over ``content`` and the lower-weight context field,
        with the scope's own statistics, best first, scores > 0; ties go to
        the older record.

        ``terms`` are plain words (already split by the caller); a record
        matches if it contains any of them. Terms are never interpreted as
        query syntax, whatever characters they contain.
        """

    @abstractmethod
    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored unit vectors by id (float32)."""

    @abstractmethod
    def scopes(self) -> builtins.list[Scope]:
        """Every scope that holds at least one record."""


class EpisodicStore(ABC):
    """Two tiers of episodes with an hour-bucket temporal index (seed 001 ch. 12)."""

    @abstractmethod
    def add(self, episodes: Sequence[Episode], vectors: np.ndarray) -> None:
        """Insert episodes (each with its unit vector, row-aligned) and index them:
        keyword index (content, plus a lower-weight context field holding the
        session's preceding episode and the episode's date in words), vector,
        graph node, temporal bucket, known participant names."""

    @abstractmethod
    def get(self, scope: Scope, episode_id: str) -> Episode | None: ...

    @abstractmethod
    def update(self, episode: Episode) -> None:
        """Persist changed fields of an existing episode (tier, summary, tags,
        participants, metadata, salience, temporal level). Content is re-indexed."""

    @abstractmethod
    def time_range(
        self,
        scope: Scope,
        start: float,
        end: float,
        *,
        limit: int | None = None,
        include_archived: bool = False,
    ) -> list[Episode]:
        """Episodes with ``start <= timestamp <= end`` from both tiers, oldest first,
        found through the hour buckets rather than a scan."""

    def in_range(self, scope: Scope, start: float, end: float, *, limit: int) -> list[str]:
        """Ids of the unarchived episodes ``time_range`` would return, without
        loading them.

        Default: the ids of ``time_range`` (which does load them)."""
        if limit <= 0:
            return []
        return [episode.id for episode in self.time_range(scope, start, end, limit=limit)]

    @abstractmethod
    def expired_short_term(self, scope: Scope, cutoff: float) -> list[Episode]:
        """Short-term episodes stored (``created_at``) before ``cutoff``: past their TTL.

        The TTL counts from storing, never from the episode's ``timestamp``: history
        imported with old event times is not expired by its dates. Oldest event first."""

    @abstractmethod
    def session(self, scope: Scope, session_id: str) -> list[Episode]:
        """Episodes of one session, oldest first."""

    def last_of_session(self, scope: Scope, session_id: str) -> str | None:
        """The id of the session's newest live episode (latest timestamp, then the
        last stored), None when the session has none.

        Default: the last of ``session`` (which loads the whole session)."""
        episodes = self.session(scope, session_id)
        return episodes[-1].id if episodes else None

    @abstractmethod
    def briefs(self, scope: Scope, episode_ids: Sequence[str]) -> dict[str, EpisodeBrief]:
        """Session, time and participants of live episodes by id (others absent)."""

    @abstractmethod
    def neighbors(
        self, scope: Scope, episode_ids: Sequence[str], window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """For each episode, the live episodes at most ``window`` places before and
        after it in its session (by timestamp), as (id, signed offset), nearest first."""

    @abstractmethod
    def participants(self, scope: Scope) -> list[str]:
        """Distinct names (as first written) of every source and participant the
        scope's episodes ever had, for recognising people named in a query."""

    @abstractmethod
    def stats(self, scope: Scope) -> dict[str, int]:
        """``short_term_count``, ``medium_term_count``, ``temporal_buckets``."""


class SemanticStore(ABC):
    """Subject-predicate-object facts with an entity index on both ends (seed 001 ch. 13)."""

    @abstractmethod
    def add(self, fact: Fact, vector: np.ndarray) -> None:
        """Insert a new fact (its id is ``fact_id_for`` of its triple)."""

    @abstractmethod
    def get(self, scope: Scope, fact_id: str) -> Fact | None: ...

    @abstractmethod
    def update(self, fact: Fact) -> None:
        """Persist the mutable fields of an existing fact (confidence, sources,
        reinforcement count, verification and valid times, salience, metadata)."""

    @abstractmethod
    def about(
        self,
        scope: Scope,
        entity: str,
        *,
        include_archived: bool = False,
        as_of: float | None = None,
        include_superseded: bool = False,
    ) -> list[Fact]:
        """Facts whose subject or object is ``entity`` (case-insensitive), by
        confidence then recency.

        By default only current beliefs (``superseded_at`` is None). With
        ``as_of`` (record time), the facts believed at that moment:
        ``recorded_at <= as_of < superseded_at`` (``recorded_at`` None counts
        from ``created_at``). ``include_superseded`` returns every version.
        """

    @abstractmethod
    def current(self, scope: Scope, subject: str, predicate: str) -> list[Fact]:
        """Current, live values of one (subject, predicate) (case-insensitive),
        oldest record first."""

    @abstractmethod
    def history(self, scope: Scope, subject: str, predicate: str) -> list[Fact]:
        """Every version of one (subject, predicate), archived and superseded
        included, in record-time order."""

    @abstractmethod
    def traverse(self, scope: Scope, entity: str, max_hops: int = 3) -> list[Fact]:
        """Breadth-first walk of the knowledge graph from ``entity`` along
        subject -> object links of current facts, up to ``max_hops`` links
        away; each fact once, in discovery order."""

    @abstractmethod
    def stats(self, scope: Scope) -> dict[str, int]:
        """``fact_count``, ``entity_count``."""


class ProceduralStore(ABC):
    """Procedures with steps and a trigger-tag index (seed 001 ch. 14)."""

    @abstractmethod
    def add(self, procedure: Procedure, vector: np.ndarray) -> None: ...

    @abstractmethod
    def get(self, scope: Scope, procedure_id: str) -> Procedure | None: ...

    @abstractmethod
    def update(self, procedure: Procedure) -> None:
        """Persist status, statistics, steps, tags, salience and metadata."""

    @abstractmethod
    def find_by_tags(
        self, scope: Scope, tags: Sequence[str], *, min_success_rate: float = 0.0
    ) -> list[Procedure]:
        """Non-deprecated procedures sharing a tag (case-insensitive), sorted by
        ``Procedure.ranking_score`` descending."""

    @abstractmethod
    def in_domain(
        self,
        scope: Scope,
        domain: str,
        procedure_type: ProcedureType | None = None,
        *,
        limit: int = 200,
    ) -> list[Procedure]:
        """Live (not archived) procedures of one domain (exact match), of one type or
        all, most recently updated first: a strategy's near-duplicate candidates, and
        what ``strategies_for`` ranks when told the domain."""

    @abstractmethod
    def stats(self, scope: Scope) -> dict[str, int]:
        """``procedure_count``, ``tag_count``."""


class LearningStore(ABC):
    """Lessons with applicability and type indexes (seed 001 ch. 15)."""

    @abstractmethod
    def add(self, learning: Learning, vector: np.ndarray) -> None: ...

    @abstractmethod
    def get(self, scope: Scope, learning_id: str) -> Learning | None: ...

    @abstractmethod
    def update(self, learning: Learning) -> None:
        """Persist confidence, validation, application statistics, salience, metadata."""

    @abstractmethod
    def relevant(
        self,
        scope: Scope,
        tags: Sequence[str],
        *,
        learning_type: LearningType | None = None,
        min_confidence: float = 0.3,
        limit: int = 5,
    ) -> list[Learning]:
        """Learnings sharing an applicability tag (case-insensitive), optionally of
        one type, at or above ``min_confidence``, by confidence x impact desc."""

    @abstractmethod
    def stats(self, scope: Scope) -> dict[str, int]:
        """``learning_count``, ``applicability_tags``."""


class GraphStore(ABC):
    """The memory graph: every memory is a node; typed, weighted, directed edges."""

    @abstractmethod
    def add_edges(self, scope: Scope, edges: Sequence[GraphEdge]) -> int:
        """Insert edges between memories of ``scope``; an edge with the same
        (source, target, type) is replaced. Edges whose ends are not both
        memories of the scope are skipped. Returns the number written."""

    @abstractmethod
    def edges_from(self, scope: Scope, node_id: str) -> list[GraphEdge]: ...

    @abstractmethod
    def edges_to(self, scope: Scope, node_id: str) -> list[GraphEdge]: ...

    @abstractmethod
    def all_edges(self, scope: Scope) -> list[GraphEdge]: ...

    @abstractmethod
    def node_ids(self, scope: Scope, *, include_archived: bool = False) -> list[str]: ...

    @abstractmethod
    def set_pagerank(self, scope: Scope, scores: Mapping[str, float]) -> None: ...

    @abstractmethod
    def pagerank(self, scope: Scope, node_ids: Sequence[str]) -> dict[str, float]:
        """Last computed PageRank per node (0.0 where never computed)."""

    @abstractmethod
    def stats(self, scope: Scope) -> dict[str, int]:
        """``node_count``, ``edge_count``."""


class RetentionStore(ABC):
    """Ebbinghaus retention state per memory (seed 001 ch. 11)."""

    @abstractmethod
    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, RetentionInfo]: ...

    @abstractmethod
    def put_many(self, scope: Scope, states: Sequence[RetentionInfo]) -> None:
        """Insert or replace states of memories of the scope."""


@dataclass(frozen=True, slots=True)
class Supersession:
    """A memory replaced as a whole by a newer one (an episode all of whose claims
    were superseded, or that a later statement replaced directly).

    Facts record their own replacement (``Fact.superseded_by``); this is the
    record for memories that have no such field. ``reason`` says why, for people.
    """

    memory_id: str
    superseded_by: str
    superseded_at: float
    reason: str


class ConflictStore(ABC):
    """Recorded conflicts (seed 002) and review flags (dependency invalidation).

    A conflict or flag belongs to the scope of its facts and disappears with
    them: deleting either fact of a conflict, or the flagged memory or its
    premise, deletes the row.
    """

    @abstractmethod
    def add(self, conflict: Conflict) -> None:
        """Insert a conflict; both fact ids must be memories of its scope."""

    @abstractmethod
    def update(self, conflict: Conflict) -> None:
        """Persist the resolution fields of an existing conflict (strategy,
        action, chosen value, explanation, status, resolution time and author,
        options, and both confidences, which a pending conflict keeps current).
        NotFoundError if the id is unknown in its scope."""

    @abstractmethod
    def get(self, scope: Scope, conflict_id: str) -> Conflict | None: ...

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        status: ConflictStatus | None = None,
        limit: int = 100,
    ) -> list[Conflict]:
        """Conflicts of the scope, newest first, optionally for one subject
        and/or predicate (case-insensitive) or one status."""

    @abstractmethod
    def involving(self, scope: Scope, fact_ids: Sequence[str]) -> builtins.list[Conflict]:
        """Conflicts with either side among ``fact_ids``, oldest first."""

    @abstractmethod
    def flag(self, scope: Scope, flags: Sequence[ReviewFlag]) -> int:
        """Open review flags; a memory with an open flag for the same premise
        is not flagged twice. Returns the number of new flags."""

    @abstractmethod
    def flagged(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, ReviewFlag]:
        """The latest open flag of each of ``memory_ids`` that has one."""

    @abstractmethod
    def flags(
        self, scope: Scope, *, include_cleared: bool = False, limit: int = 100
    ) -> builtins.list[ReviewFlag]:
        """Review flags of the scope, newest first."""

    @abstractmethod
    def clear_flags(self, scope: Scope, memory_id: str, cleared_at: float) -> int:
        """Close the open flags of one memory; returns how many were closed."""

    # -- supersession of whole memories ------------------------------------------------

    @abstractmethod
    def supersede(self, scope: Scope, entries: Sequence[Supersession]) -> None:
        """Record memories replaced as a whole (a later entry for the same memory
        replaces the earlier). Both ids must be memories of the scope; the row
        goes when either memory is deleted, so deleting the replacement brings
        the old memory back."""

    @abstractmethod
    def supersessions(self, scope: Scope) -> builtins.list[Supersession]:
        """Every ``Supersession`` of the scope, oldest first (export)."""

    @abstractmethod
    def superseded(
        self, scope: Scope, memory_ids: Sequence[str], *, at: float | None = None
    ) -> dict[str, str]:
        """Of ``memory_ids`` (episodes or facts), those wholly superseded, each
        with the id of the memory that replaced it, in one query.

        A fact counts when it is no longer a current belief (superseded,
        retracted, or conflicted and decayed: ``superseded_at`` set), or when its
        valid time ended (``valid_until <= at``; ``at`` defaults to the wall
        clock, so pass the engine's clock). Any other memory counts when a
        ``Supersession`` names it. The value is the replacing memory's id, or
        ``""`` for a fact that expired or was retracted with nothing in its place.
        Unknown ids and ids of other scopes are left out.
        """

    @abstractmethod
    def subject_names(self, scope: Scope, first_name: str) -> builtins.list[str]:
        """Distinct subjects of the scope's facts whose first word is
        ``first_name`` (case-insensitive), as first written: the people "Dana"
        may mean ("Dana", "Dana Whitfield")."""


class LifecycleStore(ABC):
    """State of the memory lifecycle (issue 4): history, duplicates, sources,
    co-retrieval counts, abstraction marks, forgetting inputs, gardener jobs.

    Scoped like every store, except the gardener's job table, which belongs to
    the database (one schedule shared by every process that opens it).
    """

    # -- history and provenance ---------------------------------------------------

    @abstractmethod
    def add_history(self, scope: Scope, entries: Sequence[HistoryEntry]) -> None:
        """Append lifecycle events; they outlive the memory (kept after a purge)."""

    @abstractmethod
    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        """Events of one memory, oldest first (empty if none)."""

    @abstractmethod
    def log_duplicate(self, scope: Scope, attempt: DuplicateAttempt) -> None:
        """Record a write that R4 turned into a reinforcement."""

    @abstractmethod
    def duplicates(self, scope: Scope, *, limit: int = 100) -> list[DuplicateAttempt]:
        """Logged duplicate attempts, newest first."""

    @abstractmethod
    def add_sleep_run(self, run: SleepRun, *, keep: int) -> None:
        """Record a sleep cycle of the run's scope, keeping only that scope's ``keep``
        newest runs."""

    @abstractmethod
    def sleep_runs(self, scope: Scope, *, limit: int, offset: int = 0) -> list[SleepRun]:
        """Recorded sleep cycles of the scope, newest first."""

    @abstractmethod
    def add_sources(self, scope: Scope, memory_id: str, sources: Sequence[MemorySource]) -> None:
        """Add occurrences behind a memory of the scope (ignored if it is unknown)."""

    @abstractmethod
    def sources(self, scope: Scope, memory_id: str) -> list[MemorySource]:
        """Occurrences behind a memory, oldest first."""

    # -- consolidation inputs -----------------------------------------------------

    @abstractmethod
    def record_co_retrieval(self, scope: Scope, memory_ids: Sequence[str], now: float) -> None:
        """Count one joint retrieval for every unordered pair of ``memory_ids``."""

    @abstractmethod
    def take_co_retrievals(self, scope: Scope) -> list[tuple[str, str, int]]:
        """Pending (a, b, count) pairs with a < b, removed as they are returned
        (inside the caller's transaction, so a rollback keeps them)."""

    @abstractmethod
    def mark_abstracted(self, scope: Scope, episode_ids: Sequence[str], now: float) -> None:
        """Remember that facts were extracted from these episodes."""

    @abstractmethod
    def unabstracted_episodes(self, scope: Scope, *, limit: int) -> list[Episode]:
        """Live episodes not yet marked abstracted, oldest first."""

    @abstractmethod
    def vitals(self, scope: Scope, bound: ForgettingBound | None = None) -> list[MemoryVitals]:
        """Forgetting inputs of every live (not archived) memory of the scope, in the
        order the store received them; with ``bound``, of those that pass it only."""

    @abstractmethod
    def archived_before(self, scope: Scope, cutoff: float) -> list[str]:
        """Ids of memories archived at or before ``cutoff``, oldest archive first."""

    # -- gardener jobs (database-wide) -------------------------------------------

    @abstractmethod
    def job_runs(self) -> dict[str, JobRun]:
        """Persisted state of every job that ever started."""

    @abstractmethod
    def begin_job(
        self, job: str, owner: str, now: float, *, due_before: float, lease_seconds: float
    ) -> bool:
        """Atomically take the job's lock if nobody holds a live lease and the job
        last ran at or before ``due_before`` (never counts as due). True if taken."""

    @abstractmethod
    def finish_job(self, job: str, owner: str, now: float, summary: Mapping[str, object]) -> None:
        """Record a successful run at ``now`` and release the lock held by ``owner``."""

    @abstractmethod
    def abandon_job(self, job: str, owner: str) -> None:
        """Release ``owner``'s lock without recording a run (the job failed)."""

    # -- maintenance --------------------------------------------------------------

    @abstractmethod
    def clean_orphans(self) -> dict[str, int]:
        """Remove rows that point at memories that no longer exist (graph nodes,
        edges, vectors, retention, typed rows, index entries, lifecycle rows);
        returns the number removed per kind of row."""


class EmbeddingCacheStore(ABC):
    """Persistent embedding cache keyed by (model id, text hash); shared by all scopes."""

    @abstractmethod
    def get_embeddings(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None: ...


class TraceStore(ABC):
    """Retrievals, decision traces, their outcomes and salience updates (seed 003).

    A trace's outcome is written once: ``set_outcome`` on a trace that already
    has one raises ``ValidationError`` and changes nothing.
    """

    @abstractmethod
    def add_retrieval(self, retrieval: Retrieval) -> None: ...

    @abstractmethod
    def get_retrieval(self, scope: Scope, retrieval_id: str) -> Retrieval | None: ...

    @abstractmethod
    def add(self, trace: DecisionTrace) -> None:
        """Insert a new trace (its memory scores become memory -> decision links)."""

    @abstractmethod
    def get(self, scope: Scope, trace_id: str) -> DecisionTrace | None: ...

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        observed: bool | None = None,
        decision_type: str | None = None,
        limit: int = 100,
    ) -> list[DecisionTrace]:
        """Traces of a scope, newest first; ``observed`` filters on the outcome."""

    @abstractmethod
    def involving(self, scope: Scope, memory_ids: Sequence[str]) -> builtins.list[DecisionTrace]:
        """Traces that any of ``memory_ids`` fed, oldest first."""

    @abstractmethod
    def set_outcome(
        self,
        scope: Scope,
        trace_id: str,
        *,
        quality: float,
        signal: OutcomeSignal,
        feedback: str | None,
        observed_at: float,
    ) -> None:
        """Fill in the outcome; NotFoundError if unknown, ValidationError if
        it was already recorded."""

    @abstractmethod
    def add_updates(self, scope: Scope, updates: Sequence[SalienceUpdate]) -> None: ...

    @abstractmethod
    def updates(
        self, scope: Scope, *, memory_id: str | None = None, trace_id: str | None = None
    ) -> builtins.list[SalienceUpdate]:
        """Salience updates, oldest first, optionally of one memory or trace."""


class EventStore(ABC):
    """The append-only event log (event sourcing) and publisher cursors.

    Contract: events are never changed or removed, except by erasure (below).
    ``seq`` numbers the events of one scope 1, 2, 3 ... in commit order, with no
    gaps, even with several writers; ``position`` orders all events (increasing,
    never reused); ``id`` is ``"evt_"`` and 32 lower-case hex digits. Most events
    are appended by the engine through ``append`` (``ucma.events.log.record``);
    the memory lifecycle is appended by the backend itself, in the transaction
    of the write that causes it, so no write path can forget it (SQLite does it
    with triggers on ``memories``, ``transitions`` and ``competences``, schema
    migrations 6 and 14). Exactly:

    - ``memory.stored``, once per record inserted by ``EpisodicStore.add``,
      ``SemanticStore.add``, ``ProceduralStore.add`` or ``LearningStore.add``
      (a batch: one per record, in the batch's order, before anything else the
      transaction appends afterwards). Payload ``memory_id``, ``kind`` (the
      ``MemoryKind`` value), ``temporal_level``, ``base_salience``,
      ``outcome_adjustment`` (reals to 15 significant digits, as SQLite's JSON
      writes them) and ``content_chars`` (``len(content)``, in code points);
      ``occurred_at`` is the record's ``created_at``.
    - ``memory.archived``, for each memory whose ``archived_at`` changes to a
      timestamp (``MemoryCatalog.set_archived``, from none or from another
      timestamp); ``occurred_at`` is the new ``archived_at``. ``memory.restored``
      when it changes to None; ``occurred_at`` is the wall clock at the write.
      Setting the value a memory already has appends nothing. Payload
      ``memory_id``, ``kind``.
    - ``memory.deleted``, for each memory row removed (``MemoryCatalog.delete``
      and both erasures); payload ``memory_id``, ``kind``; ``occurred_at`` is the
      wall clock at the delete. Updates of content, salience, bank, access
      counts or typed fields append nothing here.
    - While ``ErasureStore.erase_matching`` runs: ``world.transition_erased``
      (payload ``transition_id``) for each transition it deletes and
      ``self.competence_erased`` (``competence_id``) for each competence, at the
      wall clock. Then every event of the scope whose type or payload
      ``matches`` gets the payload ``{"erased": true}`` (type, seq and position
      stay). ``erase_scope`` removes every event of the scope (the
      ``memory.deleted`` events of its own deletes included).
    """

    @abstractmethod
    def append(
        self, scope: Scope, event_type: str, payload: Mapping[str, object], now: float
    ) -> Event:
        """Append one event to the scope's stream (inside the caller's transaction)."""

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        types: Sequence[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[Event]:
        """A scope's events with ``seq > after_seq``, in ``seq`` order; ``newest_first``
        reverses it (with ``limit``: the latest events)."""

    def latest(self, scope: Scope, types: Sequence[str]) -> tuple[str | None, ...]:
        """The id of the scope's newest event of each of ``types`` (None where it has
        none), in the order given: a token that changes whenever an event of one of
        those types is appended or erased (event ids are never reused), so a cache of
        what those events change can tell it is stale. One index seek per type.

        Default: one ``list`` of the newest event per type."""
        newest = []
        for event_type in types:
            events = self.list(scope, types=[event_type], limit=1, newest_first=True)
            newest.append(events[0].id if events else None)
        return tuple(newest)

    @abstractmethod
    def after(self, position: int, limit: int) -> builtins.list[Event]:
        """Events of every scope with ``position`` greater than ``position``, in order."""

    @abstractmethod
    def cursor(self, name: str) -> int:
        """The position a named consumer has acknowledged (0 when new)."""

    @abstractmethod
    def set_cursor(self, name: str, position: int, now: float) -> None:
        """Advance a named cursor; it never moves backwards."""


class KeyStore(ABC):
    """API keys of the service: not scoped (an administration store).

    Only a hash of each token is stored; the token itself is shown once, when the key is
    created. ``lookup`` returns the stored hash so the caller can compare it in constant
    time. Revoking is permanent and idempotent.
    """

    @abstractmethod
    def add(self, key: ApiKey, token_hash: str) -> None:
        """Store a new key; StorageError if its id exists."""

    @abstractmethod
    def lookup(self, key_id: str) -> tuple[ApiKey, str] | None:
        """The key and its token hash, revoked or not; None if unknown."""

    @abstractmethod
    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """Keys ordered by creation time, then id."""

    @abstractmethod
    def revoke(self, key_id: str, now: float) -> ApiKey | None:
        """Mark a key revoked (keeping the first revocation time); None if unknown."""

    def count(self, *, include_revoked: bool = False) -> int:
        """Number of keys. Default: the length of ``list``."""
        return len(self.list(include_revoked=include_revoked))


@dataclass(frozen=True, slots=True)
class VaultEntry:
    """One tokenised value of a scope: its token, kind, keyed hash (the blind index
    queries are looked up by) and the encrypted original. The store never sees the
    original in clear."""

    token: str
    kind: str
    digest: str
    ciphertext: bytes
    created_at: float


class VaultStore(ABC):
    """The per-scope vault of the content guard (``ucma.engine.privacy``).

    A token and a digest are each unique within a scope. Reads of one scope never
    see another's entries.
    """

    @abstractmethod
    def tokens_for(self, scope: Scope, digests: Sequence[str]) -> dict[str, str]:
        """{digest: token} of the digests the scope's vault holds."""

    def taken(self, scope: Scope, tokens: Sequence[str]) -> set[str]:
        """Of ``tokens``, those the scope's vault already holds. Default: the keys of
        ``get``."""
        return set(self.get(scope, tokens))

    @abstractmethod
    def add(self, scope: Scope, entries: Sequence[VaultEntry]) -> None:
        """Store new entries; one whose digest or token the scope holds is skipped."""

    @abstractmethod
    def get(self, scope: Scope, tokens: Sequence[str]) -> dict[str, VaultEntry]:
        """{token: entry} of the tokens the scope's vault holds."""

    @abstractmethod
    def count(self) -> int:
        """Entries of every scope."""

    @abstractmethod
    def entries(self, scope: Scope) -> list[VaultEntry]:
        """Every entry of the scope, oldest first."""

    @abstractmethod
    def key_fingerprint(self) -> str | None:
        """The fingerprint of the key the vault was written with (None when new)."""

    @abstractmethod
    def set_key_fingerprint(self, fingerprint: str, now: float) -> None:
        """Record the key's fingerprint (the first one recorded stays)."""


class ErasureStore(ABC):
    """Erasure for "forget this person" and "forget this scope" (issue 13).

    Both erase in one transaction and return counts per kind of record: memory kinds
    ("episodic", "semantic", "procedural", "learning") and the other records by name.
    Neither leaves the erased values readable through any store; ``scrub`` then makes
    them unrecoverable from the database's files.
    """

    @abstractmethod
    def erase_matching(
        self,
        scope: Scope,
        matches: Callable[[str], bool],
        tokens: Sequence[str],
        now: float,
        tokens_in: Callable[[str], Iterable[str]] = lambda text: (),
    ) -> dict[str, int]:
        """Erase what the scope holds about a person: every memory any of whose text
        ``matches`` (content, context, metadata, a fact's terms, a procedure's steps,
        tags, sources ...) with everything hanging off it and the records that name it
        (history, duplicate attempts, decision links, salience updates, co-retrievals);
        every other record of the scope whose text matches (conflicts, review flags,
        decision traces, salience updates, history, duplicate attempts, known
        participants, supersessions); the vault entries of ``tokens``, and of the
        tokens (found in a text by ``tokens_in``) that only erased records used. Event payloads
        that match are replaced by ``{"erased": true}`` (the event stays, so each scope's
        sequence keeps no gaps). The embedding cache, whose vectors are of texts it
        cannot name, is emptied."""

    @abstractmethod
    def erase_scope(self, scope: Scope, now: float) -> dict[str, int]:
        """Erase every record of the scope, its events and vault included; the
        embedding cache is emptied. API keys are administration and stay."""

    @abstractmethod
    def scrub(self) -> tuple[bool, bool]:
        """Leave no erased byte in the database's files (a checkpoint that empties the
        write-ahead log, then a rewrite of the file); returns (checkpointed, vacuumed),
        False where another connection kept the database busy."""


class OpinionStore(ABC):
    """Opinions (seed 000's opinion bank), current and replaced, per scope.

    An opinion's history is its chain of replaced predecessors (``replaces``);
    every change is also an event, written by the engine in the same transaction.
    """

    @abstractmethod
    def put(self, opinions: Sequence[Opinion]) -> None:
        """Insert or overwrite opinions (by id; an id held by another scope is refused
        with ``ValidationError``)."""

    @abstractmethod
    def get(self, scope: Scope, opinion_id: str) -> Opinion | None: ...

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        status: OpinionStatus | None = None,
        below: float | None = None,
        memory_ids: Sequence[str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Opinion]:
        """Opinions of the scope, newest change first, optionally of one status, with
        a confidence below ``below``, or stated by one of ``memory_ids``."""

    @abstractmethod
    def current(
        self,
        scope: Scope,
        *,
        topic_key: str | None = None,
        holder_key: str | None = None,
        stance_key: str | None = None,
        memory_ids: Sequence[str] | None = None,
        limit: int = 1000,
    ) -> builtins.list[Opinion]:
        """Current opinions of the scope matching every given key (``opinion_key``
        of the topic, holder or stance) or stated by one of ``memory_ids``,
        newest change first."""

    def count(self, scope: Scope) -> int:
        """How many opinions (current and replaced) the scope holds.

        Default: pages through ``list`` (override with a count)."""
        return _paged_count(lambda offset: self.list(scope, limit=_PAGE, offset=offset))


class PredictiveStore(ABC):
    """Seed 000's predictive paradigm per scope: the world model's transitions and the
    self-model's competences. Every change is also an event, written by the engine in
    the same transaction.

    A transition is unique by (scope, action key, context key, outcome key) and a
    competence by (scope, capability key): the keys are ``ucma.paradigms.world_model``'s
    ``normal`` / ``context_key`` of the texts, computed by the store."""

    @abstractmethod
    def put_transitions(self, transitions: Sequence[Transition]) -> None:
        """Insert or overwrite transitions (by id; an id held by another scope, or a
        second id for one (action, context, outcome), is refused with ``ValidationError``)."""

    @abstractmethod
    def get_transition(self, scope: Scope, transition_id: str) -> Transition | None: ...

    @abstractmethod
    def transitions(
        self,
        scope: Scope,
        *,
        action: str | None = None,
        context: Mapping[str, str] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Transition]:
        """The scope's transitions, most observed first, optionally of one action (as
        ``normal`` text) and one exact context."""

    @abstractmethod
    def promotable(
        self, scope: Scope, above: float, min_support: int, *, limit: int = 100
    ) -> builtins.list[Transition]:
        """Transitions not promoted yet with at least ``min_support`` observations and a
        reliability ``(confirmations + 1) / (support + 2)`` above ``above``."""

    @abstractmethod
    def put_competences(self, competences: Sequence[Competence]) -> None:
        """Insert or overwrite competences (by id; same refusals as transitions)."""

    @abstractmethod
    def get_competence(self, scope: Scope, capability: str) -> Competence | None:
        """The competence of ``capability`` (compared as ``normal`` text)."""

    @abstractmethod
    def competences(
        self, scope: Scope, *, limit: int = 1000, offset: int = 0
    ) -> builtins.list[Competence]:
        """The scope's competences, most attempted first."""

    def count(self, scope: Scope) -> dict[str, int]:
        """How many transitions and competences the scope holds (keys ``transitions``
        and ``competences``). Default: pages through both listings (override with
        counts)."""
        return {
            "transitions": _paged_count(
                lambda offset: self.transitions(scope, limit=_PAGE, offset=offset)
            ),
            "competences": _paged_count(
                lambda offset: self.competences(scope, limit=_PAGE, offset=offset)
            ),
        }


class GoalStore(ABC):
    """Goals (seed 000's predictive paradigm) per scope, open and closed.

    A goal's subgoals are goals whose ``parent_id`` is its id, listed in order in its
    ``subgoals``; every change is also an event, written by the engine in the same
    transaction.
    """

    @abstractmethod
    def put(self, goals: Sequence[Goal]) -> None:
        """Insert or overwrite goals (by id; an id held by another scope is refused
        with ``ValidationError``)."""

    def get(self, scope: Scope, goal_id: str) -> Goal | None:
        """The scope's goal ``goal_id``, None if unknown. Default: ``get_many``."""
        return self.get_many(scope, [goal_id]).get(goal_id)

    @abstractmethod
    def get_many(self, scope: Scope, goal_ids: Sequence[str]) -> dict[str, Goal]:
        """The scope's goals among ``goal_ids``, by id (unknown ids left out)."""

    @abstractmethod
    def list(
        self,
        scope: Scope,
        *,
        statuses: Sequence[GoalStatus] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Goal]:
        """Goals of the scope, highest priority first, then nearest deadline (none
        last), then oldest; optionally only those of ``statuses``."""

    def count(self, scope: Scope) -> int:
        """How many goals (any status) the scope holds.

        Default: pages through ``list`` (override with a count)."""
        return _paged_count(lambda offset: self.list(scope, limit=_PAGE, offset=offset))


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """A named lease as stored: its ``owner`` while held (None once released),
    until when the holder's claim runs (``expires_at``), when it was last
    claimed and last released after finished work (``finished_at``; None
    before), and how many claims it has seen in all."""

    name: str
    owner: str | None
    expires_at: float
    claimed_at: float | None
    finished_at: float | None
    claims: int


class LeaseStore(ABC):
    """Named leases shared by every process that opens the database: who may do
    one piece of work (consolidate one scope, forward the event log) right now.

    A claim holds until ``expires_at``; its holder renews it while it works and
    releases it when done, so a holder that died without releasing loses its
    claim when it expires and another process takes the work over. Every call
    commits on its own, outside any transaction of the caller's. Database-wide,
    like the gardener's jobs: a lease names its scope in its name.
    """

    @abstractmethod
    def claim(
        self,
        name: str,
        owner: str,
        now: float,
        *,
        lease_seconds: float,
        finished_before: float = math.inf,
    ) -> bool:
        """Take the lease for ``owner`` until ``now + lease_seconds``, atomically,
        if no other owner holds an unexpired claim and the work was not finished
        after ``finished_before`` (finished at or before it, or never, counts as
        to do). An owner that holds it renews it. False, without waiting, if the
        lease is held, done or being claimed by another process at this moment."""

    @abstractmethod
    def renew(self, name: str, owner: str, now: float, *, lease_seconds: float) -> bool:
        """Extend ``owner``'s claim to ``now + lease_seconds``. False if ``owner`` no
        longer holds it (released, or taken over by another owner after it expired;
        an expired claim nobody took over is still the owner's)."""

    @abstractmethod
    def release(self, name: str, owner: str, now: float, *, finished: bool) -> None:
        """Give up ``owner``'s claim (nothing if another owner holds it); with
        ``finished``, record ``now`` as when the work was last done."""

    @abstractmethod
    def list(self, prefix: str = "") -> builtins.list[LeaseRecord]:
        """Every lease whose name starts with ``prefix``, by name."""


def check_lease(name: str, owner: str, now: float) -> float:
    """Check a lease call's name, owner and moment (every backend's ``LeaseStore``);
    returns ``now`` as a float."""
    if not isinstance(name, str) or not name or not isinstance(owner, str) or not owner:
        raise ValidationError("a lease needs a non-empty name and owner")
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise ValidationError(f"a lease needs a finite now, got {now!r}")
    return float(now)


def lease_expiry(
    name: str, owner: str, now: float, lease_seconds: float, finished_before: float = math.inf
) -> float:
    """Check a claim's terms and return when it runs out: ``now + lease_seconds``."""
    start = check_lease(name, owner, now)
    if (
        isinstance(finished_before, bool)
        or not isinstance(finished_before, int | float)
        or math.isnan(finished_before)
    ):
        raise ValidationError(f"finished_before must be a number, got {finished_before!r}")
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, int | float)
        or not math.isfinite(lease_seconds)
        or lease_seconds <= 0
    ):
        raise ValidationError(f"lease_seconds must be a finite number > 0, got {lease_seconds!r}")
    return start + float(lease_seconds)


class Storage(ABC):
    """A backend: the stores above over one database, plus transactions."""

    memories: MemoryCatalog
    episodes: EpisodicStore
    facts: SemanticStore
    procedures: ProceduralStore
    learnings: LearningStore
    graph: GraphStore
    retention: RetentionStore
    embedding_cache: EmbeddingCacheStore
    keys: KeyStore
    conflicts: ConflictStore
    traces: TraceStore
    events: EventStore
    lifecycle: LifecycleStore
    vault: VaultStore
    erasure: ErasureStore
    opinions: OpinionStore
    predictive: PredictiveStore
    goals: GoalStore
    leases: LeaseStore

    concurrency: int = 1
    """How many of its calls the engine may run at once, each on a thread of its own.
    1 (one connection): every call runs alone, in the order made. N (a pool of
    connections: PostgreSQL's; a SQLite file's readers beside its one writer): up to N
    calls at once, from different threads; the backend is then thread-safe, and a
    ``transaction()`` belongs to the thread that opened it (one connection per thread),
    since every engine call runs whole on one thread."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """Group writes atomically; nested use joins the outer transaction.
        An exception inside rolls everything back and propagates."""

    @abstractmethod
    def close(self) -> None:
        """Release the database; further calls raise StorageError."""

    @abstractmethod
    def backup(self, target: str) -> int:
        """Copy the whole store, online, to a new database at ``target`` (a path that
        must not exist yet): one consistent snapshot holding every write committed
        before the call, taken while other writers go on. Returns its size in bytes."""

    def __enter__(self) -> Storage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _paged_count(page: Callable[[int], Sequence[object]]) -> int:
    """How many rows a listing holds, read ``_PAGE`` at a time: ``page(offset)``."""
    total = offset = 0
    while True:
        rows = len(page(offset))
        total += rows
        if rows < _PAGE:
            return total
        offset += _PAGE
