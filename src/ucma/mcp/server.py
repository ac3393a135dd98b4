"""The MCP server: one tool per operation, named like the Python method it calls.

=============================  ================================================
tool                           what it does (``AsyncMemory`` method of that name)
=============================  ================================================
``add``                        save a statement or chat messages (observe_many)
``search``                     find memories, with metadata filters
``recall``                     cascading recall: confidence, retrieval_id
``get`` / ``get_all``          one memory; a page of them with the total
``update`` / ``history``       correct a memory's text; its versions
``delete`` / ``delete_all``    delete one memory; every memory (confirmed)
``related``                    memories linked to one in the graph
``learn``                      record a lesson
``decide`` / ``outcome``       the learning loop
``facts``                      ``facts_about``, with conflicts to ask the user about
``assert_fact``                ``assert_fact_detailed``
``resolve_conflict``           the user's answer to a pending conflict
``new_session``                start a session (consolidates the last)
``add_procedure``              save a reusable procedure
``find_procedures``            procedures for a situation's tags
``record_procedure_outcome``   whether a procedure worked
``sleep`` / ``forget``         consolidation; forgetting (dry run by default)
``health``                     ``stats`` of the caller's scope
``forget_person``              erase a person for good
``find_learnings`` ...         lessons, fact history, review flags, links, episodes
                               of a period, the working context (knowledge_tools)
``trace`` ...                  decisions, influence, salience history, events,
                               replay, patterns, retention, sources (loop_tools)
``retain`` ...                 banks and opinions: find, list, reinforce, weaken,
                               history (opinion_tools)
``learn_from_trajectory`` ...  strategies: learn from a trajectory, strategies_for,
                               has_strategy_for (strategy_tools)
``simulate`` ...               world model and self-model: observe_transition,
                               transitions, record_competence, competences, introspect,
                               should_attempt, learning_priorities (predictive_tools)
``add_goal`` ...               goals: add, list, decompose, progress, resume, abandon,
                               anticipate, pursue (goal_tools)
=============================  ================================================

Python's ``remember`` is ``search`` without filters under the seed's name; MCP offers
``search`` only, so an agent never sees two names for one operation, and never a
``remember`` that saves (tools named ``remember`` and ``mind_*`` before this version
saved, searched or duplicated others: ``add`` and ``search`` replace them).

Scope: no tool takes a ``user_id``. A ``ScopeResolver`` gives the scope of each call:
fixed by the command line on stdio, from the API key over HTTP (see ``ucma.server.app``),
so an agent cannot write into another user's memory by naming it.
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
from ucma.learning.records import OutcomeSignal
from ucma.mcp.goal_tools import GOAL_TOOL_NAMES, add_goal_tools
from ucma.mcp.knowledge_tools import KNOWLEDGE_TOOL_NAMES, add_knowledge_tools
from ucma.mcp.loop_tools import LOOP_TOOL_NAMES, add_loop_tools
from ucma.mcp.memory_tools import MEMORY_TOOL_NAMES, add_memory_tools
from ucma.mcp.opinion_tools import OPINION_TOOL_NAMES, add_opinion_tools
from ucma.mcp.predictive_tools import PREDICTIVE_TOOL_NAMES, add_predictive_tools
from ucma.mcp.strategy_tools import STRATEGY_TOOL_NAMES, add_strategy_tools
from ucma.mcp.synthesis_tools import SYNTHESIS_TOOL_NAMES, add_synthesis_tools
from ucma.types import Conflict, Hit, LearningType

__all__ = ["TOOL_NAMES", "ScopeResolver", "create_mcp_server", "fixed_scope"]

ScopeResolver = Callable[[Context], Awaitable[dict[str, str]]]
"""Gives the engine scope (``user_id`` and maybe ``agent_id``) of one tool call."""

TOOL_NAMES = (
    "recall",
    "learn",
    "decide",
    "outcome",
    "facts",
    "assert_fact",
    "health",
    "forget_person",
    *MEMORY_TOOL_NAMES,
    *KNOWLEDGE_TOOL_NAMES,
    *LOOP_TOOL_NAMES,
    *STRATEGY_TOOL_NAMES,
    *OPINION_TOOL_NAMES,
    *PREDICTIVE_TOOL_NAMES,
    *GOAL_TOOL_NAMES,
    *SYNTHESIS_TOOL_NAMES,
)
"""Every tool the server lists."""

INSTRUCTIONS = """\
Long-term memory for this user, kept across conversations.
- Call `recall` at the start of a task and whenever the user refers to something from the
  past ("as I said", "my usual setup"): it returns what is relevant, best first, with a
  confidence; when `low_confidence` is true, say you are not sure rather than guess.
- Call `add` when you learn something worth keeping: a preference, a decision, a fact
  about the user's world, a result that took effort to get. One self-contained statement
  per call, or the messages of a conversation. `update` corrects a memory, `delete`
  removes one; `search` finds memories by meaning and metadata.
