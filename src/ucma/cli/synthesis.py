"""``ucma synthesize | post-interaction``: seed 000's response synthesis and
post-interaction learning, each named like the Python method it calls and printing the
JSON its REST route answers (``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import json_option, scoped_command
from ucma.cli.predictive import ContextOption

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]


async def synthesize(
    memory: AsyncMemory,
    query: Annotated[str, typer.Argument(help="The query, in words.", show_default=False)],
    task: Annotated[str | None, typer.Option(help="The task it is about (default: query).")] = None,
    action: Annotated[str | None, typer.Option(help="An action to predict.")] = None,
    context: ContextOption = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="Most of each.")] = 5,
) -> dict[str, Any]:
    """Everything memory holds for QUERY, each paradigm's part, conflicts resolved."""
    from ucma.serialization import synthesis_to_dict

    result = await memory.synthesize(
        query, task=task, action=action, context=json_option(context, "--context"), limit=limit
    )
    return synthesis_to_dict(result)


async def post_interaction(
    memory: AsyncMemory,
    query: Annotated[str, typer.Argument(help="What was asked.", show_default=False)],
    response: Annotated[str, typer.Argument(help="What was answered.", show_default=False)],
    success: Annotated[
        bool,
        typer.Option(
            "--success/--failure", help="Whether it worked (required).", show_default=False
        ),
    ],
    quality: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="How well it went, 0 to 1.")
    ] = None,
    capability: Annotated[
        str | None, typer.Option(help="The capability used (default: the domain).")
    ] = None,
    predicted: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="The success probability expected before."),
    ] = None,
    action: Annotated[
        str | None, typer.Option(help="The action taken (default: the capability).")
    ] = None,
    context: ContextOption = None,
    outcome: Annotated[
        str | None, typer.Option(help="What the action led to (default: success or failure).")
    ] = None,
    strategy: Annotated[str | None, typer.Option(help="The id of the strategy used.")] = None,
    step: Annotated[
        list[str] | None, typer.Option("--step", "-s", help="A step taken, in order (repeatable).")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why it failed.")] = None,
    goal: Annotated[str | None, typer.Option(help="The id of the goal it worked on.")] = None,
    progress: Annotated[
        float | None, typer.Option(min=-1.0, max=1.0, help="How far it moved the goal.")
    ] = None,
    preference: Annotated[
        list[str] | None,
        typer.Option("--preference", "-p", help="A preference the user stated (repeatable)."),
    ] = None,
    entity: Annotated[
        list[str] | None, typer.Option("--entity", "-e", help="Who or what it involved.")
    ] = None,
    domain: Annotated[str, typer.Option(help='The kind of task, e.g. "email".')] = "general",
) -> dict[str, Any]:
    """Learn from one interaction in every paradigm, in one transaction."""
    from ucma.serialization import interaction_learning_to_dict

    learned = await memory.post_interaction(
        query,
        response,
        success=success,
        quality=quality,
        capability=capability,
        predicted=predicted,
        action=action,
        context=json_option(context, "--context"),
        observed_outcome=outcome,
        strategy_id=strategy,
        trajectory=step or None,
        failure_reason=reason,
        goal_id=goal,
        progress_delta=progress,
        preferences=preference or None,
        entities=entity or None,
        domain=domain,
    )
    return interaction_learning_to_dict(learned)


COMMANDS = (synthesize, post_interaction)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
