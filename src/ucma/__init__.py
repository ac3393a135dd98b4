"""UCMA: long-term memory for LLM agents, offline on one SQLite file.

    from ucma import Memory
    with Memory("agent.db", user_id="alice") as mem:
        mem.observe("Michael is building a FastAPI app with JWT authentication.")
        for hit in mem.remember("JWT auth"):
            print(hit.score, hit.content)

``Memory`` is synchronous; ``AsyncMemory`` has the same methods as coroutines.
"""

import importlib.metadata

from ucma.backup import restore_backup
from ucma.config import PrivacyConfig, UCMAConfig
from ucma.conflicts import (
    Answer,
    FactAssertion,
    FactList,
    PredicateRegistry,
    SourceOfTruth,
    SQLSourceOfTruth,
)
from ucma.engine import AsyncMemory
from ucma.errors import (
    AuthenticationError,
    ConfigError,
    ContentRefusedError,
    EmbeddingError,
    InputLimitError,
    MigrationError,
    NotFoundError,
    OutcomeAlreadyRecorded,
    OutcomeError,
    OutcomeWindowClosed,
    PrivacyThresholdError,
    ProviderError,
    ScopeError,
    SecretRefusedError,
    SourceOfTruthError,
    StorageError,
    UCMAError,
    UserError,
    ValidationError,
)
from ucma.events.log import Event, EventType, SalienceProjection
from ucma.learning.causal import CounterfactualReport, MemoryInfluence, Pattern
from ucma.learning.experiments import Experiment, ExperimentResult
from ucma.learning.patterns import SharedPattern, SharingReport
from ucma.learning.records import (
    DecisionTrace,
    OutcomeReport,
    OutcomeSignal,
    Retrieval,
    SalienceUpdate,
)
from ucma.lifecycle.clock import SimulatedClock, SystemClock
from ucma.privacy.erasure import ErasureReport
from ucma.retrieval.cascade import CascadePath, RecallResult
from ucma.retrieval.confidence import Confidence
from ucma.retrieval.router import Layer, QueryClass
from ucma.sync import Memory
from ucma.types import (
    ApiKey,
    BackupReport,
    Conflict,
    ConflictStatus,
    ConflictType,
    Episode,
    Fact,
    FactStatus,
    GraphEdge,
    HistoryEntry,
    Hit,
    ImportReport,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    Observation,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    QueryMode,
    ResolutionStrategy,
    ReviewFlag,
    Scope,
    Tier,
)

try:
    __version__ = importlib.metadata.version("ucma")
except importlib.metadata.PackageNotFoundError:  # a source tree that was not installed
    __version__ = "0.0.0"

__all__ = [
    "Answer",
    "ApiKey",
    "AsyncMemory",
    "AuthenticationError",
    "BackupReport",
    "CascadePath",
    "Confidence",
    "ConfigError",
    "Conflict",
    "ConflictStatus",
    "ConflictType",
    "ContentRefusedError",
    "CounterfactualReport",
    "DecisionTrace",
    "EmbeddingError",
    "Episode",
    "ErasureReport",
    "Event",
    "EventType",
    "Experiment",
    "ExperimentResult",
    "Fact",
    "FactAssertion",
    "FactList",
    "FactStatus",
    "GraphEdge",
    "HistoryEntry",
    "Hit",
    "ImportReport",
    "InputLimitError",
    "Layer",
    "Learning",
    "LearningType",
    "Memory",
    "MemoryInfluence",
    "MemoryKind",
    "MemoryRecord",
    "MigrationError",
    "NotFoundError",
    "Observation",
    "OutcomeAlreadyRecorded",
    "OutcomeError",
    "OutcomeReport",
    "OutcomeSignal",
    "OutcomeWindowClosed",
    "Pattern",
    "PredicateRegistry",
    "PrivacyConfig",
    "PrivacyThresholdError",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStep",
    "Provenance",
    "ProviderError",
    "QueryClass",
    "QueryMode",
    "RecallResult",
    "ResolutionStrategy",
    "Retrieval",
    "ReviewFlag",
    "SQLSourceOfTruth",
    "SalienceProjection",
    "SalienceUpdate",
    "Scope",
    "ScopeError",
    "SecretRefusedError",
    "SharedPattern",
    "SharingReport",
    "SimulatedClock",
    "SourceOfTruth",
    "SourceOfTruthError",
    "StorageError",
    "SystemClock",
    "Tier",
    "UCMAConfig",
    "UCMAError",
    "UserError",
    "ValidationError",
    "__version__",
    "restore_backup",
]
