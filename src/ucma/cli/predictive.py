"""``ucma observe-transition | transitions | simulate | record-competence | competences
| introspect | should-attempt | learning-priorities``: the world model and the
self-model (seed 000's predictive paradigm), each named like the Python method it calls
and printing the JSON its REST route answers (``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import json_option, scoped_command

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

ActionArgument = Annotated[
    str, typer.Argument(help='What is done, e.g. "submit the form".', show_default=False)
]
TaskArgument = Annotated[str, typer.Argument(help="The task, in words.", show_default=False)]
ContextOption = Annotated[
    str | None,
    typer.Option(help='What holds, as a JSON object: {"logged in": true, "site": "shop"}.'),
]
CapabilityOption = Annotated[
    str | None, typer.Option(help='The capability it needs, e.g. "sql queries".')
]
LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000, help="Most to show.")]


async def observe_transition(
    memory: AsyncMemory,
    action: ActionArgument,
    outcome: Annotated[str, typer.Argument(help="What happened.", show_default=False)],
    context: ContextOption = None,
) -> dict[str, Any]:
    """Record that doing ACTION (while --context held) led to OUTCOME."""

    conditions = json_option(context, "--context")
    found = await memory.observe_transition(action, outcome, context=conditions)
    return found.to_api_dict()


async def transitions(
    memory: AsyncMemory,
    action: Annotated[str | None, typer.Option(help="Only this action's.")] = None,
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """The world model's transitions, most observed first."""

    found = await memory.transitions(action=action, limit=limit)
    return {"transitions": [t.to_api_dict() for t in found]}


async def simulate(
    memory: AsyncMemory,
    action: ActionArgument,
    context: ContextOption = None,
) -> dict[str, Any]:
    """What doing ACTION (while --context holds) will lead to, with probabilities."""

    result = await memory.simulate(action, json_option(context, "--context"))
    return result.to_dict()


async def record_competence(
    memory: AsyncMemory,
    capability: Annotated[str, typer.Argument(help="The capability.", show_default=False)],
    success: Annotated[
        bool,
        typer.Option(
            "--success/--failure", help="Whether it worked (required).", show_default=False
        ),
    ],
    predicted: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="The success probability expected before."),
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why it failed.")] = None,
) -> dict[str, Any]:
    """Record one attempt of CAPABILITY and whether it succeeded."""

    from ucma.serialization import competence_to_api_dict

    found = await memory.record_competence(
        capability, success, predicted=predicted, failure_reason=reason
    )
    return competence_to_api_dict(found, memory.config.predictive)


async def competences(
    memory: AsyncMemory,
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """The self-model: each capability's attempts, successes, estimated accuracy with its
    interval, calibration and failure modes."""
    from ucma.serialization import competence_to_api_dict

    found = await memory.competences(limit=limit)
    return {"competences": [competence_to_api_dict(c, memory.config.predictive) for c in found]}


async def introspect(
    memory: AsyncMemory,
    task: TaskArgument,
    capability: CapabilityOption = None,
) -> dict[str, Any]:
    """Am I good at TASK? The estimated accuracy, its interval and the evidence."""

    return (await memory.introspect(task, capability=capability)).to_dict()


async def should_attempt(
    memory: AsyncMemory,
    task: TaskArgument,
    capability: CapabilityOption = None,
    action: Annotated[
        str | None, typer.Option(help="The action to simulate (default: the capability).")
    ] = None,
    context: ContextOption = None,
) -> dict[str, Any]:
    """Attempt TASK, attempt it with a caveat, ask for help, or decline."""

    advice = await memory.should_attempt(
        task,
        capability=capability,
        action=action,
        context=json_option(context, "--context"),
    )
    return advice.to_dict()


async def learning_priorities(
    memory: AsyncMemory,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="Most to show.")] = 10,
) -> dict[str, Any]:
    """What to learn next, highest impact first."""
    found = await memory.learning_priorities(limit=limit)
    return {"priorities": [p.to_dict() for p in found]}


COMMANDS = (
    observe_transition,
    transitions,
    simulate,
    record_competence,
    competences,
    introspect,
    should_attempt,
    learning_priorities,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
