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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "FACT_ID_PREFIX",
    "ApiKey",
    "BackupReport",
    "Conflict",
    "ConflictStatus",
    "ConflictType",
    "DuplicateAttempt",
    "Episode",
    "Fact",
    "FactStatus",
    "GraphEdge",
    "HistoryEntry",
    "Hit",
    "ImportReport",
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
    "ResolutionStrategy",
    "RetentionInfo",
    "ReviewFlag",
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


class FactStatus(StrEnum):
    """Where a fact stands in belief (seed 002).

    ``active`` is believed; ``disputed`` is one side of a conflict waiting for
    the user; ``superseded`` was replaced by newer information (history, still
    true for its valid time); ``conflicted`` lost a conflict and was decayed.
    Only active and disputed facts are current beliefs.
    """

    ACTIVE = "active"
    DISPUTED = "disputed"
    SUPERSEDED = "superseded"
    CONFLICTED = "conflicted"


class ConflictType(StrEnum):
    """Seed 002's kinds of disagreement."""

    VALUE_MISMATCH = "value_mismatch"
    TEMPORAL = "temporal"
    MEMORY_VS_DB = "memory_vs_db"


class ResolutionStrategy(StrEnum):
    """Seed 002's strategies, plus the plain replacement of a weak belief."""

    TRUST_DB = "trust_db"
    KEEP_NEWEST = "keep_newest"
    KEEP_HIGHEST_CONFIDENCE = "keep_highest_confidence"
    KEEP_MOST_REINFORCED = "keep_most_reinforced"
    ASK_USER = "ask_user"
    REPLACE_LOW_CONFIDENCE = "replace_low_confidence"


class ConflictStatus(StrEnum):
    """``resolved`` by a rule, ``pending`` a user choice, ``user_resolved`` by
    ``resolve_conflict``, ``obsolete`` when a later value replaced both sides."""

    RESOLVED = "resolved"
    PENDING = "pending"
    USER_RESOLVED = "user_resolved"
    OBSOLETE = "obsolete"


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


FACT_ID_PREFIX = "fact_"
"""Every fact id starts with this (``fact_id_for``)."""


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
    return FACT_ID_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass(kw_only=True, slots=True)
class Fact(MemoryRecord):
    """A subject-predicate-object fact, bi-temporal (DESIGN.md).

    Valid time (``valid_from`` / ``valid_until``) is when the fact held in the
    world; record time (``recorded_at`` / ``superseded_at``) is when memory
    believed it. A fact is a current belief while ``superseded_at`` is None;
    a replaced fact keeps its row and points to its replacement through
    ``superseded_by``, so "what did we believe at t" is
    ``recorded_at <= t < superseded_at``.
    """

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
    status: FactStatus = FactStatus.ACTIVE
    recorded_at: float | None = None
    superseded_at: float | None = None
    superseded_by: str | None = None

    @property
    def is_current(self) -> bool:
        """Believed now: not superseded (active, or disputed awaiting the user)."""
        return self.superseded_at is None

    def believed_at(self, moment: float) -> bool:
        """Whether memory held this fact as current at record time ``moment``."""
        start = self.recorded_at if self.recorded_at is not None else self.created_at
        return start <= moment and (self.superseded_at is None or moment < self.superseded_at)

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
    the fused match quality before ranking, in [0, 1] (1 for the best match).
    ``channels`` holds each retrieval channel's own raw score (cosine, BM25,
    entity, temporal, context, graph ...), for explanations. ``layer`` is the
    memory layer that found it (seed 004).
    """

    memory: MemoryRecord
    score: float
    relevance: float
    source: str
    graph_distance: int = 0
    channels: dict[str, float] = field(default_factory=dict)
    layer: str = ""
    confidence: Any = None
    """Seed 004's five factors (``ucma.retrieval.confidence.Confidence``), set by recall."""
    # True when the memory is flagged for review (a premise changed) or is a
    # superseded fact; its score was multiplied by ConflictConfig.review_rank_factor.
    needs_review: bool = False

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def kind(self) -> MemoryKind:
        return self.memory.kind

    @property
    def content(self) -> str:
        return self.memory.content


