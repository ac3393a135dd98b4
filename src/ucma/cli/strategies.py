"""``ucma learn-from-trajectory | strategies-for | has-strategy-for``: strategies learned
from trajectories (seed 000's procedural paradigm), named like the Python methods they
call and printing the JSON their REST routes answer (``--json``), or a readable form.
``ucma get ID`` shows one strategy whole; ``ucma record-procedure-outcome`` reports an
application."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import json_option, scoped_command

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

TaskArgument = Annotated[str, typer.Argument(help="The task.", show_default=False)]
DomainOption = Annotated[
    str | None, typer.Option(help='The kind of task, e.g. "scraping".', show_default=False)
]


async def learn_from_trajectory(
    memory: AsyncMemory,
    task: TaskArgument,
    step: Annotated[
        list[str], typer.Option("--step", "-s", help="A step taken, in order (repeatable).")
    ],
    success: Annotated[
        bool,
        typer.Option(
            "--success/--failure", help="Whether it worked (required).", show_default=False
        ),
    ],
    reason: Annotated[str | None, typer.Option(help="Why it failed.")] = None,
    domain: Annotated[str, typer.Option(help='The kind of task, e.g. "scraping".')] = "general",
    context: Annotated[
        str | None,
        typer.Option(
            help='Facts that held, as JSON: fact ids or [{"subject": ..., "predicate": ..., '
            '"object": ...}].'
        ),
    ] = None,
) -> dict[str, Any]:
    """Keep the strategy of a success or the pitfall of a failure (--step per step)."""
    from ucma.serialization import trajectory_learning_to_dict

    facts = json_option(context, "--context")
    learned = await memory.learn_from_trajectory(
        task, step, success, reason, domain=domain, context=facts
    )
    return trajectory_learning_to_dict(learned)


async def strategies_for(
    memory: AsyncMemory,
    task: TaskArgument,
    domain: DomainOption = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="Most to show.")] = 5,
    flag: Annotated[
        bool, typer.Option("--flag", help="Show those the facts contradict too, flagged.")
    ] = False,
) -> dict[str, Any]:
    """Strategies and pitfalls for TASK, best evidence first, grounded in known facts."""
    from ucma.serialization import strategy_match_to_dict

    found = await memory.strategies_for(
        task, domain=domain, limit=limit, contradicted="flag" if flag else "filter"
    )
    return {"strategies": [strategy_match_to_dict(m) for m in found]}


async def has_strategy_for(
    memory: AsyncMemory,
    task: TaskArgument,
    domain: DomainOption = None,
) -> dict[str, Any]:
    """Whether a learned strategy (not a pitfall) applies to TASK."""
    return {"has_strategy": await memory.has_strategy_for(task, domain=domain)}


COMMANDS = (learn_from_trajectory, strategies_for, has_strategy_for)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
