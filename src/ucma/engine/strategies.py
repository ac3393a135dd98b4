"""Seed 000's procedural paradigm: strategies and pitfalls learned from trajectories,
ranked for a task, grounded in facts (flow 1), and applied with an outcome that
becomes experience and facts (flow 2).

Strategies are procedures (``Procedure.procedure_type``), in the procedural store
beside hand-written workflows, so ``find_procedures``, status by evidence, forgetting
protection, export and erasure treat them as the one kind they are.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ucma.engine.base import _initial_retention
from ucma.engine.episodes import EpisodeWrites
from ucma.engine.knowledge import KnowledgeWrites
from ucma.errors import NotFoundError, ProviderError, ValidationError
from ucma.events.log import EventType, record
from ucma.learning.procedures import log_status_change, record_execution
from ucma.memory_ids import new_memory_id
from ucma.paradigms.distillation import AVOID, DistilledItem, distill_by_rules, parse_distilled
from ucma.paradigms.predictive_evidence import learn_from_attempt, record_failure_mode
from ucma.paradigms.procedural import (
    CONTRADICTED,
    generalise,
    ground,
    strategy_score,
    wilson_lower_bound,
)
from ucma.providers.base import TrajectoryDistiller
from ucma.storage.base import Storage
from ucma.types import (
    FACT_ID_PREFIX,
    Condition,
    Fact,
    HistoryEntry,
    MemoryKind,
    Procedure,
    ProcedureStatus,
    ProcedureType,
    Provenance,
    RiskLevel,
    Scope,
    StrategyMatch,
    TrajectoryLearning,
)
from ucma.validation import check_content, check_fraction, check_id

__all__ = ["Strategies"]

logger = logging.getLogger(__name__)

_MAX_STEPS = 50
_MAX_CONDITIONS = 50
_GROUNDING = ("filter", "flag")
_DOMAIN_CANDIDATES = 1000
_RISK_ORDER = [RiskLevel.LOW, RiskLevel.MEDIUM, RiskLevel.HIGH]


def _condition(value: object, where: str) -> Condition | str:
    """A Condition, or a fact id to look up (returned as the id)."""
    if isinstance(value, Condition):
        parts: list[object] = [value.subject, value.predicate, value.object]
    elif isinstance(value, str) and value.startswith(FACT_ID_PREFIX):
        return check_id(value, where)
    elif isinstance(value, Mapping):
        parts = [value.get("subject"), value.get("predicate"), value.get("object")]
    else:
        raise ValidationError(
            f"{where} must be a fact id or a {{subject, predicate, object}} mapping"
        )
    for part in parts:
        if not isinstance(part, str) or not part.strip() or len(part) > 500:
            raise ValidationError(
                f"{where}: subject, predicate and object must be non-empty strings "
                "of at most 500 characters"
            )
    return Condition(*(" ".join(str(p).split()) for p in parts))


def _conditions(values: Sequence[object] | None, name: str) -> list[Condition | str]:
    if values is None:
        return []
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise ValidationError(f"{name} must be a list")
    if len(values) > _MAX_CONDITIONS:
        raise ValidationError(f"{name} has {len(values)} items; the limit is {_MAX_CONDITIONS}")
    return [_condition(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _domain(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise ValidationError("domain must be a non-empty string of at most 100 characters")
    return " ".join(value.lower().split())


def _merge_overlap(item: DistilledItem, existing: Procedure) -> int | None:
    """How many preconditions ``item`` shares with ``existing`` when it may merge into
    it, else None.

    Strategies merge whatever held (their preconditions generalise to what held every
    time). A pitfall merges with one of the same step when the two situations differ in
    at most one condition on each side (one property with another value: "the shortcut
    fails under a strict rate limit with a required login, whatever the pagination"),
    and keeps what both share; situations further apart stay two warnings, so two
    failures that share nothing never become "avoid it always"."""
    new = {c.key() for c in item.preconditions}
    old = {c.key() for c in existing.preconditions}
    shared = new & old
    if item.procedure_type is not ProcedureType.PITFALL or new == old:
        return len(shared)
    if shared and len(new - shared) <= 1 and len(old - shared) <= 1:
        return len(shared)
    return None


def _refute_pitfalls(
    storage: Storage,
    scope: Scope,
    domain: str,
    steps: Sequence[str],
    conditions: Sequence[Condition],
    trajectory_id: str,
    now: float,
) -> list[str]:
    """Deprecate the domain's pitfalls a success disproves: each that says to avoid one
    of the steps taken under conditions that all held (a pitfall generalised too far,
    or one failure that was chance). Deprecated, ``strategies_for`` leaves it out and
    new failures no longer merge into it; the status change is logged with the
    trajectory. Returns their ids."""
    taken = {" ".join(step.lower().split()) for step in steps}
    held = {c.key() for c in conditions}
    refuted: list[str] = []
    for pitfall in storage.procedures.in_domain(scope, domain, ProcedureType.PITFALL):
        if pitfall.status is ProcedureStatus.DEPRECATED:
            continue
        avoided = {
            " ".join(s.description.lower().split()) for s in pitfall.steps if s.action_type == AVOID
        }
        if not avoided & taken or not {c.key() for c in pitfall.preconditions} <= held:
            continue
        updated = replace(pitfall, status=ProcedureStatus.DEPRECATED, updated_at=now)
        storage.procedures.update(updated)
        log_status_change(
            storage,
            scope,
            updated,
            pitfall.status,
            now,
            {
                "trajectory_id": trajectory_id,
                "reason": "the step it avoids worked under its conditions",
            },
        )
        refuted.append(pitfall.id)
    return refuted


@dataclass(frozen=True, slots=True)
class _TrajectoryPlan:
    """A trajectory distilled and matched against its domain, ready to write:
    ``items`` with the near-duplicate each merges into (``targets``) and their content
    ``vectors``; ``steps``, ``success``, ``failure_reason`` and ``conditions`` as given."""

    trajectory_id: str
    domain: str
    items: list[DistilledItem]
    targets: list[str | None]
    vectors: np.ndarray
    provenance: Provenance
    steps: list[str]
    success: bool
    failure_reason: str | None
    conditions: list[Condition]


class Strategies(EpisodeWrites, KnowledgeWrites):
    """learn_from_trajectory, strategies_for, has_strategy_for, record_procedure_outcome."""

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
        """Distil up to three items from one trajectory and keep them: from a success
        the strategy that worked, from a failure a pitfall (what to avoid or check).

        ``context`` is what held while the task ran: fact ids, or ``{subject,
        predicate, object}`` triples (say, the facts your agent asserted about its
        environment); items take it as preconditions. An item whose title (its steps)
        is a near-duplicate of one of the same type in ``domain`` merges into it
        instead: that one records this trajectory too and keeps only the
        preconditions both had. Rules distil offline; a configured provider with a
        ``distill_trajectory`` method does it instead.
        """
        scope = self._scope(user_id, agent_id)
        text, step_texts, failure_reason = self._check_trajectory(
            task, steps, success, failure_reason
        )
        area = _domain(domain)
        given = _conditions(context, "context")
        texts = [text, *step_texts] + ([failure_reason] if failure_reason else [])
        names = ["task", *(f"steps[{i}]" for i in range(len(step_texts)))]
        guarded = await self._guard(scope, texts, [*names, "failure_reason"][: len(texts)])
        text, step_texts = guarded[0], guarded[1 : 1 + len(step_texts)]
        if failure_reason:
            failure_reason = guarded[-1]
        given = await self._guard_conditions(scope, given)
        storage = await self._ready()
        conditions = await self._run(self._resolve_conditions, storage, scope, given)
        plan = await self._plan_trajectory(
            scope, text, step_texts, success, failure_reason, area, conditions
        )
        stored, merged, refuted = await self._run(
            self._keep_items, storage, scope, plan, self._clock(), True
        )
        logger.info(
            "learn_from_trajectory: %s (%s, %d new, %d merged, %d pitfalls refuted)",
            plan.trajectory_id,
            "success" if success else "failure",
            len(stored) - len(merged),
            len(merged),
            len(refuted),
        )
        return TrajectoryLearning(plan.trajectory_id, tuple(stored), tuple(merged), tuple(refuted))

    def _check_trajectory(
        self, task: object, steps: object, success: object, failure_reason: object
    ) -> tuple[str, list[str], str | None]:
        """A trajectory's task, steps and failure reason, checked (ValidationError)."""
        limits = self.config.limits
        text = check_content(task, limits, "task")
        if isinstance(steps, str | bytes) or not isinstance(steps, Sequence) or not steps:
            raise ValidationError("steps must be a non-empty list of strings")
        if len(steps) > _MAX_STEPS:
            raise ValidationError(f"steps has {len(steps)} items; the limit is {_MAX_STEPS}")
        step_texts = [check_content(s, limits, f"steps[{i}]") for i, s in enumerate(steps)]
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        reason = None
        if failure_reason is not None:
            if success:
                raise ValidationError("failure_reason is for a failed trajectory only")
            reason = check_content(failure_reason, limits, "failure_reason")
        return text, step_texts, reason

    async def _plan_trajectory(
        self,
        scope: Scope,
        text: str,
        step_texts: list[str],
        success: bool,
        failure_reason: str | None,
        area: str,
        conditions: list[Condition],
    ) -> _TrajectoryPlan:
        """Distil a checked, guarded trajectory and decide, for each item, the
        near-duplicate it merges into (if any); embeddings done, nothing written."""
        storage = await self._ready()
        items = await self._distil(text, step_texts, success, failure_reason, conditions)
        candidates = await self._run(self._candidates, storage, scope, area, items)
        titles = [item.title for item in items] + [c.name for group in candidates for c in group]
        title_vectors = await self._embed_queries(titles)
        content_vectors = await self._embed([item.content for item in items])
        targets: list[str | None] = []
        offset = len(items)
        floor = self.config.procedures.merge_similarity
        for i, (item, group) in enumerate(zip(items, candidates, strict=True)):
            best: tuple[float, int] | None = None
            best_id = None
            for candidate in group:
                similarity = float(title_vectors[i] @ title_vectors[offset])
                offset += 1
                overlap = _merge_overlap(item, candidate)
                if similarity < floor or overlap is None:
                    continue
                if best is None or (similarity, overlap) > best:  # ties: the closest situation
                    best, best_id = (similarity, overlap), candidate.id
            targets.append(best_id)
        provenance = Provenance.GENERATED if self._distiller() is not None else Provenance.INFERRED
        return _TrajectoryPlan(
            trajectory_id=new_memory_id("traj", scope),
            domain=area,
            items=items,
            targets=targets,
            vectors=content_vectors,
            provenance=provenance,
            steps=step_texts,
            success=success,
            failure_reason=failure_reason,
            conditions=conditions,
        )

    async def _guard_conditions(
        self, scope: Scope, given: list[Condition | str]
    ) -> list[Condition | str]:
        """Triples pass the content guard like any text (fact ids name guarded facts)."""
        triples = [(i, c) for i, c in enumerate(given) if isinstance(c, Condition)]
        if not triples:
            return given
        texts = [part for _, c in triples for part in (c.subject, c.predicate, c.object)]
        where = [
            f"context[{i}].{p}" for i, _ in triples for p in ("subject", "predicate", "object")
        ]
        guarded = await self._guard(scope, texts, where)
        out = list(given)
        for n, (i, _) in enumerate(triples):
            out[i] = Condition(*guarded[3 * n : 3 * n + 3])
        return out

    def _distiller(self) -> TrajectoryDistiller | None:
        return self._providers.distiller if self._providers is not None else None

    async def _distil(
        self,
        task: str,
        steps: list[str],
        success: bool,
        failure_reason: str | None,
        conditions: list[Condition],
    ) -> list[DistilledItem]:
        distiller = self._distiller()
        if distiller is None:
            return distill_by_rules(task, steps, success, failure_reason, conditions)
        try:
            raw = await distiller.distill_trajectory(task, steps, success, failure_reason)
        except ProviderError:
            raise
        except Exception as exc:
            name = type(distiller).__name__
            raise ProviderError(f"{name}.distill_trajectory failed: {exc}") from exc
        return parse_distilled(raw, success, conditions)

    @staticmethod
    def _resolve_conditions(
        storage: Storage, scope: Scope, given: list[Condition | str]
    ) -> list[Condition]:
        """Fact ids become their triples (NotFoundError for an unknown one)."""
        ids = [g for g in given if isinstance(g, str)]
        found = storage.memories.get_many(scope, ids) if ids else {}
        out: list[Condition] = []
        for item in given:
            if isinstance(item, Condition):
                out.append(item)
                continue
            fact = found.get(item)
            if not isinstance(fact, Fact):
                raise NotFoundError(MemoryKind.SEMANTIC.value, item)
            out.append(Condition(fact.subject, fact.predicate, fact.object))
        return out

    @staticmethod
    def _candidates(
        storage: Storage, scope: Scope, domain: str, items: list[DistilledItem]
    ) -> list[list[Procedure]]:
        return [
            [
                p
                for p in storage.procedures.in_domain(scope, domain, item.procedure_type)
                if p.status is not ProcedureStatus.DEPRECATED
            ]
            for item in items
        ]

    def _keep_items(
        self,
        storage: Storage,
        scope: Scope,
        plan: _TrajectoryPlan,
        now: float,
        attempt: bool,
    ) -> tuple[list[Procedure], list[str], list[str]]:
        """Store or merge each item, when the trajectory succeeded refute the pitfalls
        it disproves, and, with ``attempt``, keep the trajectory as an attempt of the
        domain (the self-model and the world model, seed 000 flow 5); one transaction
        (the caller's, when it has one)."""
        stored: list[Procedure] = []
        merged: list[str] = []
        refuted: list[str] = []
        domain, trajectory_id = plan.domain, plan.trajectory_id
        with storage.transaction():
            if plan.success:
                refuted = _refute_pitfalls(
                    storage, scope, domain, plan.steps, plan.conditions, trajectory_id, now
                )
            if attempt:
                learn_from_attempt(
                    storage,
                    scope,
                    domain,
                    [(c.subject, c.predicate, c.object) for c in plan.conditions],
                    plan.success,
                    plan.failure_reason,
                    f"trajectory {trajectory_id}",
                    now,
                    self.config.predictive,
                )
            for item, target, vector in zip(plan.items, plan.targets, plan.vectors, strict=True):
                existing = storage.procedures.get(scope, target) if target else None
                if existing is not None:
                    kept = self._merge(storage, scope, existing, item, trajectory_id, now)
                    merged.append(kept.id)
                else:
                    kept = self._new_item(scope, domain, item, trajectory_id, plan.provenance, now)
                    storage.procedures.add(kept, vector)
                    storage.retention.put_many(scope, [_initial_retention(kept, now)])
                    record(
                        storage,
                        scope,
                        EventType.STRATEGY_LEARNED,
                        {
                            "memory_id": kept.id,
                            "trajectory_id": trajectory_id,
                            "procedure_type": kept.procedure_type.value,
                            "domain": domain,
                            "preconditions": [list(c.key()) for c in kept.preconditions],
                            "failure_modes": list(kept.failure_modes),
                        },
                        now,
                    )
                stored.append(kept)
        return stored, merged, refuted

    @staticmethod
    def _merge(
        storage: Storage,
        scope: Scope,
        existing: Procedure,
        item: DistilledItem,
        trajectory_id: str,
        now: float,
    ) -> Procedure:
        modes = list(existing.failure_modes)
        modes.extend(m for m in item.failure_modes if m not in modes)
        kept = replace(
            existing,
            source_trajectories=[*existing.source_trajectories, trajectory_id],
            preconditions=generalise(existing.preconditions, item.preconditions),
            failure_modes=modes,
            risk_level=max(existing.risk_level, item.risk_level, key=_RISK_ORDER.index),
            updated_at=now,
        )
        storage.procedures.update(kept)
        details = {
            "trajectory_id": trajectory_id,
            "preconditions": [list(c.key()) for c in kept.preconditions],
            "failure_modes": modes,
        }
        record(storage, scope, EventType.STRATEGY_MERGED, {"memory_id": kept.id, **details}, now)
        storage.lifecycle.add_history(scope, [HistoryEntry(kept.id, "merged", now, details)])
        return kept

    def _new_item(
        self,
        scope: Scope,
        domain: str,
        item: DistilledItem,
        trajectory_id: str,
        provenance: Provenance,
        now: float,
    ) -> Procedure:
        return Procedure(
            id=new_memory_id("proc", scope),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=item.content,
            provenance=provenance,
            temporal_level=2,
            base_salience=0.5,
            created_at=now,
            updated_at=now,
            name=item.title,
            description=item.description,
            trigger_tags=[domain],
            steps=list(item.steps),
            procedure_type=item.procedure_type,
            domain=domain,
            preconditions=list(item.preconditions),
            risk_level=item.risk_level,
            failure_modes=list(item.failure_modes),
            source_trajectories=[trajectory_id],
        )

    async def strategies_for(
        self,
        task: str,
        *,
        domain: str | None = None,
        limit: int = 5,
        contradicted: str = "filter",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[StrategyMatch]:
        """Strategies and pitfalls for ``task``, best first: relevance to the task times
        the Wilson lower bound of their success when applied, so a strategy that worked
        45 times in 50 ranks above one that worked once in one. Known facts ground them
        (seed 000 flow 1): one whose preconditions contradict current facts is left out
        (``contradicted="flag"`` keeps it, last, with ``grounding="contradicted"``).
        Deprecated procedures are left out. Without ``domain``, candidates are the
        procedures most similar to the task, at least ``ProcedureConfig.min_relevance``;
        with it, every procedure of that domain (the caller has said what kind of task
        it is, so a differently worded one still finds them)."""
        scope = self._scope(user_id, agent_id)
        text = check_content(task, self.config.limits, "task")
        area = _domain(domain) if domain is not None else None
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ValidationError("limit must be an integer from 1 to 100")
        if contradicted not in _GROUNDING:
            raise ValidationError("contradicted must be 'filter' or 'flag'")
        [vector] = await self._embed_queries([text])
        storage = await self._ready()
        return await self._run(
            self._rank, storage, scope, vector, area, limit, contradicted == "flag"
        )

    def _rank(
        self,
        storage: Storage,
        scope: Scope,
        vector: np.ndarray,
        domain: str | None,
        limit: int,
        flag: bool,
    ) -> list[StrategyMatch]:
        config = self.config.procedures
        records: dict[str, Any]
        if domain is None:
            hits = storage.memories.vector_search(
                scope, vector, max(4 * limit, 40), kinds=[MemoryKind.PROCEDURAL]
            )
            records = storage.memories.get_many(scope, [memory_id for memory_id, _ in hits])
            floor = config.min_relevance
        else:
            # Told the domain: rank every procedure of it, however the task is worded.
            listed = storage.procedures.in_domain(scope, domain, limit=_DOMAIN_CANDIDATES)
            records = {p.id: p for p in listed}
            vectors = storage.memories.vectors(scope, list(records))
            hits = [(i, float(vectors[i] @ vector)) for i in records if i in vectors]
            floor = 0.0

        def values(subject: str, predicate: str) -> list[str]:
            return [f.object for f in storage.facts.current(scope, subject, predicate)]

        def functional(predicate: str) -> bool:
            return self.predicates.classify(predicate).functional

        matches: list[StrategyMatch] = []
        for memory_id, cosine in hits:
            procedure = records.get(memory_id)
            if not isinstance(procedure, Procedure) or cosine < floor:
                continue
            if procedure.status is ProcedureStatus.DEPRECATED:
                continue
            if domain is not None and procedure.domain != domain:
                continue
            grounding = ground(procedure.preconditions, values, functional)
            if grounding.verdict == CONTRADICTED and not flag:
                continue
            bound = wilson_lower_bound(procedure.success_count, procedure.execution_count)
            matches.append(
                StrategyMatch(
                    procedure,
                    score=strategy_score(cosine, bound),
                    relevance=max(0.0, min(1.0, cosine)),
                    lower_bound=bound,
                    grounding=grounding.verdict,
                    met=grounding.met,
                    contradicted=grounding.contradicted,
                )
            )
        matches.sort(key=lambda m: (m.grounding == CONTRADICTED, -m.score, m.procedure.id))
        return matches[:limit]

    async def has_strategy_for(
        self,
        task: str,
        *,
        domain: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool:
        """Whether a strategy or workflow (not a pitfall) applies to ``task``: at least
        ``ProcedureConfig.has_strategy_relevance`` related, not deprecated, its
        preconditions not contradicted by known facts."""
        floor = self.config.procedures.has_strategy_relevance
        found = await self.strategies_for(
            task, domain=domain, limit=20, user_id=user_id, agent_id=agent_id
        )
        return any(not m.is_pitfall and m.relevance >= floor for m in found)

    async def record_procedure_outcome(
        self,
        procedure_id: str,
        success: bool,
        *,
        task: str | None = None,
        failure_reason: str | None = None,
        discoveries: Sequence[Mapping[str, Any]] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Procedure:
        """Record one application of a procedure or strategy and its outcome.

        The statistics (application count, successes, success rate) take it, and the
        status moves by evidence (``ProcedureConfig``): active after enough mostly
        successful runs, deprecated after enough mostly failed ones, with a
        ``procedure.status_changed`` event and a ``status_changed`` history entry. A
        new ``failure_reason`` becomes a failure mode (and raises the risk level).

        Seed 000 flow 2, when ``task`` is given: the application becomes an experience
        (an episode, "Used strategy 'X' for <task>: succeeded", linked to the procedure
        by an ``applied`` edge); each of ``discoveries`` (``{subject, predicate,
        object, confidence}``: a pattern the run revealed) becomes a fact sourced from
        that experience; and a failure with a reason becomes the belief
        "<strategy> fails when <reason>" at confidence 0.8.
        """
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        scope = self._scope(user_id, agent_id)
        check_id(procedure_id)
        limits = self.config.limits
        if failure_reason is not None:
            if success:
                raise ValidationError("failure_reason is for a failed application only")
            failure_reason = await self._guard_text(
                scope, check_content(failure_reason, limits, "failure_reason"), "failure_reason"
            )
        if task is not None:
            task = check_content(task, limits, "task")
        found = _conditions(list(discoveries), "discoveries")
        patterns: list[tuple[Condition, float]] = []
        for i, (raw, parsed) in enumerate(zip(discoveries, found, strict=True)):
            if not isinstance(parsed, Condition):
                raise ValidationError(f"discoveries[{i}] must be a triple, not a fact id")
            confidence = check_fraction(raw.get("confidence", 0.8), f"discoveries[{i}].confidence")
            patterns.append((parsed, confidence))
        if patterns and task is None:
            raise ValidationError("discoveries need the task they were discovered in")
        storage = await self._ready()
        now = self._clock()
        config = self.config.procedures

        def apply() -> Procedure:
            with storage.transaction():
                procedure = storage.memories.get(scope, procedure_id)
                if not isinstance(procedure, Procedure):
                    raise NotFoundError(MemoryKind.PROCEDURAL.value, procedure_id)
                if failure_reason and procedure.domain:
                    # Flow 5: a strategy's failure mode is one of its domain's.
                    record_failure_mode(
                        storage,
                        scope,
                        procedure.domain,
                        failure_reason,
                        f"procedure {procedure.id}",
                        now,
                    )
                return record_execution(
                    storage, scope, procedure, success, now, config, failure_reason=failure_reason
                )

        updated = await self._run(apply)
        if task is not None:
            await self._experience(scope, updated, task, success, failure_reason, patterns)
        return updated

    async def _experience(
        self,
        scope: Scope,
        procedure: Procedure,
        task: str,
        success: bool,
        failure_reason: str | None,
        patterns: list[tuple[Condition, float]],
    ) -> None:
        outcome = "succeeded" if success else "failed"
        if failure_reason:
            outcome += f" ({failure_reason})"
        observed = await self.observe(
            f"Used strategy '{procedure.name}' for {task}: {outcome}",
            source="agent",
            tags=["experience", "strategy"],
            metadata={"procedure_id": procedure.id, "success": success},
            user_id=scope.user_id,
            agent_id=scope.agent_id,
        )
        sources = [observed.id] if observed.stored else []
        if observed.stored:
            await self.link(
                observed.id,
                procedure.id,
                "applied",
                user_id=scope.user_id,
                agent_id=scope.agent_id,
            )
        for condition, confidence in patterns:
            await self.assert_fact(
                condition.subject,
                condition.predicate,
                condition.object,
                confidence=confidence,
                source_episode_ids=sources,
                provenance=Provenance.INFERRED,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
            )
        if failure_reason:
            await self.assert_fact(
                procedure.name,
                "fails when",
                failure_reason,
                confidence=0.8,
                source_episode_ids=sources,
                provenance=Provenance.INFERRED,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
            )
