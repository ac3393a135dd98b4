"""Provider protocols for the work an LLM may do for UCMA (seed 001 chapter 18).

Structural protocols, so any object with the right async methods plugs in.
The offline defaults live in ``ucma.providers.heuristics``; OpenAI-compatible
endpoints in ``ucma.providers.openai``; ``ucma.providers.registry`` builds
either from a "provider:model" string.

Contracts every implementation keeps:

- failures raise ``ProviderError`` (timeouts, transport errors, refusals,
  malformed output); nothing is returned half-validated;
- ``extract_facts`` returns ``ExtractedFact`` records that passed
  ``ExtractedFact.validated``: non-empty subject, predicate and object,
  confidence in [0, 1];
- ``classify_importance`` returns a float in [0, 1].

The engine calls providers through ``ucma.providers.contracts``, which holds
them to these contracts (a wrong return type raises ``ProviderError`` naming
the provider) and passes an optional keyword only to implementations whose
signature accepts it, so an extractor without ``reference_time`` still works.
Subclassing is never required.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ucma.errors import ConfigError, ProviderError
from ucma.types import Provenance

__all__ = [
    "ExtractedFact",
    "FactExtractor",
    "GoalDecomposer",
    "ImportanceClassifier",
    "Providers",
    "Summarizer",
    "TrajectoryDistiller",
]

_MAX_FIELD_CHARS = 500


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """A subject-predicate-object triple found in text.

    ``valid_from`` is set when the text dates the fact (a dated event);
    ``provenance`` is ``inferred`` for rules and ``generated`` for an LLM.
    """

    subject: str
    predicate: str
    object: str
    content: str
    confidence: float = 0.6
    valid_from: float | None = None
    provenance: Provenance = Provenance.INFERRED

    @classmethod
    def validated(
        cls, raw: Mapping[str, Any], *, provenance: Provenance = Provenance.GENERATED
    ) -> ExtractedFact:
        """Build from a JSON object, or raise ``ProviderError`` saying what is wrong."""
        if not isinstance(raw, Mapping):
            raise ProviderError(f"a fact must be a JSON object, got {type(raw).__name__}")
        fields: dict[str, str] = {}
        for name in ("subject", "predicate", "object"):
            value = raw.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ProviderError(f"fact field {name!r} must be a non-empty string")
            if len(value) > _MAX_FIELD_CHARS:
                raise ProviderError(f"fact field {name!r} is longer than {_MAX_FIELD_CHARS}")
            fields[name] = " ".join(value.split())
        content = raw.get("content")
        if content is None:
            predicate = fields["predicate"].replace("_", " ")
            content = f"{fields['subject']} {predicate} {fields['object']}"
        if not isinstance(content, str) or not content.strip():
            raise ProviderError("fact field 'content' must be a non-empty string")
        confidence = raw.get("confidence", 0.6)
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not math.isfinite(confidence)
            or not 0.0 <= confidence <= 1.0
        ):
            raise ProviderError(f"fact confidence must be a number in [0, 1], got {confidence!r}")
        return cls(
            subject=fields["subject"],
            predicate=fields["predicate"],
            object=fields["object"],
            content=content.strip(),
            confidence=float(confidence),
            provenance=provenance,
        )


@runtime_checkable
class Summarizer(Protocol):
    """Condenses text to at most ``max_tokens`` tokens."""

    async def summarize(self, content: str, max_tokens: int = 150) -> str: ...


@runtime_checkable
class FactExtractor(Protocol):
    """Finds subject-predicate-object facts in one piece of text."""

    async def extract_facts(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        """``speaker`` is who said it; first-person statements are about them.
        ``reference_time`` is when it was said (epoch seconds), for resolving
        relative dates ("yesterday", "next week"); None means unknown. Both are
        optional for implementations: the engine omits a keyword the signature
        does not take."""
        ...


@runtime_checkable
class ImportanceClassifier(Protocol):
    """Scores how worth remembering a piece of content is, in [0, 1]."""

    async def classify_importance(self, content: str, source: str) -> float: ...


@runtime_checkable
class TrajectoryDistiller(Protocol):
    """Distils up to three strategies (from a success) or pitfalls (from a failure)
    from one trajectory: a JSON-like list of ``{title, description, steps,
    failure_modes?, risk_level?}`` (checked by ``ucma.paradigms.distillation``)."""

    async def distill_trajectory(
        self, task: str, steps: list[str], success: bool, failure_reason: str | None
    ) -> list[dict[str, Any]]: ...


@runtime_checkable
class GoalDecomposer(Protocol):
    """Splits a goal into 1 to 12 subgoals, in order, each one text (checked by the
    engine's ``decompose_goal``)."""

    async def decompose_goal(self, goal: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Providers:
    """The providers consolidation uses. ``importance`` None means "use the stored
    salience" (no extra classification during consolidation)."""

    summarizer: Summarizer
    fact_extractor: FactExtractor
    importance: ImportanceClassifier | None = None
    distiller: TrajectoryDistiller | None = None
    """Distils strategies from trajectories (``learn_from_trajectory``); None: rules."""
    decomposer: GoalDecomposer | None = None
    """Splits goals into subgoals (``decompose_goal``); None: the offline rules."""

    def __post_init__(self) -> None:
        """Reject a member without its method now, not at the first sleep."""
        required = [
            ("summarizer", self.summarizer, "summarize"),
            ("fact_extractor", self.fact_extractor, "extract_facts"),
        ]
        if self.importance is not None:
            required.append(("importance", self.importance, "classify_importance"))
        if self.distiller is not None:
            required.append(("distiller", self.distiller, "distill_trajectory"))
        if self.decomposer is not None:
            required.append(("decomposer", self.decomposer, "decompose_goal"))
        for field_name, provider, method in required:
            if not callable(getattr(provider, method, None)):
                raise ConfigError(
                    f"Providers.{field_name} is a {type(provider).__name__} without a "
                    f"{method}() method; pass an object implementing the "
                    f"ucma.providers.base protocol"
                )
