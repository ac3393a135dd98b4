"""Reading memory back: records, facts and their history, conflicts, answers,
the graph, procedures and lessons, episodes by time, stats."""

from __future__ import annotations

import builtins
import dataclasses
import functools
import logging
from collections.abc import Sequence
from typing import Any

from ucma.conflicts.answer import Answer, compose_answer, material_lines
from ucma.conflicts.evidence import gather_evidence
from ucma.conflicts.reports import FactList
from ucma.embeddings import CachedEmbedder
from ucma.engine.base import EngineBase, _enum, _time_range
from ucma.errors import NotFoundError, ProviderError, ValidationError
from ucma.lifecycle.consolidation import graph_importance
from ucma.memory.graph_maths import best_first_related
from ucma.memory.working import ZONES, WorkingMemory
from ucma.providers.answers import AnswerWriter
from ucma.storage.base import Storage
from ucma.types import (
    Conflict,
    ConflictStatus,
    Episode,
    Fact,
    GraphEdge,
    Hit,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    Procedure,
    ReviewFlag,
    Scope,
)
from ucma.validation import (
    check_content,
    check_fraction,
    check_id,
    check_limit,
    check_offset,
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
        check_offset(offset)
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
        and without those whose valid time (``valid_until``) has ended
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
        if moment is None and not include_history:
            # A fact whose valid time has ended no longer holds in the world.
            now = self.clock()
            facts = [f for f in facts if f.valid_until is None or f.valid_until > now]
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
    ) -> builtins.list[Conflict]:
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
    ) -> builtins.list[ReviewFlag]:
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

        Recalls like ``recall``, reads the evidence behind the hits (current
        values of superseded facts, facts extracted from episodes, replaced
        values), consults the sources of truth, and composes the response from
        whole memories and clean facts (``ucma.conflicts.answer``): superseded
        and expired values are never presented as current, a change is noted
        once, and only conflicts that concern the answer are shown. When recall
        reports ``low_confidence`` and its best hit's own confidence agrees
        (below the cascade threshold too), the answer says it does not know (the
        hits stay in ``Answer.hits``). The second opinion matters because a
        result found in a secondary layer carries that layer's discounted weight
        in the cascade's final confidence, however well it matches. When the
        engine's providers include an
        ``AnswerWriter`` (``ucma.providers.answers``), that model writes the
        response from the same numbered material and cites it; if it fails, the
        offline response stands with a caveat.
        """
        result = await self.recall(  # type: ignore[attr-defined]
            query, limit=limit, entity=entity, user_id=user_id, agent_id=agent_id
        )
        hits: list[Hit] = result.hits
        weak = (
            result.low_confidence
            and _best_confidence(hits) < self.config.cascade.confidence_threshold
        )
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        now = self._clock()
        gather = functools.partial(
            gather_evidence, storage, scope, [h.memory for h in hits], self.predicates, now
        )
        evidence = await self._run(gather)
        detected: list[Conflict] = []
        if self._sources and not weak:
            detected = await self._reconcile(scope, evidence.facts())
            if detected:
                evidence = await self._run(gather)
        facts = evidence.facts()

        def context() -> tuple[list[Conflict], dict[str, ReviewFlag]]:
            conflicts = self._resolver.touching(storage, scope, facts, None, detected)
            ids = [h.id for h in hits] + [f.id for f in facts]
            return conflicts, storage.conflicts.flagged(scope, ids)

        conflicts, flags = await self._run(context)
        answer = compose_answer(
            query,
            hits,
            facts,
            conflicts,
            flags,
            review_factor=self.config.conflicts.review_rank_factor,
            evidence=evidence,
            now=now,
            low_confidence=weak,
            recall_confidence=result.confidence,
        )
        await self._write_with_model(answer)
        logger.info(
            "answer: %d facts, %d conflicts, confidence %.2f%s (%s)",
            len(answer.facts),
            len(answer.conflicts),
            answer.confidence,
            ", abstained" if answer.low_confidence else "",
            answer.composed_by,
        )
        return answer

    def _answer_writer(self) -> AnswerWriter | None:
        """The configured provider that writes answers, if any (duck-typed)."""
        providers = self._providers
        if providers is None:
            return None
        for provider in (providers.summarizer, providers.fact_extractor, providers.importance):
            if isinstance(provider, AnswerWriter):
                return provider
        return None

    async def _write_with_model(self, answer: Answer) -> None:
        """Let the configured model rewrite ``answer.response`` from its sources."""
        writer = self._answer_writer()
        if writer is None or answer.low_confidence or not answer.sources:
            return
        try:
            answer.response = await writer.write_answer(answer.query, answer.sources, answer.notes)
        except ProviderError as exc:
            logger.warning("answer: the model failed, keeping the offline answer: %s", exc)
            answer.caveats.append(
                "The language model could not write this answer; it is built from memory directly"
            )
            return
        answer.composed_by = str(getattr(writer, "model_id", type(writer).__name__))

    async def traverse(
        self,
        entity: str,
        *,
        max_hops: int = 3,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[Fact]:
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
    ) -> builtins.list[Procedure]:
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
    ) -> builtins.list[Learning]:
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
    ) -> builtins.list[Episode]:
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
    ) -> builtins.list[tuple[MemoryRecord, float, int]]:
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

    async def links(
        self,
        memory_id: str,
        *,
        edge_types: Sequence[str] | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[tuple[GraphEdge, MemoryRecord]]:
        """A memory's outgoing links, one by one: each edge (type, weight, when) with
        the memory it points to, strongest first (then by type and target id); of the
        given types only when ``edge_types`` is set. A link to a memory that is no
        longer in search (archived, deleted) is left out. What the inspector draws;
        ``related`` follows paths instead. NotFoundError for an unknown id."""
        scope = self._scope(user_id, agent_id)
        start = check_id(memory_id)
        types = set(check_strings(edge_types, "edge_types")) or None
        most = check_limit(limit, 1000)
        storage = await self._ready()

        def read() -> list[tuple[GraphEdge, MemoryRecord]]:
            if storage.memories.get(scope, start) is None:
                raise NotFoundError("memory", start)
            edges = [
                e
                for e in storage.graph.edges_from(scope, start)
                if types is None or e.edge_type in types
            ]
            records = storage.memories.get_many(scope, [e.target_id for e in edges])
            found = [
                (e, records[e.target_id])
                for e in edges
                if e.target_id in records and records[e.target_id].archived_at is None
            ]
            found.sort(key=lambda pair: (-pair[0].weight, pair[0].edge_type, pair[0].target_id))
            return found[:most]

        return await self._run(read)

    async def update_graph_importance(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, float]:
        """Recompute PageRank over the scope's memory graph and store it."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(graph_importance, storage, scope, self.config.graph)

    def context(self, *, user_id: str | None = None, agent_id: str | None = None) -> str:
        """The scope's working memory rendered as LLM context, current material only.

        Staged memories (recall's top hits) are read back: a superseded or expired
        fact gives way to the current value (the change noted once), an episode
        stating a replaced value to the current one, content-free text is left out,
        a fact that makes no clean sentence is replaced by its source's text, and
        each statement appears once. Blocks on one storage read while the memory is
        open; async code should await ``current_context`` instead.
        """
        scope = self._scope(user_id, agent_id)
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        if self._executor is None or self._storage is None:
            return working.render_context()
        ids = _memory_ids(working)
        read = self._executor.submit(self._context_lines, self._storage, scope, ids)
        lines = read.result()
        return working.render_context(lambda item: lines.get(item.item_id))

    async def current_context(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """``context`` without blocking the event loop."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        lines = await self._run(self._context_lines, storage, scope, _memory_ids(working))
        return working.render_context(lambda item: lines.get(item.item_id))

    def _context_lines(
        self, storage: Storage, scope: Scope, ids: Sequence[str]
    ) -> dict[str, builtins.list[str]]:
        """For each id that is a memory of the scope, the current lines standing
        for it (storage thread only); ids of other items are absent."""
        records = storage.memories.get_many(scope, list(ids)) if ids else {}
        now = self._clock()
        evidence = gather_evidence(storage, scope, list(records.values()), self.predicates, now)
        lines = {
            memory_id: material_lines([record], evidence, now)
            for memory_id, record in records.items()
        }
        for memory_id, record in records.items():
            # A fact staged beside the episode it was read from says it twice.
            if isinstance(record, Fact) and any(
                lines.get(source) and source not in evidence.current
                for source in record.source_episode_ids
            ):
                lines[memory_id] = []
        return lines

    async def stats(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Counts and usage of the scope's memory (JSON-serialisable).

        Only values of this scope: nothing here changes when another scope writes or
        searches, so a tenant shown these learns nothing about the others. The counters
        of the whole process are ``process_stats``.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()

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
        result.update(
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=self._sessions.get(scope),
            working_memory=self.working_memory(
                user_id=scope.user_id, agent_id=scope.agent_id
            ).usage(),
            embedder={
                "model": self._inner_embedder.model_id,
                "dimension": self._inner_embedder.dimension,
            },
        )
        return result

    def process_stats(self) -> dict[str, Any]:
        """Counters of the whole process, summed over every scope: the sensory buffer,
        the query-embedding cache and the cache of vectors derived from memories
        (their texts without the people a query names, ``retrieval/name_free.py``):
        hits and misses.

        They move when any tenant writes or asks something (a cache hit says that the
        same text was embedded before, by whomever), so they are for the operator:
        the service shows them in local mode only, never to a tenant's key.
        """

        def counters(cached: CachedEmbedder | None) -> dict[str, int] | None:
            return dataclasses.asdict(cached.stats()) if cached is not None else None

        return {
            "sensory_buffer": {
                "size": self.sensory.size,
                "total_ingested": self.sensory.total_ingested,
                "dropped": self.sensory.dropped,
            },
            "embedding_cache": counters(self._embedder),
            "derived_cache": counters(self._derived_embedder),
        }


def _memory_ids(working: WorkingMemory) -> list[str]:
    """Ids of the items of every zone (memory ids for what recall staged)."""
    return [item.item_id for zone in ZONES for item in working.items(zone)]


def _best_confidence(hits: Sequence[Hit]) -> float:
    """The best overall confidence (seed 004's five factors) among ``hits``."""
    return max((h.confidence.overall for h in hits if h.confidence is not None), default=0.0)
