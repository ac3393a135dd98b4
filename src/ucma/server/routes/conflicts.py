"""Conflicts between facts (seed 002): list them, resolve a pending one with the user's
choice, and the memories flagged for review because a premise they rest on changed."""

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma.conflicts.reports import review_flag_to_dict
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.facts import FactAssertionResponse
from ucma.server.routes.memories import MemoryId
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    MAX_ID_CHARS,
    AgentQuery,
    Offset,
    OptionalScope,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    page_of,
    scope_of,
)
from ucma.types import ConflictStatus

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["conflicts"])

ConflictId = Annotated[
    str, Path(min_length=1, max_length=MAX_ID_CHARS, description="Conflict id (cfl_...).")
]


class ResolveConflictRequest(ScopedBody):
    """The user's answer to a pending conflict: one of its `options`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"user_id": "alice", "chosen_value": "Friday"}]},
    )

    chosen_value: Text


@router.get("/conflicts")
async def list_conflicts(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    subject: Annotated[str | None, Query(min_length=1, pattern=IDENTIFIER_PATTERN)] = None,
    predicate: Annotated[str | None, Query(min_length=1, pattern=IDENTIFIER_PATTERN)] = None,
    status: Annotated[
        ConflictStatus | None, Query(description='"pending": what waits for the user.')
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """Recorded conflicts, newest first, a page at a time."""
    found = await engine.conflicts(
        subject=subject,
        predicate=predicate,
        status=status,
        limit=offset + limit + 1,
        **scope_for(key, user_id, agent_id),
    )
    items = [c.to_dict() for c in found[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(found) > offset + limit)


@router.post(
    "/conflicts/{conflict_id}/resolve",
    responses={409: {"description": "The conflict is already settled (`conflict_not_pending`)."}},
)
async def resolve_conflict(
    conflict_id: ConflictId, body: ResolveConflictRequest, engine: Engine, key: Caller
) -> FactAssertionResponse:
    """Apply the user's choice to a pending conflict: the chosen value's fact is
    reinforced, the other superseded. 404 for an unknown id, 409
    `conflict_not_pending` if it is already settled, 422 if the value is not an option."""
    result = await engine.resolve_conflict(
        conflict_id, body.chosen_value, **scope_for(key, body.user_id, body.agent_id)
    )
    return FactAssertionResponse(**result.to_dict())


@router.get("/review_flags")
async def review_flags(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    include_cleared: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """Memories flagged for review because a fact they rest on was superseded, newest
    first; they rank lower until cleared."""
    flags = await engine.review_flags(
        include_cleared=include_cleared,
        limit=offset + limit + 1,
        **scope_for(key, user_id, agent_id),
    )
    items = [review_flag_to_dict(f) for f in flags[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(flags) > offset + limit)


class ClearReviewResponse(BaseModel):
    memory_id: str
    cleared: int = Field(description="Review flags closed (0 if it had none open).")


@router.post("/review_flags/{memory_id}/clear")
async def clear_review(
    memory_id: MemoryId, engine: Engine, key: Caller, body: OptionalScope = None
) -> ClearReviewResponse:
    """Mark a flagged memory as reviewed (after checking it still holds): its rank
    recovers. 404 for an unknown id."""
    cleared = await engine.clear_review(memory_id, **scope_of(key, body))
    return ClearReviewResponse(memory_id=memory_id, cleared=cleared)
