"""What ``synthesize`` and ``post_interaction`` answer (seed 000's response synthesis
and post-interaction learning). Plain frozen dataclasses; their JSON form is
``ucma.serialization.synthesis_to_dict`` and ``interaction_learning_to_dict``.

A ``Synthesis`` is every paradigm's answer to one query with seed 000's conflict
matrix applied: the facts recalled, the preferences and active goals related to it,
the strategies ranked by competence x success rate (those of a weak domain at half
their score), the prediction (its confidence halved when a known fact contradicts it),
the competence and the should-attempt advice, and a caveat for each conflict found.

An ``InteractionLearning`` is what one ``post_interaction`` call changed, every part
written in one transaction (pattern promotion follows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ucma.paradigms.goal_records import Goal
from ucma.paradigms.predictive_records import (
    AttemptAdvice,
    Competence,
    Introspection,
    Simulation,
    Transition,
)
from ucma.types import Hit, Opinion

__all__ = ["InteractionLearning", "RankedStrategy", "Synthesis"]


@dataclass(frozen=True, slots=True)
class RankedStrategy:
    """A strategy (or workflow, or pitfall: ``kind``) for the query's task, ranked by
    ``score`` = ``competence`` x ``success_rate`` (seed 000: "multiple strategies
    applicable: rank by competence x success rate"), halved when its domain is weak in
    the self-model (``deprioritised``: "trust the self-model"). ``competence`` is the
    estimated accuracy of the self-model in the strategy's domain, or of the task when
    the domain has no recorded attempt; ``success_rate`` its successes per application
    (0.5 untried). ``relevance`` and ``grounding`` are ``strategies_for``'s."""

    procedure_id: str
    name: str
    text: str
    domain: str | None
    kind: str
    steps: tuple[str, ...]
    success_rate: float
    applications: int
    competence: float
    score: float
    deprioritised: bool
    relevance: float
    grounding: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "procedure_id": self.procedure_id,
            "name": self.name,
            "text": self.text,
            "domain": self.domain,
            "kind": self.kind,
            "steps": list(self.steps),
            "success_rate": self.success_rate,
            "applications": self.applications,
            "competence": self.competence,
            "score": self.score,
            "deprioritised": self.deprioritised,
            "relevance": self.relevance,
            "grounding": self.grounding,
        }


@dataclass(frozen=True, slots=True)
class Synthesis:
    """One query's answer from every paradigm it needs (``paradigms``: the router's;
    all three when a ``task`` was named, predictive too when an ``action`` was). Parts
    of a paradigm not needed are empty (None); preferences are read for every query.

    ``facts``: declarative recall (every bank but opinions; procedures are
    ``strategies``). ``preferences``: current opinions related to the query.
    ``prediction``: ``simulate`` of the action, its ``confidence`` halved when a known
    fact contradicts it. ``goals``: active goals related to the query.
    ``competence``: ``introspect`` of the task. ``advice``: ``should_attempt`` of the
    task from the same readings. ``caveats``: the conflicts found and how they were
    resolved. ``cached``: some part was served from the scope's cache."""

    query: str
    task: str
    paradigms: tuple[str, ...]
    facts: tuple[Hit, ...]
    preferences: tuple[Opinion, ...]
    strategies: tuple[RankedStrategy, ...]
    prediction: Simulation | None
    goals: tuple[Goal, ...]
    competence: Introspection | None
    advice: AttemptAdvice | None
    caveats: tuple[str, ...]
    cached: bool


@dataclass(frozen=True, slots=True)
class InteractionLearning:
    """What one interaction taught every paradigm (seed 000's post-interaction
    learning), all written in one transaction:

    ``experience_id``: the experience record; ``opinions``: the opinions the stated
    preferences formed, reinforced, weakened or replaced; ``strategy_id``: the strategy
    whose statistics took the outcome, else the first item the trajectory taught
    (``strategies_extracted``: all of them); ``transition``: the world model's
    transition the outcome confirmed; ``competence``: the self-model's capability after
    the attempt; ``goal``: the goal it progressed (completed at 1.0 on a success);
    ``failure_mode_added``: the failure reason was a new failure mode of the capability
    (then ``failure_experience_id`` records the discovery); ``promoted_fact_ids``: the
    world facts patterns reliable enough became afterwards; ``events``: the types of the
    events written, in order."""

    experience_id: str
    opinions: tuple[str, ...]
    strategy_id: str | None
    strategies_extracted: tuple[str, ...]
    transition: Transition | None
    competence: Competence | None
    goal: Goal | None
    failure_mode_added: bool
    failure_experience_id: str | None
    promoted_fact_ids: tuple[str, ...]
    events: tuple[str, ...]
