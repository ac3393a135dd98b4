"""``ucma observe-transition | transitions | simulate | record-competence | competences
| introspect | should-attempt | learning-priorities``: the world model and the
self-model (seed 000's predictive paradigm), each named like the Python method it calls
and printing the JSON its REST route answers (``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    AgentOption,
    HomeOption,
    JsonOption,
    UserOption,
    json_option,
    show_work,
)

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


def observe_transition(
    action: ActionArgument,
    outcome: Annotated[str, typer.Argument(help="What happened.", show_default=False)],
    user: UserOption,
    context: ContextOption = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record that doing ACTION (while --context held) led to OUTCOME."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        conditions = json_option(context, "--context")
        found = await memory.observe_transition(action, outcome, context=conditions)
        return found.to_api_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def transitions(
    user: UserOption,
    action: Annotated[str | None, typer.Option(help="Only this action's.")] = None,
    limit: LimitOption = 100,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The world model's transitions, most observed first."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.transitions(action=action, limit=limit)
        return {"transitions": [t.to_api_dict() for t in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def simulate(
    action: ActionArgument,
    user: UserOption,
    context: ContextOption = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """What doing ACTION (while --context holds) will lead to, with probabilities."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        result = await memory.simulate(action, json_option(context, "--context"))
        return result.to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def record_competence(
    capability: Annotated[str, typer.Argument(help="The capability.", show_default=False)],
    user: UserOption,
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
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record one attempt of CAPABILITY and whether it succeeded."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.record_competence(
            capability, success, predicted=predicted, failure_reason=reason
        )
        return found.to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def competences(
    user: UserOption,
    limit: LimitOption = 100,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The self-model: each capability's attempts, successes and failure modes."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"competences": [c.to_dict() for c in await memory.competences(limit=limit)]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def introspect(
    task: TaskArgument,
    user: UserOption,
    capability: CapabilityOption = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Am I good at TASK? The estimated accuracy, its interval and the evidence."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.introspect(task, capability=capability)).to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def should_attempt(
    task: TaskArgument,
    user: UserOption,
    capability: CapabilityOption = None,
    action: Annotated[
        str | None, typer.Option(help="The action to simulate (default: the capability).")
    ] = None,
    context: ContextOption = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Attempt TASK, attempt it with a caveat, ask for help, or decline."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        advice = await memory.should_attempt(
            task,
            capability=capability,
            action=action,
            context=json_option(context, "--context"),
        )
        return advice.to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def learning_priorities(
    user: UserOption,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="Most to show.")] = 10,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """What to learn next, highest impact first."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.learning_priorities(limit=limit)
        return {"priorities": [p.to_dict() for p in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


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
    for function in COMMANDS:
        app.command(function.__name__.replace("_", "-"))(function)
