"""The gardener (seed 003 "Temporal Workflows"): scheduled maintenance jobs.

    job          every     does
    decay        1 day     the forgetting pass, retention rule: archive decayed
                           memories, purge archives older than 30 days
    consolidate  7 days    a full sleep cycle per scope (consolidate patterns)
    prune        7 days    the forgetting pass, salience rule (R21: below 0.05)
    identity     30 days   extract identity-level patterns: facts reinforced at
                           least 3 times over at least 7 days move up a temporal
                           level (preferences and identity predicates up to 4)

Last-run times live in the database (``LifecycleStore.job_runs``), so the
schedule survives restarts. A job is due when it never ran or last ran at
least one period ago; after downtime an overdue job runs once on the next
tick (catch-up) and its summary records how many periods were missed: decay
is computed from timestamps, so one run covers them all. ``begin_job`` takes
the job's lock and re-checks that it is still due in one write transaction,
so two gardeners (threads, engines or processes on the same file) started at
once run each job exactly once; a lock whose holder died expires after the
lease. ``ucma gardener run``, the scheduler in ``ucma serve`` and ``ucma worker``
(``maintenance_loop``) call ``AsyncMemory.run_gardener``, which uses this class.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ucma.config import ConsolidationConfig
from ucma.errors import UCMAError, ValidationError
from ucma.lifecycle.clock import Clock
from ucma.memory.retention import SECONDS_PER_DAY, initial_stability
from ucma.storage.base import Storage
from ucma.types import Fact, HistoryEntry, MemoryKind, RetentionInfo, Scope

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory
    from ucma.lifecycle.consolidation import SleepReport

__all__ = [
    "JOB_PERIODS",
    "Gardener",
    "GardenerReport",
    "MaintenanceReport",
    "maintain",
    "maintenance_loop",
    "promote_identity_patterns",
]

logger = logging.getLogger(__name__)

JOB_PERIODS: Mapping[str, float] = {
    "decay": 1 * SECONDS_PER_DAY,
    "consolidate": 7 * SECONDS_PER_DAY,
    "prune": 7 * SECONDS_PER_DAY,
    "identity": 30 * SECONDS_PER_DAY,
}
_IDENTITY_PREDICATES = frozenset(
    {"is", "name", "prefers", "likes", "loves", "hates", "dislikes", "values", "believes"}
)

JobFunction = Callable[[Scope], Awaitable[Mapping[str, Any]]]
Runner = Callable[..., Awaitable[Any]]


@dataclass(slots=True)
class GardenerReport:
    """Per job: "ran" (with its summary), "not due", "locked" (another gardener
    holds it) or "failed" (with the error, which is also logged). A job that failed
    for some scopes still ran for the others; ``failed_scopes`` names those that
    failed ("user/agent": error) and the job stays due, so the next run retries it."""

    ran: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    failed_scopes: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "skipped": self.skipped,
            "failed": self.failed,
            "failed_scopes": self.failed_scopes,
        }


class Gardener:
    """Runs due jobs over every scope of a database, one lock per job."""

    def __init__(
        self,
        *,
        storage: Storage,
        run: Runner,
        clock: Clock,
        jobs: Mapping[str, JobFunction],
        config: ConsolidationConfig,
        owner: str | None = None,
    ) -> None:
        unknown = set(jobs) - set(JOB_PERIODS)
        if unknown:
            raise ValidationError(f"unknown gardener jobs {sorted(unknown)}")
        self._storage = storage
        self._run = run
        self._clock = clock
        self._jobs = jobs
        self._config = config
        self.owner = owner or f"gardener-{uuid.uuid4().hex[:12]}"

    async def run(self, job: str | None = None) -> GardenerReport:
        """Run the due jobs, or only ``job`` (then whether due or not)."""
        if job is not None and job not in self._jobs:
            raise ValidationError(f"unknown job {job!r}; use one of {sorted(self._jobs)}")
        report = GardenerReport()
        for name in [job] if job is not None else list(self._jobs):
            await self._run_job(name, report, forced=job is not None)
        return report

    async def _run_job(self, name: str, report: GardenerReport, *, forced: bool) -> None:
        period = JOB_PERIODS[name]
        now = self._clock.now()
        due_before = math.inf if forced else now - period
        runs = await self._run(self._storage.lifecycle.job_runs)
        previous = runs.get(name)
        taken = await self._run(
            self._storage.lifecycle.begin_job,
            name,
            self.owner,
            now,
            due_before=due_before,
            lease_seconds=self._config.gardener_lease_seconds,
        )
        if not taken:
            current = (await self._run(self._storage.lifecycle.job_runs)).get(name)
            locked = current is not None and current.locked_by not in (None, self.owner)
            report.skipped[name] = "locked" if locked else "not due"
            return
        last = previous.last_run_at if previous is not None else None
        missed = max(0, int((now - last) // period) - 1) if last is not None else 0
        summary: dict[str, Any] = {"scopes": 0, "missed_periods": missed}
        failed: dict[str, str] = {}
        try:
            scopes: Sequence[Scope] = await self._run(self._storage.memories.scopes)
            for scope in scopes:
                try:
                    result = await self._jobs[name](scope)
                except Exception as exc:  # one scope's bad record must not stop the rest
                    failed[f"{scope.user_id}/{scope.agent_id}"] = f"{type(exc).__name__}: {exc}"
                    logger.error("gardener job %s failed for %s", name, scope, exc_info=exc)
                    continue
                summary["scopes"] += 1
                for key, value in result.items():
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        summary[key] = summary.get(key, 0) + value
        except (UCMAError, OSError) as exc:
            await self._run(self._storage.lifecycle.abandon_job, name, self.owner)
            report.failed[name] = f"{type(exc).__name__}: {exc}"
            logger.error("gardener job %s failed: %s", name, exc)
            return
        except BaseException:
            await self._run(self._storage.lifecycle.abandon_job, name, self.owner)
            raise
        if failed:
            # Every other scope ran; the job stays due, so the next tick retries it.
            await self._run(self._storage.lifecycle.abandon_job, name, self.owner)
            report.failed[name] = f"{len(failed)} of {len(scopes)} scopes failed: " + "; ".join(
                f"{scope}: {error}" for scope, error in failed.items()
            )
            report.failed_scopes[name] = failed
            logger.info("gardener job %s ran for %d scopes: %s", name, summary["scopes"], summary)
            return
        await self._run(
            self._storage.lifecycle.finish_job, name, self.owner, self._clock.now(), summary
        )
        report.ran[name] = summary
        logger.info("gardener job %s done: %s", name, summary)


def promote_identity_patterns(
    storage: Storage, scope: Scope, now: float, config: ConsolidationConfig
) -> dict[str, int]:
    """The monthly job (storage thread): facts confirmed repeatedly over time move
    up one temporal level; preference and identity predicates may reach level 4,
    others stop at 3. Stability is raised to the new level's R19 value."""
    promoted: list[Fact] = []
    offset, page = 0, 1000
    while True:
        records = storage.memories.list(scope, kind=MemoryKind.SEMANTIC, limit=page, offset=offset)
        for fact in records:
            assert isinstance(fact, Fact)
            span = ((fact.last_verified or fact.created_at) - fact.created_at) / SECONDS_PER_DAY
            ceiling = 4 if fact.predicate.lower() in _IDENTITY_PREDICATES else 3
            if (
                fact.reinforcement_count >= config.identity_min_reinforcements
                and span >= config.identity_min_span_days
                and fact.temporal_level < ceiling
            ):
                promoted.append(
                    replace(fact, temporal_level=fact.temporal_level + 1, updated_at=now)
                )
        if len(records) < page:
            break
        offset += page
    if not promoted:
        return {"promoted": 0}
    states = storage.retention.get_many(scope, [f.id for f in promoted])
    with storage.transaction():
        for fact in promoted:
            storage.facts.update(fact)
        storage.retention.put_many(
            scope,
            [
                replace(s, stability=max(s.stability, initial_stability(f.temporal_level)))
                if (s := states.get(f.id)) is not None
                else RetentionInfo(f.id, initial_stability(f.temporal_level), now, 0)
                for f in promoted
            ],
        )
        storage.lifecycle.add_history(
            scope,
            [
                HistoryEntry(
                    f.id,
                    "level_promoted",
                    now,
                    {"to": f.temporal_level, "reinforcements": f.reinforcement_count},
                )
                for f in promoted
            ],
        )
    return {"promoted": len(promoted)}


