"""Semantic memory: assert subject-predicate-object facts, look them up, walk them."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    AgentQuery,
    Identifier,
    JsonObject,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    page_of,
)
from ucma.types import Provenance

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["facts"])

Entity = Annotated[str, Query(min_length=1, description="Subject or object, case-insensitive.")]


class AssertFactRequest(ScopedBody):
    """A fact; asserting the same triple again reinforces it instead of duplicating it."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "subject": "Alice",
                    "predicate": "prefers",
                    "object": "dark mode",
                    "confidence": 0.9,
                }
            ]
        },
    )

    subject: Text
    predicate: Text
    object: Text
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source_episode_ids: list[Identifier] = Field(
        default_factory=list, description="Episodes of this scope the fact was drawn from."
    )
    provenance: Provenance = Provenance.USER_STATED
    valid_from: float | None = Field(default=None, allow_inf_nan=False)
    valid_until: float | None = Field(default=None, allow_inf_nan=False)
    content: Text | None = Field(default=None, description='Text form; default "S P O".')
    metadata: JsonObject = None


@router.post("/facts", status_code=201)
async def assert_fact(body: AssertFactRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Assert (or reinforce) a fact; returns the stored fact."""
    fact = await engine.assert_fact(
        body.subject,
        body.predicate,
        body.object,
        confidence=body.confidence,
        source_episode_ids=body.source_episode_ids,
        provenance=body.provenance,
        valid_from=body.valid_from,
        valid_until=body.valid_until,
        content=body.content,
        metadata=body.metadata,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.record_to_dict(fact)


@router.get("/facts")
async def facts_about(
    entity: Entity,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Page:
    """Facts with the entity as subject or object, a page at a time."""
    facts = await engine.facts_about(entity, **scope_for(key, user_id, agent_id))
    items = [serialization.record_to_dict(f) for f in facts[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(facts) > offset + limit)


@router.get("/facts/traverse")
async def traverse(
    entity: Entity,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    max_hops: Annotated[int, Query(ge=1, le=10)] = 3,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Page:
    """Facts reachable from the entity along subject -> object links, a page at a time."""
    facts = await engine.traverse(entity, max_hops=max_hops, **scope_for(key, user_id, agent_id))
    items = [serialization.record_to_dict(f) for f in facts[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(facts) > offset + limit)
