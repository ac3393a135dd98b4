"""MCP tools for the predictive paradigm (seed 000): the world model
(observe_transition, transitions, simulate), the self-model (record_competence,
competences, introspect) and the patterns on them (should_attempt,
learning_priorities).

Each tool has the name of the ``AsyncMemory`` method it calls and answers with the same
JSON the REST route of that method returns.
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ucma.engine import AsyncMemory
from ucma.mcp.memory_tools import Guard, Scope
from ucma.serialization import competence_to_api_dict

__all__ = ["PREDICTIVE_TOOL_NAMES", "add_predictive_tools"]

PREDICTIVE_TOOL_NAMES = (
    "observe_transition",
    "transitions",
    "simulate",
    "record_competence",
    "competences",
    "introspect",
    "should_attempt",
    "learning_priorities",
)

Action = Annotated[str, Field(description='What is done, in a few words: "submit the form".')]
ContextArg = Annotated[
    dict[str, str | bool | float] | None,
    Field(
        description='What holds while it is done, conditions to values: {"logged in": true, '
        '"site": "shop"}. Use the same names each time.'
    ),
]
Capability = Annotated[
    str, Field(description='A kind of task you do, named the same way each time: "sql queries".')
]


def add_predictive_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def observe_transition(
        action: Action,
        outcome: Annotated[str, Field(description="What happened, in a few words.")],
        ctx: Context,
        context: ContextArg = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.observe_transition(
                action, outcome, context=context, **await scope(ctx)
            )
            return found.to_api_dict()

    async def transitions(
        ctx: Context,
        action: Annotated[str | None, Field(description="Only this action's.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.transitions(
                action=action, limit=limit, offset=0, **await scope(ctx)
            )
            return {"results": [t.to_api_dict() for t in found]}

    async def simulate(action: Action, ctx: Context, context: ContextArg = None) -> dict[str, Any]:
        with told():
            result = await memory.simulate(action, context, **await scope(ctx))
            return result.to_dict()

    async def record_competence(
        capability: Capability,
        success: Annotated[bool, Field(description="Whether the attempt succeeded.")],
        ctx: Context,
        predicted: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="How likely you thought success was, before."),
        ] = None,
        failure_reason: Annotated[
            str | None, Field(description="For a failure: what went wrong, in a few words.")
        ] = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.record_competence(
                capability,
                success,
                predicted=predicted,
                failure_reason=failure_reason,
                **await scope(ctx),
            )
            return competence_to_api_dict(found, memory.config.predictive)

    async def competences(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Most to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.competences(limit=limit, offset=0, **await scope(ctx))
            config = memory.config.predictive
            return {"results": [competence_to_api_dict(c, config) for c in found]}

    async def introspect(
        task: Annotated[str, Field(description="The task, in words.")],
        ctx: Context,
        capability: Annotated[
            str | None, Field(description="The capability it needs, if you know its name.")
        ] = None,
    ) -> dict[str, Any]:
        with told():
            result = await memory.introspect(task, capability=capability, **await scope(ctx))
            return result.to_dict()

    async def should_attempt(
        task: Annotated[str, Field(description="The task you are about to take on.")],
        ctx: Context,
        capability: Annotated[
            str | None, Field(description="The capability it needs, if you know its name.")
        ] = None,
        action: Annotated[
            str | None, Field(description="The action to simulate (default: the capability).")
        ] = None,
        context: ContextArg = None,
    ) -> dict[str, Any]:
        with told():
            advice = await memory.should_attempt(
                task, capability=capability, action=action, context=context, **await scope(ctx)
            )
            return advice.to_dict()

    async def learning_priorities(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100, description="Most to return.")] = 10,
    ) -> dict[str, Any]:
        with told():
            found = await memory.learning_priorities(limit=limit, **await scope(ctx))
            return {"results": [p.to_dict() for p in found]}

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            observe_transition,
            "Record what happened when you did something: the action, the conditions that "
            "held and the outcome. Predictions (simulate) learn from these; a pattern seen "
            "reliably enough becomes a known fact.",
            writes,
        ),
        (
            transitions,
            "What the world model has learned: each action, context and outcome with how "
            "often it was confirmed, how often something else happened, and its reliability.",
            read_only,
        ),
        (
            simulate,
            "Before doing something, ask what will happen: the likely outcomes with "
            "probabilities and intervals, and a confidence that is low when there is little "
            "evidence. Read the caveats; with low confidence, gather facts or ask first.",
            read_only,
        ),
        (
            record_competence,
            "After attempting a kind of task, record whether it worked (and how likely you "
            "thought it was, and why it failed): this keeps your picture of your own "
            "abilities honest. Decisions with outcomes record this for you.",
            writes,
        ),
        (
            competences,
            "Your self-model: each kind of task with attempts, successes, calibration and "
            "known failure modes.",
            read_only,
        ),
        (
            introspect,
            'Ask "am I good at this?": your estimated accuracy at the capability the task '
            "needs, from how many attempts, with an interval, known failure modes and weak "
            "domains. Use it when the user asks what you can do, or before a risky task.",
            read_only,
        ),
        (
            should_attempt,
            "Before a task, decide whether to attempt it, attempt it with a caveat, ask the "
            "user for help, or decline; answers the decision with every number it rests on. "
            "Say the caveat to the user when the decision is attempt_with_caveat.",
            read_only,
        ),
        (
            learning_priorities,
            "What to learn next, highest impact first: recurring failures and weak domains.",
            read_only,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
