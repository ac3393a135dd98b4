"""The MCP tools: remember, recall, learn, facts, assert_fact, health, and seed 003's names.

Tools and what they call:

=================  ==========================  ======================================
tool               alias (seed 003)            engine
=================  ==========================  ======================================
``remember``       ``mind_remember``           ``observe`` (store one input)
``recall``         ``mind_retrieve``           ``remember`` (retrieve, best first)
``learn``                                      ``learn``
``facts``                                      ``facts_about``
``assert_fact``                                ``assert_fact``
``health``         ``mind_health``             ``stats`` of the caller's scope
=================  ==========================  ======================================

``decide`` / ``outcome`` (and ``mind_decide``) are not offered: the engine has no decision
tracking yet, and a tool that pretends to record decisions would lose them. ``recall``
runs the engine's current retrieval (``AsyncMemory.remember``) and says so in its
description; it moves to the engine's ``recall`` when that exists.

Scope: no tool takes a ``user_id``. A ``ScopeResolver`` gives the scope of each call:
fixed by the command line on stdio, from the API key over HTTP (see ``ucma.server.app``).
Seed 003's ``mind_remember(user_id, ...)`` therefore loses its first argument here: an
agent cannot write into another user's memory by naming it.
"""

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

import ucma
from ucma.engine import AsyncMemory
from ucma.errors import UserError
from ucma.types import Hit, LearningType

__all__ = ["TOOL_NAMES", "ScopeResolver", "create_mcp_server", "fixed_scope"]

ScopeResolver = Callable[[Context], Awaitable[dict[str, str]]]
"""Gives the engine scope (``user_id`` and maybe ``agent_id``) of one tool call."""

TOOL_NAMES = (
    "remember",
    "recall",
    "learn",
    "facts",
    "assert_fact",
    "health",
    "mind_remember",
    "mind_retrieve",
    "mind_health",
)

INSTRUCTIONS = """\
Long-term memory for this user, kept across conversations.
- Call `recall` at the start of a task and whenever the user refers to something from the
  past ("as I said", "my usual setup"): it returns what is relevant, best first.
- Call `remember` when you learn something worth keeping: a preference, a decision, a
  fact about the user's world, a result that took effort to get. One self-contained
  statement per call.
- Call `learn` when something failed or succeeded in a way worth generalising.
- `facts` lists what is known about a named thing; `assert_fact` records a precise triple.
"""


def fixed_scope(user_id: str, agent_id: str | None = None) -> ScopeResolver:
    """Every call in one scope (stdio: the scope comes from the command line)."""
    scope = {"user_id": user_id}
    if agent_id is not None:
        scope["agent_id"] = agent_id

    async def resolve(ctx: Context) -> dict[str, str]:
        return dict(scope)

    return resolve


@contextmanager
def _told_to_the_agent() -> Iterator[None]:
    """A mistake the caller can fix reaches the agent as a tool error with UCMA's message;
    anything else stays a crash whose text is only in the server log."""
    try:
        yield
    except UserError as exc:
        raise ToolError(f"{exc.code}: {exc}") from exc


def _hit(hit: Hit) -> dict[str, Any]:
    memory = hit.memory
    found: dict[str, Any] = {
        "id": hit.id,
        "kind": hit.kind.value,
        "content": hit.content,
        "score": round(hit.score, 4),
        "created_at": memory.created_at,
    }
    for name in ("timestamp", "source", "subject", "predicate", "object", "confidence"):
        value = getattr(memory, name, None)
        if value is not None:
            found[name] = value
    return found