@dataclass(kw_only=True, slots=True)
class Conflict:
    """One detected disagreement and what was done about it (seed 002).

    ``existing_*`` describe the belief held before, ``new_*`` the incoming
    assertion or the source of truth's value; confidences are those at
    detection, before any decay. ``options`` are the values the user may
    choose from when ``resolution_strategy`` is ask_user. ``resolved_by`` is
    "rule", "user" or "source:<name>".
    """

    id: str
    user_id: str
    agent_id: str = "default"
    conflict_type: ConflictType
    subject: str
    predicate: str
    existing_fact_id: str
    existing_value: str
    existing_confidence: float
    new_fact_id: str | None
    new_value: str
    new_confidence: float
    resolution_strategy: ResolutionStrategy
    action: str
    chosen_value: str | None
    explanation: str
    status: ConflictStatus
    detected_at: float
    resolved_at: float | None = None
    resolved_by: str | None = None
    options: list[str] = field(default_factory=list)

    @property
    def disambiguation_required(self) -> bool:
        return self.status is ConflictStatus.PENDING

    def to_dict(self) -> dict[str, Any]:
        """Seed 002's JSON shape (``conflict_type`` ... ``explanation``) plus the
        record's identity, status and, while pending, the disambiguation."""
        data: dict[str, Any] = {
            "id": self.id,
            "conflict_type": self.conflict_type.value,
            "subject": self.subject,
            "predicate": self.predicate,
            "existing_value": self.existing_value,
            "new_value": self.new_value,
            "existing_confidence": self.existing_confidence,
            "new_confidence": self.new_confidence,
            "resolution_strategy": self.resolution_strategy.value,
            "action": self.action,
            "chosen_value": self.chosen_value,
            "explanation": self.explanation,
            "status": self.status.value,
            "existing_fact_id": self.existing_fact_id,
            "new_fact_id": self.new_fact_id,
            "detected_at": self.detected_at,
            "resolved_at": self.resolved_at,
            "resolved_by": self.resolved_by,
            "disambiguation_required": self.disambiguation_required,
        }
        if self.options:
            data["options"] = list(self.options)
        if self.status is ConflictStatus.PENDING:
            # Seed 002 example 3: each option's confidence and why the user is asked.
            data["context"] = {
                f"{_slug(self.existing_value)}_confidence": self.existing_confidence,
                f"{_slug(self.new_value)}_confidence": self.new_confidence,
                "note": self.explanation,
            }
        return data


def _slug(value: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", value.lower()).strip("_") or "value"


@dataclass(frozen=True, slots=True)
class ReviewFlag:
    """A memory whose premise changed: it was derived from (or supported by) a
    fact that has since been superseded. Open until ``cleared_at`` is set."""

    memory_id: str
    premise_id: str
    conflict_id: str | None
    reason: str
    flagged_at: float
    cleared_at: float | None = None


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key of the service, without its secret (only a hash of the token is stored).

    A key is bound to one user and, when ``agent_id`` is set, to one agent of that user;
    with ``agent_id`` None it may act for every agent of the user.
    """

    id: str
    user_id: str
    agent_id: str | None
    label: str | None
    created_at: float
    revoked_at: float | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass(frozen=True, slots=True)
class ImportReport:
    """Progress or outcome of an import: input lines read, memory records read, records
    written (``imported``), records already present (``skipped``), edges upserted."""

    lines: int = 0
    records: int = 0
    imported: int = 0
    skipped: int = 0
    edges: int = 0


@dataclass(frozen=True, slots=True)
class BackupReport:
    """A backup or restore written: the file and its size in bytes."""

    path: str
    bytes: int


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
