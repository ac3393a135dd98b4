"""The scope's event log (event sourcing), read in order with a cursor, and a replay
that rebuilds state from it to check the live records."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field, JsonValue, StringConstraints

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, UserQuery

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["events"])

#: An event type: dotted lower-case words ("memory.stored", "outcome.observed").
EventType = Annotated[
    str, StringConstraints(max_length=100, pattern=r"^[a-z][a-z_]*(\.[a-z][a-z_]*)+$")
]


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
        list[EventType] | None,
        Query(description='Only these event types, e.g. "outcome.observed".'),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    newest_first: Annotated[
        bool,
        Query(
            description="The latest events, newest first; follow new ones with after_seq = "
            "the first item's seq (next_after_seq is then null)."
        ),
    ] = False,
) -> EventPage:
    """This scope's events in order (every state change: writes, outcomes, conflicts);
    ``newest_first``: the latest ``limit`` of them, newest first."""
    found = await engine.events(
        after_seq=after_seq,
        types=types,
        limit=limit + 1,
        newest_first=newest_first,
        **scope_for(key, user_id, agent_id),
    )
    page = found[:limit]
    more = len(found) > limit
    return EventPage(
        items=[e.to_dict() for e in page],
        limit=limit,
        after_seq=after_seq,
        next_after_seq=page[-1].seq if more and page and not newest_first else None,
    )


class Mismatch(BaseModel):
    field: str = Field(description='The first field that differs, e.g. "confidence".')
    replayed: JsonValue = Field(description="From the events alone; null if none.")
    live: JsonValue = Field(description="In the live record; null if there is none.")


class ReplayReport(BaseModel):
    """The scope's state rebuilt from its events and compared with the live records:
    memories' salience adjustments, opinions, learned strategies and pitfalls.
    `matches_live` is true when every one agrees."""

    events_applied: int
    last_seq: int
    memories: int = Field(description="Memories whose adjustment the events rebuilt.")
    opinions: int = Field(description="Opinions the events rebuilt.")
    strategies: int = Field(description="Learned strategies and pitfalls the events rebuilt.")
    matches_live: bool
    mismatches: dict[str, Mismatch] = Field(
        description="Memory, opinion or strategy id -> the field that differs and its two values."
    )


@router.get("/events/replay")
async def replay(
    engine: Engine, key: Caller, user_id: UserQuery = None, agent_id: AgentQuery = None
) -> ReplayReport:
    """Rebuild every memory's outcome-driven salience, every opinion and every learned
    strategy from this scope's events alone and compare them with the live records
    (changes nothing): a check of the event log."""
    projection = await engine.replay(**scope_for(key, user_id, agent_id))
    return ReplayReport.model_validate(serialization.replay_to_dict(projection))
