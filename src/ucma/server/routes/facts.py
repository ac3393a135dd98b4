"""Semantic memory: assert subject-predicate-object facts (with seed 002's conflict
report), look them up (now or as of a moment), their history, walk them."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    AgentQuery,
    Identifier,
    JsonObject,
    Moment,
    Number,
    Page,
    ScopedBody,
    StoreOffset,
    Text,
    UserQuery,
    page_of,
)
from ucma.types import Provenance

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["facts"])

Entity = Annotated[
    str,
    Query(
        min_length=1,
        pattern=IDENTIFIER_PATTERN,
        description="Subject or object, case-insensitive.",
    ),
]


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
    confidence: Number = Field(default=0.8, ge=0.0, le=1.0)
    source_episode_ids: list[Identifier] = Field(
        default_factory=list, description="Episodes of this scope the fact was drawn from."
    )
    provenance: Provenance = Provenance.USER_STATED
    valid_from: Moment | None = None
    valid_until: Moment | None = None
    content: Text | None = Field(default=None, description='Text form; default "S P O".')
    metadata: JsonObject = None


class FactAssertionResponse(BaseModel):
    """What a fact write did: the fact as stored and any conflict it raised."""

    response: str = Field(description='What happened, in a sentence ("Noted: ...").')
    fact: dict[str, Any] = Field(description="The fact as stored; `status` says if it lost.")
    conflicts_detected: list[dict[str, Any]]
    disambiguation_required: bool = Field(
        description="A conflict waits for the user: POST /v1/conflicts/{id}/resolve."
    )
    options: list[str] | None = Field(default=None, description="The values to choose from.")
    flagged_for_review: list[dict[str, Any]] = Field(
        description="Memories derived from a value that was just superseded."
    )


class FactPage(Page):
    """A page of facts with every conflict that touches them."""

    conflicts_detected: list[dict[str, Any]]
    disambiguation_required: bool
    options: list[str] | None = None


def _fact_page(facts: Any, limit: int, offset: int) -> FactPage:
    report = facts.to_dict()  # a FactList: facts plus the conflict fields
    items = [serialization.with_iso_times(f) for f in report.pop("facts")[offset : offset + limit]]
    page = page_of(items, limit, offset, more=len(facts) > offset + limit)
    return FactPage(**page.model_dump(), **report)


@router.post("/facts", status_code=201)
async def assert_fact(
    body: AssertFactRequest, engine: Engine, key: Caller
) -> FactAssertionResponse:
    """Assert (or reinforce) a fact. A new value for a single-valued predicate is a
    conflict: resolved by the conflict rules (docs/conflicts.md), or left pending for
    the user (then `disambiguation_required` is true and `options` lists the values).
    `valid_until` must not be before `valid_from` (422 otherwise)."""
    result = await engine.assert_fact_detailed(
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
    report = result.to_dict()
    report["fact"] = serialization.with_iso_times(report["fact"])
    return FactAssertionResponse(**report)


@router.get("/facts")
async def facts_about(
    entity: Entity,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    as_of: Annotated[
        float | None,
        Query(
            allow_inf_nan=False,
            description="What memory believed at this moment (epoch seconds, record time).",
        ),
    ] = None,
    include_history: Annotated[
        bool, Query(description="Every version, superseded ones included (not with as_of).")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
) -> FactPage:
    """Current facts with the entity as subject or object (or those believed `as_of` a
    moment), a page at a time, with the conflicts that touch them.

    `as_of` and `include_history` cannot be combined (422)."""
    facts = await engine.facts_about(
        entity,
        as_of=as_of,
        include_history=include_history,
        **scope_for(key, user_id, agent_id),
    )
    return _fact_page(facts, limit, offset)


@router.get("/facts/history")
async def fact_history(
    subject: Annotated[str, Query(min_length=1, pattern=IDENTIFIER_PATTERN)],
    predicate: Annotated[str, Query(min_length=1, pattern=IDENTIFIER_PATTERN)],
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
) -> FactPage:
    """Every version of (subject, predicate) in record-time order, superseded and
    conflicted ones included, with the conflicts between them."""
    facts = await engine.fact_history(subject, predicate, **scope_for(key, user_id, agent_id))
    return _fact_page(facts, limit, offset)


@router.get("/facts/traverse")
async def traverse(
    entity: Entity,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    max_hops: Annotated[int, Query(ge=1, le=10)] = 3,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
) -> Page:
    """Facts reachable from the entity along subject -> object links, a page at a time."""
    facts = await engine.traverse(entity, max_hops=max_hops, **scope_for(key, user_id, agent_id))
    items = [serialization.record_to_api_dict(f) for f in facts[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(facts) > offset + limit)
