"""Seed 000's post-interaction learning: ``post_interaction`` updates every paradigm
after one interaction, in one transaction.

What one call writes (each change with its event, all or nothing):

1. declarative: the experience record ("Handled query '...': successful"), in the
   experience bank, with the outcome in its metadata (``should_attempt`` reads the
   ``success`` flag of past experiences); each stated preference through the opinion
   bank, which forms an opinion at 0.6 or reinforces, weakens or replaces the current
   one on its topic by the evolution rules (as ``retain(bank="opinion")``);
2. procedural: the used strategy's statistics (``strategy_id``) and the strategies or
   pitfalls the ``trajectory`` teaches (as ``learn_from_trajectory``, in ``domain``);
3. predictive: the world model observes ``action`` (default the capability) in
   ``context`` leading to ``observed_outcome`` (default success or failure); the
   self-model records an attempt of ``capability`` (default the domain) with the
   ``predicted`` success probability (calibration) and the failure reason as a failure
   mode; the goal (``goal_id``) moves by ``progress_delta`` and is completed when a
   success takes it to 1.0;
4. across paradigms: a failure reason the capability had not failed by before is a
   novel failure mode, recorded as an experience too ("Discovered failure mode in ...",
   salience 0.8).

Everything that can fail before the write does (validation, the content guard,
distillation, embeddings), and the write is one storage transaction, so an error at
any point leaves nothing of the call. After it commits, the world model's transitions
that became reliable enough are promoted to world facts (as after every outcome),
statements a preference revised in part are split, and goals are checked against what
was said, as after ``observe``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ucma.engine.base import _initial_retention
from ucma.engine.episodes import _Prepared, _Staged, _Written
from ucma.engine.goal_upkeep import goal_event, roll_up
from ucma.engine.strategies import _domain, _TrajectoryPlan
from ucma.engine.synthesis import Synthesizer
from ucma.errors import NotFoundError, ValidationError
from ucma.events.log import EventType
from ucma.learning.procedures import record_execution
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.paradigms.predictive_evidence import (
    check_context,
    check_label,
    observe_transition,
    record_attempt,
)
from ucma.paradigms.predictive_records import Competence, Transition
from ucma.paradigms.synthesis_records import InteractionLearning
from ucma.paradigms.world_model import FAILURE, SUCCESS
from ucma.storage.base import Storage
from ucma.types import Bank, GraphEdge, MemoryKind, Procedure, Scope
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_strings,
    check_timestamp,
)

__all__ = ["Interactions"]

logger = logging.getLogger(__name__)

_MAX_PREFERENCES = 20
_SUMMARY_CHARS = 200
_EXPERIENCE_SALIENCE = 0.6  # seed 003 R2: a reasonable inference
_FAILURE_SALIENCE = 0.8  # seed 000: the discovered failure mode's record, confidence 0.8


@dataclass(slots=True)
class _Interaction:
    """One interaction checked, guarded and embedded: everything the write needs."""

    scope: Scope
    success: bool
    capability: str
    predicted: float | None
    action: str
    context: dict[str, str]
    outcome: str
    reason: str | None
    strategy_id: str | None
    goal_id: str | None
    delta: float | None
    experience: _Prepared
    failure: _Prepared | None
    vectors: np.ndarray
    preferences: _Staged | None
    plan: _TrajectoryPlan | None


@dataclass(slots=True)
class _Done:
    transition: Transition
    competence: Competence
    novel: bool
    procedure: Procedure | None
    goal: Goal | None
    written: _Written | None
    extracted: list[str]
    events: list[str]


class Interactions(Synthesizer):
    """post_interaction."""

    async def post_interaction(
        self,
        query: str,
        response: str,
        *,
        success: bool,
        quality: float | None = None,
        capability: str | None = None,
        predicted: float | None = None,
        action: str | None = None,
        context: Mapping[str, object] | None = None,
        observed_outcome: str | None = None,
        strategy_id: str | None = None,
        trajectory: Sequence[str] | None = None,
        failure_reason: str | None = None,
        goal_id: str | None = None,
        progress_delta: float | None = None,
        preferences: Sequence[str] | None = None,
        entities: Sequence[str] | None = None,
        domain: str = "general",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> InteractionLearning:
        """Learn from one interaction in every paradigm, in one transaction (seed
        000's post-interaction learning): the experience record, the ``preferences``
        the user stated (opinions formed at 0.6 or moved), the used strategy's
        statistics (``strategy_id``) and what the ``trajectory`` (the steps taken)
        teaches in ``domain``, the world model (``action``, default the capability,
        in ``context``, led to ``observed_outcome``, default success or failure), the
        self-model (an attempt of ``capability``, default the domain, after
        ``predicted`` success probability; ``failure_reason`` a failure mode, a new
        one recorded as an experience too), and the goal ``goal_id`` (moved by
        ``progress_delta``, completed when a success takes it to 1). ``quality`` in
        [0, 1] and ``entities`` (who or what it involved) go with the experience.

        All of it or nothing: any error leaves no trace of the call. Afterwards,
        transitions reliable enough become world facts. Returns what changed and the
        types of the events written."""
        item = await self._check_interaction(
            query,
            response,
            success=success,
            quality=quality,
            capability=capability,
            predicted=predicted,
            action=action,
            context=context,
            observed_outcome=observed_outcome,
            strategy_id=strategy_id,
            trajectory=trajectory,
            failure_reason=failure_reason,
            goal_id=goal_id,
            progress_delta=progress_delta,
            preferences=preferences,
            entities=entities,
            domain=domain,
            user_id=user_id,
            agent_id=agent_id,
        )
        scope = item.scope
        storage = await self._ready()
        now = self._clock()
        done = await self._run(self._learn, storage, item, now)
        experience = item.experience
        self._last_episode[(scope, experience.session_id)] = (
            item.failure.id if item.failure is not None and done.novel else experience.id
        )
        self._names.pop(scope, None)
        opinions: list[str] = []
        if item.preferences is not None and done.written is not None:
            await self._settle_observations(scope, item.preferences, done.written, now)
            opinions = list(dict.fromkeys(o.id for o in done.written.opinions))
        promoted = await self._promote_patterns(scope)
        strategy = done.procedure.id if done.procedure is not None else None
        logger.info(
            "post_interaction: %s (%s), %d events, %d promoted",
            experience.id,
            "success" if item.success else "failure",
            len(done.events),
            len(promoted),
        )
        return InteractionLearning(
            experience_id=experience.id,
            opinions=tuple(opinions),
            strategy_id=strategy or (done.extracted[0] if done.extracted else None),
            strategies_extracted=tuple(done.extracted),
            transition=done.transition,
            competence=done.competence,
            goal=done.goal,
            failure_mode_added=done.novel,
            failure_experience_id=item.failure.id if done.novel and item.failure else None,
            promoted_fact_ids=tuple(promoted),
            events=tuple(done.events),
        )

    async def _check_interaction(
        self,
        query: object,
        response: object,
        *,
        success: object,
        quality: object,
        capability: object,
        predicted: object,
        action: object,
        context: object,
        observed_outcome: object,
        strategy_id: object,
        trajectory: object,
        failure_reason: object,
        goal_id: object,
        progress_delta: object,
        preferences: object,
        entities: object,
        domain: object,
        user_id: str | None,
        agent_id: str | None,
    ) -> _Interaction:
        """Validate, guard, distil and embed: everything before the write."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        text = check_content(query, limits, "query")
        reply = check_content(response, limits, "response")
        level = None if quality is None else check_fraction(quality, "quality")
        area = _domain(domain)
        name = area if capability is None else check_label(capability, "capability")
        chance = None if predicted is None else check_fraction(predicted, "predicted")
        verb = name if action is None else check_label(action, "action")
        conditions = check_context(context)
        if observed_outcome is None:
            outcome = SUCCESS if success else FAILURE
        else:
            outcome = check_label(observed_outcome, "observed_outcome")
        procedure_key = None if strategy_id is None else check_id(strategy_id, "strategy_id")
        reason = None
        if failure_reason is not None:
            if success:
                raise ValidationError("failure_reason is for a failed interaction only")
            reason = check_content(failure_reason, limits, "failure_reason")
        steps: list[str] = []
        if trajectory is not None:
            _, steps, _ = self._check_trajectory(text, trajectory, success, None)
        goal_key = None if goal_id is None else check_id(goal_id, "goal_id")
        delta = None
        if progress_delta is not None:
            if goal_key is None:
                raise ValidationError("progress_delta needs the goal_id it moves")
            delta = check_timestamp(progress_delta, "progress_delta")
            if not -1.0 <= delta <= 1.0:
                raise ValidationError("progress_delta must be in [-1, 1]")
        stated = _texts(preferences, "preferences", _MAX_PREFERENCES)
        stated = [check_content(p, limits, f"preferences[{i}]") for i, p in enumerate(stated)]
        names = check_strings(_texts(entities, "entities", 100), "entities")

        # The content guard over every text written (preferences: in their staging).
        excerpt = reply[: self.config.synthesis.response_chars]
        pairs = [t for pair in conditions.items() for t in pair]
        texts = [text, excerpt, name, verb, outcome, *pairs, *steps]
        where = ["query", "response", "capability", "action", "observed_outcome"]
        where += ["context"] * len(pairs) + ["trajectory"] * len(steps)
        if reason is not None:
            texts.append(reason)
            where.append("failure_reason")
        guarded = await self._guard(scope, texts, where)
        text, excerpt, name, verb, outcome = guarded[:5]
        pairs = guarded[5 : 5 + len(pairs)]
        conditions = {pairs[i]: pairs[i + 1] for i in range(0, len(pairs), 2)}
        steps = guarded[5 + len(pairs) : 5 + len(pairs) + len(steps)]
        if reason is not None:
            reason = guarded[-1]

        now = self._clock()
        summary = text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 3] + "..."
        said = f"Handled query '{summary}': {'successful' if success else 'unsuccessful'}"
        if reason is not None:
            said += f" ({reason})"
        metadata: dict[str, object] = {
            "interaction": True,
            "success": success,
            "capability": name,
            "action": verb,
            "outcome": outcome,
            "response": excerpt,
        }
        for key, value in (("quality", level), ("predicted", chance)):
            if value is not None:
                metadata[key] = value
        for key, ident in (("strategy_id", procedure_key), ("goal_id", goal_key)):
            if ident is not None:
                metadata[key] = ident
        participants = ["agent", *(n for n in names if n != "agent")]
        experience = self._prepare_observation(
            {
                "content": said,
                "metadata": metadata,
                "participants": participants,
                "tags": ["experience", "interaction"],
                "bank": Bank.EXPERIENCE,
                "salience": _EXPERIENCE_SALIENCE,
            },
            "agent",
            scope,
            now,
        )
        failure = None
        if reason is not None:
            failure = self._prepare_observation(
                {
                    "content": f"Discovered failure mode in {name}: {reason}",
                    "metadata": {"capability": name, "failure_mode": reason},
                    "participants": participants,
                    "tags": ["experience", "failure_mode"],
                    "bank": Bank.EXPERIENCE,
                    "salience": _FAILURE_SALIENCE,
                    "session_id": experience.session_id,
                },
                "agent",
                scope,
                now,
            )
        records = [experience] + ([failure] if failure is not None else [])
        vectors = await self._embed([p.content for p in records])

        staged = None
        if stated:
            floor = self.config.episodic.min_importance_to_store + 1e-6
            prepared = []
            for statement in stated:
                p = self._prepare_observation(
                    {
                        "content": statement,
                        "bank": Bank.OPINION,
                        "salience": max(self.config.opinions.initial_confidence, floor),
                        "session_id": experience.session_id,
                    },
                    "user",
                    scope,
                    now,
                )
                p.opinion = (None, None)  # formed at OpinionConfig.initial_confidence (0.6)
                prepared.append(p)
            staged = await self._stage_observations(scope, prepared, now)

        plan = None
        if steps:
            plan = await self._plan_trajectory(scope, text, steps, success, reason, area, [])
        return _Interaction(
            scope=scope,
            success=success,
            capability=name,
            predicted=chance,
            action=verb,
            context=conditions,
            outcome=outcome,
            reason=reason,
            strategy_id=procedure_key,
            goal_id=goal_key,
            delta=delta,
            experience=experience,
            failure=failure,
            vectors=vectors,
            preferences=staged,
            plan=plan,
        )

    def _learn(self, storage: Storage, item: _Interaction, now: float) -> _Done:
        """Every write of one interaction, in one transaction (storage thread)."""
        scope = item.scope
        cfg = self.config
        source = f"interaction {item.experience.id}"
        with storage.transaction():
            newest = storage.events.list(scope, newest_first=True, limit=1)
            start = newest[0].seq if newest else 0
            # The statements first: what they are compared with is searched before this
            # transaction has written other vectors of the scope (a search inside a
            # transaction that wrote some reads the scope through it, uncached).
            written, previous = None, None
            if item.preferences is not None:
                written = self._write_staged(storage, scope, item.preferences, now)
                said = [written.merged.get(p.id, p.id) for p in item.preferences.stored]
                previous = said[-1] if said else None
            self._write_record(storage, scope, item.experience, item.vectors[0], now, previous)
            procedure = None
            if item.strategy_id is not None:
                found = storage.memories.get(scope, item.strategy_id)
                if not isinstance(found, Procedure):
                    raise NotFoundError(MemoryKind.PROCEDURAL.value, item.strategy_id)
                procedure = record_execution(
                    storage,
                    scope,
                    found,
                    item.success,
                    now,
                    cfg.procedures,
                    failure_reason=item.reason,
                )
            extracted: list[str] = []
            if item.plan is not None:
                kept, _, _ = self._keep_items(storage, scope, item.plan, now, False)
                extracted = [p.id for p in kept]
            transition = observe_transition(
                storage, scope, item.action, item.context, item.outcome, source, now
            )
            competence, novel = record_attempt(
                storage,
                scope,
                item.capability,
                item.success,
                item.predicted,
                source,
                item.reason,
                now,
                cfg.predictive,
            )
            goal = None
            if item.goal_id is not None:
                goal = self._work_on_goal(storage, scope, item.goal_id, item, now)
            if novel and item.failure is not None:
                self._write_record(
                    storage, scope, item.failure, item.vectors[1], now, item.experience.id
                )
            events = [e.type for e in storage.events.list(scope, after_seq=start)]
        return _Done(transition, competence, novel, procedure, goal, written, extracted, events)

    def _write_record(
        self,
        storage: Storage,
        scope: Scope,
        p: _Prepared,
        vector: np.ndarray,
        now: float,
        previous: str | None,
    ) -> None:
        """Store one of the agent's own records as it is: no claims read from it (it
        quotes the query; it states nothing of the world) and no de-duplication (each
        interaction is evidence of its own, counted by ``should_attempt``). It follows
        ``previous`` in its session (written in this transaction), else the session's
        last episode."""
        episode = self._episode(scope, p, now)
        if previous is not None:
            weight = self.config.graph.session_edge_weight
            edges = [GraphEdge(previous, p.id, "followed_by", weight, p.timestamp)]
        else:
            edges = self._session_edges(storage, scope, [p], {})
        storage.episodes.add([episode], vector[None, :])
        storage.retention.put_many(scope, [_initial_retention(episode, now)])
        if edges:
            storage.graph.add_edges(scope, edges)

    def _work_on_goal(
        self, storage: Storage, scope: Scope, goal_id: str, item: _Interaction, now: float
    ) -> Goal:
        """The goal worked on: progress moved by the delta, ``last_worked`` now, and
        completed when a success takes it to 1.0 (seed 000); parents rolled up."""
        goal = self._open_goal(storage, scope, goal_id)
        if item.delta is not None and goal.subgoals:
            raise ValidationError(f"goal {goal_id} has subgoals; its progress comes from theirs")
        goal.last_worked = goal.updated_at = now
        if item.delta is None:
            storage.goals.put([goal])
            goal_event(storage, scope, EventType.GOAL_WORKED, goal, now)
            return goal
        goal.progress = min(1.0, max(0.0, goal.progress + item.delta))
        if item.success and goal.progress >= 1.0:
            goal.status, goal.completed_at = GoalStatus.COMPLETED, now
        storage.goals.put([goal])
        goal_event(storage, scope, EventType.GOAL_PROGRESSED, goal, now)
        roll_up(storage, scope, goal, now)
        return goal


def _texts(values: object, name: str, limit: int) -> list[object]:
    """A list of at most ``limit`` items (checked as texts by the caller)."""
    if values is None:
        return []
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ValidationError(f"{name} must be a list of texts")
    if len(values) > limit:
        raise ValidationError(f"{name} has {len(values)} items; the limit is {limit}")
    return list(values)
