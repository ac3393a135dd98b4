"""Learnings: lessons drawn from experience, validated by later outcomes."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId
from ucma.server.routes.procedures import OutcomeRequest
from ucma.server.schemas import (
    AgentQuery,
    Identifier,
    JsonObject,
    Number,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    page_of,
)
from ucma.types import LearningType

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["learnings"])


class LearnRequest(ScopedBody):
    """A lesson, linked to the memories it was drawn from."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "insight": "JWT tokens expiring early? Check clock skew and add a leeway.",
                    "learning_type": "failure_analysis",
                    "applicability": ["jwt", "auth"],
                    "confidence": 0.7,
                }
            ]
        },
    )

    insight: Text
    learning_type: LearningType = LearningType.DOMAIN_INSIGHT
    title: Text | None = None
    evidence_ids: list[Identifier] = Field(
        default_factory=list, description="Memories of this scope the lesson came from."
    )
    applicability: list[Identifier] = Field(default_factory=list, description="Tags it fits.")
    confidence: Number = Field(default=0.5, ge=0.0, le=1.0)
    impact_score: Number = Field(default=0.5, ge=0.0, le=1.0)
    metadata: JsonObject = None


@router.post("/learn", status_code=201)
async def learn(body: LearnRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Store a learning; 404 if an evidence id is not a memory of this scope."""
    learning = await engine.learn(
        body.insight,
        learning_type=body.learning_type,
        title=body.title,
        evidence_ids=body.evidence_ids,
        applicability=body.applicability,
        confidence=body.confidence,
        impact_score=body.impact_score,
        metadata=body.metadata,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.record_to_api_dict(learning)


@router.post("/learnings/{learning_id}/validate")
async def validate_learning(
    learning_id: MemoryId, body: OutcomeRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Confirm (+0.10 confidence) or refute (-0.15) a learning after applying it."""
    learning = await engine.validate_learning(
        learning_id, body.success, **scope_for(key, body.user_id, body.agent_id)
    )
    return serialization.record_to_api_dict(learning)


@router.get("/learnings")
async def find_learnings(
    engine: Engine,
    key: Caller,
    tags: Annotated[
        list[Identifier], Query(min_length=1, description="Tags the lessons apply to.")
    ],
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    learning_type: LearningType | None = None,
    min_confidence: Annotated[float, Query(ge=0.0, le=1.0)] = 0.3,
    limit: Annotated[int, Query(ge=1, le=1000)] = 5,
) -> Page:
    """The most useful lessons for these tags (confidence x impact), best first."""
    found = await engine.find_learnings(
        tags,
        learning_type=learning_type,
        min_confidence=min_confidence,
        limit=limit,
        **scope_for(key, user_id, agent_id),
    )
    return page_of([serialization.record_to_api_dict(lr) for lr in found], limit, 0, more=False)
