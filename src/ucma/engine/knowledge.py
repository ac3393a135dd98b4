"""Typed writes: learned facts and lessons, asserted facts with conflict resolution
(seed 002), sources of truth, procedures and graph links."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ucma.conflicts.reports import FactAssertion
from ucma.conflicts.resolver import SourceMismatch
from ucma.conflicts.sources import SourceOfTruth
from ucma.engine.base import _enum, _initial_retention, _provenance
from ucma.engine.privacy import PrivacyGuard
from ucma.errors import NotFoundError, ValidationError
from ucma.memory.levels import initial_salience, select_temporal_level
from ucma.memory.retention import initial_stability
from ucma.memory_ids import new_memory_id
from ucma.storage.base import Storage
from ucma.types import (
    Conflict,
    Fact,
    GraphEdge,
    Learning,
    LearningType,
    MemoryKind,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    RetentionInfo,
    Scope,
    fact_id_for,
)
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_metadata,
    check_strings,
    check_timestamp,
)

__all__ = ["KnowledgeWrites"]

logger = logging.getLogger(__name__)


def _step(value: ProcedureStep | Mapping[str, Any]) -> ProcedureStep:
    if isinstance(value, ProcedureStep):
        return value
    if not isinstance(value, Mapping):
        raise ValidationError("each step must be a ProcedureStep or a mapping")
    try:
        step = ProcedureStep(**value)
    except TypeError as exc:
        raise ValidationError(f"invalid procedure step: {exc}") from exc
    if not isinstance(step.description, str) or not step.description.strip():
        raise ValidationError("a procedure step needs a non-empty description")
    return step


class KnowledgeWrites(PrivacyGuard):
    """learn, assert_fact(_detailed), resolve_conflict, sources of truth, procedures,
    learnings and link."""

    async def learn(
        self,
        insight: str,
        *,
        learning_type: LearningType | str = LearningType.DOMAIN_INSIGHT,
        title: str | None = None,
        evidence_ids: Sequence[str] = (),
        applicability: Sequence[str] = (),
        confidence: float = 0.5,
        impact_score: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Learning:
        """Store a lesson drawn from experience, linked to the memories it came from.

        Each evidence id must be a memory of the same scope (NotFoundError
        otherwise); the learning gets a ``derived_from`` edge to each. Lessons
        are at least situational (temporal level 2) and their salience is their
        impact score.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        text = check_content(insight, limits, "insight")
        if title is not None:
            text, title = await self._guard(
                scope, [text, check_content(title, limits, "title")], ["insight", "title"]
            )
        else:
            text = await self._guard_text(scope, text, "insight")
        kind = _enum(LearningType, learning_type, "learning_type")
        evidence = check_strings(evidence_ids, "evidence_ids", max_items=1000)
        tags = [t.lower() for t in check_strings(applicability, "applicability")]
        now = self._clock()
        level = max(2, select_temporal_level(text, "observation"))
        learning = Learning(
            id=new_memory_id("lrn", scope),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=Provenance.INFERRED,
            temporal_level=level,
            base_salience=check_fraction(impact_score, "impact_score"),
            created_at=now,
            updated_at=now,
            metadata=check_metadata(metadata, limits),
            learning_type=kind,
            title=check_content(title, limits, "title") if title is not None else text[:80],
            evidence=evidence,
            applicability=tags,
            confidence=check_fraction(confidence, "confidence"),
            impact_score=impact_score,
        )
        [vector] = await self._embed([f"{learning.title}\n{text}" if title else text])
        storage = await self._ready()
        weight = self.config.graph.evidence_edge_weight
        edges = [GraphEdge(learning.id, e, "derived_from", weight, now) for e in evidence]
        await self._run(self._write_typed, storage, scope, learning, vector, edges, evidence, now)
        logger.info("learn: %s (%s, confidence %.2f)", learning.id, kind.value, learning.confidence)
        return learning

    def _write_typed(
        self,
        storage: Storage,
        scope: Scope,
        record: Learning | Procedure,
        vector: np.ndarray,
        edges: Sequence[GraphEdge],
        must_exist: Sequence[str],
        now: float,
    ) -> None:
        if must_exist:
            found = storage.memories.get_many(scope, list(must_exist))
            for memory_id in must_exist:
                if memory_id not in found:
                    raise NotFoundError("memory", memory_id)
        with storage.transaction():
            if isinstance(record, Learning):
                storage.learnings.add(record, vector)
            else:
                storage.procedures.add(record, vector)
            storage.retention.put_many(scope, [_initial_retention(record, now)])
            if edges:
                storage.graph.add_edges(scope, edges)

    async def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,  # noqa: A002 - the triple's own word
        *,
        confidence: float = 0.8,
        source_episode_ids: Sequence[str] = (),
        provenance: Provenance | str = Provenance.USER_STATED,
        valid_from: float | None = None,
        valid_until: float | None = None,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Fact:
        """Assert a subject-predicate-object fact; returns the fact as stored.

        Same contract as ``assert_fact_detailed``, which also returns the
        conflicts the write detected; here they are recorded (see
        ``conflicts``) and reflected in the returned fact's ``status``.
        """
        result = await self.assert_fact_detailed(
            subject,
            predicate,
            object,
            confidence=confidence,
            source_episode_ids=source_episode_ids,
            provenance=provenance,
            valid_from=valid_from,
            valid_until=valid_until,
            content=content,
            metadata=metadata,
            user_id=user_id,
            agent_id=agent_id,
        )
        return result.fact

    async def assert_fact_detailed(
        self,
        subject: str,
        predicate: str,
        object: str,  # noqa: A002 - the triple's own word
        *,
        confidence: float = 0.8,
        source_episode_ids: Sequence[str] = (),
        provenance: Provenance | str = Provenance.USER_STATED,
        valid_from: float | None = None,
        valid_until: float | None = None,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactAssertion:
        """Assert a fact and report what it changed (seed 002).

        The same current triple in a scope is one fact: a repeat reinforces it
        (confidence +0.05, sources merged) and re-runs the decision tree on
        any conflict waiting for the user. A new value for a functional
        predicate (``self.predicates``) that already holds another current
        value is a conflict, resolved by the tree and recorded; the loser is
        superseded or conflicted, keeps its row and points to the winner, and
        memories derived from it are flagged for review. ``valid_from``
        (default now) is when the value became true; the tree compares these
        times. Source episodes get ``derived_from`` edges.
        """
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        parts = [
            check_content(v, limits, n).strip()
            for v, n in ((subject, "subject"), (predicate, "predicate"), (object, "object"))
        ]
        subj, pred, obj = await self._guard(scope, parts, ["subject", "predicate", "object"])
        sources = check_strings(source_episode_ids, "source_episode_ids", max_items=1000)
        conf = check_fraction(confidence, "confidence")
        prov = _provenance(provenance, Provenance.USER_STATED)
        start = check_timestamp(valid_from, "valid_from") if valid_from is not None else None
        end = check_timestamp(valid_until, "valid_until") if valid_until is not None else None
        if start is not None and end is not None and end < start:
            raise ValidationError("valid_until must not be before valid_from")
        text = (
            check_content(content, limits)
            if content is not None
            else (f"{subj} {pred.replace('_', ' ')} {obj}")
        )
        meta = check_metadata(metadata, limits)
        if content is not None:
            text = await self._guard_text(scope, text)
        storage = await self._ready()
        now = self._clock()
        fact = Fact(
            id=fact_id_for(scope, subj, pred, obj),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=prov,
            temporal_level=select_temporal_level(text, "fact"),
            base_salience=initial_salience(text, prov.value, conf),
            created_at=now,
            updated_at=now,
            metadata=meta,
            subject=subj,
            predicate=pred,
            object=obj,
            confidence=conf,
            source_episode_ids=sources,
            last_verified=now,
            valid_from=start if start is not None else now,
            valid_until=end,
            recorded_at=now,
        )
        [vector] = await self._embed([text])  # a cache hit when the fact is reinforced
        result = await self._run(
            self._resolver.assert_fact,
            storage,
            scope,
            fact,
            vector,
            sources,
            self.config.graph.evidence_edge_weight,
            _initial_retention(fact, now),
            now,
        )
        await self._reconcile_goals(scope, [text])  # type: ignore[attr-defined] # engine/goals.py
        logger.info(
            "assert_fact: %s %s %s (%s, %d conflicts)",
            subj,
            pred,
            obj,
            result.fact.id,
            len(result.conflicts),
        )
        return result

    async def resolve_conflict(
        self,
        conflict_id: str,
        chosen_value: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactAssertion:
        """Apply the user's answer to a pending (ask_user) conflict: the chosen
        value's fact is reinforced, the other superseded, and the conflict is
        recorded as ``user_resolved``. NotFoundError for an unknown id;
        ValidationError if it is not pending or the value is not an option."""
        scope = self._scope(user_id, agent_id)
        cid = check_id(conflict_id, "conflict_id")
        value = check_content(chosen_value, self.config.limits, "chosen_value").strip()
        value = await self._tokenise_query(scope, value)
        storage = await self._ready()
        now = self._clock()
        result = await self._run(self._resolver.resolve, storage, scope, cid, value, now)
        logger.info("resolve_conflict: %s -> %r", cid, value)
        return result

    def add_source_of_truth(self, source: SourceOfTruth) -> None:
        """Register an authority whose values win over memory on reads (seed 002)."""
        if not isinstance(source, SourceOfTruth):
            raise ValidationError(
                f"a source of truth must be a SourceOfTruth, got {type(source).__name__}"
            )
        self._sources.append(source)

    async def _reconcile(self, scope: Scope, facts: Sequence[Fact]) -> list[Conflict]:
        """Check current facts against the sources of truth; record memory_vs_db
        conflicts for mismatches (the source's value is used). Returns them."""
        covered: list[tuple[Fact, SourceOfTruth]] = []
        for fact in facts:
            source = next(
                (
                    s
                    for s in self._sources
                    if fact.is_current and s.covers(fact.subject, fact.predicate)
                ),
                None,
            )
            if source is not None:
                covered.append((fact, source))
        if not covered:
            return []
        values = await asyncio.to_thread(
            lambda: [source.lookup(fact.subject, fact.predicate) for fact, source in covered]
        )
        wrong = [
            (fact, source, value)
            for (fact, source), value in zip(covered, values, strict=True)
            if value is not None and value.strip().lower() != fact.object.strip().lower()
        ]
        if not wrong:
            return []
        now = self._clock()
        texts = [f"{f.subject} {f.predicate.replace('_', ' ')} {v}" for f, _, v in wrong]
        vectors = await self._embed(texts)
        mismatches = [
            SourceMismatch(
                fact.id,
                source.name,
                value,
                self._resolver.source_fact(scope, fact, source.name, value, text, now),
                vectors[i],
            )
            for i, ((fact, source, value), text) in enumerate(zip(wrong, texts, strict=True))
        ]
        storage = await self._ready()
        retention = RetentionInfo("", initial_stability(1), now, 0)
        result = await self._run(
            self._resolver.apply_sources, storage, scope, mismatches, retention, now
        )
        return result.conflicts if result is not None else []

    async def add_procedure(
        self,
        name: str,
        description: str,
        *,
        steps: Sequence[ProcedureStep | Mapping[str, Any]] = (),
        trigger_tags: Sequence[str] = (),
        status: ProcedureStatus | str = ProcedureStatus.DRAFT,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Procedure:
        """Store a reusable workflow, found later by its trigger tags or its text."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        title = check_content(name, limits, "name")
        text = check_content(description, limits, "description")
        parsed_steps = [_step(s) for s in steps]
        title, text, *described = await self._guard(
            scope,
            [title, text, *(s.description for s in parsed_steps)],
            ["name", "description", *(f"steps[{i}]" for i in range(len(parsed_steps)))],
        )
        parsed_steps = [
            replace(s, description=d) for s, d in zip(parsed_steps, described, strict=True)
        ]
        now = self._clock()
        procedure = Procedure(
            id=new_memory_id("proc", scope),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=f"{title}: {text}",
            provenance=Provenance.USER_STATED,
            temporal_level=max(2, select_temporal_level(text, "observation")),
            base_salience=0.6,
            created_at=now,
            updated_at=now,
            metadata=check_metadata(metadata, limits),
            name=title,
            description=text,
            trigger_tags=[t.lower() for t in check_strings(trigger_tags, "trigger_tags")],
            steps=parsed_steps,
            status=_enum(ProcedureStatus, status, "status"),
        )
        [vector] = await self._embed([procedure.content])
        storage = await self._ready()
        await self._run(self._write_typed, storage, scope, procedure, vector, (), (), now)
        logger.info("add_procedure: %s %r", procedure.id, title)
        return procedure

    async def validate_learning(
        self,
        learning_id: str,
        success: bool,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Learning:
        """Asymmetric validation: +0.10 confidence on success, -0.15 on failure."""
        if not isinstance(success, bool):
            raise ValidationError("success must be True or False")
        return await self._modify(
            learning_id,
            MemoryKind.LEARNING,
            lambda lr, now: lr.applied(now).validated_by(success, now),
            user_id,
            agent_id,
        )

    async def _modify(
        self,
        memory_id: str,
        kind: MemoryKind,
        change: Callable[[Any, float], Any],
        user_id: str | None,
        agent_id: str | None,
    ) -> Any:
        scope = self._scope(user_id, agent_id)
        check_id(memory_id)
        storage = await self._ready()
        now = self._clock()

        def apply() -> Any:
            with storage.transaction():
                record = storage.memories.get(scope, memory_id)
                if record is None or record.kind is not kind:
                    raise NotFoundError(kind.value, memory_id)
                updated = change(record, now)
                store = storage.procedures if kind is MemoryKind.PROCEDURAL else storage.learnings
                store.update(updated)
                return updated

        return await self._run(apply)

    async def link(
        self,
        source_id: str,
        target_id: str,
        edge_type: str,
        *,
        weight: float = 1.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> GraphEdge:
        """Add (or replace) a typed, weighted edge between two memories of a scope."""
        scope = self._scope(user_id, agent_id)
        edge = GraphEdge(
            check_id(source_id, "source_id"),
            check_id(target_id, "target_id"),
            check_id(edge_type, "edge_type"),
            check_fraction(weight, "weight"),
            self._clock(),
        )
        storage = await self._ready()

        def write() -> None:
            found = storage.memories.get_many(scope, [edge.source_id, edge.target_id])
            for memory_id in (edge.source_id, edge.target_id):
                if memory_id not in found:
                    raise NotFoundError("memory", memory_id)
            storage.graph.add_edges(scope, [edge])

        await self._run(write)
        return edge
