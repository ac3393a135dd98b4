"""MCP tools for strategies (seed 000's procedural paradigm): learn_from_trajectory,
strategies_for, has_strategy_for. Applying one is reported with
record_procedure_outcome (memory_tools), which takes the task for flow 2.

Each tool has the name of the Python method it calls (``AsyncMemory.<name>``).
"""

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from ucma.engine import AsyncMemory
from ucma.types import Procedure, StrategyMatch

__all__ = ["STRATEGY_TOOL_NAMES", "add_strategy_tools"]

Scope = Callable[[Context], Awaitable[dict[str, str]]]
Guard = Callable[[], Any]

STRATEGY_TOOL_NAMES = ("learn_from_trajectory", "strategies_for", "has_strategy_for")

Domain = Annotated[
    str | None,
    Field(description='The kind of task, e.g. "scraping" or "deployment"; keeps its strategies.'),
]


class Triple(BaseModel):
    """A fact that held: subject, predicate, object."""

    model_config = ConfigDict(extra="forbid")

    subject: str
    predicate: str
    object: str


def _item(procedure: Procedure) -> dict[str, Any]:
    return {
        "id": procedure.id,
        "type": procedure.procedure_type.value,
        "title": procedure.name,
        "description": procedure.description,
        "steps": [
            {"step": s.description, "avoid": s.action_type == "avoid"} for s in procedure.steps
        ],
        "preconditions": [c.text for c in procedure.preconditions],
        "domain": procedure.domain,
        "risk_level": procedure.risk_level.value,
        "failure_modes": list(procedure.failure_modes),
        "status": procedure.status.value,
        "applications": procedure.execution_count,
        "successes": procedure.success_count,
    }


def _match(match: StrategyMatch) -> dict[str, Any]:
    return {
        **_item(match.procedure),
        "score": round(match.score, 3),
        "relevance": round(match.relevance, 3),
        "lower_bound": round(match.lower_bound, 3),
        "grounding": match.grounding,
        "contradicted": [c.text for c in match.contradicted],
    }


def add_strategy_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def learn_from_trajectory(
        task: Annotated[str, Field(description="What you were asked to do.")],
        steps: Annotated[
            list[str], Field(min_length=1, description="What you did, in order, one step each.")
        ],
        success: Annotated[bool, Field(description="Whether it worked.")],
        ctx: Context,
        failure_reason: Annotated[
            str | None, Field(description="If it failed: the error or why, naming the step.")
        ] = None,
        domain: Annotated[str, Field(description='The kind of task, e.g. "scraping".')] = "general",
        context: Annotated[
            list[Triple | str],
            Field(description="Facts that held (fact ids or triples): become preconditions."),
        ] = [],  # noqa: B006 - MCP input schema default; never mutated
    ) -> dict[str, Any]:
        with told():
            learned = await memory.learn_from_trajectory(
                task,
                steps,
                success,
                failure_reason,
                domain=domain,
                context=[c if isinstance(c, str) else c.model_dump() for c in context],
                **await scope(ctx),
            )
            return {
                "trajectory_id": learned.trajectory_id,
                "items": [_item(p) for p in learned.items],
                "merged_ids": list(learned.merged_ids),
                "refuted_ids": list(learned.refuted_ids),
            }

    async def strategies_for(
        task: Annotated[str, Field(description="The task you are about to do.")],
        ctx: Context,
        domain: Domain = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most items to return.")] = 5,
        contradicted: Annotated[
            Literal["filter", "flag"],
            Field(description="Leave out strategies the known facts contradict, or flag them."),
        ] = "filter",
    ) -> dict[str, Any]:
        with told():
            found = await memory.strategies_for(
                task, domain=domain, limit=limit, contradicted=contradicted, **await scope(ctx)
            )
            return {"strategies": [_match(m) for m in found]}

    async def has_strategy_for(
        task: Annotated[str, Field(description="The task you are about to do.")],
        ctx: Context,
        domain: Domain = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.has_strategy_for(task, domain=domain, **await scope(ctx))
            return {"has_strategy": found}

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            learn_from_trajectory,
            "After finishing or failing a task: report what you did and how it ended. A "
            "success is kept as a strategy to reuse, a failure as a pitfall to avoid next "
            "time (near-duplicates merge). Pass the facts that held as context so the lesson "
            "applies only where it should.",
            writes,
        ),
        (
            strategies_for,
            "Before a task: the strategies that worked for similar tasks, best evidence "
            "first, and the pitfalls to avoid (type=pitfall, their steps marked avoid). "
            "Strategies whose preconditions contradict known facts are left out. Follow the "
            "top one, then report with record_procedure_outcome (with the task).",
            read_only,
        ),
        (
            has_strategy_for,
            "Whether a learned strategy applies to a task: if not, plan from scratch (and "
            "report the trajectory with learn_from_trajectory afterwards).",
            read_only,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
