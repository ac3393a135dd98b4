"""Seed 000's response synthesis: ``synthesize(query)`` reads every paradigm the query
needs in one call and applies the conflict resolution matrix
(``ucma.paradigms.synthesis``); what it reads on every query of a scope is cached
(``ucma.engine.synthesis_cache``).

What it reads, by paradigm (the router's, ``ucma.retrieval.paradigms``; a named
``task`` is a request for help with a task, so all three, and a named ``action``
adds predictive):

- always: the current opinions most related to the query (the preferences, from the
  cache; seed 000: "accessed every query");
- declarative: ``recall`` of the query in its primary layer, without the cascade
  (``remember``'s search), opinions and procedures left out (the facts);
- procedural: the strategies ``strategies_for`` finds for the task (cached per task),
  ranked by competence x success rate;
- predictive: ``introspect`` of the task (competences from the cache), ``simulate`` of
  the action (default the capability the task needs), the active goals related to the
  query (from the cache), and ``should_attempt``'s advice from those same readings.

The query (as recall embeds it) and the task are embedded in one model call; every
later read finds the vectors in the query cache. Latency: ``bench/synthesize.py``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ucma.engine.goals import Goals
from ucma.engine.retrieval import _embedded
from ucma.engine.synthesis_cache import WATCHED, Part, ScopeCache, part_token
from ucma.errors import ValidationError
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.paradigms.predictive_evidence import check_context, check_label
from ucma.paradigms.predictive_records import Competence, Introspection, Simulation
from ucma.paradigms.self_model import estimate, is_weak
from ucma.paradigms.synthesis import (
    contradicting_facts,
    fact_caveats,
    rank_strategies,
    uncertainty_caveat,
    with_contradictions,
)
from ucma.paradigms.synthesis_records import Synthesis
from ucma.paradigms.world_model import normal
from ucma.retrieval.paradigms import ALL, Paradigm, paradigms_of
from ucma.storage.base import Storage
from ucma.types import Bank, Fact, Hit, MemoryKind, Opinion, OpinionStatus, Scope, StrategyMatch
from ucma.validation import check_content, check_limit, check_query

__all__ = ["Synthesizer"]

logger = logging.getLogger(__name__)

_SPARE = 5
_MAX_LIMIT = 100
_Vectors = np.ndarray
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Reading:
    """What one synthesize reads the cached parts with: the scope, its cache, the
    event-log token read first, and a flag per part served from the cache."""

    storage: Storage
    scope: Scope
    cache: ScopeCache
    latest: tuple[str | None, ...]
    hits: list[bool]


class Synthesizer(Goals):
    """synthesize."""

    async def synthesize(
        self,
        query: str,
        *,
        task: str | None = None,
        action: str | None = None,
        context: Mapping[str, object] | None = None,
        limit: int = 5,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Synthesis:
        """Everything memory holds for ``query``, from each paradigm it needs, in one
        call (seed 000's response synthesis): ``facts`` (recall), ``preferences``
        (related current opinions), ``strategies`` (ranked by competence x success
        rate), ``prediction`` (``simulate`` of ``action``, default the capability the
        task needs, in ``context``), ``goals`` (related active goals), ``competence``
        (``introspect`` of ``task``, default the query) and ``advice``
        (``should_attempt``), at most ``limit`` of each list.

        Seed 000's conflict matrix is applied and each conflict found is a caveat: a
        known fact that contradicts the prediction halves its confidence; a strategy
        of a domain the self-model finds weak keeps half its score; an uncertain
        prediction says to widen its interval and seek facts; two current facts that
        disagree name the one to prefer (the more recent, unless the older one's
        source is clearly more reliable). A read: nothing is written but recall's
        bookkeeping."""
        scope = self._scope(user_id, agent_id)
        limits = self.config.limits
        text = check_query(query, limits)
        if not text.strip():
            raise ValidationError("query must not be empty")
        job = check_content(task, limits, "task") if task is not None else text
        verb = check_label(action, "action") if action is not None else None
        conditions = check_context(context)
        count = check_limit(limit, _MAX_LIMIT)
        wanted = set(paradigms_of(text))
        if task is not None:  # help with a task: facts, strategies and goals (the router's rule)
            wanted = set(ALL)
        if verb is not None:
            wanted.add(Paradigm.PREDICTIVE)
        declarative = Paradigm.DECLARATIVE in wanted
        procedural = Paradigm.PROCEDURAL in wanted
        predictive = Paradigm.PREDICTIVE in wanted
        text = await self._tokenise_query(scope, text)
        storage = await self._ready()
        # One model call for every text compared (recall's included: its reads then hit
        # the query cache). The query is compared as recall embeds it.
        plan = await self._route(scope, text, self._clock())  # type: ignore[attr-defined] # engine/retrieval.py
        wanted_texts = _embedded(plan) if declarative else [plan.embedded_text]
        texts = list(dict.fromkeys([*wanted_texts, job]))
        embedding = asyncio.ensure_future(self._embed_queries(texts))
        cache = self._synthesis.get(scope)
        if cache is None:
            cache = self._synthesis[scope] = ScopeCache(self.config.synthesis.strategy_tasks)
        hits_cache: list[bool] = []
        kwargs: dict[str, Any] = {"user_id": scope.user_id, "agent_id": scope.agent_id}
        # While the model runs: the reads that need no vector.
        early: tuple[Simulation, list[Fact]] | None = None
        try:
            latest = await self._run(storage.events.latest, scope, WATCHED)
            reading = _Reading(storage, scope, cache, latest, hits_cache)
            known, capability_vectors = await self._cached_competences(reading)
            if verb is not None:
                early = (
                    await self.simulate(verb, conditions, **kwargs),
                    await self._run(storage.facts.about, scope, verb),
                )
            embedded = dict(zip(texts, await embedding, strict=True))
        except BaseException:
            embedding.cancel()
            raise
        query_vector, task_vector = embedded[plan.embedded_text], embedded[job]

        facts: list[Hit] = []
        if declarative:
            # One layer, no cascade (remember's search), a few spare hits for the opinions
            # and procedures left out (a filter inside recall costs more than this).
            result = await self.recall(  # type: ignore[attr-defined] # engine/retrieval.py
                text,
                limit=min(count + _SPARE, self.config.retrieval.max_results_limit),
                cascade=False,
                **kwargs,
            )
            facts = [h for h in result.hits if _is_fact(h)][:count]
        # Preferences bear on every answer (seed 000: "accessed every query").
        opinions, vectors = await self._cached_preferences(reading)
        preferences = _related(
            opinions, vectors, query_vector, self.config.synthesis.preference_relevance
        )[:count]

        matches: list[StrategyMatch] = []
        if procedural or predictive:
            matches = await self._cached_strategies(reading, job)

        introspection: Introspection | None = None
        prediction: Simulation | None = None
        goals: list[Goal] = []
        advice = None
        caveats: list[str] = []
        if predictive:
            introspection = await self._introspect(scope, job, None, known, capability_vectors)
            if early is None and introspection.capability is not None:
                verb = introspection.capability
                early = (
                    await self.simulate(verb, conditions, **kwargs),
                    await self._run(storage.facts.about, scope, verb),
                )
            active, goal_vectors = await self._cached_goals(reading)
            goals = _related(
                active, goal_vectors, query_vector, self.config.synthesis.goal_relevance
            )[:count]
            past = await self._past_success_rate(scope, task_vector)
            if early is not None:
                simulated, about = early
                cfg = self.config.synthesis
                doubt = uncertainty_caveat(simulated, cfg.uncertain_width, cfg.uncertain_support)
                stated = [h.memory for h in facts if isinstance(h.memory, Fact)] + about
                prediction, found = with_contradictions(
                    simulated, contradicting_facts(simulated, stated)
                )
                caveats += found + ([doubt] if doubt is not None else [])
            advice = self._advice(job, conditions, introspection, prediction, past, matches)

        ranked = []
        if procedural:
            ranked = self._rank_for(matches, known, introspection)[:count]
            caveats += [
                f"strategy {r.name!r} deprioritised: the self-model finds {r.domain!r} weak"
                for r in ranked
                if r.deprioritised
            ]
        caveats += fact_caveats(
            [h.memory for h in facts if isinstance(h.memory, Fact)],
            lambda predicate: self.predicates.classify(predicate).functional,
        )
        paradigms = tuple(p.value for p in ALL if p in wanted)
        logger.info(
            "synthesize: %s, %d facts, %d strategies, %d caveats%s",
            "/".join(paradigms),
            len(facts),
            len(ranked),
            len(caveats),
            " (cached)" if any(hits_cache) else "",
        )
        return Synthesis(
            query=text,
            task=job,
            paradigms=paradigms,
            facts=tuple(facts),
            preferences=tuple(copy.deepcopy(preferences)),
            strategies=tuple(ranked),
            prediction=prediction,
            goals=tuple(copy.deepcopy(goals)),
            competence=introspection,
            advice=advice,
            caveats=tuple(caveats),
            cached=any(hits_cache),
        )

    def _rank_for(
        self,
        matches: Sequence[StrategyMatch],
        known: Sequence[Competence],
        introspection: Introspection | None,
    ) -> list[Any]:
        """Rank strategies by competence x success rate (``ucma.paradigms.synthesis``):
        the competence of each strategy's domain where the self-model has attempts of
        it, else the task's (0.5 with neither)."""
        cfg = self.config.predictive
        by_domain = {normal(c.capability): c for c in known if c.attempts > 0}
        fallback = introspection.estimated_accuracy if introspection is not None else 0.5

        def competence_of(domain: str | None) -> float:
            found = by_domain.get(normal(domain)) if domain else None
            if found is None:
                return fallback
            return estimate(found.successes, found.attempts, cfg.interval).mean

        weak = [c.capability for c in known if is_weak(c.successes, c.attempts, cfg)]
        return rank_strategies(matches, competence_of, weak)

    # -- the cached parts ------------------------------------------------------------

    @staticmethod
    async def _cached(
        reading: _Reading, part: Part, load: Callable[[], Awaitable[T]], key: str = ""
    ) -> T:
        """``part`` from the cache when its token is unchanged, else ``load()`` kept
        under the token read before it (``ucma.engine.synthesis_cache``)."""
        token = part_token(reading.latest, part)
        found = reading.cache.get(part, token, key)
        reading.hits.append(found is not None)
        if found is not None:
            return found  # type: ignore[no-any-return]
        value = await load()
        reading.cache.put(part, token, value, key)
        return value

    async def _rows(self, texts: Sequence[str]) -> _Vectors:
        """The query vectors of ``texts`` as one matrix (no rows for none)."""
        rows = list(await self._embed_queries(list(texts))) if texts else []
        return _matrix(rows, self._inner_embedder.dimension)

    async def _cached_preferences(
        self,
        reading: _Reading,
    ) -> tuple[list[Opinion], _Vectors]:
        """The current opinions, each with its statement's stored vector (its stance's
        query vector when the statement is gone)."""
        storage, scope = reading.storage, reading.scope
        limit = self.config.synthesis.max_opinions

        def read() -> tuple[list[Opinion], dict[str, np.ndarray]]:
            opinions = storage.opinions.list(scope, status=OpinionStatus.CURRENT, limit=limit)
            ids = [o.memory_id for o in opinions if o.memory_id]
            return opinions, storage.memories.vectors(scope, ids) if ids else {}

        async def load() -> tuple[list[Opinion], _Vectors]:
            opinions, stored = await self._run(read)
            missing = [o.stance for o in opinions if o.memory_id not in stored]
            embedded = iter(await self._rows(missing))
            rows = [
                stored[o.memory_id] if o.memory_id in stored else next(embedded) for o in opinions
            ]
            return opinions, _matrix(rows, self._inner_embedder.dimension)

        return await self._cached(reading, Part.PREFERENCES, load)

    async def _cached_goals(
        self,
        reading: _Reading,
    ) -> tuple[list[Goal], _Vectors]:
        """The active goals, each with its description's query vector."""

        async def load() -> tuple[list[Goal], _Vectors]:
            goals = await self._run(
                reading.storage.goals.list,
                reading.scope,
                statuses=[GoalStatus.ACTIVE],
                limit=self.config.synthesis.max_goals,
            )
            return goals, await self._rows([g.description for g in goals])

        return await self._cached(reading, Part.GOALS, load)

    async def _cached_competences(
        self,
        reading: _Reading,
    ) -> tuple[list[Competence], _Vectors]:
        """The self-model's competences, each with its capability's query vector."""

        async def load() -> tuple[list[Competence], _Vectors]:
            known = await self._run(
                reading.storage.predictive.competences, reading.scope, limit=10_000
            )
            return known, await self._rows([c.capability for c in known])

        return await self._cached(reading, Part.COMPETENCES, load)

    async def _cached_strategies(self, reading: _Reading, task: str) -> list[StrategyMatch]:
        """``strategies_for(task)``, kept per task."""

        async def load() -> list[StrategyMatch]:
            return await self.strategies_for(
                task,
                limit=self.config.synthesis.strategy_candidates,
                user_id=reading.scope.user_id,
                agent_id=reading.scope.agent_id,
            )

        return await self._cached(reading, Part.STRATEGIES, load, task)


def _is_fact(hit: Hit) -> bool:
    """A declarative hit: not a procedure (strategies) nor in the opinion bank
    (preferences)."""
    return hit.kind is not MemoryKind.PROCEDURAL and hit.memory.bank is not Bank.OPINION


def _matrix(rows: Sequence[np.ndarray], dimension: int) -> np.ndarray:
    if not rows:
        return np.zeros((0, dimension), dtype=np.float32)
    return np.vstack(rows).astype(np.float32, copy=False)


def _related(
    items: Sequence[Any], vectors: np.ndarray, query: np.ndarray, floor: float
) -> list[Any]:
    """The items whose vector is at least ``floor`` related to ``query``, closest first."""
    if not items:
        return []
    scores = vectors @ query.astype(np.float32, copy=False)
    order = sorted(range(len(items)), key=lambda i: -float(scores[i]))
    return [items[i] for i in order if float(scores[i]) >= floor]
