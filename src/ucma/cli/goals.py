"""``ucma add-goal | get-goal | goals | get-active-goals | decompose-goal |
update-progress | resume-goal | abandon-goal | anticipate | pursue-goal``: goals (seed
000's predictive paradigm), each named like the Python method it calls and printing the
JSON its REST route answers (``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import scoped_command
from ucma.paradigms.goal_records import GoalStatus

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

GoalArgument = Annotated[str, typer.Argument(help="A goal's id.", show_default=False)]
LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000, help="Most to show.")]


async def add_goal(
    memory: AsyncMemory,
    description: Annotated[str, typer.Argument(help="What is to be achieved.", show_default=False)],
    priority: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="How much it matters, 0 to 1.")
    ] = 0.5,
    deadline: Annotated[
        float | None, typer.Option(help="Due time, epoch seconds.", show_default=False)
    ] = None,
    parent: Annotated[
        str | None, typer.Option(help="Make it a subgoal of this goal id.", show_default=False)
    ] = None,
) -> dict[str, Any]:
    """Add a goal (suspended, with what contradicts it, when memory says it cannot go
    ahead)."""
    from ucma.serialization import goal_to_api_dict

    goal = await memory.add_goal(
        description, priority=priority, deadline=deadline, parent_id=parent
    )
    return goal_to_api_dict(goal)


async def get_goal(
    memory: AsyncMemory,
    goal_id: GoalArgument,
) -> dict[str, Any]:
    """Show one goal: status, progress, subgoals, blockers and conflicts."""
    from ucma.serialization import goal_to_api_dict

    return goal_to_api_dict(await memory.get_goal(goal_id))


async def goals(
    memory: AsyncMemory,
    status: Annotated[
        GoalStatus | None, typer.Option(help="Only goals of this status.", show_default=False)
    ] = None,
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """The goals, highest priority first, then the nearest deadline."""
    from ucma.serialization import goal_to_api_dict

    found = await memory.goals(status=status, limit=limit)
    return {"goals": [goal_to_api_dict(g) for g in found]}


async def get_active_goals(
    memory: AsyncMemory,
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """The active goals and subgoals, highest priority first, then the nearest deadline."""
    from ucma.serialization import goal_to_api_dict

    found = await memory.get_active_goals(limit=limit)
    return {"goals": [goal_to_api_dict(g) for g in found]}


async def decompose_goal(
    memory: AsyncMemory,
    goal_id: GoalArgument,
    step: Annotated[
        list[str] | None,
        typer.Option(help="A subgoal, in order (repeatable); none: memory splits it."),
    ] = None,
) -> dict[str, Any]:
    """Split a goal into subgoals (once)."""
    from ucma.serialization import goal_to_api_dict

    found = await memory.decompose_goal(goal_id, steps=step)
    return {"goals": [goal_to_api_dict(g) for g in found]}


async def update_progress(
    memory: AsyncMemory,
    goal_id: GoalArgument,
    progress: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="The new progress, 1 when done.")
    ] = None,
    delta: Annotated[
        float | None, typer.Option(min=-1.0, max=1.0, help="A change of progress instead.")
    ] = None,
) -> dict[str, Any]:
    """Set (--progress) or move (--delta) a goal's progress; its parents follow."""
    from ucma.serialization import goal_to_api_dict

    found = await memory.update_progress(goal_id, progress=progress, delta=delta)
    return goal_to_api_dict(found)


async def resume_goal(
    memory: AsyncMemory,
    goal_id: GoalArgument,
) -> dict[str, Any]:
    """Pursue a suspended goal anyway: what contradicted it is accepted."""
    from ucma.serialization import goal_to_api_dict

    return goal_to_api_dict(await memory.resume_goal(goal_id))


async def abandon_goal(
    memory: AsyncMemory,
    goal_id: GoalArgument,
) -> dict[str, Any]:
    """Give a goal up, with its open subgoals (history kept)."""
    from ucma.serialization import goal_to_api_dict

    return goal_to_api_dict(await memory.abandon_goal(goal_id))


async def anticipate(
    memory: AsyncMemory,
    goal_id: GoalArgument,
) -> dict[str, Any]:
    """What a goal needs that memory lacks: knowledge gaps and skill gaps."""
    from ucma.serialization import anticipation_to_dict

    return anticipation_to_dict(await memory.anticipate(goal_id))


async def pursue_goal(
    memory: AsyncMemory,
    goal_id: GoalArgument,
) -> dict[str, Any]:
    """Plan a goal: its open subgoals as steps, each with its strategy and blockers."""
    from ucma.serialization import goal_plan_to_dict

    return goal_plan_to_dict(await memory.pursue_goal(goal_id))


COMMANDS = (
    add_goal,
    get_goal,
    goals,
    get_active_goals,
    decompose_goal,
    update_progress,
    resume_goal,
    abandon_goal,
    anticipate,
    pursue_goal,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
