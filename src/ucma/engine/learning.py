"""The outcome learning loop (seed 003; logic in ``ucma.learning``): decisions,
outcomes, traces, the event log and shared patterns."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from ucma.engine.base import _enum, _new_id
from ucma.engine.privacy import PrivacyGuard
from ucma.errors import NotFoundError, ValidationError
from ucma.events.log import (
    Event,
    SalienceProjection,
    StrategyState,
    differences,
    replay_salience,
    replay_strategies,
)
from ucma.learning import causal, patterns
from ucma.learning.decisions import (
    check_quality,
    normalised_memory_scores,
    observe_outcome,
    track_decision,
)
from ucma.learning.records import DecisionTrace, OutcomeReport, OutcomeSignal, SalienceUpdate
from ucma.paradigms.evidence import opinion_state, replay_opinions
from ucma.paradigms.goals import goal_state, replay_goals
from ucma.paradigms.predictive_evidence import (
    check_prediction_metadata,
    live_states,
    replay_predictive,
)
from ucma.storage.base import Storage
from ucma.types import Procedure, ProcedureType, Scope
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_metadata,
    check_strings,
)

__all__ = ["LearningLoop"]

logger = logging.getLogger(__name__)


class LearningLoop(PrivacyGuard):
    """decide, outcome and what they leave behind."""

    # -- learning loop (seed 003) -------------------------------------------------

    async def decide(
        self,
        memory_ids: Sequence[str],
        memory_scores: Sequence[float] | Mapping[str, float] | None = None,
        *,
        decision_type: str = "recommendation",
        summary: str,
        confidence: float = 0.5,
        alternatives_count: int = 0,
        retrieval_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> DecisionTrace:
        """Record a decision and the memories that fed it (seed 003 R9 to R11).

        ``memory_scores`` (one per id, a list in order or a mapping; default
        equal) are normalised to sum 1 with no share below 0.01 (R10, R18).
        Every id must be a memory of the scope (NotFoundError otherwise);
        ``retrieval_id`` (from ``recall``) must be one of its recalls.
        ``summary`` says what was decided, without personal data. Returns the
        trace; pass its ``id`` to ``outcome`` once the result is known.

        The outcome also teaches the world model and the self-model (seed 000):
        ``metadata["capability"]`` (default ``decision_type``) is the capability
        attempted, predicted to succeed at ``confidence`` (or
        ``metadata["predicted_success"]``); ``metadata["action"]`` (default the
        capability) done while ``metadata["context"]`` (conditions to values) held
        leads to success or failure.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        ids = [check_id(m) for m in check_strings(memory_ids, "memory_ids", max_items=100)]
        if not ids:
            raise ValidationError("memory_ids: a decision needs at least one memory")
        scores = normalised_memory_scores(ids, memory_scores, self.config.salience.min_attribution)
        alternatives = alternatives_count
        if isinstance(alternatives, bool) or not isinstance(alternatives, int) or alternatives < 0:
            raise ValidationError("alternatives_count must be an integer >= 0")
        trace = DecisionTrace(
            id=_new_id("trc"),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=self._sessions.get(scope),
            retrieval_id=check_id(retrieval_id, "retrieval_id") if retrieval_id else None,
            memory_scores=scores,
            decision_type=check_id(decision_type, "decision_type"),
            summary=await self._guard_text(
                scope, check_content(summary, limits, "summary"), "summary"
            ),
            confidence=check_fraction(confidence, "confidence"),
            alternatives_count=alternatives,
            created_at=self._clock(),
            metadata=check_metadata(metadata, limits),
        )
        check_prediction_metadata(trace.metadata)
        storage = await self._ready()
        await self._run(track_decision, storage, scope, trace)
        logger.info("decide: %s (%d memories, %s)", trace.id, len(ids), trace.decision_type)
        return trace

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
        """Record how a decision turned out and learn from it (seed 003 R12 to R20).

        ``quality`` is in [-1, 1] (R13); ``signal`` one of R12's signals. Each
        memory of the trace gets salience delta = quality x attribution x
        learning rate x temporal dampening (R17 table), within R16's bounds;
        its retention stability grows or shrinks (R20); procedures update
        their success rate and learnings their validation (seed 000). All of
        it, with its events, is one transaction. Refused (nothing changes)
        with ``OutcomeWindowClosed`` after ``SalienceConfig.outcome_window_days``
        (7) and ``OutcomeAlreadyRecorded`` for a second outcome.
        """
        scope = self._scope(user_id, agent_id)
        tid = check_id(trace_id, "trace_id")
        value = check_quality(quality)
        kind = _enum(OutcomeSignal, signal, "signal")
        text = check_content(feedback, self.config.limits, "feedback") if feedback else None
        if text is not None:
            text = await self._guard_text(scope, text, "feedback")
        storage = await self._ready()
        report = await self._run_transaction(
            observe_outcome,
            storage,
            scope,
            tid,
            value,
            kind,
            text,
            self.config.salience,
            self._clock(),
            self.config.procedures,
            self.config.forgetting.outcome_stability_gain,
            self.config.predictive,
        )
        logger.info(
            "outcome: %s quality %+.2f (%s), %d salience updates",
            tid,
            value,
            kind.value,
            len(report.updates),
        )
        return report

    async def trace(
        self, trace_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> DecisionTrace:
        """One decision trace; NotFoundError if the scope has none with this id."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        found = await self._run(storage.traces.get, scope, check_id(trace_id, "trace_id"))
        if found is None:
            raise NotFoundError("trace", trace_id)
        return found

    async def traces(
        self,
        *,
        observed: bool | None = None,
        decision_type: str | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[DecisionTrace]:
        """Decision traces, newest first; ``observed`` filters on having an outcome."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            functools.partial(
                storage.traces.list,
                scope,
                observed=None if observed is None else bool(observed),
                decision_type=check_id(decision_type, "decision_type") if decision_type else None,
                limit=check_limit(limit, 100_000),
            )
        )

    async def salience_history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[SalienceUpdate]:
        """Every outcome-driven salience change of one memory, oldest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        mid = check_id(memory_id)
        return await self._run(functools.partial(storage.traces.updates, scope, memory_id=mid))

    async def events(
        self,
        *,
        after_seq: int = 0,
        types: Sequence[str] | None = None,
        limit: int = 1000,
        newest_first: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Event]:
        """The scope's event log after ``after_seq``, in order (event sourcing);
        ``newest_first`` gives the latest ``limit`` events, newest first."""
        scope = self._scope(user_id, agent_id)
        if isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0:
            raise ValidationError("after_seq must be an integer >= 0")
        wanted = check_strings(types, "types") or None
        storage = await self._ready()
        return await self._run(
            functools.partial(
                storage.events.list,
                scope,
                after_seq=after_seq,
                types=wanted,
                limit=check_limit(limit, 1_000_000),
                newest_first=newest_first is True,
            )
        )

    async def replay(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> SalienceProjection:
        """Rebuild the scope's state from its events alone and compare it with the
        live records: every memory's outcome adjustment (salience), every opinion's
        confidence, status and successor, every learned strategy or pitfall's
        application count, successes, status, source trajectories, preconditions and
        failure modes, every world-model transition's confirmations, errors and
        promotion, every competence's attempts, successes, predictions and failure
        modes, and every goal's status, progress, subgoals, blocking_on and
        last_worked. ``mismatches`` maps a memory, opinion, transition, competence or
        goal id to the first field that differs (empty: replay equals the live state).
        Changes nothing."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()

        def rebuild() -> SalienceProjection:
            with storage.transaction():  # one consistent state: events and records
                events = storage.events.list(scope)
                records = storage.memories.list(scope, limit=2**62, include_archived=True)
                opinions = storage.opinions.list(scope, limit=2**62)
                live_transitions, live_competences = live_states(storage, scope)
                goals = storage.goals.list(scope, limit=2**62)
            projection = replay_salience(events)
            salience = {i: {"outcome_adjustment": v} for i, v in projection.adjustments.items()}
            live_salience = {r.id: {"outcome_adjustment": r.outcome_adjustment} for r in records}
            rebuilt_opinions = replay_opinions(events)
            live_opinions = {o.id: opinion_state(o) for o in opinions}
            rebuilt_strategies = {
                i: dataclasses.asdict(state) for i, state in replay_strategies(events).items()
            }
            live_strategies = {
                r.id: dataclasses.asdict(StrategyState.of(r))
                for r in records
                if isinstance(r, Procedure) and r.procedure_type is not ProcedureType.WORKFLOW
            }
            transitions, competences = replay_predictive(events)
            for rebuilt, live in (
                (salience, live_salience),
                (rebuilt_opinions, live_opinions),
                (rebuilt_strategies, live_strategies),
                (_as_dicts(transitions), _as_dicts(live_transitions)),
                (_as_dicts(competences), _as_dicts(live_competences)),
                (replay_goals(events), {g.id: goal_state(g) for g in goals}),
            ):
                projection.mismatches.update(differences(rebuilt, live))
            projection.opinions = len(rebuilt_opinions)
            projection.strategies = len(rebuilt_strategies)
            return projection

        return await self._run(rebuild)

    async def memory_influence(
        self,
        *,
        min_decisions: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[causal.MemoryInfluence]:
        """Which memories consistently preceded good outcomes and which misled:
        per memory, decisions with outcomes, mean and attribution-weighted
        quality, and a verdict (helpful / misleading / mixed / insufficient)."""
        scope = self._scope(user_id, agent_id)
        cfg = self.config.patterns
        minimum = (
            cfg.min_decisions
            if min_decisions is None
            else check_limit(min_decisions, 1_000_000, "min_decisions")
        )
        storage = await self._ready()
        traces = await self._run(
            functools.partial(storage.traces.list, scope, observed=True, limit=2**62)
        )
        return causal.memory_influence(
            traces, min_decisions=minimum, threshold=cfg.verdict_threshold
        )

    async def counterfactuals(
        self, trace_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> causal.CounterfactualReport:
        """Similar past decisions whose outcome differed from this trace's, and
        the memories that differed (seed 003 counterfactual analysis)."""
        trace = await self.trace(trace_id, user_id=user_id, agent_id=agent_id)
        if trace.outcome_quality is None:
            raise ValidationError(f"trace {trace_id!r} has no outcome yet; record one first")
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        others = await self._run(storage.traces.involving, scope, trace.memory_ids)
        same_type = await self._run(
            functools.partial(
                storage.traces.list,
                scope,
                observed=True,
                decision_type=trace.decision_type,
                limit=1000,
            )
        )
        seen = {t.id: t for t in [*others, *same_type]}
        return causal.counterfactuals(trace, list(seen.values()))

    async def extract_patterns(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[causal.Pattern]:
        """Clusters of similar memories with consistently good outcomes, each
        summarised by its most central memory and its common terms."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(self._patterns_of, storage, scope)

    def _patterns_of(self, storage: Storage, scope: Scope) -> list[causal.Pattern]:
        cfg = self.config.patterns
        traces = storage.traces.list(scope, observed=True, limit=2**62)
        influence = causal.memory_influence(
            traces, min_decisions=cfg.min_decisions, threshold=cfg.verdict_threshold
        )
        ids = [m.memory_id for m in influence if m.mean_quality > cfg.min_quality]
        records = storage.memories.get_many(scope, ids)
        return causal.extract_patterns(
            influence,
            {i: r.content for i, r in records.items()},
            storage.memories.vectors(scope, list(records)),
            min_decisions=cfg.min_decisions,
            min_quality=cfg.min_quality,
            similarity=cfg.cluster_similarity,
        )

    async def share_patterns(
        self, *, epsilon: float | None = None, seed: int | None = None
    ) -> patterns.SharingReport:
        """Patterns seen across the users of this database, privacy-protected
        for sharing (seed 003 federated learning): only those in at least
        ``PatternConfig.privacy_min_instances`` decisions across at least
        ``privacy_min_users`` users, with Laplace noise at ``epsilon`` and no
        personal data; the others are refused with their reason."""
        cfg = self.config.patterns
        budget = cfg.epsilon if epsilon is None else epsilon
        if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
            raise ValidationError("epsilon must be a number > 0")
        storage = await self._ready()

        def gather() -> dict[str, list[causal.Pattern]]:
            by_user: dict[str, list[causal.Pattern]] = {}
            for scope in storage.memories.scopes():
                by_user.setdefault(scope.user_id, []).extend(self._patterns_of(storage, scope))
            return by_user

        by_user = await self._run(gather)
        candidates = patterns.merge_user_patterns(by_user, similarity=cfg.merge_similarity)
        report = patterns.share_patterns(
            candidates,
            epsilon=float(budget),
            min_instances=cfg.privacy_min_instances,
            min_users=cfg.privacy_min_users,
            rng=np.random.default_rng(seed),
        )
        logger.info(
            "share_patterns: %d shared, %d refused", len(report.shared), len(report.refused)
        )
        return report

    async def event_backlog(self, consumer: str, *, limit: int = 500) -> list[Event]:
        """Events of every scope that the named consumer (a publisher) has not
        acknowledged yet, in global order."""
        name = check_id(consumer, "consumer")
        storage = await self._ready()

        def read() -> list[Event]:
            return storage.events.after(storage.events.cursor(name), check_limit(limit, 100_000))

        return await self._run(read)

    async def acknowledge_events(self, consumer: str, position: int) -> None:
        """Persist that ``consumer`` has delivered every event up to ``position``."""
        name = check_id(consumer, "consumer")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValidationError("position must be an integer >= 0")
        storage = await self._ready()
        await self._run(storage.events.set_cursor, name, position, self._clock())

    async def publish_events(
        self,
        url: str,
        *,
        stream: str = "UCMA_EVENTS",
        consumer: str = "nats",
        once: bool = False,
        poll_seconds: float = 1.0,
        stop: asyncio.Event | None = None,
    ) -> int:
        """Forward every scope's events to NATS JetStream at ``url``, at least once
        (``ucma.events.publisher``), until ``stop`` is set, or only the backlog with
        ``once``; returns how many went out. One process of the database forwards a
        consumer's events at a time: this call holds the database's lease
        ``events:<consumer>`` while it forwards. Another process's call waits for that
        lease and takes the forwarding over when the holder stops or dies; with
        ``once`` it returns 0 at once instead."""
        from ucma.engine import AsyncMemory
        from ucma.events.publisher import EventPublisher

        name = check_id(consumer, "consumer")
        if (
            isinstance(poll_seconds, bool)
            or not isinstance(poll_seconds, int | float)
            or not (0 < poll_seconds <= 3600)
        ):
            raise ValidationError("poll_seconds must be a number in (0, 3600]")
        publisher = EventPublisher(cast(AsyncMemory, self), url, stream=stream, consumer=name)
        stop = stop or asyncio.Event()
        async with self._lease(f"events:{name}", wait=not once) as claim:
            if claim is None:
                logger.info("another process forwards the events of %s", name)
                return 0
            async with publisher:
                if once:
                    return await publisher.publish_pending()
                ended = asyncio.Event()
                watch = asyncio.create_task(_first_of(ended, stop, claim.lost))
                try:
                    return await publisher.run(poll_interval=poll_seconds, stop=ended)
                finally:
                    watch.cancel()
                    await asyncio.gather(watch, return_exceptions=True)


async def _first_of(target: asyncio.Event, *events: asyncio.Event) -> None:
    """Set ``target`` as soon as any of ``events`` is set."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    target.set()


def _as_dicts(states: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Replay states (dataclasses) by id, as the field mappings ``differences`` compares."""
    return {key: dataclasses.asdict(state) for key, state in states.items()}
