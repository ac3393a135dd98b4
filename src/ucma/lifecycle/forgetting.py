"""The forgetting engine: a pure policy, and the pass that applies it to a store.

Policy (``assess``), first matching rule wins; every verdict carries its reason:

1. temporal level 4 (identity) is never pruned automatically (seed 003 R21);
2. an active procedure with success rate above 0.5 is protected (seed 001);
3. a validated learning with confidence above 0.6 is protected (seed 001);
4. PageRank protection: a memory whose PageRank exceeds both seed 001's absolute
   0.01 and ``pagerank_protection_ratio`` times the uniform share 1/n is
   structurally central and kept;
5. R21: effective salience below 0.05 is pruned (the weekly "salience" rule);
6. a memory without retention state is kept (it was never registered);
7. Ebbinghaus: retention ``exp(-t / S)`` below the threshold (0.10) is pruned (the
   daily "retention" rule). For facts the threshold is divided by the fact's
   confidence (floor 0.1): a fact held at confidence 0.3 must be three times as
   well retained to survive (seed 001 chapter 20). Forgetting is importance-
   weighted (seed 001): the threshold is also multiplied by
   ``max(0.1, 2 * (1 - effective salience))``, neutral at salience 0.5, so an
   unreviewed level-1 observation of salience 0.4 goes after about 20 days and
   an explicit statement (salience 1.0) after about 44. The decay itself (the
   R19 rates) does not depend on salience.

Elapsed time is disuse (:func:`disuse_days`): days since the memory was stored or
last reviewed, whichever is later, never since the event it describes, so history
imported with old timestamps decays from its import, not from its dates.

Stability starts at the temporal level's R19 value (``ucma.memory.retention``),
so unreviewed memories lose 10 % a day (level 1), 5 % a week (2), 2 % a month
(3), 1 % a year (4); each retrieval is a review that resets the clock and adds
``0.5 * max(1, days since last review)`` days of stability (the spacing
effect). Both transitions of R20 (a review, an outcome) are pure functions of
``ucma.memory.retention``.

Nothing is deleted outright: the pass archives (archived memories leave
retrieval but stay in exports and in ``get``), and purges only what has been
archived for ``archive_retention_days`` (30, R21). A dry run returns the same
verdicts and writes nothing.

A pass assesses only the memories that could be forgotten: the store tests every live
memory against a necessary condition (``forgetting_bound``, ``ForgettingBound``: level
below 4, and salience below the salience rule's bar or disuse past a lower bound of the
retention rule's) and reads the few that pass; ``examined`` counts every live memory.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import Any

from ucma.config import ForgettingConfig
from ucma.memory.retention import MIN_STABILITY_DAYS, SECONDS_PER_DAY, retention
from ucma.storage.base import Storage
from ucma.types import ForgettingBound, HistoryEntry, MemoryKind, MemoryVitals, Scope

__all__ = [
    "RULES",
    "ForgetVerdict",
    "ForgettingReport",
    "assess",
    "disuse_days",
    "forgetting_bound",
    "forgetting_pass",
    "retention_threshold",
    "salience_factor",
]

logger = logging.getLogger(__name__)

RULES = frozenset({"retention", "salience"})


@dataclass(frozen=True, slots=True)
class ForgetVerdict:
    """The policy's decision about one memory, with the numbers behind it."""

    memory_id: str
    kind: MemoryKind
    temporal_level: int
    forget: bool
    reason: str
    retention: float | None = None
    threshold: float | None = None


@dataclass(slots=True)
class ForgettingReport:
    """What a pass archived (or would archive, in a dry run) and purged."""

    dry_run: bool
    archived: list[ForgetVerdict] = field(default_factory=list)
    purged: list[str] = field(default_factory=list)
    examined: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "examined": self.examined,
            "archived": [asdict(v) for v in self.archived],
            "purged": list(self.purged),
        }


def salience_factor(effective_salience: float, floor: float) -> float:
    """Importance weighting of the threshold: ``max(floor, 2 * (1 - salience))``,
    1 at salience 0.5 (neutral), 2 at 0, ``floor`` for explicit statements (1.0)."""
    return max(floor, 2.0 * (1.0 - effective_salience))


def retention_threshold(vitals: MemoryVitals, config: ForgettingConfig) -> float:
    """The retention below which ``vitals``' memory is forgotten: the base threshold,
    divided by confidence for facts, weighted by effective salience."""
    base = config.retention_threshold * salience_factor(
        vitals.effective_salience, config.salience_weight_floor
    )
    if vitals.kind is MemoryKind.SEMANTIC and vitals.confidence is not None:
        return min(1.0, base / max(vitals.confidence, 0.10))
    return min(1.0, base)


def disuse_days(vitals: MemoryVitals, now: float) -> float:
    """Days since ``vitals``' memory was stored or last reviewed, whichever is later (>= 0).

    Forgetting follows disuse, never the age of the event a memory describes: an episode
    imported today about a conversation of 2024 starts its decay today. Only storage and
    use (``created_at``, ``last_reviewed``) move this clock; ``timestamp`` is for ranking.
    """
    last_reviewed = vitals.last_reviewed if vitals.last_reviewed is not None else vitals.created_at
    return max(0.0, (now - max(vitals.created_at, last_reviewed)) / SECONDS_PER_DAY)


