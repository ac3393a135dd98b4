"""MCP tools for seed 000's response synthesis and post-interaction learning:
``synthesize`` (everything memory holds for a query, conflicts resolved) and
``post_interaction`` (learn from one interaction in every paradigm at once).

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
from ucma.mcp.predictive_tools import ContextArg

__all__ = ["SYNTHESIS_TOOL_NAMES", "add_synthesis_tools"]

SYNTHESIS_TOOL_NAMES = ("synthesize", "post_interaction")

Task = Annotated[
    str | None, Field(description="The task you are about to do, in a few words (default: query).")
]


def add_synthesis_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def synthesize(
        query: Annotated[str, Field(description="The user's message or your question.")],
        ctx: Context,
        task: Task = None,
        action: Annotated[
            str | None, Field(description="An action whose outcome to predict, if any.")
        ] = None,
        context: ContextArg = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Most of each list.")] = 5,
    ) -> dict[str, Any]:
        with told():
            result = await memory.synthesize(
                query, task=task, action=action, context=context, limit=limit, **await scope(ctx)
            )
            return serialization.synthesis_to_dict(result)

    async def post_interaction(
        query: Annotated[str, Field(description="What the user asked or the task you did.")],
        response: Annotated[str, Field(description="What you answered or did.")],
        success: Annotated[bool, Field(description="Whether it worked.")],
        ctx: Context,
        quality: Annotated[float | None, Field(ge=0, le=1, description="How well, 0-1.")] = None,
        capability: Annotated[
            str | None, Field(description="The kind of task, named the same way each time.")
        ] = None,
        predicted: Annotated[
            float | None,
            Field(ge=0, le=1, description="How likely you thought success was, before."),
        ] = None,
        action: Annotated[str | None, Field(description="The action you took.")] = None,
        context: ContextArg = None,
        observed_outcome: Annotated[
            str | None, Field(description="What the action led to, in a few words.")
        ] = None,
        strategy_id: Annotated[
            str | None, Field(description="The id of the strategy you followed.")
        ] = None,
        trajectory: Annotated[
            list[str] | None, Field(description="The steps you took, in order.")
        ] = None,
        failure_reason: Annotated[
            str | None, Field(description="Why it failed (only when it failed).")
        ] = None,
        goal_id: Annotated[str | None, Field(description="The goal it worked on.")] = None,
        progress_delta: Annotated[
            float | None, Field(ge=-1, le=1, description="How far it moved that goal.")
        ] = None,
        preferences: Annotated[
            list[str] | None, Field(description="Preferences the user revealed, as sentences.")
        ] = None,
        entities: Annotated[list[str] | None, Field(description="Who or what it involved.")] = None,
        domain: Annotated[str, Field(description="The domain of the task.")] = "general",
    ) -> dict[str, Any]:
        with told():
            learned = await memory.post_interaction(
                query,
                response,
                success=success,
                quality=quality,
                capability=capability,
                predicted=predicted,
                action=action,
                context=context,
                observed_outcome=observed_outcome,
                strategy_id=strategy_id,
                trajectory=trajectory,
                failure_reason=failure_reason,
                goal_id=goal_id,
                progress_delta=progress_delta,
                preferences=preferences,
                entities=entities,
                domain=domain,
                **await scope(ctx),
            )
            return serialization.interaction_learning_to_dict(learned)

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            synthesize,
            "Before answering or acting, get everything memory holds for it in one call: "
            "relevant facts, the user's preferences, strategies ranked by how well they "
            "work for you, what your action will likely lead to, related goals, how good "
            "you are at the task and whether to attempt it or ask for help. Read the "
            "caveats: they say where facts and predictions disagree and what to trust.",
            read_only,
        ),
        (
            post_interaction,
            "After each interaction or task, report how it went in one call: it records "
            "the experience, preferences the user revealed, the strategy and steps you "
            "used, what your action led to, how your own competence held up, and progress "
            "on a goal. All of it is saved together or not at all.",
            writes,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
