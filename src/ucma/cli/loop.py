"""``ucma decide | outcome | events list``: the learning loop from the shell (record a
decision with the memories that fed it, report how it turned out) and the event log it
writes, each named like the Python method it calls and printing the JSON its REST route
answers (``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    AgentOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    UserOption,
    json_option,
    show_work,
)
from ucma.learning.records import OutcomeSignal

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["events_list", "register"]


def decide(
    memory_ids: Annotated[
        list[str],
        typer.Argument(help="The memories the decision used, each once.", show_default=False),
    ],
    summary: Annotated[
        str,
        typer.Option(
            help="What was decided, without personal data (required).", show_default=False
        ),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    score: Annotated[
        list[float] | None,
        typer.Option(
            help="How much each memory counted, one per id in order (repeatable) [default: equal].",
            show_default=False,
        ),
    ] = None,
    decision_type: Annotated[str, typer.Option("--type", help="Kind of decision.")] = (
        "recommendation"
    ),
    confidence: Annotated[float, typer.Option(min=0.0, max=1.0, help="From 0 to 1.")] = 0.5,
    alternatives: Annotated[int, typer.Option(min=0, help="Options that were weighed.")] = 0,
    retrieval_id: Annotated[
        str | None, typer.Option(help="The retrieval_id of the recall the memories came from.")
    ] = None,
    metadata: Annotated[
        str | None, typer.Option(help="A JSON object stored with it, e.g. '{\"a\": 1}'.")
    ] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record a decision and the memories that fed it; pass the decision id it prints to
    ucma outcome once you know how it turned out."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        trace = await memory.decide(
            memory_ids,
            score or None,
            decision_type=decision_type,
            summary=summary,
            confidence=confidence,
            alternatives_count=alternatives,
            retrieval_id=retrieval_id,
            metadata=json_option(metadata, "--metadata"),
        )
        return trace.to_dict()

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def outcome(
    decision_id: Annotated[
        str, typer.Argument(help="A decision id (trc_...).", show_default=False)
    ],
    quality: Annotated[
        float,
        typer.Option(
            min=-1.0,
            max=1.0,
            help="From -1 (harmful) to 1 (excellent), e.g. --quality=-0.5 (required).",
            show_default=False,
        ),
    ],
    signal: Annotated[
        OutcomeSignal,
        typer.Option(help="How the outcome was observed (required).", show_default=False),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    feedback: Annotated[str | None, typer.Option(help="What was said about it.")] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record how a decision turned out, once: the memories behind it gain or lose
    salience, and its procedures and lessons learn from it."""
    from ucma.serialization import outcome_report_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        report = await memory.outcome(decision_id, quality, signal, feedback)
        return outcome_report_to_dict(report)

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def events_list(
    user: UserOption,
    agent: AgentOption = "default",
    after_seq: Annotated[
        int, typer.Option(min=0, help="Only events after this sequence number.")
    ] = 0,
    event_type: Annotated[
        list[str] | None,
        typer.Option(
            "--type",
            help='Only this type, e.g. "outcome.observed" (repeatable).',
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Most to show.")] = 100,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """One user's events in order (every state change: writes, outcomes, conflicts);
    pass next_after_seq back as --after-seq for the next page."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.events(after_seq=after_seq, types=event_type, limit=limit + 1)
        page = found[:limit]
        more = len(found) > limit
        return {
            "items": [e.to_dict() for e in page],
            "limit": limit,
            "after_seq": after_seq,
            "next_after_seq": page[-1].seq if more and page else None,
        }

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def register(app: typer.Typer) -> None:
    """Add decide and outcome to ``app`` (events list goes on the events group)."""
    app.command("decide")(decide)
    app.command("outcome")(outcome)
