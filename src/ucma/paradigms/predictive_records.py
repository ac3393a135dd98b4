"""Records of seed 000's predictive paradigm: world-model transitions, self-model
competences, and what ``simulate``, ``introspect``, ``should_attempt`` and
``learning_priorities`` answer. Plain dataclasses; stores return fresh copies;
``to_dict`` is their JSON form (events, export, REST, MCP, CLI).

A ``Transition`` is one pattern of the world model: doing ``action`` while
``context`` holds led to ``outcome``. Every observation of the action in that exact
context confirms the transition whose outcome occurred and is an error for the others,
so ``reliability``, the Beta(1, 1) posterior mean ``(confirmations + 1) /
(confirmations + errors + 2)``, rises with confirmations and falls with errors.

A ``Competence`` is the self-model of one capability (a kind of task, a domain):
attempts and successes, the success probabilities predicted before each attempt
(calibration, in ``bins`` of predicted probability: count, sum of predictions,
successes), the failure modes seen, and the latest outcomes as evidence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ucma.errors import ValidationError

__all__ = [
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
    "competence_from_dict",
    "transition_from_dict",
]


@dataclass(kw_only=True, slots=True)
class Transition:
    """Doing ``action`` while ``context`` held led to ``outcome`` (seed 000's world
    model: action, preconditions, postconditions), with its evidence."""

    id: str
    user_id: str
    agent_id: str = "default"
    action: str
    context: dict[str, str] = field(default_factory=dict)
    outcome: str
    confirmations: int = 0
    errors: int = 0
    promoted_fact_id: str | None = None
    created_at: float
    updated_at: float

    @property
    def support(self) -> int:
        """Observations of the action in this context (this outcome or another)."""
        return self.confirmations + self.errors

    @property
    def reliability(self) -> float:
        """Posterior mean of "the action here leads to this outcome"."""
        return (self.confirmations + 1.0) / (self.support + 2.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "action": self.action,
            "context": dict(self.context),
            "outcome": self.outcome,
            "confirmations": self.confirmations,
            "errors": self.errors,
            "promoted_fact_id": self.promoted_fact_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    def to_api_dict(self) -> dict[str, Any]:
        """``to_dict`` with the derived support and reliability."""
        return {**self.to_dict(), "support": self.support, "reliability": self.reliability}


@dataclass(frozen=True, slots=True)
class PredictedOutcome:
    """One outcome ``simulate`` predicts: its posterior probability, the credible
    interval around it, and the (weighted) observations behind it."""

    outcome: str
    probability: float
    low: float
    high: float
    support: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class TransitionEvidence:
    """A transition ``simulate`` used, and how much its context counted (1 for the
    asked context exactly, less for a similar one)."""

    transition_id: str
    context: dict[str, str]
    outcome: str
    confirmations: int
    errors: int
    reliability: float
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Simulation:
    """What doing ``action`` in ``context`` is predicted to lead to.

    ``outcomes`` are best first and, with ``unseen_probability`` (something never
    observed), sum to 1. ``confidence`` is the probability of ``predicted``, the most
    likely outcome (None without evidence): it is low with few observations, since a
    uniform prior shares the mass with the unseen. ``support`` counts the observations
    used (fractional where a similar context counted in part), ``exact_support`` those
    in the asked context itself. ``caveats`` say what limits the prediction.
    """

    action: str
    context: dict[str, str]
    predicted: str | None
    confidence: float
    outcomes: tuple[PredictedOutcome, ...]
    unseen_probability: float
    support: float
    exact_support: int
    evidence: tuple[TransitionEvidence, ...]
    caveats: tuple[str, ...]

    def probability_of(self, outcome: str) -> float:
        """The predicted probability of ``outcome`` (case and spacing aside); the
        unseen share when it was never observed."""
        wanted = " ".join(outcome.casefold().split())
        for item in self.outcomes:
            if " ".join(item.outcome.casefold().split()) == wanted:
                return item.probability
        return self.unseen_probability

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "context": dict(self.context),
            "predicted": self.predicted,
            "confidence": self.confidence,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "unseen_probability": self.unseen_probability,
            "support": self.support,
            "exact_support": self.exact_support,
            "evidence": [e.to_dict() for e in self.evidence],
            "caveats": list(self.caveats),
        }


@dataclass(frozen=True, slots=True)
class FailureMode:
    """A way a capability failed, how often, first and last seen."""

    mode: str
    count: int
    first_seen: float
    last_seen: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class CompetenceEvidence:
    """One recorded attempt: its result, the success probability predicted before it
    (None when none was), where it was recorded from, and the failure reason."""

    success: bool
    predicted: float | None
    source: str
    reason: str | None
    at: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True, slots=True)
class Competence:
    """The self-model of one capability (seed 000's CompetenceEntry)."""

    id: str
    user_id: str
    agent_id: str = "default"
    capability: str
    attempts: int = 0
    successes: int = 0
    predicted_count: int = 0
    predicted_sum: float = 0.0
    brier_sum: float = 0.0
    bins: list[list[float]] = field(default_factory=list)
    failure_modes: list[FailureMode] = field(default_factory=list)
    evidence: list[CompetenceEvidence] = field(default_factory=list)
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "capability": self.capability,
            "attempts": self.attempts,
            "successes": self.successes,
            "predicted_count": self.predicted_count,
            "predicted_sum": self.predicted_sum,
            "brier_sum": self.brier_sum,
            "bins": [list(b) for b in self.bins],
            "failure_modes": [m.to_dict() for m in self.failure_modes],
            "evidence": [e.to_dict() for e in self.evidence],
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class Introspection:
    """The answer to "am I good at this?", with the numbers (seed 000's IntrospectionResult).

    ``estimated_accuracy`` is the posterior mean of success in ``capability`` with its
    credible interval [``low``, ``high``] over ``sample_size`` attempts;
    ``confidence_in_estimate`` is 1 minus the interval's width. ``source`` says what
    it rests on: ``self_model`` (recorded attempts), ``strategies`` (the capability's
    strategies' applications, seed 000 flow 5, when no attempt was recorded) or
    ``none`` (0.5, the uniform prior). Calibration: ``mean_predicted`` against
    ``actual_rate``, the expected calibration error and the Brier score of the
    predictions made before attempts (None when none was made).
    """

    task: str
    capability: str | None
    estimated_accuracy: float
    low: float
    high: float
    sample_size: int
    confidence_in_estimate: float
    source: str
    actual_rate: float | None
    mean_predicted: float | None
    calibration_error: float | None
    brier: float | None
    known_failure_modes: tuple[FailureMode, ...]
    weak_domains: tuple[str, ...]
    strategy_applications: int
    strategy_successes: int
    evidence: tuple[CompetenceEvidence, ...]
    caveats: tuple[str, ...]

    @property
    def is_weak(self) -> bool:
        return self.capability is not None and self.capability in self.weak_domains

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "capability": self.capability,
            "estimated_accuracy": self.estimated_accuracy,
            "low": self.low,
            "high": self.high,
            "sample_size": self.sample_size,
            "confidence_in_estimate": self.confidence_in_estimate,
            "source": self.source,
            "actual_rate": self.actual_rate,
            "mean_predicted": self.mean_predicted,
            "calibration_error": self.calibration_error,
            "brier": self.brier,
            "known_failure_modes": [m.to_dict() for m in self.known_failure_modes],
            "weak_domains": list(self.weak_domains),
            "is_weak": self.is_weak,
            "strategy_applications": self.strategy_applications,
            "strategy_successes": self.strategy_successes,
            "evidence": [e.to_dict() for e in self.evidence],
            "caveats": list(self.caveats),
        }


