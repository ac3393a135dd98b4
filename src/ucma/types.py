"""Plain records shared by every part of UCMA.

Seed 001 chapter 8's models, extended with what a persistent, multi-tenant
engine needs (DESIGN.md): a scope on every record (``user_id``, ``agent_id``;
episodes also ``session_id``), provenance, seed 003's temporal level and
salience pair (``base_salience`` + ``outcome_adjustment``), and valid time on
facts. Seed 001's ``importance`` *is* seed 003's ``base_salience`` (DESIGN.md),
so records carry only the latter.

Timestamps are epoch seconds (float, UTC). Records are mutable dataclasses; a
store returns fresh copies, so mutating one never changes stored state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "DuplicateAttempt",
    "Episode",
    "Fact",
    "GraphEdge",
    "HistoryEntry",
    "Hit",
    "JobRun",
    "Learning",
    "LearningType",
    "MemoryKind",
    "MemoryRecord",
    "MemorySource",
    "MemoryVitals",
    "Observation",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStep",
    "Provenance",
    "QueryMode",
    "RetentionInfo",
    "Scope",
    "Tier",
    "fact_id_for",
]


class MemoryKind(StrEnum):
    """The four kinds of long-term memory (seed 001 MemoryType)."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    LEARNING = "learning"


class Provenance(StrEnum):
    """Where a memory came from (seed 001 limitation 4)."""

    OBSERVED = "observed"
    USER_STATED = "user_stated"
    INFERRED = "inferred"
    GENERATED = "generated"


class Tier(StrEnum):
    """Episodic tiers: detailed recent events, and consolidated older ones."""

    SHORT_TERM = "short_term"
    MEDIUM_TERM = "medium_term"


