"""Sleep, forgetting and the gardener (logic in ``ucma.lifecycle``), and the
history, sources, duplicates and retention of a memory."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ucma.engine.base import EngineBase
from ucma.errors import NotFoundError, ValidationError
from ucma.lifecycle.consolidation import PHASES, SleepCycle, SleepReport
from ucma.lifecycle.forgetting import ForgettingReport, forgetting_pass
from ucma.lifecycle.gardener import (
    JOB_PERIODS,
    Gardener,
    GardenerReport,
    promote_identity_patterns,
)
from ucma.lifecycle.leases import Claim, scope_lease_name
from ucma.memory.retention import SECONDS_PER_DAY, retention
from ucma.providers.base import Providers
from ucma.providers.registry import providers_from_config
from ucma.storage.base import Storage
from ucma.types import (
    DuplicateAttempt,
    HistoryEntry,
    MemoryRecord,
    MemorySource,
    Scope,
    SleepRun,
)
from ucma.validation import check_id, check_limit, check_offset

__all__ = ["Lifecycle", "check_days"]

logger = logging.getLogger(__name__)


def check_days(value: object) -> float:
    """A number of days ahead: finite, >= 0, at most 100 years."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 36_500:
        raise ValidationError(f"days_ahead must hold numbers from 0 to 36500, got {value!r}")
    return float(value)


