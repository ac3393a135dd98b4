"""Reading memory back: records, facts and their history, conflicts, answers,
the graph, procedures and lessons, episodes by time, stats."""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Sequence
from typing import Any

from ucma.conflicts.answer import Answer, compose_answer
from ucma.conflicts.reports import FactList
from ucma.embeddings import CachedEmbedder
from ucma.engine.base import EngineBase, _enum, _time_range
from ucma.errors import NotFoundError, ValidationError
from ucma.lifecycle.consolidation import graph_importance
from ucma.memory.graph_maths import best_first_related
from ucma.types import (
    Conflict,
    ConflictStatus,
    Episode,
    Fact,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    Procedure,
    ReviewFlag,
)
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_strings,
    check_timestamp,
)

__all__ = ["Queries"]

logger = logging.getLogger(__name__)


class Queries(EngineBase):
    """The engine's reads other than recall."""

    async def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryRecord:
        """The record with this id in the scope; NotFoundError otherwise."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        record = await self._run(storage.memories.get, scope, check_id(memory_id))
        if record is None:
            raise NotFoundError("memory", memory_id)
        return record

    async def list(
        self,
        *,
        kind: MemoryKind | str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_archived: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[MemoryRecord]:
        """Records of a scope, oldest first, a page at a time."""
        scope = self._scope(user_id, agent_id)
        check_limit(limit, 10_000)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("offset must be an integer >= 0")
        storage = await self._ready()
        return await self._run(
            storage.memories.list,
            scope,
            kind=_enum(MemoryKind, kind, "kind") if kind is not None else None,
            limit=limit,
            offset=offset,
            include_archived=include_archived,
        )

    async def facts_about(
        self,
        entity: str,
        *,
        as_of: float | None = None,
        include_history: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactList:
        """Facts with ``entity`` as subject or object (case-insensitive).

        By default the current beliefs, checked against the sources of truth
        (a mismatch is recorded as a memory_vs_db conflict and the source's
        value is returned). ``as_of`` (epoch seconds, record time) returns what
        memory believed at that moment; ``include_history`` every version.
        The result is a list that also carries ``.conflicts``: every conflict
        touching the returned facts (up to ``as_of`` when given).
        """
        scope = self._scope(user_id, agent_id)
        name = check_content(entity, self.config.limits, "entity").strip()
        moment = check_timestamp(as_of, "as_of") if as_of is not None else None
        if moment is not None and include_history:
            raise ValidationError("as_of and include_history cannot be combined")
        storage = await self._ready()
        read = functools.partial(
            storage.facts.about, scope, name, as_of=moment, include_superseded=include_history
        )
        facts = await self._run(read)
        detected: list[Conflict] = []
        if moment is None and self._sources:
            detected = await self._reconcile(scope, facts)
            if detected:
                facts = await self._run(read)
        conflicts = await self._run(
            self._resolver.touching, storage, scope, facts, moment, detected
        )
        return FactList(facts, conflicts)

    async def fact_history(
        self,
        subject: str,
        predicate: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FactList:
        """Every version of (subject, predicate) in record-time order, superseded
        and conflicted ones included, with the conflicts between them."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        subj = check_content(subject, limits, "subject").strip()
        pred = check_content(predicate, limits, "predicate").strip()
        storage = await self._ready()
        facts = await self._run(storage.facts.history, scope, subj, pred)
        conflicts = await self._run(self._resolver.touching, storage, scope, facts, None, [])
        return FactList(facts, conflicts)

    async def conflicts(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        status: ConflictStatus | str | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Conflict]:
        """Recorded conflicts, newest first; filter by subject, predicate or
        status ("pending" lists what waits for the user)."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        storage = await self._ready()
        return await self._run(
            storage.conflicts.list,
            scope,
            subject=check_content(subject, limits, "subject") if subject is not None else None,
            predicate=(
                check_content(predicate, limits, "predicate") if predicate is not None else None
            ),
            status=_enum(ConflictStatus, status, "status") if status is not None else None,
            limit=check_limit(limit, 10_000),
        )

    async def review_flags(
        self,
        *,
        include_cleared: bool = False,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[ReviewFlag]:
        """Memories flagged for review because a premise they rest on was
        superseded, newest first. Flagged memories rank lower until cleared."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            storage.conflicts.flags,
            scope,
            include_cleared=bool(include_cleared),
            limit=check_limit(limit, 10_000),
        )

    async def clear_review(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> int:
        """Mark a flagged memory as reviewed (its rank recovers); returns the
        number of flags closed. NotFoundError if the memory does not exist."""
        scope = self._scope(user_id, agent_id)
        mid = check_id(memory_id)
        storage = await self._ready()
        now = self._clock()

        def clear() -> int:
            if storage.memories.get(scope, mid) is None:
                raise NotFoundError("memory", mid)
            return storage.conflicts.clear_flags(scope, mid, now)

        return await self._run(clear)

    async def answer(
        self,
        query: str,
        *,
        limit: int | None = None,
        entity: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Answer:
        """Answer ``query`` from memory, with conflicts resolved out loud.

        Retrieves like ``remember``, replaces retrieved facts of functional
        predicates by their current values, consults the sources of truth,
        applies seed 000's conflict matrix (``ucma.conflicts.answer``) and
        returns a template-built response with the facts, conflicts, review
        flags and confidence it used. No LLM is called.
        """
        hits = await self.remember(
            query, limit=limit, entity=entity, user_id=user_id, agent_id=agent_id
        )
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        gather = functools.partial(self._resolver.current_facts, storage, scope, hits)
        facts = await self._run(gather)
        detected = await self._reconcile(scope, facts) if self._sources else []
        if detected:
            facts = await self._run(gather)

        def context() -> tuple[list[Conflict], dict[str, ReviewFlag]]:
            conflicts = self._resolver.touching(storage, scope, facts, None, detected)
            ids = [h.id for h in hits] + [f.id for f in facts]
            return conflicts, storage.conflicts.flagged(scope, ids)

        conflicts, flags = await self._run(context)
        result = compose_answer(
            query,
            hits,
            facts,
            conflicts,
            flags,
            review_factor=self.config.conflicts.review_rank_factor,
        )
        logger.info(
            "answer: %d facts, %d conflicts, confidence %.2f",
            len(result.facts),
            len(result.conflicts),
            result.confidence,
        )
        return result

    async def traverse(
        self,
        entity: str,
        *,
        max_hops: int = 3,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Fact]:
        """Facts reachable from ``entity`` along subject -> object links."""
        scope = self._scope(user_id, agent_id)
        name = check_content(entity, self.config.limits, "entity").strip()
        hops = check_limit(max_hops, 10, "max_hops")
        storage = await self._ready()
        return await self._run(storage.facts.traverse, scope, name, hops)

    async def find_procedures(
        self,
        tags: Sequence[str],
        *,
        min_success_rate: float = 0.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Procedure]:
        """Procedures sharing a tag, by confidence-weighted success rate."""
        scope = self._scope(user_id, agent_id)
        wanted = [t.lower() for t in check_strings(tags, "tags")]
        minimum = check_fraction(min_success_rate, "min_success_rate")
        storage = await self._ready()
        return await self._run(
            storage.procedures.find_by_tags, scope, wanted, min_success_rate=minimum
        )

    async def find_learnings(
        self,
        tags: Sequence[str],
        *,
        learning_type: LearningType | str | None = None,
        min_confidence: float = 0.3,
        limit: int = 5,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Learning]:
        """Lessons that apply to ``tags``, by confidence x impact."""
        scope = self._scope(user_id, agent_id)
        wanted = [t.lower() for t in check_strings(tags, "tags")]
        storage = await self._ready()
        return await self._run(
            storage.learnings.relevant,
            scope,
            wanted,
            learning_type=_enum(LearningType, learning_type, "learning_type")
            if learning_type is not None
            else None,
            min_confidence=check_fraction(min_confidence, "min_confidence"),
            limit=check_limit(limit, 1000),
        )

    async def episodes_between(
        self,
        start: float,
        end: float,
        *,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Episode]:
        """Episodes that happened in ``[start, end]``, oldest first."""
        scope = self._scope(user_id, agent_id)
        begin, finish = _time_range((start, end)) or (start, end)
        storage = await self._ready()
        return await self._run(
            storage.episodes.time_range,
            scope,
            begin,
            finish,
            limit=check_limit(limit, 100_000) if limit is not None else None,
        )

    async def related(
        self,
        memory_id: str,
        *,
        max_hops: int = 2,
        edge_types: Sequence[str] | None = None,
        min_weight: float = 0.0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[tuple[MemoryRecord, float, int]]:
        """Memories reachable along outgoing graph edges, best path first:
        (record, product of edge weights, hops)."""
        scope = self._scope(user_id, agent_id)
        start = check_id(memory_id)
        hops = check_limit(max_hops, 10, "max_hops")
        types = check_strings(edge_types, "edge_types") or None
        weight = check_fraction(min_weight, "min_weight")
        storage = await self._ready()

        def walk() -> list[tuple[MemoryRecord, float, int]]:
            if storage.memories.get(scope, start) is None:
                raise NotFoundError("memory", start)
            found = best_first_related(
                start,
                lambda n: [
                    (e.target_id, e.edge_type, e.weight) for e in storage.graph.edges_from(scope, n)
                ],
                hops,
                edge_types=types,
                min_weight=weight,
            )
            records = storage.memories.get_many(scope, [n for n, _, _ in found])
            return [(records[n], w, h) for n, w, h in found if n in records]

        return await self._run(walk)

    async def update_graph_importance(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, float]:
        """Recompute PageRank over the scope's memory graph and store it."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(graph_importance, storage, scope, self.config.graph)

    def context(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """The scope's working memory rendered as LLM context."""
        return self.working_memory(user_id=user_id, agent_id=agent_id).render_context()

    async def stats(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Counts and usage of every component for a scope (JSON-serialisable)."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        assert self._embedder is not None

        def gather() -> dict[str, Any]:
            return {
                "memories": {k.value: n for k, n in storage.memories.count(scope).items()},
                "episodic": storage.episodes.stats(scope),
                "semantic": storage.facts.stats(scope),
                "procedural": storage.procedures.stats(scope),
                "learning": storage.learnings.stats(scope),
                "graph": storage.graph.stats(scope),
            }

        result = await self._run(gather)
        cache = self._embedder.stats() if isinstance(self._embedder, CachedEmbedder) else None
        result.update(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=self._sessions.get(scope),
            sensory_buffer={
                "size": self.sensory.size,
                "total_ingested": self.sensory.total_ingested,
                "dropped": self.sensory.dropped,
            },
            working_memory=self.working_memory(
                user_id=scope.user_id, agent_id=scope.agent_id
            ).usage(),
            embedder={
                "model": self._inner_embedder.model_id,
                "dimension": self._inner_embedder.dimension,
                "cache": dataclasses.asdict(cache) if cache is not None else None,
            },
        )
        return result
