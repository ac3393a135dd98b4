"""MCP tools for the records themselves and the memory's upkeep: add, search, get,
get_all, update, delete, delete_all, archive, unarchive, history, related, new_session,
resolve_conflict, add_procedure, find_procedures, record_procedure_outcome, sleep, forget.

Each tool has the name of the Python method it calls (``AsyncMemory.<name>``), so one
word means one operation in Python, REST, MCP and the CLI.
"""

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.engine import AsyncMemory
from ucma.memory.levels import ContentType
from ucma.types import Bank, MemoryKind, Observation

__all__ = ["MEMORY_TOOL_NAMES", "add_memory_tools", "observation_to_tool"]

Scope = Callable[[Context], Awaitable[dict[str, str]]]
Guard = Callable[[], Any]

MEMORY_TOOL_NAMES = (
    "add",
    "search",
    "get",
    "get_all",
    "update",
    "delete",
    "delete_all",
    "archive",
    "unarchive",
    "history",
    "related",
    "new_session",
    "resolve_conflict",
    "add_procedure",
    "find_procedures",
    "record_procedure_outcome",
    "sleep",
    "forget",
)

MemoryId = Annotated[str, Field(description="A memory id, as search, recall or add returned it.")]
RunId = Annotated[
    str | None,
    Field(description="A run (one task or conversation): tags what is added, narrows searches."),
]


class Discovery(BaseModel):
    """A pattern an application revealed: a fact with a confidence."""

    model_config = ConfigDict(extra="forbid")

    subject: str
    predicate: str
    object: str
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description='"user", "assistant", "tool"...')
    content: str
    name: str | None = Field(default=None, description="The speaker's name, if known.")


def observation_to_tool(observation: Observation) -> dict[str, Any]:
    if observation.merged_into is not None:
        note = "merged into an existing memory that said nearly the same (reinforced it)"
    elif observation.stored:
        note = "stored in long-term memory"
    else:
        note = "judged too unimportant to keep long-term; rephrase with why it matters"
    return {
        "id": observation.id,
        "stored": observation.stored,
        "importance": round(observation.importance, 3),
        "note": note,
    }


