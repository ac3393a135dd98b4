"""The scope's event log (event sourcing), read in order with a cursor."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, Identifier, UserQuery

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["events"])


class EventPage(BaseModel):
    """Events after a cursor; pass `next_after_seq` back as `after_seq` for the next page
    (null when this page is the last one for now)."""

    items: list[dict[str, Any]]
    limit: int
    after_seq: int
    next_after_seq: int | None = Field(description="Cursor of the next page; null at the end.")


@router.get("/events")
async def events(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    after_seq: Annotated[
        int, Query(ge=0, le=2**62, description="Only events after this sequence number.")
    ] = 0,
    types: Annotated[
        list[Identifier] | None,
        Query(description='Only these event types, e.g. "outcome.observed".'),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> EventPage:
    """This scope's events in order (every state change: writes, outcomes, conflicts)."""
    found = await engine.events(
        after_seq=after_seq, types=types, limit=limit + 1, **scope_for(key, user_id, agent_id)
    )
    page = found[:limit]
    more = len(found) > limit
    return EventPage(
        items=[e.to_dict() for e in page],
        limit=limit,
        after_seq=after_seq,
        next_after_seq=page[-1].seq if more and page else None,
    )
