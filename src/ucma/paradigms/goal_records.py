"""Goals (seed 000's predictive paradigm): the records.

A goal is something the user or agent wants done across sessions: its description,
a priority in [0, 1], a status, progress in [0, 1], an optional deadline, subgoals
(ordered; each a goal whose ``parent_id`` points back), what it is blocked on and
when it was last worked on. A goal that contradicts what memory knows is
``suspended`` with the memories that contradict it (``conflicts``) until memory
stops contradicting it or the user resumes it (the memories they accepted are kept
in ``accepted`` and no longer suspend it).

``anticipate`` reads what a goal needs that memory lacks (``Anticipation``:
knowledge gaps and skill gaps); ``pursue_goal`` (seed 000 composition pattern 2)
returns a ``GoalPlan``: its subgoals as steps, each with the strategy memory holds
for it and the gaps that block it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ucma.types import Scope

__all__ = [
    "Anticipation",
    "Goal",
    "GoalConflict",
    "GoalOrigin",
    "GoalPlan",
    "GoalStatus",
    "KnowledgeGap",
    "PlanStep",
    "SkillEstimate",
    "SkillGap",
]


class GoalStatus(StrEnum):
    ACTIVE = "active"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    ABANDONED = "abandoned"


OPEN_STATUSES = (GoalStatus.ACTIVE, GoalStatus.SUSPENDED)


class GoalOrigin(StrEnum):
    """Who set a goal: the caller, or a decomposition by the caller's steps, the
    offline rules, a strategy memory holds, or an LLM provider."""

    USER = "user"
    STEPS = "steps"
    RULES = "rules"
    STRATEGY = "strategy"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class GoalConflict:
    """A memory that contradicts a goal: its id, what it says, and why it
    contradicts: ``ended`` (what the goal is about was cancelled, called off ...),
    ``retired`` (a value the goal relies on is over: "left Acme", "no longer in
    Berlin") or ``changed`` (a fact the goal names was replaced by another value)."""

    memory_id: str
    text: str
    reason: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {
            "memory_id": self.memory_id,
            "text": self.text,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(kw_only=True, slots=True)
class Goal:
    id: str
    user_id: str
    agent_id: str = "default"
    description: str
    priority: float = 0.5
    status: GoalStatus = GoalStatus.ACTIVE
    progress: float = 0.0
    deadline: float | None = None
    parent_id: str | None = None
    subgoals: list[str] = field(default_factory=list)
    blocking_on: list[str] = field(default_factory=list)
    conflicts: list[GoalConflict] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    origin: GoalOrigin = GoalOrigin.USER
    last_worked: float | None = None
    completed_at: float | None = None
    created_at: float
    updated_at: float

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_id)

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


@dataclass(frozen=True, slots=True)
class KnowledgeGap:
    """Something a goal refers to that memory holds nothing about."""

    topic: str
    goal_id: str

    def __str__(self) -> str:
        return f"knowledge: {self.topic}"


@dataclass(frozen=True, slots=True)
class SkillEstimate:
    """How well the agent does a task, as far as memory can tell: a success rate
    (``rate``, None before any attempt), a lower bound of it, the attempts behind it,
    the best strategy for the task (None without one), and the source of the estimate:
    ``self_model`` (the self-model's attempts of the capability the task names; the
    bound is the low end of the credible interval) or ``strategies`` (the best
    strategy's applications; the bound is the Wilson lower bound)."""

    task: str
    rate: float | None
    lower_bound: float
    samples: int
    strategy_id: str | None
    source: str = "strategies"

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "rate": self.rate,
            "lower_bound": self.lower_bound,
            "samples": self.samples,
            "strategy_id": self.strategy_id,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class SkillGap:
    """A task of a goal the agent has no strategy for (``no_strategy``) or does
    poorly at by its record (``weak``)."""

    task: str
    goal_id: str
    reason: str
    estimate: SkillEstimate

    def __str__(self) -> str:
        return f"skill: {self.task} ({self.reason.replace('_', ' ')})"


@dataclass(frozen=True, slots=True)
class Anticipation:
    """What a goal needs that memory lacks (seed 000 ``anticipate``): the topics it
    refers to that memory knows nothing about, the tasks without a strategy or with a
    poor record, and, for the rest, what memory does have (``known`` topics and
    ``skills``)."""

    goal_id: str
    knowledge_gaps: list[KnowledgeGap]
    skill_gaps: list[SkillGap]
    known: list[str]
    skills: list[SkillEstimate]

    def all_gaps(self) -> list[str]:
        return [str(g) for g in (*self.knowledge_gaps, *self.skill_gaps)]


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One open subgoal of a plan, with the strategy memory ranks first for it (None
    when it has none) and the gaps that block it (empty: it can be done now)."""

    goal: Goal
    strategy_id: str | None
    strategy: str | None
    strategy_steps: list[str]
    blocked_by: list[str]

    @property
    def achievable(self) -> bool:
        return not self.blocked_by


@dataclass(frozen=True, slots=True)
class GoalPlan:
    """Seed 000 composition pattern 2 for one goal: the goal after the pass
    (``blocking_on`` and ``last_worked`` updated), its open subgoals as steps, and
    what ``anticipate`` found."""

    goal: Goal
    steps: list[PlanStep]
    anticipation: Anticipation

    @property
    def achievable(self) -> list[PlanStep]:
        return [s for s in self.steps if s.achievable]