def add_memory_tools(
    server: MCPServer,
    memory: AsyncMemory,
    scope: Scope,
    told: Guard,
    hit: Callable[[Any], dict[str, Any]],
) -> None:
    """Register the tools of this module on ``server``; ``told()`` is the context manager
    that turns a UserError into a tool error, ``hit`` how a search hit is shown."""
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    writes = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
    changes = ToolAnnotations(
        readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
    )

    async def add(
        messages: Annotated[
            str | list[Message],
            Field(
                description="One self-contained statement (\"Alice's staging database moved "
                'to port 5433 on 2 May.") or chat messages [{"role": "user", "content": '
                '"..."}], stored in order with their roles.'
            ),
        ],
        ctx: Context,
        run_id: RunId = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(
                description='Stored with each memory; search filters on it, e.g. {"topic": '
                '"billing"}.'
            ),
        ] = None,
        content_type: Annotated[
            ContentType | None,
            Field(description="What it is, when you know: sets how long it lasts."),
        ] = None,
        temporal_level: Annotated[
            int | None,
            Field(
                ge=1,
                le=4,
                description="How long it matters: 1 this session, 2 this project, 3 a "
                "season, 4 for good (identity, lasting preferences).",
            ),
        ] = None,
        salience: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="How important: 1 stated by the user, 0.2 aside."),
        ] = None,
        bank: Annotated[
            Bank | None,
            Field(description="world, experience, opinion or observation (default: guessed)."),
        ] = None,
    ) -> dict[str, Any]:
        with told():
            given: Any = (
                messages
                if isinstance(messages, str)
                else [m.model_dump(exclude_none=True) for m in messages]
            )
            found = await memory.add(
                given,
                run_id=run_id,
                metadata=metadata,
                content_type=content_type,
                temporal_level=temporal_level,
                salience=salience,
                bank=bank,
                **await scope(ctx),
            )
            return {"results": [observation_to_tool(o) for o in found]}

    async def search(
        query: Annotated[str, Field(description="What you are looking for, in words.")],
        ctx: Context,
        filters: Annotated[
            dict[str, str | int | float | bool | None] | None,
            Field(description="Only memories whose metadata has these values (equality)."),
        ] = None,
        run_id: RunId = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most memories to return.")] = 5,
    ) -> dict[str, Any]:
        with told():
            hits = await memory.search(
                query, filters=filters, run_id=run_id, limit=limit, **await scope(ctx)
            )
            return {"results": [hit(h) for h in hits]}

    async def get(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            record = await memory.get(memory_id, **await scope(ctx))
            return serialization.record_to_api_dict(record)

    async def get_all(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Page size.")] = 50,
        offset: Annotated[int, Field(ge=0, description="next_offset of the previous page.")] = 0,
        run_id: RunId = None,
        kind: Annotated[MemoryKind | None, Field(description="Only this kind of memory.")] = None,
    ) -> dict[str, Any]:
        with told():
            page = await memory.get_all(
                limit=limit, offset=offset, run_id=run_id, kind=kind, **await scope(ctx)
            )
            return {
                "items": [serialization.record_to_api_dict(r) for r in page.items],
                "total": page.total,
                "next_offset": page.next_offset,
            }

    async def update(
        memory_id: MemoryId,
        text: Annotated[str, Field(description="The corrected, complete new text.")],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            record = await memory.update(memory_id, text, **await scope(ctx))
            return {"id": record.id, "content": record.content, "updated_at": record.updated_at}

    async def delete(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            await memory.delete(memory_id, **await scope(ctx))
            return {"deleted": memory_id}

    async def delete_all(
        confirm: Annotated[bool, Field(description="Must be true; only after the user agreed.")],
        ctx: Context,
        run_id: RunId = None,
    ) -> dict[str, Any]:
        with told():
            count = await memory.delete_all(confirm=confirm, run_id=run_id, **await scope(ctx))
            return {"deleted": count}

    async def archive(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            record = await memory.archive(memory_id, **await scope(ctx))
            return {"id": record.id, "archived_at": record.archived_at}

    async def unarchive(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            record = await memory.unarchive(memory_id, **await scope(ctx))
            return {"id": record.id, "archived_at": record.archived_at}

    async def history(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        with told():
            entries = await memory.history(memory_id, **await scope(ctx))
            return {
                "history": [
                    {**dataclasses.asdict(e), "at_iso": serialization.iso_time(e.at)}
                    for e in entries
                ]
            }

    async def related(
        memory_id: MemoryId,
        ctx: Context,
        max_hops: Annotated[int, Field(ge=1, le=5)] = 2,
    ) -> dict[str, Any]:
        with told():
            found = await memory.related(memory_id, max_hops=max_hops, **await scope(ctx))
            return {
                "results": [
                    {
                        "id": record.id,
                        "kind": record.kind.value,
                        "content": record.content,
                        "weight": round(weight, 4),
                        "hops": hops,
                    }
                    for record, weight, hops in found
                ]
            }

    async def new_session(ctx: Context) -> dict[str, Any]:
        with told():
            return {"session_id": await memory.new_session(**await scope(ctx))}

    async def resolve_conflict(
        conflict_id: Annotated[str, Field(description="The id of a pending conflict (facts).")],
        chosen_value: Annotated[
            str, Field(description="The value the user said is right: one of its options.")
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            result = await memory.resolve_conflict(conflict_id, chosen_value, **await scope(ctx))
            fact = result.fact
            return {
                "fact": {"id": fact.id, "subject": fact.subject, "predicate": fact.predicate,
                         "object": fact.object, "status": fact.status.value},
                "response": result.response,
            }  # fmt: skip

    async def add_procedure(
        name: Annotated[str, Field(description='e.g. "Deploy the web app"')],
        description: Annotated[str, Field(description="What it does and when to use it.")],
        ctx: Context,
        steps: Annotated[
            list[str], Field(description="The steps, in order, one instruction each.")
        ] = [],  # noqa: B006 - MCP input schema default; never mutated
        trigger_tags: Annotated[
            list[str], Field(description="Situations it applies to, e.g. ['deploy'].")
        ] = [],  # noqa: B006
    ) -> dict[str, Any]:
        with told():
            procedure = await memory.add_procedure(
                name,
                description,
                steps=[{"description": s} for s in steps],
                trigger_tags=trigger_tags,
                **await scope(ctx),
            )
            return {"id": procedure.id, "name": procedure.name, "status": procedure.status.value}

    async def find_procedures(
        tags: Annotated[list[str], Field(min_length=1, description="Tags of the situation.")],
        ctx: Context,
    ) -> dict[str, Any]:
        with told():
            found = await memory.find_procedures(tags, **await scope(ctx))
            return {
                "procedures": [
                    {
                        "id": p.id,
                        "name": p.name,
                        "description": p.description,
                        "steps": [s.description for s in p.steps],
                        "status": p.status.value,
                        "success_rate": round(p.success_rate, 3),
                        "execution_count": p.execution_count,
                    }
                    for p in found
                ]
            }

    async def record_procedure_outcome(
        procedure_id: Annotated[
            str, Field(description="The id find_procedures or strategies_for returned.")
        ],
        success: Annotated[bool, Field(description="Whether following it worked.")],
        ctx: Context,
        task: Annotated[
            str | None,
            Field(description="The task you applied it to: kept as an experience."),
        ] = None,
        failure_reason: Annotated[
            str | None, Field(description="If it failed: why (kept as a failure mode).")
        ] = None,
        discoveries: Annotated[
            list[Discovery],
            Field(description="Patterns the run revealed, kept as facts (needs task)."),
        ] = [],  # noqa: B006 - MCP input schema default; never mutated
    ) -> dict[str, Any]:
        with told():
            procedure = await memory.record_procedure_outcome(
                procedure_id,
                success,
                task=task,
                failure_reason=failure_reason,
                discoveries=[d.model_dump() for d in discoveries],
                **await scope(ctx),
            )
            return {
                "id": procedure.id,
                "success_rate": round(procedure.success_rate, 3),
                "applications": procedure.execution_count,
                "successes": procedure.success_count,
                "status": procedure.status.value,
            }

    async def sleep(ctx: Context) -> dict[str, Any]:
        with told():
            return (await memory.sleep(**await scope(ctx))).to_dict()

    async def forget(
        ctx: Context,
        dry_run: Annotated[
            bool, Field(description="Only list what would be archived and purged, and why.")
        ] = True,
    ) -> dict[str, Any]:
        with told():
            return (await memory.forget(dry_run=dry_run, **await scope(ctx))).to_dict()

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            add,
            "Save to the user's long-term memory: one self-contained statement, or the "
            "messages of a conversation (each kept with its role, in order). Unimportant "
            "chatter may not be kept (stored=false); a near-duplicate reinforces the memory "
            "it repeats. Returns each memory's id.",
            writes,
        ),
        (
            search,
            "Find memories by meaning, best first, optionally only those whose metadata "
            "matches filters or that belong to a run. Use recall instead when you need a "
            "confidence and a retrieval_id for decide.",
            read_only,
        ),
        (get, "Read one memory by id: its full text, kind, times and metadata.", read_only),
        (
            get_all,
            "List the user's memories, oldest first, a page at a time: pass next_offset as "
            "offset until it is null; total says how many there are.",
            read_only,
        ),
        (
            update,
            "Correct a memory's text (episodes and lessons; for a fact, assert_fact its new "
            "value). The old text is kept in its history.",
            writes,
        ),
        (
            delete,
            "Delete one memory by id, when the user asks you to drop it or it is wrong and "
            "cannot be corrected. Its history stays.",
            changes,
        ),
        (
            delete_all,
            "Delete every memory of this user (or of one run). Only when the user asked for "
            "it explicitly; confirm must be true. It cannot be undone.",
            changes,
        ),
        (
            archive,
            "Archive one memory the user no longer wants used: it leaves search and recall "
            "but is kept, and unarchive brings it back.",
            writes,
        ),
        (
            unarchive,
            "Bring an archived memory back into search and recall.",
            writes,
        ),
        (
            history,
            "What happened to a memory, oldest first: each update with the previous and new "
            "text, merges, archiving.",
            read_only,
        ),
        (
            related,
            "Memories linked to one memory in the memory graph (same session, same facts, "
            "evidence), best link first.",
            read_only,
        ),
        (
            new_session,
            "Start a new session when a new task or conversation begins: the working context "
            "is cleared and what was said is consolidated into facts in the background.",
            writes,
        ),
        (
            resolve_conflict,
            "Settle a conflict that facts or assert_fact reported as pending "
            "(disambiguation_required): pass its id and the value the user chose among its "
            "options. The other value is kept as history.",
            writes,
        ),
        (
            add_procedure,
            "Save a reusable way of doing something (name, description, steps, trigger "
            "tags), so it can be found and followed next time.",
            writes,
        ),
        (
            find_procedures,
            "Find saved procedures for a situation by its tags, most successful first.",
            read_only,
        ),
        (
            record_procedure_outcome,
            "Report whether following a procedure or strategy worked; its success rate and "
            "status (draft, active, deprecated) follow the evidence. With the task, the run "
            "is kept as an experience, and discoveries as facts.",
            writes,
        ),
        (
            sleep,
            "Consolidate memory now: summarise old episodes, draw facts from them, "
            "strengthen links, forget what faded. Returns what each phase changed.",
            writes,
        ),
        (
            forget,
            "Run forgetting: archive memories that faded and purge old archives. By default "
            "dry_run=true only lists what would go and why.",
            changes,
        ),
    ]
    for function, description, annotations in tools:
        server.add_tool(
            function, name=function.__name__, description=description, annotations=annotations
        )
