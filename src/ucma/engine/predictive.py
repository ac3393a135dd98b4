"""Seed 000's predictive paradigm: the world model (``observe_transition``,
``simulate``, ``transitions``), the self-model (``record_competence``, ``introspect``,
``competences``), competence-aware help-seeking (``should_attempt``, composition
pattern 3) and proactive gap detection (``learning_priorities``, pattern 4). The
maths is in ``ucma.paradigms`` (``world_model``, ``self_model``, ``help_seeking``,
``posterior``); the writes and their events in ``ucma.paradigms.predictive_evidence``.

Both models learn from what the agent records anyway: a decision's outcome
(``outcome``) and a trajectory (``learn_from_trajectory``) update them in the same
transaction, and a strategy's failure reason becomes a failure mode of its domain.
After each of those writes, transitions that have become reliable enough are promoted
to world facts (``world.pattern_promoted``).
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Mapping, Sequence

import numpy as np

from ucma.engine.learning import LearningLoop
from ucma.engine.strategies import Strategies
from ucma.errors import ValidationError
from ucma.events.log import EventType, record
from ucma.learning.records import OutcomeReport, OutcomeSignal
from ucma.paradigms import world_model
from ucma.paradigms.help_seeking import WEIGHTS, help_decision, rank_priorities
from ucma.paradigms.predictive_evidence import (
    check_context,
    check_label,
    observe_transition,
    record_attempt,
)
from ucma.paradigms.predictive_records import (
    AttemptAdvice,
    Competence,
    Introspection,
    LearningPriority,
    Simulation,
    Transition,
)
from ucma.paradigms.procedural import success_rate
from ucma.paradigms.self_model import (
    content_stems,
    estimate,
    is_weak,
    measured,
    mode_applies,
)
from ucma.storage.base import Storage
from ucma.types import (
    Bank,
    Condition,
    Episode,
    MemoryKind,
    ProcedureType,
    Provenance,
    Scope,
    StrategyMatch,
    TrajectoryLearning,
)
from ucma.validation import check_content, check_fraction, check_limit, check_offset

__all__ = ["Predictive"]

logger = logging.getLogger(__name__)

_WIDE = 0.3  # an accuracy interval wider than this earns a caveat
_GAP = 0.1  # a calibration gap larger than this earns a caveat
_EXPERIENCES = 10  # past experiences should_attempt reads (seed 000: limit=10)
_STRATEGIES = 10


class Predictive(Strategies, LearningLoop):
    """observe_transition, simulate, transitions, record_competence, introspect,
    competences, should_attempt, learning_priorities; outcome and
    learn_from_trajectory promote reliable patterns after they write."""

    # -- the world model ---------------------------------------------------------

    async def observe_transition(
        self,
        action: str,
        outcome: str,
        *,
        context: Mapping[str, object] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Transition:
        """Record that doing ``action`` while ``context`` held (conditions to values:
        ``{"logged in": True, "site": "shop"}``) led to ``outcome``. The transition of
        that outcome is confirmed and the action's other outcomes in that context count
        an error, so their reliabilities move. A transition that becomes reliable
        enough (``PredictiveConfig.promote_above`` after ``promote_min_support``
        observations) is stated as a world fact. Returns the confirmed transition."""
        scope = self._scope(user_id, agent_id)
        verb = check_label(action, "action")
        result = check_label(outcome, "outcome")
        conditions = check_context(context)
        texts = [verb, result, *(t for pair in conditions.items() for t in pair)]
        where = ["action", "outcome", *(["context"] * (2 * len(conditions)))]
        guarded = await self._guard(scope, texts, where)
        verb, result = guarded[0], guarded[1]
        pairs = guarded[2:]
        conditions = {pairs[i]: pairs[i + 1] for i in range(0, len(pairs), 2)}
        storage = await self._ready()
        now = self._clock()

        def write() -> Transition:
            with storage.transaction():
                return observe_transition(storage, scope, verb, conditions, result, "caller", now)

        transition = await self._run(write)
        logger.info(
            "observe_transition: %s (%d confirmations, %d errors)",
            transition.id,
            transition.confirmations,
            transition.errors,
        )
        await self._promote_patterns(scope)
        return await self._run(storage.predictive.get_transition, scope, transition.id) or (
            transition
        )

    async def transitions(
        self,
        *,
        action: str | None = None,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[Transition]:
        """The world model's transitions, most observed first (of one action when
        given), each with its confirmations, errors and reliability."""
        scope = self._scope(user_id, agent_id)
        verb = check_label(action, "action") if action is not None else None
        count = check_limit(limit, 10_000)
        storage = await self._ready()
        found = await self._run(
            storage.predictive.transitions,
            scope,
            action=verb,
            limit=count,
            offset=check_offset(offset),
        )
        logger.info("transitions: %d (user=%s)", len(found), scope.user_id)
        return found

    async def simulate(
        self,
        action: str,
        context: Mapping[str, object] | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Simulation:
        """What doing ``action`` while ``context`` holds will lead to: each outcome
        observed with its probability and credible interval, the chance of something
        never seen, a ``confidence`` that is low when there is little evidence, the
        transitions used and the caveats (seed 000: "what will happen if I submit this
        form?"). Observations in the same context count fully, in a compatible context
        (one that says less or more) in part, in a contradicting one not at all."""
        scope = self._scope(user_id, agent_id)
        verb = check_label(action, "action")
        conditions = check_context(context)
        storage = await self._ready()
        found = await self._run(
            storage.predictive.transitions,
            scope,
            action=verb,
            limit=self.config.predictive.max_transitions,
        )
        result = world_model.simulate(verb, conditions, found, self.config.predictive.interval)
        logger.info(
            "simulate: %s -> %s (%.2f, support %.1f)",
            verb,
            result.predicted,
            result.confidence,
            result.support,
        )
        return result

    async def _promote_patterns(self, scope: Scope) -> builtins.list[str]:
        """State every newly reliable transition as a world fact (seed 000: a pattern
        above 0.9 confidence becomes declarative knowledge); returns the fact ids."""
        cfg = self.config.predictive
        storage = await self._ready()
        ready = await self._run(
            storage.predictive.promotable, scope, cfg.promote_above, cfg.promote_min_support
        )
        facts = []
        for transition in ready:
            subject, predicate, statement = world_model.pattern_fact(transition)
            fact = await self.assert_fact(
                subject,
                predicate,
                statement,
                confidence=transition.reliability,
                provenance=Provenance.INFERRED,
                metadata={"transition_id": transition.id, "context": dict(transition.context)},
                user_id=scope.user_id,
                agent_id=scope.agent_id,
            )
            marked = await self._run(
                _mark_promoted, storage, scope, transition.id, fact.id, self._clock()
            )
            if marked:
                facts.append(fact.id)
                logger.info("promoted transition %s to fact %s", transition.id, fact.id)
        return facts

    # -- the self-model ----------------------------------------------------------

    async def record_competence(
        self,
        capability: str,
        success: bool,
        *,
        predicted: float | None = None,
        failure_reason: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Competence:
        """Record one attempt of ``capability`` (a kind of task: "sql queries") and
        whether it succeeded; ``predicted`` is the success probability you expected
        before it (calibration), ``failure_reason`` a way it failed (a failure mode).
        Decisions' outcomes and trajectories record attempts without this call."""
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        scope = self._scope(user_id, agent_id)
        name = check_label(capability, "capability")
        chance = check_fraction(predicted, "predicted") if predicted is not None else None
        reason = None
        if failure_reason is not None:
            if success:
                raise ValidationError("failure_reason is for a failed attempt only")
            reason = check_content(failure_reason, self.config.limits, "failure_reason")
        texts = [name] + ([reason] if reason else [])
        guarded = await self._guard(scope, texts, ["capability", "failure_reason"][: len(texts)])
        name, reason = guarded[0], (guarded[1] if reason else None)
        storage = await self._ready()
        now = self._clock()
        cfg = self.config.predictive

        def write() -> Competence:
            with storage.transaction():
                competence, _ = record_attempt(
                    storage, scope, name, success, chance, "caller", reason, now, cfg
                )
                return competence

        competence = await self._run(write)
        logger.info(
            "record_competence: %s %d of %d",
            competence.id,
            competence.successes,
            competence.attempts,
        )
        return competence

    async def competences(
        self,
        *,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[Competence]:
        """The self-model: every capability with its attempts, successes, calibration
        and failure modes, most attempted first."""
        scope = self._scope(user_id, agent_id)
        count = check_limit(limit, 10_000)
        storage = await self._ready()
        found = await self._run(
            storage.predictive.competences, scope, limit=count, offset=check_offset(offset)
        )
        logger.info("competences: %d (user=%s)", len(found), scope.user_id)
        return found

    async def introspect(
        self,
        task: str,
        *,
        capability: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Introspection:
        """Am I good at this? The estimated accuracy at the capability ``task``
        needs, with its sample size and credible interval, the calibration of past
        predictions, the known failure modes, the weak domains and the evidence.

        ``capability`` names it; without it, the capability whose words all appear in
        the task, stemmed ("Am I good at SQL queries?" finds "sql"; "deploys" is in
        "deploy main"), else the one closest in meaning
        (``PredictiveConfig.min_capability_cosine``). With no recorded attempt the
        domain's strategies' applications stand in (seed 000 flow 5); with neither, the
        answer is the uniform prior, 0.5, said as such."""
        scope = self._scope(user_id, agent_id)
        text = check_content(task, self.config.limits, "task")
        name = check_label(capability, "capability") if capability is not None else None
        storage = await self._ready()
        known = await self._run(storage.predictive.competences, scope, limit=10_000)
        return await self._introspect(scope, text, name, known)

    async def _introspect(
        self,
        scope: Scope,
        text: str,
        name: str | None,
        known: Sequence[Competence],
        vectors: np.ndarray | None = None,
    ) -> Introspection:
        """``introspect`` over the scope's competences ``known`` (``vectors``: their
        capabilities' query vectors, when the caller has them)."""
        storage = await self._ready()
        chosen = name if name is not None else await self._capability_of(text, known, vectors)
        result = await self._run(self._introspection, storage, scope, text, chosen, known)
        logger.info(
            "introspect: %s %.2f over %d (%s)",
            result.capability,
            result.estimated_accuracy,
            result.sample_size,
            result.source,
        )
        return result

    async def _capability_of(
        self, task: str, known: Sequence[Competence], vectors: np.ndarray | None = None
    ) -> str | None:
        if not known:
            return None
        words = content_stems(task)
        contained = [c for c in known if content_stems(c.capability) <= words]
        if contained:
            best = max(contained, key=lambda c: (len(content_stems(c.capability)), c.attempts))
            return best.capability
        [query] = await self._embed_queries([task])
        if vectors is None:
            vectors = await self._embed_queries([c.capability for c in known])
        scores = vectors @ query
        top = int(np.argmax(scores))
        if float(scores[top]) < self.config.predictive.min_capability_cosine:
            return None
        return known[top].capability

    def _introspection(
        self,
        storage: Storage,
        scope: Scope,
        task: str,
        capability: str | None,
        known: Sequence[Competence],
    ) -> Introspection:
        cfg = self.config.predictive
        key = world_model.normal(capability) if capability is not None else None
        found = next((c for c in known if world_model.normal(c.capability) == key), None)
        applications = successes = 0
        if key is not None:
            for procedure in storage.procedures.in_domain(scope, key, limit=10_000):
                if procedure.procedure_type is not ProcedureType.PITFALL:
                    applications += procedure.execution_count
                    successes += procedure.success_count
        if found is not None and found.attempts > 0:
            source, accuracy = "self_model", estimate(found.successes, found.attempts, cfg.interval)
        elif applications > 0:
            source, accuracy = "strategies", estimate(successes, applications, cfg.interval)
        else:
            source, accuracy = "none", estimate(0, 0, cfg.interval)
        weak = tuple(c.capability for c in known if is_weak(c.successes, c.attempts, cfg))
        counts = measured(found, cfg) if found is not None else None
        mean_predicted = counts.mean_predicted if counts is not None else None
        actual = counts.actual_rate if counts is not None else None
        caveats = []
        if source == "none":
            caveats.append("no recorded attempt: 0.5 is the prior, not a measurement")
        elif accuracy.width > _WIDE:
            caveats.append(
                f"few attempts ({accuracy.support:g}): accuracy between {accuracy.low:.2f} "
                f"and {accuracy.high:.2f}"
            )
        if source == "strategies":
            caveats.append("estimated from the domain's strategies' applications")
        if mean_predicted is not None and actual is not None:
            gap = mean_predicted - actual
            if abs(gap) > _GAP:
                side = "overconfident" if gap > 0 else "underconfident"
                caveats.append(f"past predictions were {side} by {abs(gap):.2f}")
        if capability is not None and capability in weak:
            caveats.append(f"{capability} is a weak domain")
        return Introspection(
            task=task,
            capability=found.capability if found is not None else capability,
            estimated_accuracy=accuracy.mean,
            low=accuracy.low,
            high=accuracy.high,
            sample_size=int(accuracy.support),
            confidence_in_estimate=1.0 - accuracy.width,
            source=source,
            actual_rate=actual,
            mean_predicted=mean_predicted,
            calibration_error=counts.calibration_error if counts is not None else None,
            brier=counts.brier if counts is not None else None,
            known_failure_modes=tuple(found.failure_modes) if found is not None else (),
            weak_domains=weak,
            strategy_applications=applications,
            strategy_successes=successes,
            evidence=tuple(found.evidence) if found is not None else (),
            caveats=tuple(caveats),
        )

    # -- composition patterns 3 and 4 ----------------------------------------------

    async def should_attempt(
        self,
        task: str,
        *,
        capability: str | None = None,
        action: str | None = None,
        context: Mapping[str, object] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> AttemptAdvice:
        """Attempt ``task``, attempt it with a caveat, ask for help, or decline (seed
        000 pattern 3), with every input used:

        0.30 x competence (``introspect``) + 0.25 x the success rate of past
        experiences like it (experience-bank memories with a ``success`` flag, 0.5
        without) + 0.25 x the best applicable strategy's success rate (0.5 untried or
        none) + 0.20 x the simulated chance that attempting succeeds (``simulate`` of
        ``action``, default the capability, in ``context``; 0.5 without evidence),
        minus 0.1 per known failure mode of the capability that applies to the task;
        above 0.75 attempt, above 0.5 with a caveat, above 0.25 ask, else decline."""
        scope = self._scope(user_id, agent_id)
        text = check_content(task, self.config.limits, "task")
        conditions = check_context(context)
        verb = check_label(action, "action") if action is not None else None
        introspection = await self.introspect(
            text, capability=capability, user_id=scope.user_id, agent_id=scope.agent_id
        )
        verb = verb or introspection.capability
        simulation = None
        if verb is not None:
            simulation = await self.simulate(
                verb, conditions, user_id=scope.user_id, agent_id=scope.agent_id
            )
        [vector] = await self._embed_queries([text])
        past = await self._past_success_rate(scope, vector)
        matches = await self.strategies_for(
            text, limit=_STRATEGIES, user_id=scope.user_id, agent_id=scope.agent_id
        )
        return self._advice(text, conditions, introspection, simulation, past, matches)

    def _advice(
        self,
        text: str,
        conditions: Mapping[str, str],
        introspection: Introspection,
        simulation: Simulation | None,
        past: tuple[float, int],
        matches: Sequence[StrategyMatch],
    ) -> AttemptAdvice:
        """Pattern 3's decision from its readings (``should_attempt``, ``synthesize``)."""
        simulated = 0.5 if simulation is None else world_model.success_probability(simulation)
        floor = self.config.procedures.has_strategy_relevance
        usable = [m.procedure for m in matches if not m.is_pitfall and m.relevance >= floor]
        strategy_rate = max((success_rate(p) for p in usable), default=0.5)
        described = " ".join([text, *conditions.values()])
        applied = tuple(
            m.mode for m in introspection.known_failure_modes if mode_applies(m.mode, described)
        )
        inputs = {
            "competence": introspection.estimated_accuracy,
            "past_success_rate": past[0],
            "strategy_success_rate": strategy_rate,
            "simulated_success": simulated,
        }
        score, adjusted, decision = help_decision(inputs, len(applied))
        logger.info("should_attempt: %s (%.3f)", decision.value, adjusted)
        return AttemptAdvice(
            task=text,
            decision=decision,
            score=score,
            adjusted_score=adjusted,
            inputs=inputs,
            weights=dict(WEIGHTS),
            failure_modes_applied=applied,
            capability=introspection.capability,
            experiences_used=past[1],
            strategies_used=len(usable),
            introspection=introspection,
        )

    async def _past_success_rate(self, scope: Scope, vector: np.ndarray) -> tuple[float, int]:
        """Seed 000 pattern 3 step 3: of the experiences most like the task (``vector``)
        that say whether they succeeded, the share that did (0.5 with none)."""
        storage = await self._ready()
        floor = self.config.predictive.experience_relevance

        def read() -> list[bool]:
            hits = storage.memories.vector_search(
                scope, vector, 4 * _EXPERIENCES, kinds=[MemoryKind.EPISODIC]
            )
            close = [(i, s) for i, s in hits if s >= floor]
            records = storage.memories.get_many(scope, [i for i, _ in close])
            results = []
            for memory_id, _ in close:
                found = records.get(memory_id)
                if not isinstance(found, Episode) or found.bank is not Bank.EXPERIENCE:
                    continue
                flag = found.metadata.get("success")
                if isinstance(flag, bool):
                    results.append(flag)
            return results[:_EXPERIENCES]

        results = await self._run(read)
        if not results:
            return 0.5, 0
        return sum(results) / len(results), len(results)

    async def learning_priorities(
        self,
        *,
        limit: int = 10,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[LearningPriority]:
        """What to learn next, highest impact first (seed 000 pattern 4, top 10 by
        default): failure modes seen at least ``PredictiveConfig.recurring_failure_count``
        times (impact 0.1 per occurrence, as in the seed), weak domains (impact 1
        minus the estimated accuracy) and the knowledge and skill gaps that block
        active goals (impact the goal's priority; ``ucma.engine.goals``)."""
        scope = self._scope(user_id, agent_id)
        count = check_limit(limit, 100)
        storage = await self._ready()
        candidates = await self._run(self._priority_candidates, storage, scope)
        ranked = rank_priorities(candidates, count)
        logger.info("learning_priorities: %d of %d", len(ranked), len(candidates))
        return ranked

    def _priority_candidates(self, storage: Storage, scope: Scope) -> list[LearningPriority]:
        """Candidates from the self-model (storage thread). Other sources (goals
        blocked on a gap, uncertain beliefs that bear on them) extend this through
        ``super()``."""
        cfg = self.config.predictive
        out: list[LearningPriority] = []
        for competence in storage.predictive.competences(scope, limit=10_000):
            for mode in competence.failure_modes:
                if mode.count >= cfg.recurring_failure_count:
                    out.append(
                        LearningPriority(
                            "recurring_failure",
                            f"Pattern: {mode.mode} in {competence.capability} "
                            f"(occurred {mode.count} times)",
                            0.1 * mode.count,
                            {"capability": competence.capability, "mode": mode.mode},
                        )
                    )
            if is_weak(competence.successes, competence.attempts, cfg):
                accuracy = estimate(competence.successes, competence.attempts, cfg.interval)
                out.append(
                    LearningPriority(
                        "weak_domain",
                        f"Weak at {competence.capability}: {competence.successes} of "
                        f"{competence.attempts} attempts succeeded",
                        1.0 - accuracy.mean,
                        {"capability": competence.capability},
                    )
                )
        return out

    # -- the writes that feed the models, then promote -----------------------------

    async def outcome(
        self,
        trace_id: str,
        quality: float,
        signal: OutcomeSignal | str,
        feedback: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> OutcomeReport:
        report = await super().outcome(
            trace_id, quality, signal, feedback, user_id=user_id, agent_id=agent_id
        )
        if report.transitions:
            await self._promote_patterns(self._scope(user_id, agent_id))
        return report

    outcome.__doc__ = LearningLoop.outcome.__doc__

    async def learn_from_trajectory(
        self,
        task: str,
        steps: Sequence[str],
        success: bool,
        failure_reason: str | None = None,
        *,
        domain: str = "general",
        context: Sequence[Condition | Mapping[str, str] | str] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> TrajectoryLearning:
        learned = await super().learn_from_trajectory(
            task,
            steps,
            success,
            failure_reason,
            domain=domain,
            context=context,
            user_id=user_id,
            agent_id=agent_id,
        )
        await self._promote_patterns(self._scope(user_id, agent_id))
        return learned

    learn_from_trajectory.__doc__ = Strategies.learn_from_trajectory.__doc__


def _mark_promoted(
    storage: Storage, scope: Scope, transition_id: str, fact_id: str, now: float
) -> bool:
    """Record that a transition is now stated by a fact (once: False when it already
    was, or is gone)."""
    with storage.transaction():
        current = storage.predictive.get_transition(scope, transition_id)
        if current is None or current.promoted_fact_id is not None:
            return False
        current.promoted_fact_id = fact_id
        current.updated_at = now
        storage.predictive.put_transitions([current])
        record(
            storage,
            scope,
            EventType.PATTERN_PROMOTED,
            {
                "transition_id": transition_id,
                "fact_id": fact_id,
                "reliability": current.reliability,
                "support": current.support,
            },
            now,
        )
        return True