def create_mcp_server(memory: AsyncMemory, scope: ScopeResolver) -> MCPServer:
    """The tools over ``memory``; ``scope`` gives each call's scope."""
    server = MCPServer(
        "ucma",
        instructions=INSTRUCTIONS,
        version=ucma.__version__,
        log_level="WARNING",
        warn_on_duplicate_tools=False,
    )
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    writes = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)

    async def remember(
        content: Annotated[
            str,
            Field(
                description="One self-contained statement, e.g. \"Alice's staging database "
                'moved to port 5433 on 2 May." Resolve pronouns; include who, what, when.'
            ),
        ],
        ctx: Context,
        source: Annotated[
            str, Field(description='Who said or produced it: "user", "assistant", "tool_result".')
        ] = "user",
        tags: Annotated[list[str] | None, Field(description="Optional topic tags.")] = None,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            observation = await memory.observe(
                content, source=source, tags=tags, **await scope(ctx)
            )
            return {
                "id": observation.id,
                "stored": observation.stored,
                "importance": round(observation.importance, 3),
                "note": "stored in long-term memory"
                if observation.stored
                else "judged too unimportant to keep long-term; rephrase with why it matters",
            }

    async def recall(
        query: Annotated[
            str,
            Field(
                description="What you need to know, as a question or keywords, e.g. "
                '"which editor theme does the user prefer?"'
            ),
        ],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=50, description="Most memories to return.")] = 5,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            hits = await memory.remember(query, limit=limit, **await scope(ctx))
            return {"results": [_hit(hit) for hit in hits]}

    async def learn(
        insight: Annotated[
            str,
            Field(
                description='The lesson, stated so it helps next time, e.g. "JWT expiring '
                'early? Check clock skew and add a leeway."'
            ),
        ],
        ctx: Context,
        learning_type: Annotated[
            LearningType, Field(description="What kind of lesson it is.")
        ] = LearningType.DOMAIN_INSIGHT,
        applicability: Annotated[
            list[str], Field(description="Tags of the situations it applies to.")
        ] = [],  # noqa: B006 - MCP input schema default; never mutated
        evidence_ids: Annotated[
            list[str], Field(description="Ids of memories (from recall) it was drawn from.")
        ] = [],  # noqa: B006
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            learning = await memory.learn(
                insight,
                learning_type=learning_type,
                applicability=applicability,
                evidence_ids=evidence_ids,
                confidence=confidence,
                **await scope(ctx),
            )
            return {"id": learning.id, "title": learning.title, "confidence": learning.confidence}

    async def facts(
        entity: Annotated[
            str, Field(description='A named thing: a person, project, service... e.g. "Alice".')
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            found = await memory.facts_about(entity, **await scope(ctx))
            return {
                "facts": [
                    {
                        "id": f.id,
                        "subject": f.subject,
                        "predicate": f.predicate,
                        "object": f.object,
                        "confidence": round(f.confidence, 3),
                    }
                    for f in found
                ]
            }

    async def assert_fact(
        subject: Annotated[str, Field(description='e.g. "Alice"')],
        predicate: Annotated[str, Field(description='e.g. "prefers"')],
        object: Annotated[str, Field(description='e.g. "dark mode"')],  # noqa: A002
        ctx: Context,
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            fact = await memory.assert_fact(
                subject, predicate, object, confidence=confidence, **await scope(ctx)
            )
            return {
                "id": fact.id,
                "confidence": round(fact.confidence, 3),
                "reinforcement_count": fact.reinforcement_count,
            }

    async def health(ctx: Context) -> dict[str, Any]:
        with _told_to_the_agent():
            stats = await memory.stats(**await scope(ctx))
            return {
                "status": "ok",
                "version": ucma.__version__,
                "embedder": memory.embedder.model_id,
                "user_id": stats["user_id"],
                "agent_id": stats["agent_id"],
                "memories": stats["memories"],
            }

    remember_text = (
        "Save something to the user's long-term memory: a preference, a decision, a fact "
        "about their world, the result of a tool call worth keeping. Write one "
        "self-contained statement per call. Unimportant chatter may not be kept "
        "(stored=false). Returns the memory id."
    )
    recall_text = (
        "Search the user's long-term memory for what is relevant to a question or task, best "
        "first (vector, keyword and graph search ranked by relevance, importance, recency). "
        "Call it before answering anything that may depend on the past. Runs the engine's "
        "current retrieval (remember); results carry ids usable as evidence in learn."
    )
    health_text = "Check that memory works; shows the model in use and memory counts."
    tools: list[tuple[Callable[..., Any], str, str, ToolAnnotations]] = [
        (remember, "remember", remember_text, writes),
        (recall, "recall", recall_text, read_only),
        (
            learn,
            "learn",
            "Record a lesson learned from something that failed or worked, so it is applied "
            "next time; link the memories it came from with evidence_ids.",
            writes,
        ),
        (
            facts,
            "facts",
            "List the known facts (subject, predicate, object) about a named entity.",
            read_only,
        ),
        (
            assert_fact,
            "assert_fact",
            "Record a precise fact as subject, predicate, object. Asserting the same fact "
            "again reinforces it instead of duplicating it.",
            writes,
        ),
        (health, "health", health_text, read_only),
        (remember, "mind_remember", f"Same as remember. {remember_text}", writes),
        (recall, "mind_retrieve", f"Same as recall. {recall_text}", read_only),
        (health, "mind_health", f"Same as health. {health_text}", read_only),
    ]
    for function, name, description, annotations in tools:
        server.add_tool(function, name=name, description=description, annotations=annotations)
    return server
