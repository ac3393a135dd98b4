"""UCMA: long-term memory for LLM agents, offline on one SQLite file.

    from ucma import Memory
    with Memory("agent.db", user_id="alice") as mem:
        mem.observe("Michael is building a FastAPI app with JWT authentication.")
        for hit in mem.remember("JWT auth"):
            print(hit.score, hit.content)

``Memory`` is synchronous; ``AsyncMemory`` has the same methods as coroutines.

The names below are imported on first use (PEP 562 ``__getattr__``): ``import ucma`` loads
no engine, numpy or model runtime, so a CLI's ``--help`` or a tool that only needs
``ucma.__version__`` starts at once. ``from ucma import Memory`` imports what ``Memory``
needs and nothing else; SciPy and the embedding runtime load when first used. The imports
under ``TYPE_CHECKING`` are the same names for type checkers and editors (a test keeps
them and ``_EXPORTS`` in step).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

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
        TargetNotEmptyError,
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
    from ucma.paradigms.goal_records import (
        Anticipation,
        Goal,
        GoalConflict,
        GoalPlan,
        GoalStatus,
        KnowledgeGap,
        PlanStep,
        SkillEstimate,
        SkillGap,
    )
    from ucma.paradigms.predictive_records import (
        AttemptAdvice,
        Competence,
        CompetenceEvidence,
        FailureMode,
        HelpDecision,
        Introspection,
        LearningPriority,
        PredictedOutcome,
        Simulation,
        Transition,
        TransitionEvidence,
    )
    from ucma.paradigms.synthesis_records import InteractionLearning, RankedStrategy, Synthesis
    from ucma.privacy.erasure import ErasureReport
    from ucma.retrieval.cascade import CascadePath, RecallResult
    from ucma.retrieval.confidence import Confidence
    from ucma.retrieval.paradigms import Paradigm
    from ucma.retrieval.router import Layer, QueryClass
    from ucma.storage.migrate import migrate
    from ucma.sync import Memory
    from ucma.types import (
        ApiKey,
        BackupReport,
        Bank,
        Condition,
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
        MemoryPage,
        MemoryRecord,
        Observation,
        Opinion,
        OpinionEvidence,
        OpinionStatus,
        Procedure,
        ProcedureStatus,
        ProcedureStep,
        ProcedureType,
        Provenance,
        QueryMode,
        ResolutionStrategy,
        ReviewFlag,
        RiskLevel,
        Scope,
        StrategyMatch,
        Tier,
        TrajectoryLearning,
    )


#: Where each public name lives: the module imported when the name is first used.
_MODULES: dict[str, tuple[str, ...]] = {
    "ucma.backup": ("restore_backup",),
    "ucma.config": (
        "PrivacyConfig",
        "UCMAConfig",
    ),
    "ucma.conflicts": (
        "Answer",
        "FactAssertion",
        "FactList",
        "PredicateRegistry",
        "SourceOfTruth",
        "SQLSourceOfTruth",
    ),
    "ucma.engine": ("AsyncMemory",),
    "ucma.errors": (
        "AuthenticationError",
        "ConfigError",
        "ContentRefusedError",
        "EmbeddingError",
        "InputLimitError",
        "MigrationError",
        "NotFoundError",
        "OutcomeAlreadyRecorded",
        "OutcomeError",
        "OutcomeWindowClosed",
        "PrivacyThresholdError",
        "ProviderError",
        "ScopeError",
        "SecretRefusedError",
        "SourceOfTruthError",
        "StorageError",
        "TargetNotEmptyError",
        "UCMAError",
        "UserError",
        "ValidationError",
    ),
    "ucma.events.log": (
        "Event",
        "EventType",
        "SalienceProjection",
    ),
    "ucma.learning.causal": (
        "CounterfactualReport",
        "MemoryInfluence",
        "Pattern",
    ),
    "ucma.learning.experiments": (
        "Experiment",
        "ExperimentResult",
    ),
    "ucma.learning.patterns": (
        "SharedPattern",
        "SharingReport",
    ),
    "ucma.learning.records": (
        "DecisionTrace",
        "OutcomeReport",
        "OutcomeSignal",
        "Retrieval",
        "SalienceUpdate",
    ),
    "ucma.lifecycle.clock": (
        "SimulatedClock",
        "SystemClock",
    ),
    "ucma.paradigms.predictive_records": (
        "AttemptAdvice",
        "Competence",
        "CompetenceEvidence",
        "FailureMode",
        "HelpDecision",
        "Introspection",
        "LearningPriority",
        "PredictedOutcome",
        "Simulation",
        "Transition",
        "TransitionEvidence",
    ),
    "ucma.paradigms.synthesis_records": (
        "InteractionLearning",
        "RankedStrategy",
        "Synthesis",
    ),
    "ucma.paradigms.goal_records": (
        "Anticipation",
        "Goal",
        "GoalConflict",
        "GoalPlan",
        "GoalStatus",
        "KnowledgeGap",
        "PlanStep",
        "SkillEstimate",
        "SkillGap",
    ),
    "ucma.privacy.erasure": ("ErasureReport",),
    "ucma.retrieval.cascade": (
        "CascadePath",
        "RecallResult",
    ),
    "ucma.retrieval.confidence": ("Confidence",),
    "ucma.retrieval.paradigms": ("Paradigm",),
    "ucma.retrieval.router": (
        "Layer",
        "QueryClass",
    ),
    "ucma.storage.migrate": ("migrate",),
    "ucma.sync": ("Memory",),
    "ucma.types": (
        "ApiKey",
        "BackupReport",
        "Bank",
        "Condition",
        "Conflict",
        "ConflictStatus",
        "ConflictType",
        "Episode",
        "Fact",
        "FactStatus",
        "GraphEdge",
        "HistoryEntry",
        "Hit",
        "ImportReport",
        "Learning",
        "LearningType",
        "MemoryKind",
        "MemoryPage",
        "MemoryRecord",
        "Observation",
        "Opinion",
        "OpinionEvidence",
        "OpinionStatus",
        "Procedure",
        "ProcedureStatus",
        "ProcedureStep",
        "ProcedureType",
        "Provenance",
        "QueryMode",
        "ResolutionStrategy",
        "ReviewFlag",
        "RiskLevel",
        "Scope",
        "StrategyMatch",
        "Tier",
        "TrajectoryLearning",
    ),
}
_EXPORTS: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("ucma")
    except importlib.metadata.PackageNotFoundError:  # a source tree that was not installed
        return "0.0.0"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'ucma' has no attribute {name!r}")
    globals()[name] = value  # resolved once; later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Answer",
    "Anticipation",
    "ApiKey",
    "AsyncMemory",
    "AttemptAdvice",
    "AuthenticationError",
    "BackupReport",
    "Bank",
    "CascadePath",
    "Competence",
    "CompetenceEvidence",
    "Condition",
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
    "FailureMode",
    "Goal",
    "GoalConflict",
    "GoalPlan",
    "GoalStatus",
    "GraphEdge",
    "HelpDecision",
    "HistoryEntry",
    "Hit",
    "ImportReport",
    "InputLimitError",
    "InteractionLearning",
    "Introspection",
    "KnowledgeGap",
    "Layer",
    "Learning",
    "LearningPriority",
    "LearningType",
    "Memory",
    "MemoryInfluence",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "MigrationError",
    "NotFoundError",
    "Observation",
    "Opinion",
    "OpinionEvidence",
    "OpinionStatus",
    "OutcomeAlreadyRecorded",
    "OutcomeError",
    "OutcomeReport",
    "OutcomeSignal",
    "OutcomeWindowClosed",
    "Paradigm",
    "Pattern",
    "PlanStep",
    "PredicateRegistry",
    "PredictedOutcome",
    "PrivacyConfig",
    "PrivacyThresholdError",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStep",
    "ProcedureType",
    "Provenance",
    "ProviderError",
    "QueryClass",
    "QueryMode",
    "RankedStrategy",
    "RecallResult",
    "ResolutionStrategy",
    "Retrieval",
    "ReviewFlag",
    "RiskLevel",
    "SQLSourceOfTruth",
    "SalienceProjection",
    "SalienceUpdate",
    "Scope",
    "ScopeError",
    "SecretRefusedError",
    "SharedPattern",
    "SharingReport",
    "SimulatedClock",
    "Simulation",
    "SkillEstimate",
    "SkillGap",
    "SourceOfTruth",
    "SourceOfTruthError",
    "StorageError",
    "StrategyMatch",
    "Synthesis",
    "SystemClock",
    "TargetNotEmptyError",
    "Tier",
    "TrajectoryLearning",
    "Transition",
    "TransitionEvidence",
    "UCMAConfig",
    "UCMAError",
    "UserError",
    "ValidationError",
    "__version__",
    "migrate",
    "restore_backup",
]
