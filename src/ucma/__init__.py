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
from ucma.engine import AsyncMemory
from ucma.errors import (
    ConfigError,
    EmbeddingError,
    MigrationError,
    NotFoundError,
    ProviderError,
    ScopeError,
    StorageError,
    UCMAError,
    UserError,
    ValidationError,
)
from ucma.lifecycle.clock import SimulatedClock, SystemClock
from ucma.sync import Memory
from ucma.types import (
    Episode,
    Fact,
    GraphEdge,
    HistoryEntry,
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
    Scope,
    Tier,
)

try:
    __version__ = importlib.metadata.version("ucma")
except importlib.metadata.PackageNotFoundError:  # a source tree that was not installed
    __version__ = "0.0.0"

__all__ = [
    "AsyncMemory",
    "ConfigError",
    "EmbeddingError",
    "Episode",
    "Fact",
    "GraphEdge",
    "HistoryEntry",
    "Hit",
    "Learning",
    "LearningType",
    "Memory",
    "MemoryKind",
    "MemoryRecord",
    "MigrationError",
    "NotFoundError",
    "Observation",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStep",
    "Provenance",
    "ProviderError",
    "QueryMode",
    "Scope",
    "ScopeError",
    "SimulatedClock",
    "StorageError",
    "SystemClock",
    "Tier",
    "UCMAConfig",
    "UCMAError",
    "UserError",
    "ValidationError",
    "__version__",
]
