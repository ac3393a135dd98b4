"""``ucma worker``: the maintenance of one database, in a process of its own.

Several ``ucma serve`` processes can share one database (PostgreSQL, or one SQLite
file); with ``ucma serve --no-maintenance`` they leave its maintenance to one or more
worker processes, which run, every ``interval_seconds``:

- a sleep cycle for every scope (``AsyncMemory.sleep_all``). Each scope's cycle holds
  the scope's lease (``ucma.lifecycle.leases``): a scope that another worker, or a
  service process's ``new_session`` cycle, is consolidating, or finished since the
  round began, is skipped, so several workers share the scopes of a database and no
  scope is consolidated twice at once; a crashed worker's scope is taken over when its
  claim expires (at once when it ran on this machine);
- the gardener's due jobs (``AsyncMemory.run_gardener``), each claimed database-wide
  (``LifecycleStore.begin_job``), so each runs once per period whatever the number of
  workers;
- with ``nats_url``, forwarding of the event log to NATS JetStream
  (``AsyncMemory.publish_events``): one worker forwards, holding the lease
  ``events:nats``; the others wait on it and take over when that one stops or dies.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ucma.errors import ValidationError
from ucma.lifecycle.gardener import MaintenanceReport, maintenance_loop

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["Worker", "WorkerReport"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class WorkerReport:
    """What a worker did until it stopped: maintenance rounds, the sleep cycles it
    ran (scopes another process had were left to it), the gardener jobs it ran, the
    scopes that failed in some round, and the events it forwarded."""

    rounds: int = 0
    cycles: int = 0
    gardener_jobs: list[str] = field(default_factory=list)
    failed_scopes: list[str] = field(default_factory=list)
    events_published: int = 0

    def add(self, report: MaintenanceReport) -> None:
        self.cycles += len(report.sleep)
        self.gardener_jobs.extend(report.gardener.ran)
        self.failed_scopes.extend(s for s in report.failed_scopes if s not in self.failed_scopes)


class Worker:
    """Runs an open engine's maintenance (and event forwarding) until stopped."""

    def __init__(
        self,
        memory: AsyncMemory,
        *,
        interval_seconds: float | None = None,
        nats_url: str | None = None,
        nats_stream: str = "UCMA_EVENTS",
        poll_seconds: float = 1.0,
    ) -> None:
        interval = memory.config.consolidation.interval_seconds
        if interval_seconds is not None:
            interval = interval_seconds
        if isinstance(interval, bool) or not isinstance(interval, int | float) or interval <= 0:
            raise ValidationError(f"interval_seconds must be above 0, got {interval!r}")
        self.memory = memory
        self.interval_seconds = float(interval)
        self.nats_url = nats_url
        self.nats_stream = nats_stream
        self.poll_seconds = poll_seconds

    async def run(self, stop: asyncio.Event, *, rounds: int | None = None) -> WorkerReport:
        """Maintenance rounds until ``stop`` is set (or ``rounds`` ran); event
        forwarding beside them until then. Setting ``stop`` interrupts a running sleep
        cycle after its current phase (each phase commits whole). A forwarding
        failure (NATS unreachable) ends the rounds and is raised."""
        report = WorkerReport()
        ended = asyncio.Event()
        forwarding = None
        if self.nats_url is not None:
            forwarding = asyncio.create_task(
                self.memory.publish_events(
                    self.nats_url,
                    stream=self.nats_stream,
                    poll_seconds=self.poll_seconds,
                    stop=ended,
                ),
                name="ucma-worker-events",
            )
            forwarding.add_done_callback(lambda _: ended.set())
        relay = asyncio.create_task(self._relay(stop, ended), name="ucma-worker-stop")
        try:
            report.rounds = await maintenance_loop(
                self.memory,
                ended,
                interval_seconds=self.interval_seconds,
                rounds=rounds,
                on_round=report.add,
            )
        finally:
            ended.set()
            relay.cancel()
            await asyncio.gather(relay, return_exceptions=True)
            if forwarding is not None:
                report.events_published = await forwarding  # raises what forwarding raised
        logger.info(
            "worker stopped after %d rounds: %d sleep cycles, gardener jobs %s",
            report.rounds,
            report.cycles,
            report.gardener_jobs or "none",
        )
        return report

    async def _relay(self, stop: asyncio.Event, ended: asyncio.Event) -> None:
        """When ``stop`` is set: a running sleep cycle stops after its phase, and the
        loop and the forwarding end."""
        await stop.wait()
        self.memory.interrupt_consolidation()
        ended.set()
