"""The world model's maths (seed 000's predictive paradigm), pure: no I/O.

A context is what held when an action was taken: a mapping of condition to value
("logged in" -> "true", "site" -> "shop"). Keys and values compare case- and
space-insensitively (``normal``); ``context_key`` is the canonical text of a whole
context, so one action in one context is one group of transitions.

``simulate`` predicts from the transitions of one action:

- each stored context counts with a weight: 1 for the asked context itself, 0 for one
  that contradicts it (a condition both name with different values), and for a
  compatible one ``(shared + 1) / (union + 1)`` of their conditions, so evidence from
  a context that says less, or more, than the asked one counts in part (seed 000 flow
  3: facts condition the prediction; a different state of the world is other evidence);
- the weighted counts of each outcome go into a Dirichlet posterior with an unseen
  bucket (``ucma.paradigms.posterior``): probabilities, intervals, and the chance of an
  outcome never seen;
- ``confidence`` is the most likely outcome's probability, low with few observations.

``success_probability``: the chance an attempt succeeds, from the ``success`` and
``failure`` outcomes the learning loop records, 0.5 without evidence.

``promotable``: seed 000's post-interaction learning promotes a pattern above 0.9
confidence to a world fact; here a transition whose reliability is above
``PredictiveConfig.promote_above`` after at least ``promote_min_support`` observations of
its action in its context, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ucma.paradigms.posterior import dirichlet_estimates, unseen_probability
from ucma.paradigms.predictive_records import (
    PredictedOutcome,
    Simulation,
    Transition,
    TransitionEvidence,
)

__all__ = [
    "FAILURE",
    "SUCCESS",
    "context_key",
    "context_phrase",
    "context_weight",
    "normal",
    "normal_context",
    "pattern_fact",
    "promotable",
    "simulate",
    "success_probability",
]

SUCCESS = "success"
FAILURE = "failure"
"""The outcomes the learning loop records for an attempt."""

_WIDE = 0.3  # a most likely outcome's interval wider than this earns a caveat


def normal(text: str) -> str:
    """``text`` for comparison: case folded, runs of white space as one space."""
    return " ".join(text.casefold().split())


def normal_context(context: Mapping[str, str]) -> dict[str, str]:
    """The context with keys and values compared as ``normal`` text."""
    return {normal(k): normal(v) for k, v in context.items()}


def context_key(context: Mapping[str, str]) -> str:
    """The canonical text of a context: its normal pairs, sorted ("" when empty)."""
    return "; ".join(f"{k}={v}" for k, v in sorted(normal_context(context).items()))


def context_phrase(context: Mapping[str, str]) -> str:
    """A context for people: "logged in = true and site = shop"."""
    return " and ".join(f"{k} = {v}" for k, v in sorted(context.items()))


def context_weight(stored: Mapping[str, str], asked: Mapping[str, str]) -> float:
    """How much evidence from ``stored`` counts for a prediction in ``asked`` (both
    normal): 0 when they disagree on a condition, else (shared + 1) / (union + 1)."""
    shared = 0
    for key, value in stored.items():
        other = asked.get(key)
        if other is None:
            continue
        if other != value:
            return 0.0
        shared += 1
    union = len(stored) + len(asked) - shared
    return (shared + 1.0) / (union + 1.0)


def simulate(
    action: str,
    context: Mapping[str, str],
    transitions: Sequence[Transition],
    mass: float = 0.95,
) -> Simulation:
    """Predict the outcomes of ``action`` in ``context`` from its ``transitions``."""
    asked = normal_context(context)
    asked_key = context_key(context)
    counts: dict[str, float] = {}
    names: dict[str, tuple[int, str]] = {}
    evidence: list[TransitionEvidence] = []
    exact = 0
    for transition in transitions:
        weight = context_weight(normal_context(transition.context), asked)
        if weight <= 0:
            continue
        if context_key(transition.context) == asked_key:
            exact += transition.confirmations
        key = normal(transition.outcome)
        counts[key] = counts.get(key, 0.0) + weight * transition.confirmations
        # Shown under the wording observed most often.
        if key not in names or transition.confirmations > names[key][0]:
            names[key] = (transition.confirmations, transition.outcome)
        evidence.append(
            TransitionEvidence(
                transition.id,
                dict(transition.context),
                transition.outcome,
                transition.confirmations,
                transition.errors,
                transition.reliability,
                weight,
            )
        )
    estimates = dirichlet_estimates(counts, mass)
    outcomes = sorted(
        (
            PredictedOutcome(names[k][1], e.mean, e.low, e.high, counts[k])
            for k, e in estimates.items()
        ),
        key=lambda o: (-o.probability, normal(o.outcome)),
    )
    support = sum(counts.values())
    evidence.sort(key=lambda e: (-e.weight, -e.confirmations, e.transition_id))
    best = outcomes[0] if outcomes else None
    return Simulation(
        action=action,
        context=dict(context),
        predicted=best.outcome if best else None,
        confidence=best.probability if best else 0.0,
        outcomes=tuple(outcomes),
        unseen_probability=unseen_probability(counts),
        support=support,
        exact_support=exact,
        evidence=tuple(evidence),
        caveats=tuple(_caveats(best, support, exact)),
    )


def _caveats(best: PredictedOutcome | None, support: float, exact: int) -> list[str]:
    if best is None:
        return ["no observation of this action in a compatible context: nothing to predict from"]
    out = []
    if exact == 0:
        out.append(
            "no observation in this exact context: predicted from similar contexts, "
            "which count in part"
        )
    if best.high - best.low > _WIDE:
        out.append(
            f"few observations ({support:g}): the most likely outcome's probability lies "
            f"between {best.low:.2f} and {best.high:.2f}"
        )
    return out


def success_probability(simulation: Simulation) -> float:
    """The probability that the action succeeds, from its ``success`` and ``failure``
    observations only, under Beta(1, 1): 0.5 with none (seed 000 pattern 3's default)."""
    counts = {normal(o.outcome): o.support for o in simulation.outcomes}
    wins, losses = counts.get(SUCCESS, 0.0), counts.get(FAILURE, 0.0)
    return (wins + 1.0) / (wins + losses + 2.0)


def promotable(transition: Transition, above: float, min_support: int) -> bool:
    """Whether the transition is now a world fact to state (and is not one yet)."""
    return (
        transition.promoted_fact_id is None
        and transition.support >= min_support
        and transition.reliability > above
    )


def pattern_fact(transition: Transition) -> tuple[str, str, str]:
    """The world fact a promoted transition states: (action, "leads to", outcome
    [when context])."""
    outcome = transition.outcome
    if transition.context:
        outcome = f"{outcome} when {context_phrase(transition.context)}"
    return transition.action, "leads to", outcome
