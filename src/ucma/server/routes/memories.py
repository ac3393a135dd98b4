"""Episodic input and retrieval: observe (one or a batch), remember, and the records
themselves (get, list a page at a time, delete, episodes in a time range)."""

import dataclasses
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ucma import serialization
from ucma.memory.levels import ContentType
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    MAX_ID_CHARS,
    AgentQuery,
    Flag,
    Fraction,
    Identifier,
    JsonObject,
    Moment,
    Number,
    Offset,
    Page,
    ResultLimit,
    ScopedBody,
    StoreOffset,
    TemporalLevel,
    Text,
    UserQuery,
    page_of,
)
from ucma.types import Bank, MemoryKind, Provenance, QueryMode

__all__ = ["MemoryId", "StoreStep", "router"]

router = APIRouter(prefix="/v1", tags=["memory"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS, description="Memory id.")]


class StoreStep(BaseModel):
    """How the store step treats an input, where the caller knows better than the
    heuristics: its kind, how long it lasts, how salient it is, its bank. Every field
    is optional."""

    content_type: ContentType | None = Field(
        default=None,
        description="What it is (fact, preference, event, goal, observation): read for the "
        "temporal level (how long it lasts); default: heuristics.",
    )
    temporal_level: TemporalLevel | None = Field(
        default=None, description="1 immediate, 2 situational, 3 seasonal, 4 identity."
    )
    salience: Fraction | None = Field(
        default=None,
        description="Starting salience in [0, 1]: 1 stated by the user, 0.8 strong evidence, 0.6 "
        "inferred, 0.4 a guess; default: heuristics.",
    )
    bank: Bank | None = Field(
        default=None,
        description="world, experience, opinion or observation; default: opinion for a stated "
        "preference, else experience.",
    )

    def store_step(self) -> dict[str, Any]:
        """The given fields as engine keyword arguments."""
        data = {
            "content_type": self.content_type,
            "temporal_level": self.temporal_level,
            "salience": self.salience,
            "bank": self.bank.value if self.bank is not None else None,
        }
        return {k: v for k, v in data.items() if v is not None}


class Observation(StoreStep):
    """One input: what was said or seen, by whom, when."""

    model_config = ConfigDict(extra="forbid")

    content: Text = Field(description="The text observed.")
    source: Identifier = Field(
        default="user", description='Who produced it: "user", "assistant", "tool_result"...'
    )
    timestamp: Moment | None = Field(
        default=None, description="When it happened, epoch seconds (UTC)."
    )
    metadata: JsonObject = None
    session_id: Identifier | None = Field(
        default=None, description="Session to file it under; default the current session."
    )
    tags: list[Identifier] | None = None
    participants: list[Identifier] | None = None
    provenance: Provenance | None = None


class ObserveRequest(ScopedBody, Observation):
    """One observation to remember."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "content": "Alice prefers dark mode in every editor.",
                    "source": "user",
                }
            ]
        },
    )


class ObserveBatchRequest(ScopedBody):
    """Many observations: one embedding call, one transaction, all or nothing."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "items": [
                        {"content": "The staging database moved to port 5433."},
                        {"content": "Deploys are frozen on Fridays.", "source": "assistant"},
                    ],
                }
            ]
        },
    )

    items: list[Observation] = Field(min_length=1)


class ObservationResponse(BaseModel):
    """What happened to one input: stored as a new memory, merged into an existing one
    (``merged_into``), or skipped as chit-chat (``stored`` false: not important enough)."""

    id: str = Field(description="The memory that holds it (the existing one when merged).")
    stored: bool
    importance: float
    temporal_level: int
    merged_into: str | None = Field(
        default=None,
        description="Set when the input nearly duplicated this memory, which was reinforced "
        "instead of storing a second copy.",
    )


class ObserveBatchResponse(BaseModel):
    results: list[ObservationResponse]