def _pagerank_protected(vitals: MemoryVitals, node_count: int, config: ForgettingConfig) -> bool:
    if node_count <= 0:
        return False
    relative = config.pagerank_protection_ratio / node_count
    return vitals.pagerank > config.importance_protection and vitals.pagerank > relative


def assess(
    vitals: MemoryVitals,
    now: float,
    config: ForgettingConfig,
    *,
    node_count: int,
    rules: Collection[str] = RULES,
) -> ForgetVerdict:
    """Whether to forget one memory at ``now``, and why (see the module docstring)."""

    def verdict(
        forget: bool, reason: str, r: float | None = None, t: float | None = None
    ) -> ForgetVerdict:
        return ForgetVerdict(
            vitals.memory_id, vitals.kind, vitals.temporal_level, forget, reason, r, t
        )

    if vitals.temporal_level >= 4:
        return verdict(False, "level 4 (identity) is never pruned automatically")
    if (
        vitals.kind is MemoryKind.PROCEDURAL
        and vitals.status == "active"
        and (vitals.success_rate or 0.0) > config.protect_procedure_success_rate
    ):
        return verdict(False, f"active procedure with success rate {vitals.success_rate:.2f}")
    if (
        vitals.kind is MemoryKind.LEARNING
        and vitals.validated
        and (vitals.confidence or 0.0) > config.protect_learning_confidence
    ):
        return verdict(False, f"validated learning with confidence {vitals.confidence:.2f}")
    if _pagerank_protected(vitals, node_count, config):
        return verdict(False, f"central in the memory graph (PageRank {vitals.pagerank:.4f})")
    if "salience" in rules and vitals.effective_salience < config.prune_salience_threshold:
        return verdict(
            True,
            f"effective salience {vitals.effective_salience:.3f} is below "
            f"{config.prune_salience_threshold}",
        )
    if vitals.stability is None or vitals.last_reviewed is None:
        return verdict(False, "no retention state")
    elapsed = disuse_days(vitals, now)
    current = retention(vitals.stability, elapsed)
    threshold = retention_threshold(vitals, config)
    if "retention" in rules and current < threshold:
        return verdict(
            True,
            f"retention {current:.3f} is below {threshold:.3f} after {elapsed:.1f} days "
            f"without review (stability {vitals.stability:.1f} days)",
            current,
            threshold,
        )
    return verdict(False, "retained", current, threshold)


def forgetting_bound(
    now: float, config: ForgettingConfig, rules: Collection[str] = RULES
) -> ForgettingBound:
    """What a memory must pass for ``assess`` to forget it at ``now`` under ``rules``
    (see ``ForgettingBound``): the store tests it on every live memory, and the pass
    assesses only those that pass."""
    return ForgettingBound(
        now=now,
        salience_below=config.prune_salience_threshold if "salience" in rules else None,
        retention_threshold=config.retention_threshold if "retention" in rules else None,
        salience_weight_floor=config.salience_weight_floor,
        min_stability=MIN_STABILITY_DAYS,
    )


def forgetting_pass(
    storage: Storage,
    scope: Scope,
    now: float,
    config: ForgettingConfig,
    *,
    dry_run: bool = False,
    rules: Collection[str] = RULES,
    purge: bool = True,
) -> ForgettingReport:
    """Archive what the policy forgets and purge archives past the retention
    period, in one transaction (storage thread). ``dry_run`` writes nothing."""
    # Only the memories the bound admits are read and assessed (at 100,000 memories a
    # few hundred milliseconds instead of seconds); the rest would all be kept.
    live = sum(storage.memories.count(scope).values())
    vitals = storage.lifecycle.vitals(scope, forgetting_bound(now, config, rules))
    verdicts = [assess(v, now, config, node_count=live, rules=rules) for v in vitals]
    report = ForgettingReport(dry_run, [v for v in verdicts if v.forget], examined=live)
    if purge:
        cutoff = now - config.archive_retention_days * SECONDS_PER_DAY
        report.purged = storage.lifecycle.archived_before(scope, cutoff)
    if dry_run or not config.enabled:
        if not config.enabled:
            report.archived, report.purged = [], []
        return report
    history = [
        HistoryEntry(
            v.memory_id,
            "archived",
            now,
            {"reason": v.reason, "retention": v.retention, "threshold": v.threshold},
        )
        for v in report.archived
    ]
    history += [
        HistoryEntry(memory_id, "purged", now, {"after_days": config.archive_retention_days})
        for memory_id in report.purged
    ]
    with storage.transaction():
        storage.memories.set_archived(scope, [v.memory_id for v in report.archived], now)
        for memory_id in report.purged:
            storage.memories.delete(scope, memory_id)
        storage.lifecycle.add_history(scope, history)
    if report.archived or report.purged:
        logger.info(
            "forgetting %s: archived %d, purged %d of %d",
            scope.user_id,
            len(report.archived),
            len(report.purged),
            len(vitals),
        )
    return report