class Lifecycle(EngineBase):
    """sleep, forget, run_gardener and the memory's own lifecycle records."""

    # -- lifecycle: sleep, forgetting, gardener (issue 4; logic in ucma.lifecycle) -------

    def _lifecycle_providers(self) -> Providers:
        if self._providers is None:
            cfg = self.config.consolidation
            self._providers = providers_from_config(
                cfg.llm,
                base_url=cfg.llm_base_url,
                classify_importance=cfg.llm_classify_importance,
                timeout=cfg.llm_timeout_seconds,
                attempts=cfg.llm_attempts,
            )
        return self._providers

    @contextlib.asynccontextmanager
    async def _scope_claim(
        self, scope: Scope, *, wait: bool, finished_before: float = math.inf
    ) -> AsyncIterator[Claim | None]:
        """The scope's cycle lock in this process, then its consolidation lease in the
        database (``ucma.lifecycle.leases``), so no two processes on one database run
        a sleep cycle of the scope at once: None when another process holds it
        (without ``wait``) or finished it after ``finished_before``."""
        async with (
            self._cycle_lock(scope),
            self._lease(
                scope_lease_name(scope), wait=wait, finished_before=finished_before
            ) as claim,
        ):
            yield claim

    def _sleep_cycle(
        self,
        storage: Storage,
        progress: Callable[[str, int, int], None] | None,
        trigger: str,
        claim: Claim | None,
    ) -> SleepCycle:
        return SleepCycle(
            storage=storage,
            run=self._run,
            embed=self._embed,
            providers=self._lifecycle_providers(),
            config=self.config,
            clock=self.clock,
            interrupt=self._interrupt,
            progress=progress,
            trigger=trigger,
            lost=None if claim is None else claim.lost,
        )

    async def sleep(
        self,
        *,
        phases: Sequence[str] | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> SleepReport:
        """Run one sleep cycle for a scope: compress, abstract, reinforce, prune, clean
        (``ucma.lifecycle.consolidation``). ``progress(phase, number, total)`` is called
        as each phase starts; ``interrupt_consolidation()`` stops the cycle between
        phases. A background cycle of the same scope (``new_session``) finishes
        first, and so does one that another process on the database runs (the
        scope's lease, ``ucma.lifecycle.leases``): two cycles of one scope never
        overlap. A provider failure raises
        ``ProviderError``; the phases before it stay committed, nothing of the
        failing phase is written."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        async with self._scope_claim(scope, wait=True) as claim:
            self._interrupt.clear()
            return await self._sleep_cycle(storage, progress, "request", claim).run(
                scope, phases or PHASES
            )

    async def sleep_all(
        self, *, progress: Callable[[str, int, int], None] | None = None
    ) -> list[SleepReport]:
        """A sleep cycle for every scope of the database (``ucma sleep``, the server).

        One scope's failure (a bad record, a provider error) does not stop the others: it
        is logged, its report carries ``error`` (the phases before the failure stay
        committed) and the next scope runs; the next call tries that scope again.

        A scope that another process on the database is consolidating, or finished
        consolidating since this call began, is left to it and has no report: several
        ``ucma worker`` processes share the scopes of a database this way
        (``ucma.lifecycle.leases``).
        """
        storage = await self._ready()
        self._interrupt.clear()
        began = self.clock.now()
        reports = []
        for scope in await self._run(storage.memories.scopes):
            async with self._scope_claim(scope, wait=False, finished_before=began) as claim:
                if claim is None:
                    continue
                report = await self._sleep_cycle(storage, progress, "all_scopes", claim).run(
                    scope, isolate=True
                )
            reports.append(report)
            if report.interrupted:
                break
        return reports

    def interrupt_consolidation(self) -> None:
        """Ask a running sleep cycle to stop after its current phase."""
        self._interrupt.set()

    @property
    def consolidation_task(self) -> asyncio.Task[SleepReport | None] | None:
        """The background consolidation ``new_session`` started last (the default
        ``on_new_session="background"``), None before any. Awaiting it waits for
        every cycle requested of its scope until then and returns the last cycle's
        report (None when ``close`` came first); it raises what a cycle raised,
        which was also logged."""
        return self._consolidation

    async def _consolidate_on_new_session(self, scope: Scope) -> None:
        mode = self.config.consolidation.on_new_session
        if mode == "off":
            return
        storage = await self._ready()
        self._interrupt.clear()
        if mode == "sync":
            async with self._scope_claim(scope, wait=True) as claim:
                await self._sleep_cycle(storage, None, "new_session", claim).run(scope)
            return
        running = self._consolidations.get(scope)
        if running is not None and not running.done():
            # Coalesced: the running task runs one more cycle when it finishes, which
            # picks up everything pending then (each phase looks only at pending work).
            self._consolidate_again.add(scope)
            return
        task = asyncio.create_task(
            self._consolidate_in_background(storage, scope),
            name=f"ucma-consolidation-{scope.user_id}-{scope.agent_id}",
        )
        task.add_done_callback(functools.partial(self._consolidation_finished, scope))
        self._consolidations[scope] = self._consolidation = task

    async def _consolidate_in_background(
        self, storage: Storage, scope: Scope
    ) -> SleepReport | None:
        """Sleep cycles for ``scope`` until no new request arrived during the last.
        Stops early when the engine closes or the cycle was interrupted. A cycle that
        another process runs for the scope finishes first (its lease)."""
        report = None
        while True:
            async with self._scope_claim(scope, wait=True) as claim:
                if self._closed:
                    break
                self._consolidate_again.discard(scope)
                report = await self._sleep_cycle(storage, None, "new_session", claim).run(scope)
            if report.interrupted or scope not in self._consolidate_again:
                break
        self._consolidate_again.discard(scope)
        return report

    def _consolidation_finished(self, scope: Scope, task: asyncio.Task[Any]) -> None:
        """Forget the finished task and log its failure (retrieving the exception,
        so asyncio never reports it as unhandled; awaiting the task still raises)."""
        if self._consolidations.get(scope) is task:
            del self._consolidations[scope]
        if task.cancelled():
            logger.warning(
                "background consolidation of %s/%s was cancelled", scope.user_id, scope.agent_id
            )
        elif (error := task.exception()) is not None:
            logger.error(
                "background consolidation of %s/%s failed; the next sleep() or "
                "new_session() retries the pending work",
                scope.user_id,
                scope.agent_id,
                exc_info=error,
            )

    async def forget(
        self,
        *,
        dry_run: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ForgettingReport:
        """Run the forgetting engine for a scope (``ucma.lifecycle.forgetting``): archive
        what it forgets, purge archives past the retention period. ``dry_run=True``
        lists what would be archived and purged, with the reason for each, and
        changes nothing."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            forgetting_pass,
            storage,
            scope,
            self.clock.now(),
            self.config.forgetting,
            dry_run=bool(dry_run),
        )

    async def run_gardener(self, job: str | None = None) -> GardenerReport:
        """Run the gardener's due jobs over every scope, or only ``job`` ("decay",
        "consolidate", "prune", "identity"; run whether due or not). Jobs that
        another process holds are skipped (``ucma.lifecycle.gardener``)."""
        storage = await self._ready()
        now = self.clock.now
        forgetting = self.config.forgetting

        async def decay(scope: Scope) -> dict[str, Any]:
            report = await self._run(
                forgetting_pass, storage, scope, now(), forgetting, rules={"retention"}
            )
            return {"archived": len(report.archived), "purged": len(report.purged)}

        async def prune(scope: Scope) -> dict[str, Any]:
            report = await self._run(
                forgetting_pass, storage, scope, now(), forgetting, rules={"salience"}, purge=False
            )
            return {"archived": len(report.archived)}

        async def consolidate(scope: Scope) -> dict[str, Any]:
            async with self._scope_claim(scope, wait=False) as claim:
                if claim is None:  # another process consolidates it right now
                    return {"episodes": 0, "facts": 0, "held_elsewhere": 1}
                report = await self._sleep_cycle(storage, None, "gardener", claim).run(scope)
            return {
                "episodes": report.episodes_processed,
                "facts": report.abstract.get("facts_new", 0),
            }

        async def identity(scope: Scope) -> dict[str, Any]:
            return await self._run(
                promote_identity_patterns, storage, scope, now(), self.config.consolidation
            )

        gardener = Gardener(
            storage=storage,
            run=self._run,
            clock=self.clock,
            jobs={"decay": decay, "consolidate": consolidate, "prune": prune, "identity": identity},
            config=self.config.consolidation,
            owner=self._gardener_owner,
        )
        self._interrupt.clear()
        return await gardener.run(job)

    async def archive(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryRecord:
        """Archive one memory by hand: it leaves search, recall and listings (listed again
        with ``include_archived``), keeps everything else, and ``unarchive`` brings it
        back. Its history records the request (event ``archived``, reason
        ``requested``); archiving an archived memory changes nothing. The forgetting
        engine purges archives after ``archive_retention_days`` like its own."""
        return await self._set_archived(memory_id, True, user_id, agent_id)

    async def unarchive(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryRecord:
        """Bring an archived memory back into search and listings (history event
        ``restored``); restoring a live memory changes nothing."""
        return await self._set_archived(memory_id, False, user_id, agent_id)

    async def _set_archived(
        self, memory_id: str, archived: bool, user_id: str | None, agent_id: str | None
    ) -> MemoryRecord:
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        key = check_id(memory_id)
        now = self.clock.now()

        def write() -> MemoryRecord:
            with storage.transaction():
                record = storage.memories.get(scope, key)
                if record is None:
                    raise NotFoundError("memory", key)
                if (record.archived_at is not None) == archived:
                    return record
                storage.memories.set_archived(scope, [key], now if archived else None)
                event = "archived" if archived else "restored"
                storage.lifecycle.add_history(
                    scope, [HistoryEntry(key, event, now, {"reason": "requested"})]
                )
            changed = storage.memories.get(scope, key)
            if changed is None:  # deleted by another writer since the transaction
                raise NotFoundError("memory", key)
            return changed

        record = await self._run(write)
        logger.info("%s %s", "archive" if archived else "unarchive", key)
        return record

    async def gardener_schedule(self) -> list[dict[str, Any]]:
        """The gardener's jobs (database-wide, ``ucma.lifecycle.gardener``): each
        one's period, last run, when it is next due (None: it never ran, so at the next
        tick; a past moment: overdue), whether a gardener is running it now, and the
        summary of its last run (summed over every scope)."""
        storage = await self._ready()
        runs = await self._run(storage.lifecycle.job_runs)
        now = self.clock.now()
        schedule = []
        for job, period in JOB_PERIODS.items():
            run = runs.get(job)
            last = run.last_run_at if run is not None else None
            running = (
                run is not None and run.locked_by is not None and (run.lock_expires_at or 0.0) > now
            )
            schedule.append(
                {
                    "job": job,
                    "period_days": period / SECONDS_PER_DAY,
                    "last_run_at": last,
                    "next_due_at": None if last is None else last + period,
                    "running": running,
                    "last_summary": dict(run.last_summary) if run is not None else {},
                }
            )
        return schedule

    async def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[HistoryEntry]:
        """Lifecycle events of a memory, oldest first: merged (R4 duplicates), promoted,
        derived, reinforced, archived, purged, level_promoted, outcome. Readable after
        the memory itself was purged."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(storage.lifecycle.history, scope, check_id(memory_id))

    async def sources(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[MemorySource]:
        """The occurrences merged into a memory (its source list), oldest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(storage.lifecycle.sources, scope, check_id(memory_id))

    async def sleep_runs(
        self,
        *,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[SleepRun]:
        """The scope's recorded sleep cycles, newest first: why each ran ("request",
        "new_session", "all_scopes" or "gardener"), when, how long, the phases that
        completed and what each changed, interrupted or failed. The newest
        ``consolidation.sleep_runs_kept`` of a scope are kept."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            storage.lifecycle.sleep_runs,
            scope,
            limit=check_limit(limit, 1000),
            offset=check_offset(offset),
        )

    async def duplicates(
        self, *, limit: int = 100, user_id: str | None = None, agent_id: str | None = None
    ) -> list[DuplicateAttempt]:
        """The duplicate-attempt log (seed 003 R4), newest first."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        return await self._run(
            storage.lifecycle.duplicates, scope, limit=check_limit(limit, 10_000)
        )

    async def retention(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> float:
        """Current Ebbinghaus retention of a memory, in [0, 1], at the engine's clock."""
        [now] = await self.retention_curve(memory_id, [0.0], user_id=user_id, agent_id=agent_id)
        return now

    async def retention_curve(
        self,
        memory_id: str,
        days_ahead: Sequence[float],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[float]:
        """The forgetting curve of a memory ahead of now: its retention ``d`` days from
        now for each ``d`` of ``days_ahead`` (numbers >= 0, at most 1,000 of them) if
        nothing reviews it before; recalling it or an outcome resets the curve."""
        scope = self._scope(user_id, agent_id)
        if not isinstance(days_ahead, list | tuple):
            raise ValidationError("days_ahead must be a list of numbers >= 0")
        if len(days_ahead) > 1_000:
            raise ValidationError("days_ahead holds at most 1,000 numbers")
        offsets = [check_days(d) for d in days_ahead]
        storage = await self._ready()
        key = check_id(memory_id)
        states = await self._run(storage.retention.get_many, scope, [key])
        if key not in states:
            raise NotFoundError("memory", key)
        state = states[key]
        elapsed = (self.clock.now() - state.last_reviewed) / SECONDS_PER_DAY
        return [retention(state.stability, elapsed + d) for d in offsets]