@dataclass(slots=True)
class MaintenanceReport:
    """One round of ``maintain``: each scope's sleep report and the gardener's report;
    ``failed_scopes`` lists the scopes whose sleep cycle or a gardener job failed."""

    sleep: list[SleepReport] = field(default_factory=list)
    gardener: GardenerReport = field(default_factory=GardenerReport)
    error: str | None = None

    @property
    def failed_scopes(self) -> list[str]:
        failed = {f"{r.user_id}/{r.agent_id}" for r in self.sleep if r.error is not None}
        for scopes in self.gardener.failed_scopes.values():
            failed.update(scopes)
        return sorted(failed)


async def maintain(memory: AsyncMemory) -> MaintenanceReport:
    """One round of the server's maintenance: a sleep cycle for every scope, then the due
    gardener jobs. A scope that fails is logged and reported, the others go on, and the
    next round tries it again; an error outside any one scope (the database itself) ends
    the round, logged and reported in ``error``."""
    report = MaintenanceReport()
    try:
        report.sleep = await memory.sleep_all()
        report.gardener = await memory.run_gardener()
    except Exception as exc:  # the loop must outlive any one round
        logger.exception("scheduled maintenance failed; retrying next interval")
        report.error = f"{type(exc).__name__}: {exc}"
    if report.failed_scopes:
        logger.warning(
            "scheduled maintenance failed for %d scopes (retried next interval): %s",
            len(report.failed_scopes),
            ", ".join(report.failed_scopes),
        )
    return report


async def maintenance_loop(
    memory: AsyncMemory,
    stop: asyncio.Event,
    *,
    interval_seconds: float | None = None,
    rounds: int | None = None,
    on_round: Callable[[MaintenanceReport], None] | None = None,
) -> int:
    """The scheduler of ``ucma serve`` and ``ucma worker``: every interval, ``maintain``
    (the same calls as ``ucma sleep`` and ``ucma gardener run``), each round's report
    handed to ``on_round``. Failures are logged and the loop goes on, failed scopes
    included; ``stop`` ends it, and so does the last of ``rounds`` (None: no end).
    Returns the rounds run."""
    interval = interval_seconds or memory.config.consolidation.interval_seconds
    done = 0
    while not stop.is_set() and (rounds is None or done < rounds):
        report = await maintain(memory)
        done += 1
        if on_round is not None:
            on_round(report)
        if rounds is not None and done >= rounds:
            break
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
        except TimeoutError:
            continue
    return done