class RememberRequest(ScopedBody):
    """A retrieval query."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"user_id": "alice", "query": "which theme does Alice like?", "limit": 3}]
        },
    )

    query: Text
    limit: ResultLimit | None = Field(default=None, description="Most results (default 10).")
    mode: QueryMode | None = Field(default=None, description="Force a retrieval strategy.")
    kinds: list[MemoryKind] | None = None
    banks: list[Bank] | None = Field(
        default=None,
        description="Only memories of these banks (world, experience, opinion, observation).",
    )
    time_range: tuple[Moment, Moment] | None = Field(
        default=None, description="[start, end] in epoch seconds; only memories in it."
    )
    entity: Text | None = None
    tags: list[Identifier] | None = None
    include_graph_neighbors: Flag = True
    min_importance: Number = Field(default=0.0, ge=0.0, le=1.0)
    include_superseded: Flag = Field(
        default=False, description="Also return memories that newer ones replaced (history)."
    )

    @model_validator(mode="after")
    def _ordered_range(self) -> "RememberRequest":
        if self.time_range is not None and self.time_range[0] > self.time_range[1]:
            raise ValueError("time_range must be [start, end] with start <= end")
        return self


class RememberResponse(BaseModel):
    results: list[dict[str, Any]]


def _observation_fields(item: Observation) -> dict[str, Any]:
    data = item.model_dump(exclude_none=True)
    if "provenance" in data:
        data["provenance"] = data["provenance"].value
    data.update(item.store_step())
    return data


@router.post("/observe", status_code=201)
async def observe(body: ObserveRequest, engine: Engine, key: Caller) -> ObservationResponse:
    """Observe one input; it is stored as an episode when it is important enough."""
    fields = _observation_fields(body)
    fields.pop("user_id", None)
    fields.pop("agent_id", None)
    content = fields.pop("content")
    observation = await engine.observe(
        content, **fields, **scope_for(key, body.user_id, body.agent_id)
    )
    return ObservationResponse(**dataclasses.asdict(observation))


@router.post("/observe/batch", status_code=201)
async def observe_batch(
    body: ObserveBatchRequest, engine: Engine, key: Caller
) -> ObserveBatchResponse:
    """Observe many inputs at once (one embedding call, one transaction)."""
    observations = await engine.observe_many(
        [_observation_fields(item) for item in body.items],
        **scope_for(key, body.user_id, body.agent_id),
    )
    return ObserveBatchResponse(
        results=[ObservationResponse(**dataclasses.asdict(o)) for o in observations]
    )


@router.post("/remember")
async def remember(body: RememberRequest, engine: Engine, key: Caller) -> RememberResponse:
    """Retrieve the memories most relevant to a query, best first.

    A `time_range` is [start, end] with start <= end (422 otherwise)."""
    hits = await engine.remember(
        body.query,
        limit=body.limit,
        mode=body.mode,
        kinds=body.kinds,
        banks=body.banks,
        time_range=body.time_range,
        entity=body.entity,
        tags=body.tags,
        include_graph_neighbors=body.include_graph_neighbors,
        min_importance=body.min_importance,
        include_superseded=body.include_superseded,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return RememberResponse(results=[serialization.hit_to_dict(hit) for hit in hits])


class MemoryListPage(Page):
    """A page of memories; ``total`` counts every memory the listing covers."""

    total: int


@router.get("/memories")
async def list_memories(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    kind: MemoryKind | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
    include_archived: bool = False,
    run_id: Annotated[
        str | None,
        Query(min_length=1, max_length=MAX_ID_CHARS, description="Only this run's memories."),
    ] = None,
    bank: Annotated[Bank | None, Query(description="Only this bank's memories.")] = None,
) -> MemoryListPage:
    """The scope's memories, oldest first, a page at a time, with the total (of the
    kind and bank asked for)."""
    page = await engine.get_all(
        kind=kind,
        bank=bank,
        limit=limit,
        offset=offset,
        include_archived=include_archived,
        run_id=run_id,
        **scope_for(key, user_id, agent_id),
    )
    items = [serialization.record_to_api_dict(r) for r in page.items]
    return MemoryListPage(
        **page_of(items, limit, offset, more=page.has_more).model_dump(), total=page.total
    )


@router.get("/memories/{memory_id}")
async def get_memory(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """One memory of the scope, any kind; 404 if it is not in this scope."""
    record = await engine.get(memory_id, **scope_for(key, user_id, agent_id))
    return serialization.record_to_api_dict(record)


@router.delete("/memories/{memory_id}", status_code=204)
async def delete_memory(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> Response:
    """Delete a memory and everything hanging off it; 404 if it is not in this scope."""
    await engine.delete(memory_id, **scope_for(key, user_id, agent_id))
    return Response(status_code=204)


@router.get("/episodes")
async def episodes_between(
    engine: Engine,
    key: Caller,
    start: Annotated[float, Query(allow_inf_nan=False, description="Epoch seconds.")],
    end: Annotated[float, Query(allow_inf_nan=False, description="Epoch seconds.")],
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """Episodes that happened in [start, end], oldest first, a page at a time.

    `end` must not be before its start (422 otherwise)."""
    episodes = await engine.episodes_between(
        start, end, limit=offset + limit + 1, **scope_for(key, user_id, agent_id)
    )
    page = episodes[offset : offset + limit]
    items = [serialization.record_to_api_dict(e) for e in page]
    return page_of(items, limit, offset, more=len(episodes) > offset + limit)
