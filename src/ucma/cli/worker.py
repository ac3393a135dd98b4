"""``ucma worker``: a database's maintenance (and event forwarding) in a process of its
own, beside ``ucma serve --no-maintenance`` processes (``ucma.workers``)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
from typing import Annotated

import typer

from ucma.cli.context import (
    DatabaseOption,
    HomeOption,
    JsonOption,
    engine_config,
    print_json,
    reported_errors,
    stderr,
    store_location,
)

__all__ = ["worker_command"]


def worker_command(
    home: HomeOption = None,
    database: DatabaseOption = None,
    interval: Annotated[
        float | None,
        typer.Option(
            min=0.01,
            help="Seconds between maintenance rounds [default: the configured "
            "consolidation interval, 3600].",
            show_default=False,
        ),
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after this many rounds [default: run until stopped]."),
    ] = None,
    lease_seconds: Annotated[
        float | None,
        typer.Option(
            min=1.0,
            help="How long a claim on a scope (or on the event forwarding) lasts without "
            "renewal: a crashed worker's work is taken over this long after it died "
            "(at once on the same machine) [default: 300].",
            show_default=False,
        ),
    ] = None,
    nats_url: Annotated[
        str | None,
        typer.Option(
            "--nats",
            envvar="UCMA_NATS",
            help="Also forward the event log to this NATS server (nats://host:4222); one "
            "worker forwards at a time, another takes over when it stops.",
        ),
    ] = None,
    stream: Annotated[str, typer.Option(help="JetStream stream name.")] = "UCMA_EVENTS",
    as_json: JsonOption = False,
) -> None:
    """Run the database's maintenance: sleep cycles for every scope and the gardener's
    jobs each round, and with --nats the event forwarding, until stopped (Ctrl-C or
    SIGTERM). Start any number of workers on one database: each scope's cycle is
    claimed by one of them at a time. Pair with ucma serve --no-maintenance."""
    from ucma.engine import AsyncMemory
    from ucma.workers import Worker, WorkerReport

    location = store_location(home, database)
    with reported_errors():
        config = engine_config()
        if lease_seconds is not None:
            config = dataclasses.replace(
                config,
                consolidation=dataclasses.replace(
                    config.consolidation, lease_seconds=lease_seconds
                ),
            )
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    async def main() -> WorkerReport:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        async with AsyncMemory(location, config=config) as memory:
            worker = Worker(
                memory, interval_seconds=interval, nats_url=nats_url, nats_stream=stream
            )
            stderr().print(
                f"ucma worker on {memory.location}: a round every {worker.interval_seconds:g} s"
                + (f", forwarding events to {nats_url}" if nats_url else ""),
                markup=False,
            )
            return await worker.run(stop, rounds=rounds)

    with reported_errors():
        report = asyncio.run(main())
    if as_json:
        print_json(dataclasses.asdict(report))
    else:
        stderr().print(
            f"stopped after {report.rounds} rounds: {report.cycles} sleep cycles, "
            f"gardener jobs: {', '.join(report.gardener_jobs) or 'none'}, "
            f"{report.events_published} events forwarded",
            markup=False,
        )
