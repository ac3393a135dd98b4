"""Sleep consolidation and forgetting for the caller's scope (issue 4), and what they
work from: a memory's retention, the occurrences merged into it, the duplicate log.

The gardener runs its jobs over every scope, so it is an administration command
(``ucma gardener run``, and the scheduler inside ``ucma serve``), not a route.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId
from ucma.server.schemas import (
    AgentQuery,
    Flag,
    Offset,
    OptionalScope,
    Page,
    ScopedBody,
    UserQuery,
    page_of,
    scope_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["lifecycle"])


class ForgetRequest(ScopedBody):
    dry_run: Flag = Field(
        default=False,
        description="List what would be archived and purged, and why; change nothing.",
    )


@router.post("/sleep")
async def sleep(engine: Engine, key: Caller, body: OptionalScope = None) -> dict[str, Any]:
    """Run one sleep cycle for the scope: compress expired episodes, abstract facts from
    them, reinforce the graph, forget, clean up. Answers what each phase changed."""
    report = await engine.sleep(**scope_of(key, body))
    return report.to_dict()


@router.post("/forget")
async def forget(engine: Engine, key: Caller, body: ForgetRequest | None = None) -> dict[str, Any]:
    """Run the forgetting engine for the scope: archive what it forgets (with the reason),
    purge archives past the retention period; ``dry_run`` only lists them."""
    report = await engine.forget(dry_run=bool(body and body.dry_run), **scope_of(key, body))
    return report.to_dict()


class RetentionResponse(BaseModel):
    memory_id: str
    retention: float = Field(
        ge=0.0, le=1.0, description="How much of the memory is retained now (forgetting curve)."
    )


class Source(BaseModel):
    reference: str = Field(description="The id the occurrence would have had, or its episode.")
    source: str = Field(description='Who produced it: "user", "assistant", ...')
    at: float = Field(description="When, epoch seconds (UTC).")
    at_iso: str | None = Field(description="The same time in ISO 8601.")


class SourcesResponse(BaseModel):
    memory_id: str
    sources: list[Source]


@router.get("/memories/{memory_id}/retention")
async def retention(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> RetentionResponse:
    """How much of a memory is retained now, in [0, 1], on its forgetting curve (it
    rises when the memory is recalled or helps a decision); 404 for an unknown id."""
    value = await engine.retention(memory_id, **scope_for(key, user_id, agent_id))
    return RetentionResponse(memory_id=memory_id, retention=round(value, 4))


@router.get("/memories/{memory_id}/sources")
async def sources(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> SourcesResponse:
    """The occurrences merged into a memory (each near-duplicate observation that
    reinforced it), oldest first; 404 for an unknown id."""
    scope = scope_for(key, user_id, agent_id)
    await engine.get(memory_id, **scope)
    found = await engine.sources(memory_id, **scope)
    return SourcesResponse(
        memory_id=memory_id,
        sources=[Source(**serialization.source_to_dict(s)) for s in found],
    )


@router.get("/duplicates")
async def duplicates(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """Writes that nearly repeated an existing memory and reinforced it instead of
    adding a copy (the memory's id, the text, the similarity), newest first."""
    found = await engine.duplicates(limit=offset + limit + 1, **scope_for(key, user_id, agent_id))
    items = [serialization.duplicate_to_dict(d) for d in found[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(found) > offset + limit)
