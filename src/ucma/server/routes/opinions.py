"""Banks and opinions: retain into a bank; opinions found by topic,
reinforced, weakened and replaced by the gradual evolution rule, with their history."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import ObservationResponse
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    MAX_ID_CHARS,
    AgentQuery,
    Fraction,
    Identifier,
    Moment,
    Offset,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    Weight,
    page_of,
)
from ucma.types import Bank

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["opinions"])

OpinionId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS, description="Opinion id.")]


class RetainRequest(ScopedBody):
    """Text to store in a bank: world, experience, opinion or observation."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "text": "Alice prefers window seats on long flights.",
                    "bank": "opinion",
                    "confidence": 0.6,
                    "topic": "Alice's seat on flights",
                }
            ]
        },
    )

    text: Text
    bank: Bank = Field(description="world, experience, opinion or observation.")
    confidence: Fraction | None = Field(
        default=None,
        description="Starting salience (1 stated, 0.8 strong, 0.6 inferred, 0.4 a guess) "
        "and, in the opinion bank, the opinion's confidence (default 0.6).",
    )
    entities: list[Identifier] | None = Field(default=None, description="Who or what it involves.")
    mention_time: Moment | None = Field(default=None, description="When it was said, epoch s.")
    topic: Text | None = Field(
        default=None, description="What an opinion is about; default: read from the text."
    )
    source: Identifier = "user"


class EvidenceRequest(ScopedBody):
    """Evidence for or against an opinion."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"user_id": "alice", "evidence": "Alice picked the window seat again."}]
        },
    )

    evidence: Text | None = Field(default=None, description="What was seen.")
    weight: Weight | None = Field(
        default=None, description="How strong it is, in (0, 1]; default the plain weight (0.5)."
    )


class WeakenRequest(EvidenceRequest):
    """Evidence against an opinion, and the stance that replaces it below the threshold."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "evidence": "Alice asked for an aisle seat.",
                    "stance": "aisle seats",
                }
            ]
        },
    )

    stance: Text | None = Field(
        default=None, description="What replaces the opinion if its confidence falls too low."
    )


class FoundOpinion(BaseModel):
    """``opinion`` is null when no current opinion is on the topic."""

    opinion: dict[str, Any] | None


@router.post("/retain", status_code=201)
async def retain(body: RetainRequest, engine: Engine, key: Caller) -> ObservationResponse:
    """Store text in a bank; in the opinion bank it forms, reinforces or weakens an opinion.

    A topic is for the opinion bank only (422 otherwise)."""
    observation = await engine.retain(
        body.text,
        bank=body.bank,
        confidence=body.confidence,
        entities=body.entities,
        mention_time=body.mention_time,
        topic=body.topic,
        source=body.source,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return ObservationResponse(
        id=observation.id,
        stored=observation.stored,
        importance=observation.importance,
        temporal_level=observation.temporal_level,
        merged_into=observation.merged_into,
    )


@router.get("/opinions")
async def opinions(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    include_replaced: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """The scope's current opinions (with ``include_replaced``, their history too),
    newest change first."""
    found = await engine.opinions(
        include_replaced=include_replaced,
        limit=limit + 1,
        offset=offset,
        **scope_for(key, user_id, agent_id),
    )
    items = [serialization.opinion_to_api_dict(o) for o in found[:limit]]
    return page_of(items, limit, offset, more=len(found) > limit)


@router.get("/opinions/find")
async def find_opinion(
    engine: Engine,
    key: Caller,
    topic: Annotated[
        str,
        Query(
            min_length=1, max_length=10_000, pattern=IDENTIFIER_PATTERN, description="The topic."
        ),
    ],
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> FoundOpinion:
    """The current opinion on a topic (same text, else closest in meaning), or null."""
    found = await engine.find_opinion(topic, **scope_for(key, user_id, agent_id))
    return FoundOpinion(opinion=serialization.opinion_to_api_dict(found) if found else None)


@router.get("/opinions/below")
async def opinions_below(
    engine: Engine,
    key: Caller,
    confidence: Annotated[float, Query(ge=0.0, le=1.0, description="The confidence bound.")],
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Page:
    """Current opinions held with less than this confidence."""
    found = await engine.opinions_below(
        confidence, limit=limit, **scope_for(key, user_id, agent_id)
    )
    return page_of([serialization.opinion_to_api_dict(o) for o in found], limit, 0, more=False)


@router.get("/opinions/{opinion_id}")
async def get_opinion(
    opinion_id: OpinionId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """One opinion; 404 if unknown in this scope."""
    found = await engine.get_opinion(opinion_id, **scope_for(key, user_id, agent_id))
    return serialization.opinion_to_api_dict(found)


@router.get("/opinions/{opinion_id}/history")
async def opinion_history(
    opinion_id: OpinionId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> Page:
    """The stances held on the opinion's topic, oldest first, up to the current one."""
    chain = await engine.opinion_history(opinion_id, **scope_for(key, user_id, agent_id))
    items = [serialization.opinion_to_api_dict(o) for o in chain]
    return page_of(items, max(len(items), 1), 0, more=False)


@router.post("/opinions/{opinion_id}/reinforce")
async def reinforce_opinion(
    opinion_id: OpinionId, body: EvidenceRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Evidence for a current opinion: its confidence rises a share of the way to 1."""
    found = await engine.reinforce_opinion(
        opinion_id,
        evidence=body.evidence,
        weight=body.weight,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.opinion_to_api_dict(found)


@router.post("/opinions/{opinion_id}/weaken")
async def weaken_opinion(
    opinion_id: OpinionId, body: WeakenRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Evidence against a current opinion: below the threshold ``stance`` replaces it
    (the answer is then the new opinion, whose ``replaces`` names the old)."""
    found = await engine.weaken_opinion(
        opinion_id,
        evidence=body.evidence,
        weight=body.weight,
        stance=body.stance,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.opinion_to_api_dict(found)
