"""The sleep cycle (seed 001 chapter 21): compress, abstract, reinforce, prune, clean.

1. compress: short-term episodes past their TTL (48 h since they were stored,
   by ``created_at``, never by the event ``timestamp``: imported history is
   fresh) are scored (stored salience, or an LLM importance classifier when
   configured) against the adaptive threshold ``base + min(n / 100 *
   penalty_max, penalty_max)`` (0.30 plus up to 0.40 when many expire at
   once). Those at or above it are summarised and promoted to the medium-term
   tier, and so is a statement that replaced an older one and stands (the
   current value, whatever its importance); the rest are archived (never
   deleted outright; promoted instead when forgetting is off).
2. abstract: episodes not yet abstracted and not replaced go through the fact
   extractor; each fact is stored (or reinforced: the same triple is the same
   fact), valid since its first source episode was said, with
   provenance ``inferred`` (rules) or ``generated`` (LLM), its source episodes,
   and a ``derived_from`` edge to each.
3. reinforce: pending co-retrieval counts strengthen ``co_retrieved`` edges by
   Hebb's rule, ``w + rate * count`` capped at ``hebbian_max_weight``; then
   PageRank is recomputed and stored as each node's importance.
4. prune: the forgetting pass (``ucma.lifecycle.forgetting``).
5. clean: rows that point at memories that no longer exist are removed.

Each phase reads, computes (embeddings and provider calls happen outside any
transaction) and writes in one transaction, so the store is consistent after
every phase. ``interrupt`` is checked between phases: an interrupted cycle
stops after the phase it is in, and the next cycle resumes (each phase only
looks at work that is still pending). Providers are called through
``ucma.providers.contracts``: a provider failure or a result outside its
contract raises ``ProviderError`` with nothing of that phase written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ucma.config import GraphConfig, UCMAConfig
from ucma.lifecycle.clock import Clock
from ucma.lifecycle.forgetting import forgetting_pass
from ucma.memory.graph_maths import pagerank
from ucma.memory.levels import select_temporal_level
from ucma.memory.retention import initial_stability
from ucma.providers.base import ExtractedFact, Providers
from ucma.providers.contracts import CheckedProviders, provider_name
from ucma.storage.base import Storage
from ucma.types import (
    Episode,
    Fact,
    GraphEdge,
    HistoryEntry,
    RetentionInfo,
    Scope,
    SleepRun,
    Tier,
    fact_id_for,
)

__all__ = [
    "PHASES",
    "SleepCycle",
    "SleepReport",
    "compression_threshold",
    "graph_importance",
    "hebbian_weight",
]

logger = logging.getLogger(__name__)

PHASES = ("compress", "abstract", "reinforce", "prune", "clean")
CO_RETRIEVED = "co_retrieved"

Runner = Callable[..., Awaitable[Any]]
Progress = Callable[[str, int, int], None]


def compression_threshold(expired: int, base: float, penalty_max: float) -> float:
    """Seed 001's adaptive importance bar: raised when many episodes expire at once."""
    return base + min(expired / 100.0 * penalty_max, penalty_max)


def hebbian_weight(weight: float, count: int, rate: float, cap: float) -> float:
    """Hebb's rule with a cap: ``min(cap, w + rate * count)``, never below ``w``."""
    return max(weight, min(cap, weight + rate * count))


def graph_importance(storage: Storage, scope: Scope, config: GraphConfig) -> dict[str, float]:
    """PageRank over the scope's live memory graph, stored per node (storage thread)."""
    nodes = storage.graph.node_ids(scope)
    if not nodes:
        return {}
    index = {n: i for i, n in enumerate(nodes)}
    edges = [
        e for e in storage.graph.all_edges(scope) if e.source_id in index and e.target_id in index
    ]
    scores = pagerank(
        len(nodes),
        np.array([index[e.source_id] for e in edges], dtype=np.int64),
        np.array([index[e.target_id] for e in edges], dtype=np.int64),
        np.array([e.weight for e in edges], dtype=np.float64),
        damping=config.pagerank_damping,
        iterations=config.pagerank_iterations,
    )
    result = {n: float(scores[i]) for n, i in index.items()}
    storage.graph.set_pagerank(scope, result)
    return result


def _current_replacements(
    storage: Storage, scope: Scope, episodes: Sequence[Episode], at: float
) -> dict[str, list[str]]:
    """The episodes among ``episodes`` that replaced older memories and stand
    (none replaced them in turn), each with what it replaced (storage thread).
    Compression keeps them whatever their importance: "Omar went from 12 km to
    10 km on daily runs" reads as chatter to the importance heuristic, and
    archived it would leave the value it replaced as the current one in search."""
    ids = {e.id for e in episodes}
    replaced: dict[str, list[str]] = {}
    for entry in storage.conflicts.supersessions(scope):
        if entry.superseded_by in ids and entry.superseded_at <= at:
            replaced.setdefault(entry.superseded_by, []).append(entry.memory_id)
    gone = storage.conflicts.superseded(scope, list(replaced), at=at)
    return {i: olds for i, olds in replaced.items() if i not in gone}


