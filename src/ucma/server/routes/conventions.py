"""The calls users know from other memory libraries, on the memories resource: add chat
messages, search with metadata filters, update, delete a whole scope or run, a memory's
history. ``GET /v1/memories`` (get_all) and ``GET``/``DELETE /v1/memories/{id}`` are in
memories.py."""

import dataclasses
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from ucma import serialization
from ucma.engine.conventions import MAX_FILTER_KEYS
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId, ObservationResponse, StoreStep
from ucma.server.schemas import (
    AgentQuery,
    Identifier,
    JsonObject,
    ResultLimit,
    ScopedBody,
    Text,
    UserQuery,
)

__all__ = ["router"]


def _query_true(value: Any) -> Any:
    """A query string's "true" (any case) or "1" read as True; anything else is refused."""
    if isinstance(value, str) and value.lower() in ("true", "1"):
        return True
    return value


router = APIRouter(prefix="/v1", tags=["memory"])

FilterValue = str | int | float | bool | None
#: A metadata key: a filter on the empty key is refused.
FilterKey = Annotated[str, StringConstraints(min_length=1)]


class Message(BaseModel):
    """One chat message, as agent frameworks pass them."""

    model_config = ConfigDict(extra="forbid")

    role: Identifier = Field(description='Who said it: "user", "assistant", "tool"...')
    content: Text
    name: Identifier | None = Field(default=None, description="The speaker's name, if known.")


class AddRequest(ScopedBody, StoreStep):
    """A conversation (or one text) to remember."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "messages": [
                        {"role": "user", "content": "I'm vegetarian and allergic to nuts."},
                        {"role": "assistant", "content": "Noted: no meat, no nuts."},
                    ],
                    "run_id": "onboarding",
                    "metadata": {"topic": "food"},
                }
            ]
        },
    )

    messages: Text | list[Message] = Field(
        description="A text, or chat messages observed in order, each with its role as source."
    )
    run_id: Identifier | None = Field(
        default=None,
        description="Tags the memories (metadata run_id) and names their session; it does "
        "not separate them from the rest of the user's memory.",
    )
    metadata: JsonObject = Field(default=None, description="Stored on every message's memory.")


class AddResponse(BaseModel):
    results: list[ObservationResponse]


class SearchRequest(ScopedBody):
    """A search, optionally narrowed by metadata."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"user_id": "alice", "query": "food preferences", "filters": {"topic": "food"}}
            ]
        },
    )

    query: Text
    filters: dict[FilterKey, FilterValue] | None = Field(
        default=None,
        max_length=MAX_FILTER_KEYS,
        description="Equality on metadata keys; every key must match. With filters, every "
        "matching memory is ranked by meaning, so none is missed.",
    )
    run_id: Identifier | None = Field(default=None, description='Shorthand for {"run_id": ...}.')
    limit: ResultLimit | None = Field(default=None, description="Most results (default 10).")


class SearchResponse(BaseModel):
    results: list[dict[str, Any]]


class UpdateRequest(ScopedBody):
    """The new text of a memory."""

    text: Text


class DeleteAllResponse(BaseModel):
    deleted: int = Field(description="How many memories were deleted.")


class HistoryResponse(BaseModel):
    memory_id: str
    history: list[dict[str, Any]] = Field(
        description="Oldest first. An `updated` entry's details hold `previous` and `new` "
        "text and the `version`."
    )


@router.post("/memories", status_code=201)
async def add(body: AddRequest, engine: Engine, key: Caller) -> AddResponse:
    """Add a conversation or a text: one observation per message, in order, in one
    session, all or nothing."""
    messages: Any = (
        body.messages
        if isinstance(body.messages, str)
        else [m.model_dump(exclude_none=True) for m in body.messages]
    )
    observations = await engine.add(
        messages,
        run_id=body.run_id,
        metadata=body.metadata,
        **body.store_step(),
        **scope_for(key, body.user_id, body.agent_id),
    )
    return AddResponse(results=[ObservationResponse(**dataclasses.asdict(o)) for o in observations])


@router.post("/memories/search")
async def search(body: SearchRequest, engine: Engine, key: Caller) -> SearchResponse:
    """Memories relevant to a query, best first; `filters` narrow by metadata."""
    hits = await engine.search(
        body.query,
        filters=body.filters,
        run_id=body.run_id,
        limit=body.limit,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return SearchResponse(results=[serialization.hit_to_dict(hit) for hit in hits])


@router.put("/memories/{memory_id}")
async def update(
    memory_id: MemoryId, body: UpdateRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Replace a memory's text (episodes and lessons): a new version, searched by its
    new words; the old text stays in its history."""
    record = await engine.update(
        memory_id, body.text, **scope_for(key, body.user_id, body.agent_id)
    )
    return serialization.record_to_api_dict(record)


@router.delete("/memories")
async def delete_all(
    engine: Engine,
    key: Caller,
    confirm: Annotated[
        Literal[True],
        BeforeValidator(_query_true),
        Query(description="Must be true: deletes every memory of the scope (or run)."),
    ],
    run_id: Annotated[
        str | None, Query(min_length=1, max_length=256, description="Only this run's memories.")
    ] = None,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> DeleteAllResponse:
    """Delete every memory of the scope, or of one run, in one transaction (confirm=true
    required). History and the event log stay; to erase for good use /v1/erase/scope."""
    deleted = await engine.delete_all(
        confirm=confirm, run_id=run_id, **scope_for(key, user_id, agent_id)
    )
    return DeleteAllResponse(deleted=deleted)


@router.get("/memories/{memory_id}/history")
async def history(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> HistoryResponse:
    """What happened to a memory, oldest first: updates (previous and new text), merges,
    promotions, archiving; readable after the memory was deleted."""
    entries = await engine.history(memory_id, **scope_for(key, user_id, agent_id))
    return HistoryResponse(
        memory_id=memory_id,
        history=[
            {**dataclasses.asdict(entry), "at_iso": serialization.iso_time(entry.at)}
            for entry in entries
        ],
    )
