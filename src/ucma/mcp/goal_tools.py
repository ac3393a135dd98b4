"""MCP tools for goals (seed 000's predictive paradigm): add_goal, get_goal, goals,
get_active_goals, decompose_goal, update_progress, resume_goal, abandon_goal,
anticipate, pursue_goal.

Each tool has the name of the ``AsyncMemory`` method it calls and answers with the same
JSON the REST route of that method returns.
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ucma import serialization
from ucma.engine import AsyncMemory
from ucma.mcp.memory_tools import Guard, Scope
from ucma.paradigms.goal_records import GoalStatus

__all__ = ["GOAL_TOOL_NAMES", "add_goal_tools"]

GOAL_TOOL_NAMES = (
    "add_goal",
    "get_goal",
    "goals",
    "get_active_goals",
    "decompose_goal",
    "update_progress",
    "resume_goal",
    "abandon_goal",
    "anticipate",
    "pursue_goal",
)

GoalId = Annotated[
    str, Field(description="A goal id, as add_goal, goals or get_active_goals gave.")
]


def add_goal_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def add_goal(
        description: Annotated[
            str, Field(description='What is to be achieved, e.g. "Book flights for the trip".')
        ],
        ctx: Context,
        priority: Annotated[
            float, Field(ge=0.0, le=1.0, description="How much it matters; higher first.")
        ] = 0.5,
        deadline: Annotated[float | None, Field(description="Due time, epoch seconds.")] = None,
        parent_id: Annotated[
            str | None, Field(description="Make it a subgoal of this goal.")
        ] = None,
    ) -> dict[str, Any]:
        with told():
            goal = await memory.add_goal(
                description,
                priority=priority,
                deadline=deadline,
                parent_id=parent_id,
                **await scope(ctx),
            )
            return serialization.goal_to_api_dict(goal)

    async def get_goal(goal_id: GoalId, ctx: Context) -> dict[str, Any]:
        with told():
            return serialization.goal_to_api_dict(
                await memory.get_goal(goal_id, **await scope(ctx))
            )

    async def goals(
        ctx: Context,
        status: Annotated[
            GoalStatus | None,
            Field(description="active, suspended, completed or abandoned; all without one."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most goals to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.goals(status=status, limit=limit, offset=0, **await scope(ctx))
            return {"results": [serialization.goal_to_api_dict(g) for g in found]}

    async def get_active_goals(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Most goals to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.get_active_goals(limit=limit, **await scope(ctx))
            return {"results": [serialization.goal_to_api_dict(g) for g in found]}

    async def decompose_goal(
        goal_id: GoalId,
        ctx: Context,
        steps: Annotated[
            list[str] | None,
            Field(description="Your subgoals, in order; leave out to let memory split it."),
        ] = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.decompose_goal(goal_id, steps=steps, **await scope(ctx))
            return {"results": [serialization.goal_to_api_dict(g) for g in found]}

    async def update_progress(
        goal_id: GoalId,
        ctx: Context,
        progress: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="The new progress, 1 when done.")
        ] = None,
        delta: Annotated[
            float | None, Field(ge=-1.0, le=1.0, description="A change of progress instead.")
        ] = None,
    ) -> dict[str, Any]:
        with told():
            goal = await memory.update_progress(
                goal_id, progress=progress, delta=delta, **await scope(ctx)
            )
            return serialization.goal_to_api_dict(goal)

    async def resume_goal(goal_id: GoalId, ctx: Context) -> dict[str, Any]:
        with told():
            goal = await memory.resume_goal(goal_id, **await scope(ctx))
            return serialization.goal_to_api_dict(goal)

    async def abandon_goal(goal_id: GoalId, ctx: Context) -> dict[str, Any]:
        with told():
            goal = await memory.abandon_goal(goal_id, **await scope(ctx))
            return serialization.goal_to_api_dict(goal)

    async def anticipate(goal_id: GoalId, ctx: Context) -> dict[str, Any]:
        with told():
            found = await memory.anticipate(goal_id, **await scope(ctx))
            return serialization.anticipation_to_dict(found)

    async def pursue_goal(goal_id: GoalId, ctx: Context) -> dict[str, Any]:
        with told():
            plan = await memory.pursue_goal(goal_id, **await scope(ctx))
            return serialization.goal_plan_to_dict(plan)

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            add_goal,
            "Record a goal the user (or you) wants achieved across sessions, with a priority "
            "and an optional deadline, or a subgoal of one. If what memory knows contradicts "
            "it (the trip was cancelled), it comes back suspended with the memories that do: "
            "tell the user before working on it.",
            writes,
        ),
        (get_goal, "One goal by id: status, progress, subgoals, blockers, conflicts.", read_only),
        (
            goals,
            "The goals of one status, highest priority first. Ask for suspended ones to see "
            "what memory says contradicts them and ask the user how to proceed.",
            read_only,
        ),
        (
            get_active_goals,
            "What to work on: the active goals and subgoals, highest priority first, then "
            "the nearest deadline. Check it at the start of a session.",
            read_only,
        ),
        (
            decompose_goal,
            "Split a goal into ordered subgoals: give your own steps, or leave them out and "
            "memory splits it by its wording or by a strategy it holds. Decomposed once.",
            writes,
        ),
        (
            update_progress,
            "Report progress on a goal without subgoals (progress 1 completes it); parent "
            "goals follow from their subgoals.",
            writes,
        ),
        (
            resume_goal,
            "The user decided to pursue a suspended goal anyway: resume it; what "
            "contradicted it no longer suspends it.",
            writes,
        ),
        (abandon_goal, "Give a goal up, with its open subgoals (history kept).", writes),
        (
            anticipate,
            "Before working on a goal: what it needs that memory lacks. Knowledge gaps are "
            "things it refers to that nothing in memory mentions (ask the user or look them "
            "up); skill gaps are tasks with no strategy or a poor record (be careful, or ask "
            "for help).",
            read_only,
        ),
        (
            pursue_goal,
            "Plan a goal: its subgoals as steps, each with the strategy memory holds for it "
            "and what blocks it; do the achievable steps, then report with update_progress.",
            writes,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
