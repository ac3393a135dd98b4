"""UCMA: long-term memory for LLM agents, offline on one SQLite file.

    from ucma import Memory
    with Memory("agent.db", user_id="alice") as mem:
        mem.observe("Michael is building a FastAPI app with JWT authentication.")
        for hit in mem.remember("JWT auth"):
            print(hit.score, hit.content)

``Memory`` is synchronous; ``AsyncMemory`` has the same methods as coroutines.
"""

import importlib.metadata

from ucma.config import UCMAConfig
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
    ConfigError,
    EmbeddingError,
    MigrationError,
    NotFoundError,
    ProviderError,
    ScopeError,
    SourceOfTruthError,
    StorageError,
    UCMAError,
    UserError,
    ValidationError,
)
from ucma.retrieval.cascade import CascadePath, RecallResult
from ucma.retrieval.confidence import Confidence
from ucma.retrieval.router import Layer, QueryClass
from ucma.sync import Memory
from ucma.types import (
    Conflict,
    ConflictStatus,
    ConflictType,
    Episode,
    Fact,
    FactStatus,
    GraphEdge,
    Hit,
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
    "AsyncMemory",
    "CascadePath",
    "Confidence",
    "ConfigError",
    "Conflict",
    "ConflictStatus",
    "ConflictType",
    "EmbeddingError",
    "Episode",
    "Fact",
    "FactAssertion",
    "FactList",
    "FactStatus",
    "GraphEdge",
    "Hit",
    "Layer",
    "Learning",
    "LearningType",
    "Memory",
    "MemoryKind",
    "MemoryRecord",
    "MigrationError",
    "NotFoundError",
    "Observation",
    "PredicateRegistry",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStep",
    "Provenance",
    "ProviderError",
    "QueryClass",
    "QueryMode",
    "RecallResult",
    "ResolutionStrategy",
    "ReviewFlag",
    "SQLSourceOfTruth",
    "Scope",
    "ScopeError",
    "SourceOfTruth",
    "SourceOfTruthError",
    "StorageError",
    "Tier",
    "UCMAConfig",
    "UCMAError",
    "UserError",
    "ValidationError",
    "__version__",
]