class ProcedureStatus(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    DEPRECATED = "deprecated"


class LearningType(StrEnum):
    FAILURE_ANALYSIS = "failure_analysis"
    SUCCESS_PATTERN = "success_pattern"
    STRATEGY_UPDATE = "strategy_update"
    SELF_CORRECTION = "self_correction"
    USER_PREFERENCE = "user_preference"
    DOMAIN_INSIGHT = "domain_insight"


class QueryMode(StrEnum):
    """Seed 001's retrieval strategies, chosen by the router."""

    SEMANTIC = "semantic"
    STRUCTURED = "structured"
    HYBRID = "hybrid"
    GRAPH = "graph"
    TEMPORAL = "temporal"


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to. No record is written or read without one."""

    user_id: str
    agent_id: str = "default"


@dataclass(kw_only=True, slots=True)
class MemoryRecord:
    """Fields every long-term memory has, whatever its kind.

    ``effective_salience`` is seed 003's clamp(base + outcome adjustment).
    ``archived_at`` is set when the forgetting engine archives a memory: it is
    then excluded from retrieval but still exported.
    """

    kind: ClassVar[MemoryKind]

    id: str
    user_id: str
    agent_id: str = "default"
    content: str
    provenance: Provenance = Provenance.OBSERVED
    temporal_level: int = 1
    base_salience: float = 0.5
    outcome_adjustment: float = 0.0
    created_at: float
    updated_at: float | None = None
    access_count: int = 0
    last_accessed: float | None = None
    archived_at: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_id)

    @property
    def effective_salience(self) -> float:
        return max(0.0, min(1.0, self.base_salience + self.outcome_adjustment))


@dataclass(kw_only=True, slots=True)
class Episode(MemoryRecord):
    """Something that happened: seed 001's EpisodicEntry."""

    kind: ClassVar[MemoryKind] = MemoryKind.EPISODIC

    session_id: str
    timestamp: float
    source: str = "user"
    participants: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    summary: str | None = None
    tier: Tier = Tier.SHORT_TERM


def fact_id_for(scope: Scope, subject: str, predicate: str, object_: str) -> str:
    """Deterministic fact id: the same triple in the same scope is the same fact.

    Repeated assertions then reinforce one record instead of duplicating it
    (seed 001 chapter 13). The scope is part of the key so that two users'
    identical facts never share a row.
    """
    key = "|".join(
        (
            scope.user_id,
            scope.agent_id,
            subject.strip().lower(),
            predicate.strip().lower(),
            object_.strip().lower(),
        )
    )
    return "fact_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass(kw_only=True, slots=True)
class Fact(MemoryRecord):
    """A subject-predicate-object fact with valid time (DESIGN.md: bi-temporal)."""

    kind: ClassVar[MemoryKind] = MemoryKind.SEMANTIC

    subject: str
    predicate: str
    object: str
    confidence: float = 0.8
    source_episode_ids: list[str] = field(default_factory=list)
    reinforcement_count: int = 0
    last_verified: float | None = None
    valid_from: float | None = None
    valid_until: float | None = None

    def reinforced(self, source_episode_ids: Iterable[str], now: float) -> Fact:
        """The same fact asserted again: +0.05 confidence (capped at 1), new
        sources added, one more reinforcement, verified now (seed 001)."""
        sources = list(self.source_episode_ids)
        sources.extend(s for s in source_episode_ids if s not in sources)
        return replace(
            self,
            confidence=min(1.0, self.confidence + 0.05),
            source_episode_ids=sources,
            reinforcement_count=self.reinforcement_count + 1,
            last_verified=now,
            updated_at=now,
        )


@dataclass(kw_only=True, slots=True)
class ProcedureStep:
    description: str
    action_type: str = "llm_reasoning"
    action_spec: dict[str, Any] = field(default_factory=dict)
    success_criteria: str = ""
    on_failure: str = "retry"
    max_retries: int = 3


@dataclass(kw_only=True, slots=True)
class Procedure(MemoryRecord):
    """A reusable workflow with running success statistics (seed 001 chapter 14)."""

    kind: ClassVar[MemoryKind] = MemoryKind.PROCEDURAL

    name: str
    description: str
    trigger_tags: list[str] = field(default_factory=list)
    steps: list[ProcedureStep] = field(default_factory=list)
    status: ProcedureStatus = ProcedureStatus.DRAFT
    success_rate: float = 0.0
    execution_count: int = 0
    last_used: float | None = None

    def with_outcome(self, success: bool, now: float) -> Procedure:
        """One more execution folded into the running success rate (online mean)."""
        count = self.execution_count + 1
        rate = self.success_rate + ((1.0 if success else 0.0) - self.success_rate) / count
        return replace(
            self, execution_count=count, success_rate=rate, last_used=now, updated_at=now
        )

    @property
    def ranking_score(self) -> float:
        """Confidence-weighted success rate: trust grows to full after ten runs."""
        return self.success_rate * min(self.execution_count / 10.0, 1.0)


@dataclass(kw_only=True, slots=True)
class Learning(MemoryRecord):
    """A distilled lesson (seed 001 chapter 15); ``content`` is the insight."""

    kind: ClassVar[MemoryKind] = MemoryKind.LEARNING

    learning_type: LearningType
    title: str
    evidence: list[str] = field(default_factory=list)
    applicability: list[str] = field(default_factory=list)
    confidence: float = 0.5
    impact_score: float = 0.5
    last_applied: float | None = None
    application_count: int = 0
    validated: bool = False

    @property
    def insight(self) -> str:
        return self.content

    def validated_by(self, success: bool, now: float) -> Learning:
        """Asymmetric validation (seed 001): +0.10 on success, -0.15 on failure,
        so trust is slow to build and quick to lose. Success marks it validated."""
        if success:
            return replace(
                self, confidence=min(1.0, self.confidence + 0.10), validated=True, updated_at=now
            )
        return replace(self, confidence=max(0.0, self.confidence - 0.15), updated_at=now)

    def applied(self, now: float) -> Learning:
        """Record one application of the lesson in a decision."""
        return replace(
            self, application_count=self.application_count + 1, last_applied=now, updated_at=now
        )


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """A directed, typed, weighted edge of the memory graph."""

    source_id: str
    target_id: str
    edge_type: str
    weight: float = 1.0
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class RetentionInfo:
    """Stored Ebbinghaus state of one memory (stability in days)."""

    memory_id: str
    stability: float
    last_reviewed: float
    review_count: int = 0


@dataclass(frozen=True, slots=True)
class Observation:
    """What ``observe`` did with one input.

    ``stored`` is False when the importance classifier judged the input below
    the storage threshold; it then lived only in the sensory buffer.
    """

    id: str
    stored: bool
    importance: float
    temporal_level: int
    merged_into: str | None = None
    """Set when the input was a near-duplicate (seed 003 R4) of this existing memory,
    which was reinforced instead of storing a second copy; ``id`` is then that memory's id."""


@dataclass(slots=True)
class Hit:
    """One retrieved memory, with the scores that ranked it.

    ``score`` is the final ranking score (higher is better). ``relevance`` is
    the match quality before ranking (cosine similarity, normalised BM25, or a
    structural score). ``channels`` holds each retrieval channel's own score,
    for explanations.
    """

    memory: MemoryRecord
    score: float
    relevance: float
    source: str
    graph_distance: int = 0
    channels: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def kind(self) -> MemoryKind:
        return self.memory.kind

    @property
    def content(self) -> str:
        return self.memory.content


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One lifecycle event of a memory: merged, promoted, archived, purged, promoted_level ...

    ``details`` says what changed and why (JSON-serialisable). History outlives the
    memory: a purged memory's history is still readable.
    """

    memory_id: str
    event: str
    at: float
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DuplicateAttempt:
    """A write that seed 003 R4 turned into a reinforcement of ``existing_id``."""

    existing_id: str
    content: str
    similarity: float
    source: str
    at: float


@dataclass(frozen=True, slots=True)
class MemorySource:
    """One occurrence behind a memory: where it came from (``source``) and when.

    ``reference`` is the id the occurrence would have had (or its source episode)."""

    reference: str
    source: str
    at: float


@dataclass(frozen=True, slots=True)
class JobRun:
    """Persisted state of one gardener job (shared by every process on the database)."""

    job: str
    last_run_at: float | None = None
    last_summary: dict[str, Any] = field(default_factory=dict)
    locked_by: str | None = None
    lock_expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class MemoryVitals:
    """What the forgetting policy needs to know about one memory, read in one pass.

    ``confidence`` is set for facts and learnings, ``status`` and ``success_rate``
    for procedures, ``validated`` for learnings, ``tier`` for episodes. Retention
    fields are None when the memory has no retention state.
    """

    memory_id: str
    kind: MemoryKind
    temporal_level: int
    effective_salience: float
    created_at: float
    pagerank: float = 0.0
    stability: float | None = None
    last_reviewed: float | None = None
    review_count: int = 0
    confidence: float | None = None
    validated: bool = False
    status: str | None = None
    success_rate: float | None = None
    tier: str | None = None
