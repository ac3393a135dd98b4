"""Cascading recall over hybrid retrieval (seed 004 over seed 003; logic in
``ucma.retrieval``), and preparing a scope's search ahead of its first recall."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

import numpy as np

from ucma.engine.base import EngineBase, _enum, _new_id, _time_range
from ucma.errors import UCMAError, ValidationError
from ucma.retrieval.cascade import RecallResult
from ucma.retrieval.directives import Instructions, conditions_in, conditions_of
from ucma.retrieval.name_free import Naming, naming
from ucma.retrieval.recall import RecallRequest, record_recall, run_recall
from ucma.retrieval.router import Layer, QueryPlan, route
from ucma.storage.base import Storage
from ucma.types import Bank, Hit, MemoryKind, QueryMode, Scope
from ucma.validation import (
    check_content,
    check_fraction,
    check_limit,
    check_query,
    check_strings,
    check_timestamp,
)

__all__ = ["Retrieval"]

logger = logging.getLogger(__name__)

A = TypeVar("A")
B = TypeVar("B")


class Retrieval(EngineBase):
    """remember, recall and prepare_search."""

    # -- reads --------------------------------------------------------------------

    async def remember(
        self,
        query: str,
        *,
        limit: int | None = None,
        mode: QueryMode | str | None = None,
        kinds: Sequence[MemoryKind | str] | None = None,
        banks: Sequence[Bank | str] | None = None,
        time_range: tuple[float, float] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
        reference_time: float | None = None,
        include_superseded: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[Hit]:
        """Retrieve memories for ``query`` from every kind at once, best first
        (seed 001 chapter 19; no cascade). The top hits are staged in the scope's
        working memory; retrieval counts as a review of each returned memory.
        Memories that newer ones replaced, and facts no longer valid, are left out
        unless ``include_superseded`` (their history stays: ``history``, ``as_of``).
        ``banks`` keeps only memories of those banks (seed 000: world, experience,
        opinion, observation)."""
        result = await self.recall(
            query,
            limit=limit,
            mode=mode,
            kinds=kinds,
            banks=banks,
            time_range=time_range,
            entity=entity,
            tags=tags,
            include_graph_neighbors=include_graph_neighbors,
            min_importance=min_importance,
            reference_time=reference_time,
            include_superseded=include_superseded,
            cascade=False,
            layer=Layer.SEMANTIC,
            user_id=user_id,
            agent_id=agent_id,
        )
        return result.hits

    async def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        cascade: bool = True,
        confidence_threshold: float | None = None,
        max_cascade_depth: int | None = None,
        reference_time: float | None = None,
        explain: bool = False,
        kinds: Sequence[MemoryKind | str] | None = None,
        banks: Sequence[Bank | str] | None = None,
        time_range: tuple[float, float] | None = None,
        entity: str | None = None,
        tags: Sequence[str] | None = None,
        mode: QueryMode | str | None = None,
        include_graph_neighbors: bool = True,
        min_importance: float = 0.0,
        layer: Layer | str | None = None,
        include_superseded: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> RecallResult:
        """Cascading recall (seed 004) over hybrid retrieval (seed 003).

        The query is classified (seven classes), searched in its primary layer
        with every channel fused, and, when the best confidence is below
        ``confidence_threshold`` (default 0.5), in secondary layers up to
        ``max_cascade_depth`` (default 2). Time expressions are read relative to
        ``reference_time`` (default now). Every hit carries seed 004's five
        confidence factors and its channel scores; the result carries the
        cascade path and a ``low_confidence`` flag to abstain on. ``explain``
        adds the plan and per-hit channel scores to ``result.explanation``.
        Superseded memories and expired facts are left out unless
        ``include_superseded``. ``banks`` keeps only memories of those banks.
        """
        scope = self._scope(user_id, agent_id)
        cfg = self.config
        text = check_query(query, cfg.limits)
        text = await self._tokenise_query(scope, text)  # type: ignore[attr-defined] # privacy.py
        count = check_limit(
            limit if limit is not None else cfg.retrieval.max_results,
            cfg.retrieval.max_results_limit,
        )
        threshold = check_fraction(
            cfg.cascade.confidence_threshold
            if confidence_threshold is None
            else confidence_threshold,
            "confidence_threshold",
        )
        depth = (
            check_limit(
                (cfg.cascade.max_depth if max_cascade_depth is None else max_cascade_depth) + 1,
                11,
                "max_cascade_depth + 1",
            )
            - 1
        )
        now = self._clock()
        reference = (
            now if reference_time is None else check_timestamp(reference_time, "reference_time")
        )
        request = RecallRequest(
            limit=count,
            cascade=bool(cascade),
            threshold=threshold,
            max_depth=depth,
            include_graph_neighbors=bool(include_graph_neighbors),
            min_importance=check_fraction(min_importance, "min_importance"),
            layer=_enum(Layer, layer, "layer") if layer is not None else None,
            explain=bool(explain),
            include_superseded=bool(include_superseded),
            retrieval_id=_new_id("ret"),
        )
        storage = await self._ready()
        plan = await self._route(
            scope,
            text,
            reference,
            mode=_enum(QueryMode, mode, "mode") if mode is not None else None,
            entity=check_content(entity, cfg.limits, "entity") if entity is not None else None,
            tags=[t.lower() for t in check_strings(tags, "tags")] or None,
            time_range=_time_range(time_range),
            kinds=[_enum(MemoryKind, k, "kinds") for k in kinds] if kinds else None,
            banks=_banks(banks),
        )
        # The query's model call and the storage read of whom it names run at once;
        # the query without those people is embedded once they are known.
        wanted = _embedded(plan)
        embedded, naming = await _both(
            self._embed_queries(wanted) if wanted else _nothing(),
            self._naming(storage, scope, plan),
        )
        vectors = list(embedded)
        unnamed = None
        if naming is not None:
            unnamed = (await self._embed_queries([naming.without_people(plan.embedded_text)]))[0]
        vector = vectors[0] if text.strip() else None
        anchor_vector = vectors[-1] if len(vectors) == 2 else None
        name_free = await self._name_free_cosines(naming, vector, unnamed)
        conditions = await self._condition_cosines(storage, scope, vector)
        result = await self._run(
            run_recall,
            storage,
            cfg,
            scope,
            plan,
            vector,
            request,
            now=now,
            anchor_vector=anchor_vector,
            name_free=name_free,
            conditions=conditions,
        )
        self._queue(record_recall, storage, cfg, scope, result, now=now)
        self._queue(self._known_names, storage, scope)
        working = self.working_memory(user_id=scope.user_id, agent_id=scope.agent_id)
        for hit in result.hits[: cfg.working.staged_hits]:
            working.add(hit.id, hit.content, "staging", hit.memory.effective_salience)
        logger.info(
            "recall: %d hits for %r (%s, confidence %.2f%s)",
            len(result.hits),
            text[:60],
            plan.query_class.value,
            result.confidence,
            ", low" if result.low_confidence else "",
        )
        return result

    async def _route(
        self,
        scope: Scope,
        text: str,
        reference: float,
        *,
        mode: QueryMode | None = None,
        entity: str | None = None,
        tags: list[str] | None = None,
        time_range: tuple[float, float] | None = None,
        kinds: list[MemoryKind] | None = None,
        banks: list[Bank] | None = None,
    ) -> QueryPlan:
        """The plan recall follows for ``text`` (checked arguments), with the names the
        scope knows (read first when this engine has not read them lately)."""
        known = self._names.get(scope)
        if known is None:
            storage = await self._ready()
            known = await self._run(self._known_names, storage, scope)
        cfg = self.config.retrieval
        return route(
            text,
            reference_time=reference,
            known_entities=known,
            mode=mode,
            entity=entity,
            tags=tags,
            time_range=time_range,
            kinds=kinds,
            banks=banks,
            drop_entity_terms="entity" in cfg.channels,
            embed_names=cfg.embed_names,
        )

    async def _naming(self, storage: Storage, scope: Scope, plan: QueryPlan) -> Naming | None:
        """The people the query names and the memories naming them, when recall
        compares them without the names (``retrieval/name_free.py``)."""
        cfg = self.config.retrieval
        if not plan.text.strip() or not plan.names or cfg.name_free_weight <= 0:
            return None
        if "dense" not in cfg.channels:
            return None  # nothing to mix into (the keyword-only ablation)
        return await self._run(
            naming,
            storage,
            scope,
            plan.names,
            plan.embedded_text,
            limit=cfg.name_free_candidates,
        )

    async def _name_free_cosines(
        self, naming: Naming | None, vector: np.ndarray | None, unnamed: np.ndarray | None
    ) -> dict[str, float]:
        """The cosines, without the names, between the query (``unnamed``: its
        vector without them) and the memories naming the people it names that are
        closest to ``vector``."""
        if naming is None or vector is None or unnamed is None:
            return {}
        contents = naming.closest(vector, self.config.retrieval.name_free_candidates)
        memories = await self._embed_derived(
            [naming.without_people(content) for content in contents.values()]
        )
        return {
            memory_id: float(np.dot(memory, unnamed))
            for memory_id, memory in zip(contents, memories, strict=True)
        }

    async def _condition_cosines(
        self, storage: Storage, scope: Scope, vector: np.ndarray | None
    ) -> dict[str, float]:
        """The cosines between the query and the conditions of the scope's standing
        instructions (``retrieval/directives.py``): read and embedded on the scope's
        first recall, then kept up to date by ``observe``."""
        cfg = self.config.retrieval
        if vector is None or not cfg.directive_conditions or "dense" not in cfg.channels:
            return {}
        instructions = self._instructions.get(scope)
        if instructions is None:
            found = await self._run(conditions_in, storage, scope)
            instructions = Instructions()
            await self._add_instructions(instructions, found)
            self._instructions[scope] = instructions
        return instructions.cosines(vector)

    async def _note_instructions(self, scope: Scope, episodes: Sequence[tuple[str, str]]) -> None:
        """Add the standing instructions among newly stored ``(id, content)``
        episodes to the scope's, when they were read already (otherwise the
        scope's next recall reads them all)."""
        instructions = self._instructions.get(scope)
        if instructions is None or not self.config.retrieval.directive_conditions:
            return
        await self._add_instructions(instructions, conditions_of(episodes))

    async def _add_instructions(self, instructions: Instructions, found: dict[str, str]) -> None:
        """Embed the conditions ``found`` (episode id -> condition) into ``instructions``."""
        if found:
            instructions.add(list(found), list(await self._embed_queries(list(found.values()))))

    def _known_names(self, storage: Storage, scope: Scope) -> list[str]:
        """Read the names of the people the scope's episodes involve and keep them
        for routing the scope's next recall without a storage round trip (storage
        thread only).

        Every recall queues this read behind its own bookkeeping, so names that
        another process (or another ``Storage`` on the file) added reach the
        router once the storage thread has run a read queued after them (in
        back-to-back recalls, the second one after); this engine's own episode
        writes drop the scope's names, so its next recall reads them first.
        """
        names = storage.episodes.participants(scope)
        self._names[scope] = names
        return names

    async def prepare_search(
        self, *, user_id: str | None = None, agent_id: str | None = None, wait: bool = True
    ) -> dict[str, Any]:
        """Load a scope's search caches now rather than on its first recall, and
        build its approximate (HNSW) index if it has ``retrieval.ann_threshold``
        memories or more; with ``wait``, return once that index is ready.

        Without this, the first recall of a scope loads its caches (seconds at
        100,000 memories) and a large scope's index is built in the background
        while recalls search exactly. Returns the scope's live rows, the rows its
        index covers (the rest are searched exactly) and whether a build is running.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        status = await self._run(storage.memories.prepare_search, scope, wait=False)
        if wait and status.building:
            # Off the storage thread, which other calls keep using meanwhile.
            status = await asyncio.to_thread(storage.memories.prepare_search, scope, wait=True)
        return dataclasses.asdict(status)

    async def prepare_large_scopes(self) -> list[dict[str, Any]]:
        """``prepare_search`` every scope holding ``retrieval.ann_threshold`` memories
        or more, largest first, one at a time: what a service does as it starts, so
        that no user's first recall pays for loading a large scope. Returns each
        prepared scope's ids and status; a scope that fails is logged and skipped."""
        threshold = self.config.retrieval.ann_threshold
        if threshold <= 0:
            return []
        storage = await self._ready()
        sizes: list[tuple[int, Scope]] = []
        for scope in await self._run(storage.memories.scopes):
            # One scope a call, so that requests interleave with the counting.
            counts = await self._run(storage.memories.count, scope, include_archived=True)
            sizes.append((sum(counts.values()), scope))
        prepared: list[dict[str, Any]] = []
        for size, scope in sorted(sizes, key=lambda item: -item[0]):
            if size < threshold:
                break
            try:
                status = await self.prepare_search(
                    user_id=scope.user_id, agent_id=scope.agent_id, wait=True
                )
            except UCMAError:
                logger.exception("preparing the search of %s failed", scope)
                continue
            prepared.append({"user_id": scope.user_id, "agent_id": scope.agent_id, **status})
        return prepared


async def _both(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """``first`` and ``second`` awaited at once; the first error of either raised as
    itself (not grouped), once both are done."""
    one, two = await asyncio.gather(first, second, return_exceptions=True)
    for outcome in (one, two):
        if isinstance(outcome, BaseException):
            raise outcome
    return one, two  # type: ignore[return-value]


async def _nothing() -> np.ndarray:
    return np.empty((0, 0), dtype=np.float32)


def _embedded(plan: QueryPlan) -> list[str]:
    """The texts recall embeds for ``plan``: the query's words, and the event a time
    anchor names ("after the offsite")."""
    wanted = [plan.embedded_text] if plan.text.strip() else []
    if plan.time_anchor is not None and plan.time_range is None:
        wanted.append(plan.time_anchor.event)
    return wanted


def _banks(banks: Sequence[Bank | str] | None) -> list[Bank] | None:
    """The banks asked for, checked; None (or empty) for every bank."""
    if banks is None:
        return None
    if isinstance(banks, str | bytes) or not isinstance(banks, Sequence):
        raise ValidationError("banks must be a list of bank names")
    return [_enum(Bank, b, "banks") for b in banks] or None
