"""Sleep consolidation and forgetting for the caller's scope (issue 4), and what they
work from: a memory's retention, the occurrences merged into it, the duplicate log;
archiving and unarchiving one memory by hand.

The gardener runs its jobs over every scope, so running it is an administration command
(``ucma gardener run``, and the scheduler inside ``ucma serve``), not a route; its
schedule is readable (``GET /v1/gardener``), without the summaries of what it did across
every user when the caller holds a key.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
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
    StoreOffset,
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


@router.get("/sleep/runs")
async def sleep_runs(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
) -> Page:
    """The scope's sleep cycles, newest first: why each ran (``request``,
    ``new_session``, ``all_scopes``: the server's maintenance round or ``ucma sleep``,
    ``gardener``), when, how long, the phases that completed and what each changed
    (archived, promoted, facts, edges, ...), interrupted, or the error of a failed one.
    The newest 1,000 of a scope are kept (configurable)."""
    found = await engine.sleep_runs(
        limit=limit + 1, offset=offset, **scope_for(key, user_id, agent_id)
    )
    items = [serialization.sleep_run_to_dict(r) for r in found[:limit]]
    return page_of(items, limit, offset, more=len(found) > limit)


@router.post("/forget")
async def forget(engine: Engine, key: Caller, body: ForgetRequest | None = None) -> dict[str, Any]:
    """Run the forgetting engine for the scope: archive what it forgets (with the reason),
    purge archives past the retention period; ``dry_run`` only lists them."""
    report = await engine.forget(dry_run=bool(body and body.dry_run), **scope_of(key, body))
    return report.to_dict()


class CurvePoint(BaseModel):
    days: float = Field(description="Days from now.")
    retention: float = Field(ge=0.0, le=1.0)


class RetentionResponse(BaseModel):
    memory_id: str
    retention: float = Field(
        ge=0.0, le=1.0, description="How much of the memory is retained now (forgetting curve)."
    )
    curve: list[CurvePoint] | None = Field(
        default=None,
        description="With days_ahead: the curve from now to that many days ahead (one point "
        "a day, at most 61 points) if nothing reviews the memory before.",
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
    days_ahead: Annotated[
        int | None, Query(ge=1, le=3650, description="Also draw the curve this far ahead.")
    ] = None,
) -> RetentionResponse:
    """How much of a memory is retained now, in [0, 1], on its forgetting curve (it
    rises when the memory is recalled or helps a decision); with ``days_ahead``, the
    curve ahead too. 404 for an unknown id."""
    steps = min(days_ahead or 0, 60)
    days = [(days_ahead or 0) * i / steps for i in range(steps + 1)] if steps else [0.0]
    values = await engine.retention_curve(memory_id, days, **scope_for(key, user_id, agent_id))
    curve = (
        [
            CurvePoint(days=round(d, 3), retention=round(v, 4))
            for d, v in zip(days, values, strict=True)
        ]
        if days_ahead
        else None
    )
    return RetentionResponse(memory_id=memory_id, retention=round(values[0], 4), curve=curve)


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


@router.post("/memories/{memory_id}/archive")
async def archive(
    memory_id: MemoryId, engine: Engine, key: Caller, body: OptionalScope = None
) -> dict[str, Any]:
    """Archive one memory: it leaves search, recall and listings (listed with
    ``include_archived``) and its history records the request; unarchive undoes it.
    404 if it is not in this scope."""
    record = await engine.archive(memory_id, **scope_of(key, body))
    return serialization.record_to_api_dict(record)


@router.post("/memories/{memory_id}/unarchive")
async def unarchive(
    memory_id: MemoryId, engine: Engine, key: Caller, body: OptionalScope = None
) -> dict[str, Any]:
    """Bring an archived memory back into search and listings; 404 if it is not in this
    scope."""
    record = await engine.unarchive(memory_id, **scope_of(key, body))
    return serialization.record_to_api_dict(record)


class GardenerJob(BaseModel):
    job: str = Field(description="decay, consolidate, prune or identity.")
    period_days: float
    last_run_at: float | None = Field(description="Epoch seconds; null if it never ran.")
    next_due_at: float | None = Field(
        description="Last run plus the period (past: overdue); null: it never ran, so the "
        "scheduler's next tick runs it."
    )
    running: bool = Field(description="A gardener holds the job now.")
    last_summary: dict[str, Any] | None = Field(
        description="What its last run did, summed over every scope; local mode only "
        "(null with a key: the sums cover other users)."
    )


class GardenerSchedule(BaseModel):
    jobs: list[GardenerJob]


@router.get("/gardener")
async def gardener_schedule(engine: Engine, key: Caller, request: Request) -> GardenerSchedule:
    """The gardener's scheduled jobs (run inside ucma serve for every scope): period,
    last run, next due, running now; in local mode also what each last run did."""
    local = key is None and not await request.app.state.access.keys_required()
    jobs = await engine.gardener_schedule()
    return GardenerSchedule(
        jobs=[
            GardenerJob(**{**j, "last_summary": j["last_summary"] if local else None}) for j in jobs
        ]
    )