- Call `learn` when something failed or succeeded in a way worth generalising.
- Before a multi-step task, `strategies_for` gives what worked for similar tasks and the
  pitfalls to avoid; afterwards `learn_from_trajectory` keeps what you did and how it
  ended, and `record_procedure_outcome` reports how a strategy you followed went.
- `find_opinion` says what the user prefers on a topic now; `retain` into the `opinion`
  bank records a preference with a confidence, `reinforce_opinion` / `weaken_opinion`
  report evidence for or against one.
- Before a task you may not manage, `should_attempt` says whether to attempt it, add a
  caveat, ask the user for help, or decline; `introspect` answers "am I good at this?";
  `simulate` predicts what an action will lead to, and `observe_transition` records what
  it did.
- `get_active_goals` says what the user is working towards, most important first;
  `add_goal` records a new one (it comes back suspended, with the memories that
  contradict it, when memory says it cannot go ahead: tell the user), `pursue_goal`
  plans one and `update_progress` reports how far it got.
- `facts` lists what is known about a named thing, and any conflicting values: when
  `disambiguation_required` is true, ask the user which of `options` is right.
  `assert_fact` records a precise triple; `resolve_conflict` records the user's answer.
- `synthesize` gathers all of the above for one query in a single call (facts,
  preferences, ranked strategies, a prediction, goals, competence and advice, with
  caveats where they disagree); after the interaction, `post_interaction` reports how it
  went to every part of memory at once.
- Call `new_session` when a new task or conversation starts.
- After acting on recalled memories, call `decide` with their ids and the recall's
  `retrieval_id`; once you know how it went, call `outcome` with the decision id, so
  memories that helped rank higher next time and misleading ones lower.
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
        "confidence": round(hit.confidence.overall, 3) if hit.confidence is not None else None,
        "created_at": memory.created_at,
    }
    if hit.needs_review:
        found["needs_review"] = True
    for name in ("timestamp", "source", "subject", "predicate", "object"):
        value = getattr(memory, name, None)
        if value is not None:
            found[name] = value
    return found


def _conflict(conflict: Conflict) -> dict[str, Any]:
    """A conflict as an agent needs it: what disagrees, what was chosen, why."""
    found: dict[str, Any] = {
        "id": conflict.id,
        "subject": conflict.subject,
        "predicate": conflict.predicate,
        "existing_value": conflict.existing_value,
        "new_value": conflict.new_value,
        "status": conflict.status.value,
        "chosen_value": conflict.chosen_value,
        "explanation": conflict.explanation,
    }
    if conflict.options:
        found["options"] = list(conflict.options)
    return found


