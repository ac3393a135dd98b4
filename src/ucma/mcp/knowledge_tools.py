"""MCP tools for what the memory knows and how it hangs together: find_learnings,
validate_learning, fact_history, traverse, review_flags, clear_review, link,
episodes_between, context.

Each tool has the name of the ``AsyncMemory`` method it calls and answers with the same
JSON the REST route of that method returns, so one word means one operation everywhere.
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ucma import serialization
from ucma.conflicts.reports import review_flag_to_dict
from ucma.engine import AsyncMemory
from ucma.mcp.memory_tools import Guard, MemoryId, Scope
from ucma.types import LearningType

__all__ = ["KNOWLEDGE_TOOL_NAMES", "add_knowledge_tools"]

KNOWLEDGE_TOOL_NAMES = (
    "find_learnings",
    "validate_learning",
    "fact_history",
    "traverse",
    "review_flags",
    "clear_review",
    "link",
    "episodes_between",
    "context",
)

Tags = Annotated[
    list[str],
    Field(min_length=1, max_length=50, description='Tags of the situation, e.g. ["deploy"].'),
]


def add_knowledge_tools(
    server: MCPServer,
    memory: AsyncMemory,
    scope: Scope,
    told: Guard,
    conflicts: Callable[[list[Any]], dict[str, Any]],
) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error, ``conflicts`` shows a list of conflicts as ``facts`` does."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def find_learnings(
        tags: Tags,
        ctx: Context,
        learning_type: Annotated[
            LearningType | None, Field(description="Only lessons of this kind.")
        ] = None,
        min_confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.3,
        limit: Annotated[int, Field(ge=1, le=50, description="Most lessons to return.")] = 5,
    ) -> dict[str, Any]:
        with told():
            found = await memory.find_learnings(
                tags,
                learning_type=learning_type,
                min_confidence=min_confidence,
                limit=limit,
                **await scope(ctx),
            )
            return {"results": [serialization.record_to_api_dict(r) for r in found]}

    async def validate_learning(
        learning_id: Annotated[str, Field(description="The id learn or find_learnings gave.")],
        success: Annotated[bool, Field(description="Whether applying the lesson worked.")],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            learning = await memory.validate_learning(learning_id, success, **await scope(ctx))
            return serialization.record_to_api_dict(learning)

    async def fact_history(
        subject: Annotated[str, Field(description='e.g. "Alice"')],
        predicate: Annotated[str, Field(description='e.g. "works_at"')],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            found = await memory.fact_history(subject, predicate, **await scope(ctx))
            return {
                "facts": [serialization.record_to_api_dict(f) for f in found],
                **conflicts(found.conflicts),
            }

    async def traverse(
        entity: Annotated[str, Field(description='A named thing to start from, e.g. "Alice".')],
        ctx: Context,
        max_hops: Annotated[int, Field(ge=1, le=5, description="Links to follow at most.")] = 3,
    ) -> dict[str, Any]:
        with told():
            found = await memory.traverse(entity, max_hops=max_hops, **await scope(ctx))
            return {"facts": [serialization.record_to_api_dict(f) for f in found]}

    async def review_flags(
        ctx: Context,
        include_cleared: Annotated[
            bool, Field(description="Also list flags already cleared.")
        ] = False,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        with told():
            flags = await memory.review_flags(
                include_cleared=include_cleared, limit=limit, **await scope(ctx)
            )
            return {"results": [review_flag_to_dict(f) for f in flags]}

    async def clear_review(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            cleared = await memory.clear_review(memory_id, **await scope(ctx))
            return {"memory_id": memory_id, "cleared": cleared}

    async def link(
        source_id: MemoryId,
        target_id: MemoryId,
        edge_type: Annotated[
            str, Field(description='How they relate, e.g. "caused", "contradicts", "part_of".')
        ],
        ctx: Context,
        weight: Annotated[float, Field(ge=0.0, le=1.0, description="Strength of the link.")] = 1.0,
    ) -> dict[str, Any]:
        with told():
            edge = await memory.link(
                source_id, target_id, edge_type, weight=weight, **await scope(ctx)
            )
            return serialization.edge_to_dict(edge)

    async def episodes_between(
        start: Annotated[float, Field(description="From this moment, epoch seconds (UTC).")],
        end: Annotated[float, Field(description="Up to this moment, epoch seconds (UTC).")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Most episodes to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.episodes_between(start, end, limit=limit, **await scope(ctx))
            return {"results": [serialization.record_to_api_dict(e) for e in found]}

    async def context(ctx: Context) -> dict[str, Any]:
        with told():
            return {"context": memory.context(**await scope(ctx))}

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            find_learnings,
            "Find lessons learned (from learn) that apply to a situation, by its tags, most "
            "confident first: check them before repeating something that failed before.",
            read_only,
        ),
        (
            validate_learning,
            "Report whether applying a lesson (learning_id from learn or find_learnings) "
            "worked this time; its confidence follows the evidence.",
            writes,
        ),
        (
            fact_history,
            "Every value a fact (subject and predicate) has had, newest first, superseded "
            "ones included, with the conflicts between them.",
            read_only,
        ),
        (
            traverse,
            "Facts reachable from a named entity by following facts whose object is another "
            "entity (Alice works_at Acme, Acme is_in Berlin), up to max_hops links.",
            read_only,
        ),
        (
            review_flags,
            "Memories flagged for review because a fact they rest on changed; they rank "
            "lower until clear_review is called for them.",
            read_only,
        ),
        (
            clear_review,
            "Mark a flagged memory as reviewed once you checked it still holds: its rank "
            "recovers. Returns how many flags were closed.",
            writes,
        ),
        (
            link,
            "Link two memories with a typed, weighted edge (e.g. one caused the other), so "
            "related finds one from the other.",
            writes,
        ),
        (
            episodes_between,
            "What happened between two moments (epoch seconds): the episodes of that "
            "period in time order, e.g. for 'what did we do last Tuesday?'.",
            read_only,
        ),
        (
            context,
            "The working context of the current session as text: the goal, recent turns "
            "and what recall brought up, ready to put in a prompt.",
            read_only,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