class HelpDecision(StrEnum):
    """Seed 000 pattern 3's decision."""

    ATTEMPT = "attempt"
    ATTEMPT_WITH_CAVEAT = "attempt_with_caveat"
    ASK_FOR_HELP = "ask_for_help"
    DECLINE = "decline"


@dataclass(frozen=True, slots=True)
class AttemptAdvice:
    """``should_attempt``'s decision with every input it used: the four scores and
    their weights, the failure modes that apply (0.1 off each), the weighted score
    and the adjusted score compared with the thresholds."""

    task: str
    decision: HelpDecision
    score: float
    adjusted_score: float
    inputs: dict[str, float]
    weights: dict[str, float]
    failure_modes_applied: tuple[str, ...]
    capability: str | None
    experiences_used: int
    strategies_used: int
    introspection: Introspection

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "decision": self.decision.value,
            "score": self.score,
            "adjusted_score": self.adjusted_score,
            "inputs": dict(self.inputs),
            "weights": dict(self.weights),
            "failure_modes_applied": list(self.failure_modes_applied),
            "capability": self.capability,
            "experiences_used": self.experiences_used,
            "strategies_used": self.strategies_used,
            "introspection": self.introspection.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class LearningPriority:
    """Something worth learning next (seed 000 pattern 4), with its impact and where
    it comes from (``source``: the capability, the failure mode, ...)."""

    type: str
    description: str
    impact: float
    source: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "description": self.description,
            "impact": self.impact,
            "source": dict(self.source),
        }


def _strings(data: dict[str, Any], names: tuple[str, ...], what: str) -> None:
    for name in names:
        if not isinstance(data.get(name), str) or not data[name]:
            raise ValidationError(f"a {what}'s {name} must be a non-empty string")


def transition_from_dict(data: dict[str, Any]) -> Transition:
    """Rebuild a transition from ``Transition.to_dict`` output; ValidationError if
    malformed (the store checks the counts and times)."""
    if not isinstance(data, dict):
        raise ValidationError("a transition is an object")
    _strings(data, ("id", "user_id", "agent_id", "action", "outcome"), "transition")
    context = data.get("context", {})
    if not isinstance(context, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in context.items()
    ):
        raise ValidationError("a transition's context must map strings to strings")
    try:
        return Transition(**data)
    except TypeError as exc:
        raise ValidationError(f"invalid transition: {exc}") from exc


def competence_from_dict(data: dict[str, Any]) -> Competence:
    """Rebuild a competence from ``Competence.to_dict`` output; ValidationError if
    malformed."""
    if not isinstance(data, dict):
        raise ValidationError("a competence is an object")
    _strings(data, ("id", "user_id", "agent_id", "capability"), "competence")
    fields = dict(data)
    try:
        fields["failure_modes"] = [FailureMode(**m) for m in data.get("failure_modes", [])]
        fields["evidence"] = [CompetenceEvidence(**e) for e in data.get("evidence", [])]
        bins = data.get("bins", [])
        if not isinstance(bins, list) or not all(
            isinstance(b, list)
            and len(b) == 3
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in b)
            for b in bins
        ):
            raise ValidationError("a competence's bins must be [count, predicted, successes] rows")
        for mode in fields["failure_modes"]:
            if not isinstance(mode.mode, str) or not isinstance(mode.count, int):
                raise ValidationError("a failure mode has a text and a count")
        for entry in fields["evidence"]:
            if not isinstance(entry.success, bool) or not isinstance(entry.source, str):
                raise ValidationError("competence evidence has a success flag and a source")
            if entry.reason is not None and not isinstance(entry.reason, str):
                raise ValidationError("competence evidence's reason must be a string")
        return Competence(**fields)
    except TypeError as exc:
        raise ValidationError(f"invalid competence: {exc}") from exc
