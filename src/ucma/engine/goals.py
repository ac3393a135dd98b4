"""Goals (seed 000's predictive paradigm): add, decompose, progress, order, anticipate
and pursue them, and keep them consistent with what memory knows. Rules in
``ucma.paradigms.goals`` and ``ucma.paradigms.goal_conflicts``; storage-side upkeep
(events, roll-up, the conflict check) in ``ucma.engine.goal_upkeep``.

Conflicts (seed 000's conflict matrix, "goal conflicts with facts: flag to user,
suspend goal") are checked for every open goal of a scope after each write of the
everyday path (``observe``, ``add``, ``retain``), after ``assert_fact``, when a goal
is added or decomposed, and before the open goals are read (``get_active_goals``,
``anticipate``, ``pursue_goal``), so a goal stays suspended exactly as long as memory
contradicts it. The check is idempotent: it reads memory as it is and writes only
what changed, each change an event.

**The competence seam.** Skill gaps need to know how well the agent does a task.
``_task_competence`` is the one place that answers it: from the self-model
(``introspect``: the capability the task names, its recorded attempts and the low end
of their credible interval) when it holds attempts of that capability, else from the
success statistics of the strategy ``strategies_for`` ranks first (its success rate
and the Wilson lower bound of it).

**Learning priorities.** ``learning_priorities`` (``ucma.engine.predictive``) also
lists the gaps that block open goals: each knowledge or skill gap an active goal's
last ``pursue_goal`` left in its ``blocking_on``, at the goal's priority.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence

from ucma.config import LimitsConfig
from ucma.engine.base import _enum
from ucma.engine.goal_upkeep import check_goals, goal_event, known_topics, roll_up
from ucma.engine.predictive import Predictive
from ucma.errors import NotFoundError, ValidationError
from ucma.events.log import EventType
from ucma.memory_ids import new_memory_id
from ucma.paradigms.goal_records import (
    Anticipation,
    Goal,
    GoalOrigin,
    GoalPlan,
    GoalStatus,
    KnowledgeGap,
    PlanStep,
    SkillEstimate,
    SkillGap,
)
from ucma.paradigms.goals import (
    decompose,
    mentions,
    topics,
)
from ucma.paradigms.predictive_records import LearningPriority
from ucma.storage.base import Storage
from ucma.types import Scope
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_offset,
    check_timestamp,
)

__all__ = ["Goals"]

logger = logging.getLogger(__name__)

_MAX_STEPS = 12


class Goals(Predictive):
    """add_goal, get_goal, goals, get_active_goals, decompose_goal, update_progress,
    resume_goal, abandon_goal, anticipate, pursue_goal; over the self-model, which
    says how well the agent does a goal's tasks, and whose learning priorities gain
    the gaps that block goals."""

    async def add_goal(
        self,
        description: str,
        *,
        priority: float = 0.5,
        deadline: float | None = None,
        parent_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Goal:
        """A new goal, or a subgoal of ``parent_id`` (appended to its subgoals, its
        progress rolled up again). ``priority`` in [0, 1] (higher first), ``deadline``
        epoch seconds. If what memory knows contradicts it, it comes back
        ``suspended`` with the memories that do in ``conflicts``."""
        scope = self._scope(user_id, agent_id)
        text = check_content(description, self.config.limits, "description")
        level = check_fraction(priority, "priority")
        due = None if deadline is None else check_timestamp(deadline, "deadline")
        parent_key = None if parent_id is None else check_id(parent_id, "parent_id")
        [text] = await self._guard(scope, [text], ["description"])
        storage = await self._ready()
        now = self._clock()
        goal = Goal(
            id=new_memory_id("goal", scope),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            description=text,
            priority=level,
            deadline=due,
            parent_id=parent_key,
            created_at=now,
            updated_at=now,
        )

        def write() -> None:
            with storage.transaction():
                if parent_key is not None:
                    parent = self._open_goal(storage, scope, parent_key)
                    parent.subgoals.append(goal.id)
                    parent.updated_at = now
                    storage.goals.put([goal, parent])
                    goal_event(storage, scope, EventType.GOAL_ADDED, goal, now)
                    goal_event(storage, scope, EventType.GOAL_DECOMPOSED, parent, now)
                    roll_up(storage, scope, goal, now)
                else:
                    storage.goals.put([goal])
                    goal_event(storage, scope, EventType.GOAL_ADDED, goal, now)

        await self._run(write)
        await self._reconcile_goals(scope, [text])  # only goals it shares words with
        added = await self._run(storage.goals.get, scope, goal.id)
        assert added is not None
        logger.info("add_goal: %s (%s)", added.id, added.status.value)
        return added

    async def get_goal(
        self, goal_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Goal:
        """One goal by id; NotFoundError if the scope has none with it."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        storage = await self._ready()
        goal = await self._run(storage.goals.get, scope, key)
        if goal is None:
            raise NotFoundError("goal", key)
        logger.info("get_goal: %s", key)
        return goal

    async def goals(
        self,
        *,
        status: GoalStatus | str | None = None,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[Goal]:
        """The scope's goals of one status (all without one), in the order of
        ``get_active_goals``: the suspended ones, with what contradicts them, are
        ``status="suspended"``."""
        scope = self._scope(user_id, agent_id)
        statuses = None if status is None else [_enum(GoalStatus, status, "status")]
        count = check_limit(limit, 10_000)
        check_offset(offset)
        storage = await self._ready()
        found = await self._run(
            storage.goals.list, scope, statuses=statuses, limit=count, offset=offset
        )
        logger.info("goals: %d (user=%s)", len(found), scope.user_id)
        return found

    async def get_active_goals(
        self, *, limit: int = 100, user_id: str | None = None, agent_id: str | None = None
    ) -> builtins.list[Goal]:
        """The active goals and subgoals, highest priority first, then the nearest
        deadline (none last), then the oldest; suspended goals are left out until
        what contradicts them is resolved."""
        scope = self._scope(user_id, agent_id)
        count = check_limit(limit, 10_000)
        await self._reconcile_goals(scope)
        storage = await self._ready()
        found = await self._run(
            storage.goals.list, scope, statuses=[GoalStatus.ACTIVE], limit=count
        )
        logger.info("get_active_goals: %d (user=%s)", len(found), scope.user_id)
        return found

    async def decompose_goal(
        self,
        goal_id: str,
        *,
        steps: Sequence[str] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[Goal]:
        """Split a goal into subgoals, in order, and return them. ``steps`` are the
        caller's; without them an LLM provider (``Providers.decomposer``) when one is
        configured, else the offline rules (a list, a sequence, actions joined by
        "and": ``ucma.paradigms.goals.decompose``), else the steps of the strategy
        procedural memory ranks first for it. A goal with no such structure and no
        strategy stays whole (empty list). A goal that has subgoals returns them
        (decomposed once); its progress comes from them from then on."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        given = None if steps is None else _steps(steps, self.config.limits)
        storage = await self._ready()
        goal = await self._run(self._open_goal, storage, scope, key)
        if goal.subgoals:
            if given is not None:
                raise ValidationError(
                    f"goal {key} already has subgoals; add one with add_goal(parent_id=...)"
                )
            found = await self._run(storage.goals.get_many, scope, goal.subgoals)
            return [found[i] for i in goal.subgoals if i in found]
        origin, parts = await self._subgoal_texts(scope, goal, given)
        if not parts:
            logger.info("decompose_goal: %s stays whole", key)
            return []
        parts = await self._guard(scope, parts, ["subgoal"] * len(parts))
        now = self._clock()
        children = [
            Goal(
                id=new_memory_id("goal", scope),
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                description=part,
                priority=goal.priority,
                deadline=goal.deadline,
                parent_id=goal.id,
                origin=origin,
                created_at=now,
                updated_at=now,
            )
            for part in parts
        ]

        def write() -> None:
            with storage.transaction():
                parent = self._open_goal(storage, scope, key)
                if parent.subgoals:
                    raise ValidationError(f"goal {key} was decomposed meanwhile")
                parent.subgoals = [c.id for c in children]
                parent.updated_at = now
                storage.goals.put([*children, parent])
                for child in children:
                    goal_event(storage, scope, EventType.GOAL_ADDED, child, now)
                goal_event(storage, scope, EventType.GOAL_DECOMPOSED, parent, now)
                roll_up(storage, scope, children[0], now)

        await self._run(write)
        await self._reconcile_goals(scope, parts)
        found = await self._run(storage.goals.get_many, scope, [c.id for c in children])
        logger.info("decompose_goal: %s -> %d subgoals (%s)", key, len(children), origin.value)
        return [found[c.id] for c in children if c.id in found]

    async def _subgoal_texts(
        self, scope: Scope, goal: Goal, given: list[str] | None
    ) -> tuple[GoalOrigin, list[str]]:
        if given is not None:
            return GoalOrigin.STEPS, given
        decomposer = self._providers.decomposer if self._providers is not None else None
        if decomposer is not None:
            parts = await decomposer.decompose_goal(goal.description)
            return GoalOrigin.LLM, _steps(parts, self.config.limits)
        parts = decompose(goal.description)
        if parts:
            return GoalOrigin.RULES, parts
        strategy = await self._best_strategy(scope, goal.description)
        if strategy is not None and len(strategy[2]) >= 2:
            return GoalOrigin.STRATEGY, strategy[2][:_MAX_STEPS]
        return GoalOrigin.RULES, []

    async def update_progress(
        self,
        goal_id: str,
        *,
        progress: float | None = None,
        delta: float | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Goal:
        """Set a goal's progress (``progress`` in [0, 1]) or move it (``delta`` in
        [-1, 1]); at 1 it is completed. Its parents' progress follows as the mean of
        their subgoals', and a parent whose subgoals are all complete is completed.
        A goal with subgoals takes its progress from them (ValidationError)."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        if (progress is None) == (delta is None):
            raise ValidationError("pass exactly one of progress or delta")
        if progress is not None:
            target = check_fraction(progress, "progress")
        else:
            step = check_timestamp(delta, "delta")
            if not -1.0 <= step <= 1.0:
                raise ValidationError("delta must be in [-1, 1]")
        storage = await self._ready()
        now = self._clock()

        def write() -> Goal:
            with storage.transaction():
                goal = self._open_goal(storage, scope, key)
                if goal.subgoals:
                    raise ValidationError(
                        f"goal {key} has subgoals; its progress comes from theirs"
                    )
                value = target if progress is not None else goal.progress + step
                goal.progress = min(1.0, max(0.0, value))
                goal.last_worked = goal.updated_at = now
                if goal.progress >= 1.0:
                    goal.status, goal.completed_at = GoalStatus.COMPLETED, now
                storage.goals.put([goal])
                goal_event(storage, scope, EventType.GOAL_PROGRESSED, goal, now)
                roll_up(storage, scope, goal, now)
                return goal

        goal = await self._run(write)
        logger.info("update_progress: %s -> %.2f (%s)", key, goal.progress, goal.status.value)
        return goal

    async def resume_goal(
        self, goal_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Goal:
        """The user's answer to a suspended goal: pursue it anyway. The memories that
        contradicted it are accepted (they no longer suspend it or its subgoals; new
        ones would). ValidationError if it is not suspended."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        storage = await self._ready()
        now = self._clock()

        def write() -> Goal:
            with storage.transaction():
                goal = self._open_goal(storage, scope, key)
                if goal.status is not GoalStatus.SUSPENDED:
                    raise ValidationError(f"goal {key} is {goal.status.value}, not suspended")
                accepted = [c.memory_id for c in goal.conflicts]
                goal.accepted = list(dict.fromkeys([*goal.accepted, *accepted]))
                goal.conflicts, goal.status, goal.updated_at = [], GoalStatus.ACTIVE, now
                storage.goals.put([goal])
                goal_event(storage, scope, EventType.GOAL_RESUMED, goal, now)
                return goal

        goal = await self._run(write)
        await self._reconcile_goals(scope)  # its subgoals follow
        logger.info("resume_goal: %s", key)
        return goal

    async def abandon_goal(
        self, goal_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Goal:
        """Give a goal up (kept, with its history); its open subgoals are abandoned
        with it and its parent's progress no longer counts it."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        storage = await self._ready()
        now = self._clock()

        def write() -> Goal:
            with storage.transaction():
                goal = self._open_goal(storage, scope, key)
                pending = [goal]
                while pending:
                    current = pending.pop()
                    current.status, current.updated_at = GoalStatus.ABANDONED, now
                    storage.goals.put([current])
                    goal_event(storage, scope, EventType.GOAL_ABANDONED, current, now)
                    children = storage.goals.get_many(scope, current.subgoals)
                    pending += [c for c in children.values() if c.is_open]
                roll_up(storage, scope, goal, now)
                return goal

        goal = await self._run(write)
        logger.info("abandon_goal: %s", key)
        return goal

    async def anticipate(
        self, goal_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> Anticipation:
        """What a goal needs that memory lacks (seed 000 ``anticipate``). Knowledge
        gaps: the things the goal and its open subgoals refer to that no memory
        mentions. Skill gaps: the tasks (its open subgoals without subgoals, or the
        goal itself) with a poor record (``GoalConfig.weak_below`` over
        ``min_samples`` attempts in the self-model, or applications of the best
        strategy when the self-model has no attempt of the task's capability), and
        the tasks with neither a strategy nor such attempts."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        await self._reconcile_goals(scope)
        storage = await self._ready()
        goal, tasks = await self._run(self._tasks, storage, scope, key)
        cfg = self.config.goals
        wanted: dict[str, Goal] = {}
        for item in (goal, *tasks):
            for topic in topics(item.description):
                wanted.setdefault(topic, item)
        chosen = list(wanted.items())[: cfg.max_topics]
        known = await self._run(known_topics, storage, scope, [t for t, _ in chosen])
        knowledge = [KnowledgeGap(t, g.id) for t, g in chosen if t not in known]
        skills: list[SkillEstimate] = []
        skill_gaps: list[SkillGap] = []
        for task in tasks or [goal]:
            estimate = await self._task_competence(scope, task.description)
            skills.append(estimate)
            if estimate.strategy_id is None and estimate.source != "self_model":
                skill_gaps.append(SkillGap(task.description, task.id, "no_strategy", estimate))
            elif (
                estimate.samples >= cfg.min_samples
                and estimate.rate is not None
                and estimate.rate < cfg.weak_below
            ):
                skill_gaps.append(SkillGap(task.description, task.id, "weak", estimate))
        logger.info(
            "anticipate: %s, %d knowledge and %d skill gaps", key, len(knowledge), len(skill_gaps)
        )
        return Anticipation(goal.id, knowledge, skill_gaps, sorted(known), skills)

    async def pursue_goal(
        self, goal_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> GoalPlan:
        """Seed 000 composition pattern 2, goal-directed planning, for one goal:
        (1) decompose it (``decompose_goal``), (2) find its gaps (``anticipate``),
        (3) keep only the knowledge gaps declarative memory cannot fill and (4) the
        skill gaps procedural memory has no strategy for (both inside ``anticipate``),
        (5) lay out its open subgoals as steps, each with the strategy memory ranks
        first for it and the gaps (and conflicts) that block it, and (6) update the
        goal: ``blocking_on`` the remaining gaps, ``last_worked`` now. The caller
        executes the achievable steps and reports with ``update_progress``."""
        scope = self._scope(user_id, agent_id)
        key = check_id(goal_id, "goal_id")
        kwargs = {"user_id": scope.user_id, "agent_id": scope.agent_id}
        await self.decompose_goal(key, **kwargs)
        anticipation = await self.anticipate(key, **kwargs)
        storage = await self._ready()
        goal, tasks = await self._run(self._tasks, storage, scope, key)
        steps: list[PlanStep] = []
        for task in tasks or [goal]:
            strategy = await self._best_strategy(scope, task.description)
            blocked = [
                str(g)
                for g in anticipation.knowledge_gaps
                if g.goal_id == task.id or mentions(task.description, g.topic)
            ]
            blocked += [str(g) for g in anticipation.skill_gaps if g.goal_id == task.id]
            blocked += [f"conflict: {c.detail}" for c in task.conflicts]
            steps.append(
                PlanStep(
                    task,
                    strategy[0] if strategy else None,
                    strategy[1] if strategy else None,
                    strategy[2] if strategy else [],
                    blocked,
                )
            )
        blocking = anticipation.all_gaps() + [f"conflict: {c.detail}" for c in goal.conflicts]
        now = self._clock()

        def write() -> Goal:
            with storage.transaction():
                current = self._open_goal(storage, scope, key)
                current.blocking_on = list(dict.fromkeys(blocking))
                current.last_worked = current.updated_at = now
                storage.goals.put([current])
                goal_event(storage, scope, EventType.GOAL_WORKED, current, now)
                return current

        updated = await self._run(write)
        logger.info(
            "pursue_goal: %s, %d steps, %d achievable",
            key,
            len(steps),
            sum(s.achievable for s in steps),
        )
        return GoalPlan(updated, steps, anticipation)

    # -- the competence seam ---------------------------------------------------------

    async def _task_competence(self, scope: Scope, task: str) -> SkillEstimate:
        """How well the agent does ``task``: the self-model's record of the capability
        the task names (``introspect``) when it holds attempts of it (their success
        rate and the low end of its credible interval), else the record of the
        strategy ``strategies_for`` ranks first (a strategy or workflow at least
        ``ProcedureConfig.has_strategy_relevance`` related). The strategy found is
        named either way."""
        kwargs = {"user_id": scope.user_id, "agent_id": scope.agent_id}
        matches = await self.strategies_for(task, limit=5, **kwargs)
        floor = self.config.procedures.has_strategy_relevance
        usable = [m for m in matches if not m.is_pitfall and m.relevance >= floor]
        strategy_id = usable[0].procedure.id if usable else None
        known = await self.introspect(task, **kwargs)
        if known.source == "self_model":
            return SkillEstimate(
                task, known.actual_rate, known.low, known.sample_size, strategy_id, "self_model"
            )
        if not usable:
            return SkillEstimate(task, None, 0.0, 0, None)
        best = usable[0]
        applied = best.procedure.execution_count
        rate = best.procedure.success_count / applied if applied else None
        return SkillEstimate(task, rate, best.lower_bound, applied, strategy_id)

    def _priority_candidates(self, storage: Storage, scope: Scope) -> list[LearningPriority]:
        """The self-model's candidates and the gaps that block active goals: each
        knowledge or skill gap in a goal's ``blocking_on`` (left by ``pursue_goal``;
        conflicts are the user's to settle, not something to learn), at the priority of
        the most important goal it blocks (storage thread)."""
        out = super()._priority_candidates(storage, scope)
        blocked: dict[str, list[Goal]] = {}
        active = storage.goals.list(
            scope, statuses=[GoalStatus.ACTIVE], limit=self.config.goals.max_open
        )
        for goal in active:
            for gap in goal.blocking_on:
                if gap.startswith(("knowledge: ", "skill: ")):
                    blocked.setdefault(gap, []).append(goal)
        for gap, goals in blocked.items():
            top = max(goals, key=lambda g: g.priority)
            out.append(
                LearningPriority(
                    "goal_gap",
                    f"Goal blocked: {top.description} needs {gap}",
                    top.priority,
                    {"gap": gap, "goal_ids": [g.id for g in goals]},
                )
            )
        return out

    # -- helpers ---------------------------------------------------------------------

    async def _best_strategy(self, scope: Scope, task: str) -> tuple[str, str, list[str]] | None:
        """(id, title, steps) of the strategy ranked first for ``task``, or None."""
        matches = await self.strategies_for(
            task, limit=5, user_id=scope.user_id, agent_id=scope.agent_id
        )
        floor = self.config.procedures.has_strategy_relevance
        for match in matches:
            if not match.is_pitfall and match.relevance >= floor:
                p = match.procedure
                return p.id, p.name, [s.description for s in p.steps]
        return None

    def _open_goal(self, storage: Storage, scope: Scope, goal_id: str) -> Goal:
        goal = storage.goals.get(scope, goal_id)
        if goal is None:
            raise NotFoundError("goal", goal_id)
        if not goal.is_open:
            raise ValidationError(f"goal {goal_id} is {goal.status.value}; it cannot change")
        return goal

    def _tasks(self, storage: Storage, scope: Scope, goal_id: str) -> tuple[Goal, list[Goal]]:
        """A goal and its open subgoals that have no subgoals of their own, in order."""
        goal = storage.goals.get(scope, goal_id)
        if goal is None:
            raise NotFoundError("goal", goal_id)
        leaves: list[Goal] = []
        pending = list(reversed(goal.subgoals))
        seen: set[str] = set()
        while pending and len(seen) < 10_000:
            found = storage.goals.get(scope, pending.pop())
            if found is None or found.id in seen:
                continue
            seen.add(found.id)
            if found.subgoals:
                pending += list(reversed(found.subgoals))
            elif found.is_open:
                leaves.append(found)
        return goal, leaves

    async def _reconcile_goals(self, scope: Scope, about: Sequence[str] | None = None) -> None:
        """Suspend the open goals memory contradicts and resume those it no longer
        does (module docstring); ``about``: the texts just written, when only the goals
        they name can have changed. Nothing to do for a scope without open goals."""
        storage = await self._ready()
        changed = await self._run(
            check_goals, storage, scope, self.config.goals, self._clock(), about
        )
        for goal in changed:
            if goal.status is GoalStatus.SUSPENDED:
                logger.warning(
                    "goal %s suspended: memory contradicts it (%s)",
                    goal.id,
                    "; ".join(c.detail for c in goal.conflicts),
                )
            else:
                logger.info("goal %s resumed: nothing contradicts it any more", goal.id)


def _steps(values: object, limits: LimitsConfig) -> list[str]:
    """Subgoal texts: a list of 1 to 12 distinct non-empty texts."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ValidationError("steps must be a list of texts")
    if not 1 <= len(values) <= _MAX_STEPS:
        raise ValidationError(f"steps must hold 1 to {_MAX_STEPS} texts")
    texts = [check_content(v, limits, "step") for v in values]
    return list(dict.fromkeys(t.strip() for t in texts))