def _conflicts(conflicts: list[Conflict]) -> dict[str, Any]:
    pending = [c for c in conflicts if c.disambiguation_required]
    found: dict[str, Any] = {
        "conflicts": [_conflict(c) for c in conflicts],
        "disambiguation_required": bool(pending),
    }
    if pending:
        found["options"] = list(dict.fromkeys(o for c in pending for o in c.options))
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
    erases = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)

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
        reference_time: Annotated[
            float | None,
            Field(description='Epoch seconds that "yesterday", "last week" refer to; default now.'),
        ] = None,
        cascade: Annotated[
            bool,
            Field(description="Search further memory layers when the first is not confident."),
        ] = True,
        confidence_threshold: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="Cascade below this confidence (default 0.5)."),
        ] = None,
        max_cascade_depth: Annotated[
            int | None,
            Field(ge=0, le=10, description="Most further layers to search (default 2)."),
        ] = None,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            result = await memory.recall(
                query,
                limit=limit,
                reference_time=reference_time,
                cascade=cascade,
                confidence_threshold=confidence_threshold,
                max_cascade_depth=max_cascade_depth,
                **await scope(ctx),
            )
            path = result.cascade_path
            return {
                "results": [_hit(hit) for hit in result.hits],
                "confidence": round(result.confidence, 3),
                "low_confidence": result.low_confidence,
                "retrieval_id": result.retrieval_id,
                "searched_layers": [path.primary_layer, *path.cascaded_to],
            }

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
                        "status": f.status.value,
                    }
                    for f in found
                ],
                **_conflicts(found.conflicts),
            }

    async def assert_fact(
        subject: Annotated[str, Field(description='e.g. "Alice"')],
        predicate: Annotated[str, Field(description='e.g. "prefers"')],
        object: Annotated[str, Field(description='e.g. "dark mode"')],  # noqa: A002
        ctx: Context,
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            result = await memory.assert_fact_detailed(
                subject, predicate, object, confidence=confidence, **await scope(ctx)
            )
            fact = result.fact
            return {
                "id": fact.id,
                "confidence": round(fact.confidence, 3),
                "reinforcement_count": fact.reinforcement_count,
                "status": fact.status.value,
                "response": result.response,
                **_conflicts(result.conflicts),
            }

    async def decide(
        memory_ids: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=100,
                description="Ids of the memories (from recall) your decision relied on.",
            ),
        ],
        summary: Annotated[
            str,
            Field(
                description='What you decided, in one line, e.g. "Suggested port 5433 for '
                'staging". No personal data.'
            ),
        ],
        ctx: Context,
        retrieval_id: Annotated[
            str | None, Field(description="The retrieval_id of the recall they came from.")
        ] = None,
        memory_scores: Annotated[
            list[float] | None,
            Field(description="How much each memory counted, in memory_ids order; default equal."),
        ] = None,
        decision_type: Annotated[
            str, Field(description='e.g. "recommendation", "plan", "answer".')
        ] = "recommendation",
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            trace = await memory.decide(
                memory_ids,
                memory_scores,
                decision_type=decision_type,
                summary=summary,
                confidence=confidence,
                retrieval_id=retrieval_id,
                **await scope(ctx),
            )
            return {
                "decision_id": trace.id,
                "memory_scores": trace.memory_scores,
                "note": "call outcome with this decision_id once you know how it went "
                "(within 7 days)",
            }

    async def outcome(
        decision_id: Annotated[str, Field(description="The decision_id that decide returned.")],
        quality: Annotated[
            float,
            Field(
                ge=-1.0,
                le=1.0,
                description="How it went: 1 excellent, 0 neutral, -1 harmful or wrong.",
            ),
        ],
        signal: Annotated[OutcomeSignal, Field(description="How you know.")],
        ctx: Context,
        feedback: Annotated[
            str | None, Field(description="What the user said or what happened, briefly.")
        ] = None,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            report = await memory.outcome(
                decision_id, quality, signal, feedback, **await scope(ctx)
            )
            return {
                "decision_id": report.trace.id,
                "outcome_quality": report.trace.outcome_quality,
                "salience_updates": [
                    {"memory_id": u.memory_id, "delta": round(u.delta, 4)} for u in report.updates
                ],
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

    async def forget_person(
        identifiers: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=50,
                description="Every identifier of the person: full name, emails, phone "
                "numbers, customer numbers.",
            ),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        with _told_to_the_agent():
            report = await memory.forget_person(identifiers, **await scope(ctx))
            return report.to_dict()

    recall_text = (
        "Search the user's long-term memory for what is relevant to a question or task, best "
        "first (vector, keyword and graph search; further memory layers are searched when the "
        "first is not confident). Call it before answering anything that may depend on the "
        "past. Each result has a confidence in [0, 1]; low_confidence=true means nothing "
        "solid was found, so say you do not know rather than guess. Result ids and the "
        "retrieval_id go into decide; ids also work as evidence in learn."
    )
    decide_text = (
        "Record a decision you made from recalled memories: pass their ids (memory_ids) and "
        "the recall's retrieval_id, and a one-line summary. Returns a decision_id; report "
        "how it turned out with outcome, so the memories that helped rank higher next time."
    )
    health_text = "Check that memory works; shows the model in use and memory counts."
    tools: list[tuple[Callable[..., Any], str, str, ToolAnnotations]] = [
        (recall, "recall", recall_text, read_only),
        (
            learn,
            "learn",
            "Record a lesson learned from something that failed or worked, so it is applied "
            "next time; link the memories it came from with evidence_ids.",
            writes,
        ),
        (decide, "decide", decide_text, writes),
        (
            outcome,
            "outcome",
            "Report how a decision (decision_id from decide) turned out: quality from -1 "
            "(wrong, harmful) to 1 (excellent) and the signal you observed (user_accepted, "
            "user_rejected, task_completed, task_failed...). Memories behind good decisions "
            "gain salience, misleading ones lose it. Once per decision, within 7 days.",
            writes,
        ),
        (
            facts,
            "facts",
            "List the known facts (subject, predicate, object) about a named entity, with any "
            "conflicts between values. If disambiguation_required is true, ask the user which "
            "of options is correct before relying on that fact.",
            read_only,
        ),
        (
            assert_fact,
            "assert_fact",
            "Record a precise fact as subject, predicate, object. Asserting the same fact "
            "again reinforces it; a new value for something that has one value (a status, a "
            "preferred day) is reported as a conflict, resolved or left for the user to choose.",
            writes,
        ),
        (health, "health", health_text, read_only),
        (
            forget_person,
            "forget_person",
            "Erase for good everything this user's memory holds about a person, when the "
            "user asks you to forget them: every memory, fact, lesson, decision and stored "
            "value naming any of the identifiers. It cannot be undone; confirm with the "
            "user first. Returns how many records of each kind were erased.",
            erases,
        ),
    ]
    for function, name, description, annotations in tools:
        server.add_tool(function, name=name, description=description, annotations=annotations)
    add_memory_tools(server, memory, scope, _told_to_the_agent, _hit)
    add_knowledge_tools(server, memory, scope, _told_to_the_agent, _conflicts)
    add_loop_tools(server, memory, scope, _told_to_the_agent)
    add_strategy_tools(server, memory, scope, _told_to_the_agent)
    add_opinion_tools(server, memory, scope, _told_to_the_agent)
    add_predictive_tools(server, memory, scope, _told_to_the_agent)
    add_goal_tools(server, memory, scope, _told_to_the_agent)
    add_synthesis_tools(server, memory, scope, _told_to_the_agent)
    return server
