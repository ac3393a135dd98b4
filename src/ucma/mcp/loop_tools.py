"""MCP tools to look back at the learning loop and a memory's life: trace, traces,
counterfactuals, memory_influence, salience_history, events, replay, extract_patterns,
retention, sources, duplicates.

Each tool has the name of the ``AsyncMemory`` method it calls and answers with the same
JSON as the REST route of that method. All of them only read.
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ucma import serialization
from ucma.engine import AsyncMemory
from ucma.mcp.memory_tools import Guard, MemoryId, Scope

__all__ = ["LOOP_TOOL_NAMES", "add_loop_tools"]

LOOP_TOOL_NAMES = (
    "trace",
    "traces",
    "counterfactuals",
    "memory_influence",
    "salience_history",
    "events",
    "replay",
    "extract_patterns",
    "retention",
    "sources",
    "duplicates",
)

DecisionId = Annotated[str, Field(description="The decision_id that decide returned.")]
Limit = Annotated[int, Field(ge=1, le=100, description="Most items to return.")]


def add_loop_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def trace(decision_id: DecisionId, ctx: Context) -> dict[str, Any]:
        with told():
            return (await memory.trace(decision_id, **await scope(ctx))).to_dict()

    async def traces(
        ctx: Context,
        observed: Annotated[
            bool | None,
            Field(description="true: only decisions with an outcome; false: only those without."),
        ] = None,
        limit: Limit = 20,
    ) -> dict[str, Any]:
        with told():
            found = await memory.traces(observed=observed, limit=limit, **await scope(ctx))
            return {"results": [t.to_dict() for t in found]}

    async def counterfactuals(decision_id: DecisionId, ctx: Context) -> dict[str, Any]:
        with told():
            return (await memory.counterfactuals(decision_id, **await scope(ctx))).to_dict()

    async def memory_influence(
        ctx: Context,
        min_decisions: Annotated[
            int | None, Field(ge=1, description="Outcomes a memory needs for a verdict.")
        ] = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.memory_influence(min_decisions=min_decisions, **await scope(ctx))
            return {"results": [i.to_dict() for i in found]}

    async def salience_history(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            found = await memory.salience_history(memory_id, **await scope(ctx))
            return {"memory_id": memory_id, "salience_history": [u.to_dict() for u in found]}

    async def events(
        ctx: Context,
        after_seq: Annotated[int, Field(ge=0, description="Only events after this one.")] = 0,
        types: Annotated[
            list[str] | None, Field(description='Only these types, e.g. ["outcome.observed"].')
        ] = None,
        limit: Limit = 50,
        newest_first: Annotated[
            bool, Field(description="The latest events, newest first: what happened lately.")
        ] = False,
    ) -> dict[str, Any]:
        with told():
            found = await memory.events(
                after_seq=after_seq,
                types=types,
                limit=limit,
                newest_first=newest_first,
                **await scope(ctx),
            )
            return {"results": [e.to_dict() for e in found]}

    async def replay(ctx: Context) -> dict[str, Any]:
        with told():
            return serialization.replay_to_dict(await memory.replay(**await scope(ctx)))

    async def extract_patterns(ctx: Context) -> dict[str, Any]:
        with told():
            found = await memory.extract_patterns(**await scope(ctx))
            return {"patterns": [p.to_dict() for p in found]}

    async def retention(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            value = await memory.retention(memory_id, **await scope(ctx))
            return {"memory_id": memory_id, "retention": round(value, 4)}

    async def sources(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            found = await memory.sources(memory_id, **await scope(ctx))
            return {
                "memory_id": memory_id,
                "sources": [serialization.source_to_dict(s) for s in found],
            }

    async def duplicates(ctx: Context, limit: Limit = 20) -> dict[str, Any]:
        with told():
            found = await memory.duplicates(limit=limit, **await scope(ctx))
            return {"results": [serialization.duplicate_to_dict(d) for d in found]}

    tools: list[tuple[Callable[..., Any], str]] = [
        (
            trace,
            "One decision recorded with decide: the memories it used and their weights, "
            "and its outcome once reported.",
        ),
        (
            traces,
            "The decisions recorded with decide, newest first; observed=false lists those "
            "still waiting for an outcome.",
        ),
        (
            counterfactuals,
            "For one decision: how it would likely have gone without each memory it used, "
            "from similar decisions' outcomes.",
        ),
        (
            memory_influence,
            "For each memory that fed decisions: how those decisions turned out, and a "
            "verdict (helpful, misleading, mixed, insufficient).",
        ),
        (
            salience_history,
            "Every change outcomes made to one memory's salience (its rank weight), oldest "
            "first, with the decision behind each.",
        ),
        (
            events,
            "This memory's event log in order (writes, outcomes, conflicts...), after a "
            "sequence number: what changed and when.",
        ),
        (
            replay,
            "Check the event log: rebuild every memory's outcome-driven salience, every "
            "opinion and every learned strategy from the events alone and compare them "
            "with the live records (changes nothing).",
        ),
        (
            extract_patterns,
            "Groups of similar memories that consistently came before good outcomes, each "
            "summarised by its most central memory and common terms.",
        ),
        (
            retention,
            "How much of one memory is retained now, from 0 to 1, on its forgetting curve; "
            "recalling it or using it in a decision raises it.",
        ),
        (
            sources,
            "The occurrences merged into one memory (each near-repeat that reinforced it "
            "instead of being stored twice), oldest first.",
        ),
        (
            duplicates,
            "Recent writes that nearly repeated an existing memory and reinforced it instead "
            "of adding a copy, newest first.",
        ),
    ]
    for function, description in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=read_only
        )
