"""MCP tools for banks and opinions (seed 000): retain, find_opinion, opinions,
opinions_below, get_opinion, opinion_history, reinforce_opinion, weaken_opinion.

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
from ucma.mcp.memory_tools import Guard, Scope, observation_to_tool
from ucma.types import Bank

__all__ = ["OPINION_TOOL_NAMES", "add_opinion_tools"]

OPINION_TOOL_NAMES = (
    "retain",
    "find_opinion",
    "opinions",
    "opinions_below",
    "get_opinion",
    "opinion_history",
    "reinforce_opinion",
    "weaken_opinion",
)

OpinionId = Annotated[
    str, Field(description="An opinion id, as find_opinion, opinions or retain's opinion gave.")
]
Evidence = Annotated[str | None, Field(description="What was seen or said, in words.")]
Weight = Annotated[
    float | None,
    Field(gt=0.0, le=1.0, description="How strong the evidence is; default 0.5 (plain)."),
]


def add_opinion_tools(server: MCPServer, memory: AsyncMemory, scope: Scope, told: Guard) -> None:
    """Register the tools of this module on ``server``; ``told()`` turns a UserError
    into a tool error."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def retain(
        text: Annotated[str, Field(description="One self-contained statement.")],
        bank: Annotated[
            Bank,
            Field(
                description="world (objective facts), experience (what you did and what "
                "happened), opinion (a belief or preference with a confidence), observation "
                "(a summary you drew about someone or something)."
            ),
        ],
        ctx: Context,
        confidence: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="How sure: 1 stated, 0.8 strong, 0.6 inferred."),
        ] = None,
        entities: Annotated[list[str] | None, Field(description="Who or what it involves.")] = None,
        topic: Annotated[
            str | None,
            Field(description="For an opinion: what it is about (default: read from the text)."),
        ] = None,
    ) -> dict[str, Any]:
        with told():
            observation = await memory.retain(
                text,
                bank=bank,
                confidence=confidence,
                entities=entities,
                mention_time=None,
                topic=topic,
                source="user",
                **await scope(ctx),
            )
            return observation_to_tool(observation)

    async def find_opinion(
        topic: Annotated[str, Field(description='What the opinion is about, e.g. "editor theme".')],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            found = await memory.find_opinion(topic, **await scope(ctx))
            return {"opinion": serialization.opinion_to_api_dict(found) if found else None}

    async def opinions(
        ctx: Context,
        include_replaced: Annotated[
            bool, Field(description="Also the stances held before (history).")
        ] = False,
        limit: Annotated[int, Field(ge=1, le=200, description="Most opinions to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.opinions(
                include_replaced=include_replaced, limit=limit, offset=0, **await scope(ctx)
            )
            return {"results": [serialization.opinion_to_api_dict(o) for o in found]}

    async def opinions_below(
        confidence: Annotated[float, Field(ge=0.0, le=1.0, description="The bound.")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Most opinions to return.")] = 50,
    ) -> dict[str, Any]:
        with told():
            found = await memory.opinions_below(confidence, limit=limit, **await scope(ctx))
            return {"results": [serialization.opinion_to_api_dict(o) for o in found]}

    async def get_opinion(opinion_id: OpinionId, ctx: Context) -> dict[str, Any]:
        with told():
            found = await memory.get_opinion(opinion_id, **await scope(ctx))
            return serialization.opinion_to_api_dict(found)

    async def opinion_history(opinion_id: OpinionId, ctx: Context) -> dict[str, Any]:
        with told():
            chain = await memory.opinion_history(opinion_id, **await scope(ctx))
            return {"results": [serialization.opinion_to_api_dict(o) for o in chain]}

    async def reinforce_opinion(
        opinion_id: OpinionId, ctx: Context, evidence: Evidence = None, weight: Weight = None
    ) -> dict[str, Any]:
        with told():
            found = await memory.reinforce_opinion(
                opinion_id, evidence=evidence, weight=weight, **await scope(ctx)
            )
            return serialization.opinion_to_api_dict(found)

    async def weaken_opinion(
        opinion_id: OpinionId,
        ctx: Context,
        evidence: Evidence = None,
        weight: Weight = None,
        stance: Annotated[
            str | None,
            Field(description="What is held instead, if the opinion's confidence falls too low."),
        ] = None,
    ) -> dict[str, Any]:
        with told():
            found = await memory.weaken_opinion(
                opinion_id, evidence=evidence, weight=weight, stance=stance, **await scope(ctx)
            )
            return serialization.opinion_to_api_dict(found)

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            retain,
            "Store a statement in one of four banks: world, experience, opinion, observation. "
            "Use the opinion bank for a belief or preference (the user's or yours) with a "
            "confidence: the same stance again reinforces the opinion, a different one "
            "weakens it, and a weak enough opinion is replaced (history kept).",
            writes,
        ),
        (
            find_opinion,
            "The opinion currently held on a topic (a preference, a belief), or null: check "
            "it before acting on what the user likes; a replaced stance answers with what "
            "replaced it.",
            read_only,
        ),
        (
            opinions,
            "The opinions currently held, newest change first (with include_replaced, the "
            "stances held before too).",
            read_only,
        ),
        (
            opinions_below,
            "Opinions held with less than this confidence: beliefs to confirm with the user "
            "or gather evidence for before relying on them.",
            read_only,
        ),
        (
            get_opinion,
            "One opinion by id: its topic, stance, confidence, status and the evidence that "
            "moved it.",
            read_only,
        ),
        (
            opinion_history,
            "How the stance on an opinion's topic changed: every opinion it replaced and "
            "what replaced it, oldest first.",
            read_only,
        ),
        (
            reinforce_opinion,
            "Report evidence that confirms an opinion (the user chose it again): its "
            "confidence rises gradually.",
            writes,
        ),
        (
            weaken_opinion,
            "Report evidence against an opinion (the user chose otherwise): its confidence "
            "falls gradually; below the threshold, stance replaces it and the old one is kept "
            "as history.",
            writes,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