@dataclass(slots=True)
class SleepReport:
    """What one cycle did for one scope; ``phases`` lists the phases that completed.

    ``error`` is set when the cycle failed (``sleep_all`` goes on with the next scope and
    the scope is tried again on the next run): the error's type and message.
    """

    user_id: str
    agent_id: str
    phases: list[str] = field(default_factory=list)
    interrupted: bool = False
    compress: dict[str, Any] = field(default_factory=dict)
    abstract: dict[str, Any] = field(default_factory=dict)
    reinforce: dict[str, Any] = field(default_factory=dict)
    prune: dict[str, Any] = field(default_factory=dict)
    clean: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def episodes_processed(self) -> int:
        return int(self.compress.get("expired", 0)) + int(self.abstract.get("episodes", 0))


class SleepCycle:
    """Runs the phases for one scope against an engine's storage thread.

    ``run`` executes a function on the storage thread (``AsyncMemory._run``);
    ``embed`` computes unit vectors. ``interrupt`` (an ``asyncio.Event``) stops
    the cycle between phases, and so does ``lost`` (set when the process lost its
    claim on the scope's lease, ``ucma.lifecycle.leases``). Every cycle is recorded
    (``LifecycleStore.sleep_runs``) with ``trigger``, why it ran, failed and
    interrupted ones too.
    """

    def __init__(
        self,
        *,
        storage: Storage,
        run: Runner,
        embed: Callable[[Sequence[str]], Awaitable[np.ndarray]],
        providers: Providers,
        config: UCMAConfig,
        clock: Clock,
        interrupt: asyncio.Event | None = None,
        progress: Progress | None = None,
        trigger: str = "request",
        lost: asyncio.Event | None = None,
    ) -> None:
        self._storage = storage
        self._run = run
        self._embed = embed
        self._providers = providers
        # Providers are duck-typed: every call goes through their contracts.
        self._calls = CheckedProviders(providers)
        self._config = config
        self._clock = clock
        self._stops = tuple(event for event in (interrupt, lost) if event is not None)
        self._progress = progress
        self._trigger = trigger

    async def run(
        self, scope: Scope, phases: Sequence[str] = PHASES, *, isolate: bool = False
    ) -> SleepReport:
        """The cycle's phases for ``scope``. A failing phase raises, unless ``isolate``:
        then the report carries the error beside the phases that completed (each
        phase commits on its own), so one scope's bad record cannot stop a caller
        that goes through every scope."""
        unknown = set(phases) - set(PHASES)
        if unknown:
            raise ValueError(f"unknown sleep phases {sorted(unknown)}; use {PHASES}")
        report = SleepReport(scope.user_id, scope.agent_id)
        started_at = self._clock.now()
        started = time.perf_counter()
        todo = [p for p in PHASES if p in phases]
        for number, phase in enumerate(todo, start=1):
            if any(event.is_set() for event in self._stops):
                report.interrupted = True
                logger.info("sleep %s interrupted before %s", scope.user_id, phase)
                break
            if self._progress is not None:
                self._progress(phase, number, len(todo))
            try:
                setattr(report, phase, await getattr(self, f"_{phase}")(scope))
            except Exception as exc:
                report.error = f"{phase}: {type(exc).__name__}: {exc}"
                report.seconds = time.perf_counter() - started
                if not isolate:
                    await self._record_failed(report, started_at)
                    raise
                logger.error("sleep %s failed in %s", scope, phase, exc_info=exc)
                break
            report.phases.append(phase)
        report.seconds = time.perf_counter() - started
        await self._run(
            self._storage.lifecycle.add_sleep_run,
            self._as_run(report, started_at),
            keep=self._config.consolidation.sleep_runs_kept,
        )
        logger.info("sleep %s/%s: %s", scope.user_id, scope.agent_id, report.phases)
        return report

    def _as_run(self, report: SleepReport, started_at: float) -> SleepRun:
        return SleepRun(
            user_id=report.user_id,
            agent_id=report.agent_id,
            trigger=self._trigger,
            started_at=started_at,
            seconds=report.seconds,
            phases=tuple(report.phases),
            changes={phase: dict(getattr(report, phase)) for phase in report.phases},
            interrupted=report.interrupted,
            error=report.error,
        )

    async def _record_failed(self, report: SleepReport, started_at: float) -> None:
        """Record a cycle that is about to raise; a failure to record is logged, so the
        cycle's own error is what the caller sees."""
        try:
            await self._run(
                self._storage.lifecycle.add_sleep_run,
                self._as_run(report, started_at),
                keep=self._config.consolidation.sleep_runs_kept,
            )
        except Exception:
            logger.exception(
                "could not record the failed sleep cycle of %s/%s", report.user_id, report.agent_id
            )

    # -- phase 1 --------------------------------------------------------------------

    async def _compress(self, scope: Scope) -> dict[str, Any]:
        cfg = self._config.consolidation
        now = self._clock.now()
        cutoff = now - self._config.episodic.short_term_ttl_hours * 3600.0
        expired: list[Episode] = await self._run(
            self._storage.episodes.expired_short_term, scope, cutoff
        )
        threshold = compression_threshold(
            len(expired), cfg.compression_importance_base, cfg.compression_volume_penalty_max
        )
        if not expired:
            return {"expired": 0, "promoted": 0, "archived": 0, "threshold": threshold}
        if self._providers.importance is not None:
            scores = [await self._calls.classify_importance(e.content, e.source) for e in expired]
        else:
            scores = [e.effective_salience for e in expired]
        current = await self._run(_current_replacements, self._storage, scope, expired, now)
        kept = [s >= threshold or e.id in current for e, s in zip(expired, scores, strict=True)]
        keep = [(e, s) for e, s, k in zip(expired, scores, kept, strict=True) if k]
        drop = [(e, s) for e, s, k in zip(expired, scores, kept, strict=True) if not k]
        summaries = [
            await self._calls.summarize(e.content, cfg.summary_max_tokens) for e, _ in keep
        ]
        forgetting = self._config.forgetting.enabled
        promoted = [
            replace(e, tier=Tier.MEDIUM_TERM, summary=summary, updated_at=now)
            for (e, _), summary in zip(keep, summaries, strict=True)
        ]
        if not forgetting:
            promoted += [replace(e, tier=Tier.MEDIUM_TERM, updated_at=now) for e, _ in drop]
        history = [
            HistoryEntry(
                e.id,
                "promoted",
                now,
                {"importance": s, "threshold": threshold}
                | ({"replaces": current[e.id]} if e.id in current else {}),
            )
            for e, s in keep
        ]
        archived = [e.id for e, _ in drop] if forgetting else []
        history += [
            HistoryEntry(
                e.id,
                "archived",
                now,
                {
                    "reason": f"compression: importance {s:.3f} is below the adaptive "
                    f"threshold {threshold:.3f} ({len(expired)} episodes expired together)"
                },
            )
            for e, s in drop
            if forgetting
        ]

        def write() -> None:
            with self._storage.transaction():
                for episode in promoted:
                    self._storage.episodes.update(episode)
                self._storage.memories.set_archived(scope, archived, now)
                self._storage.lifecycle.add_history(scope, history)

        await self._run(write)
        return {
            "expired": len(expired),
            "promoted": len(promoted),
            "archived": len(archived),
            "threshold": round(threshold, 4),
        }

    # -- phase 2 --------------------------------------------------------------------

    async def _abstract(self, scope: Scope) -> dict[str, Any]:
        batch = self._config.consolidation.abstraction_batch
        episodes: list[Episode] = await self._run(
            self._storage.lifecycle.unabstracted_episodes, scope, limit=batch
        )
        if not episodes:
            return {"episodes": 0, "facts_new": 0, "facts_reinforced": 0}
        now = self._clock.now()
        # A statement a later one replaced says nothing current: read, it would
        # bring the old value back as a fact of today (its claims were resolved
        # when it was observed). It is marked abstracted with the rest.
        replaced = await self._run(
            self._storage.conflicts.superseded, scope, [e.id for e in episodes], at=now
        )
        found: dict[str, tuple[ExtractedFact, list[str]]] = {}
        for episode in (e for e in episodes if e.id not in replaced):
            facts = await self._calls.extract_facts(
                episode.content, speaker=episode.source, reference_time=episode.timestamp
            )
            for fact in facts:
                key = fact_id_for(scope, fact.subject, fact.predicate, fact.object)
                entry = found.setdefault(key, (fact, []))
                if episode.id not in entry[1]:
                    entry[1].append(episode.id)
        existing = await self._run(self._storage.memories.get_many, scope, list(found))
        new_ids = [k for k in found if k not in existing]
        vectors = await self._embed([found[k][0].content for k in new_ids]) if new_ids else None
        weight = self._config.graph.evidence_edge_weight
        by_id = {e.id: e for e in episodes}
        new_facts = [self._fact(scope, k, *found[k], now, by_id) for k in new_ids]
        reinforced = [existing[k].reinforced(found[k][1], now) for k in found if k in existing]
        edges = [
            GraphEdge(k, source, "derived_from", weight, now)
            for k, (_, sources) in found.items()
            for source in sources
        ]
        history = [
            HistoryEntry(f.id, "derived", now, {"from": f.source_episode_ids, "by": "abstraction"})
            for f in new_facts
        ] + [
            HistoryEntry(f.id, "reinforced", now, {"from": found[f.id][1], "by": "abstraction"})
            for f in reinforced
        ]
        restored = [f.id for f in reinforced if f.archived_at is not None]

        def write() -> None:
            with self._storage.transaction():
                for i, fact in enumerate(new_facts):
                    assert vectors is not None
                    self._storage.facts.add(fact, vectors[i])
                self._storage.retention.put_many(
                    scope,
                    [
                        RetentionInfo(f.id, initial_stability(f.temporal_level), now, 0)
                        for f in new_facts
                    ],
                )
                for fact in reinforced:
                    self._storage.facts.update(fact)
                self._storage.memories.set_archived(scope, restored, None)
                self._storage.graph.add_edges(scope, edges)
                self._storage.lifecycle.mark_abstracted(scope, [e.id for e in episodes], now)
                self._storage.lifecycle.add_history(scope, history)

        await self._run(write)
        return {
            "episodes": len(episodes),
            "facts_new": len(new_facts),
            "facts_reinforced": len(reinforced),
        }

    def _fact(
        self,
        scope: Scope,
        fact_id: str,
        raw: ExtractedFact,
        sources: list[str],
        now: float,
        episodes: Mapping[str, Episode],
    ) -> Fact:
        """``episodes``: the episodes read, by id (``sources`` among them)."""
        said = [episodes[s] for s in sources]
        # An extracted fact restates its evidence, so it is exactly as salient as the
        # strongest episode it came from (not R2's flat 0.6 for inferences: a fact drawn
        # from an explicit statement keeps 1.0, one drawn from chatter stays low).
        salience = max(e.effective_salience for e in said)
        return Fact(
            id=fact_id,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=raw.content,
            provenance=raw.provenance,
            # As lasting as the statements it restates, unless its own words say otherwise.
            temporal_level=select_temporal_level(
                raw.content, "fact", default=max(e.temporal_level for e in said)
            ),
            base_salience=salience,
            created_at=now,
            updated_at=now,
            metadata={"extracted_by": provider_name(self._providers.fact_extractor)},
            subject=raw.subject,
            predicate=raw.predicate,
            object=raw.object,
            confidence=raw.confidence,
            source_episode_ids=list(sources),
            last_verified=now,
            # Valid since it was first said, as observe dates the facts it reads
            # (supersession.claim_fact): dated by the sleep, an old value read late
            # would count as newer than every value said after it.
            valid_from=(
                raw.valid_from if raw.valid_from is not None else min(e.timestamp for e in said)
            ),
            recorded_at=now,
        )

    # -- phase 3 --------------------------------------------------------------------

    async def _reinforce(self, scope: Scope) -> dict[str, Any]:
        cfg = self._config.consolidation
        storage = self._storage
        now = self._clock.now()

        def reinforce() -> dict[str, Any]:
            with storage.transaction():
                pairs = storage.lifecycle.take_co_retrievals(scope)
                edges = []
                for a, b, count in pairs:
                    for source, target in ((a, b), (b, a)):
                        old = next(
                            (
                                e.weight
                                for e in storage.graph.edges_from(scope, source)
                                if e.target_id == target and e.edge_type == CO_RETRIEVED
                            ),
                            0.0,
                        )
                        weight = hebbian_weight(
                            old, count, cfg.hebbian_rate, cfg.hebbian_max_weight
                        )
                        edges.append(GraphEdge(source, target, CO_RETRIEVED, weight, now))
                written = storage.graph.add_edges(scope, edges)
                scores = graph_importance(storage, scope, self._config.graph)
            return {"pairs": len(pairs), "edges_strengthened": written, "nodes": len(scores)}

        return await self._run(reinforce)

    # -- phases 4 and 5 -------------------------------------------------------------

    async def _prune(self, scope: Scope) -> dict[str, Any]:
        report = await self._run(
            forgetting_pass, self._storage, scope, self._clock.now(), self._config.forgetting
        )
        return {"archived": len(report.archived), "purged": len(report.purged)}

    async def _clean(self, scope: Scope) -> dict[str, int]:
        removed: dict[str, int] = await self._run(self._storage.lifecycle.clean_orphans)
        return {name: count for name, count in removed.items() if count}
