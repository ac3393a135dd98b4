"""Seed 000's response synthesis and post-interaction learning: every paradigm's answer
to one query with the conflict matrix applied, and one interaction learned from in every
paradigm at once."""

from typing import Any

from fastapi import APIRouter
from pydantic import ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.goals import Delta
from ucma.server.routes.predictive import Context, Label
from ucma.server.schemas import (
    Flag,
    Fraction,
    Identifier,
    ResultLimit,
    ScopedBody,
    Text,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["synthesis"])


class SynthesizeRequest(ScopedBody):
    """A query, and optionally the task and action it is about."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "query": "How do I deploy the billing service to staging?",
                    "task": "deploy the billing service to staging",
                    "action": "deploy",
                    "context": {"target": "staging"},
                }
            ]
        },
    )

    query: Text
    task: Text | None = Field(
        default=None, description="The task to assess and find strategies for (default: query)."
    )
    action: Label | None = Field(
        default=None,
        description="The action to predict (default: the capability the task needs).",
    )
    context: Context = Field(default_factory=dict)
    limit: ResultLimit = Field(default=5, description="At most this many of each list.")


class InteractionRequest(ScopedBody):
    """One interaction and how it went."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "query": "Draft an email to the client about the delay",
                    "response": "Here is a short draft with the new date first.",
                    "success": True,
                    "capability": "email",
                    "predicted": 0.7,
                    "trajectory": ["read the thread", "state the new date first", "send it"],
                    "preferences": ["I prefer short emails with the ask first."],
                    "domain": "email",
                }
            ]
        },
    )

    query: Text
    response: Text
    success: Flag
    quality: Fraction | None = Field(default=None, description="How good it was, in [0, 1].")
    capability: Label | None = Field(
        default=None, description="The capability it used (default: the domain)."
    )
    predicted: Fraction | None = Field(
        default=None, description="The success probability expected before it."
    )
    action: Label | None = Field(
        default=None, description="The action taken (default: the capability)."
    )
    context: Context = Field(default_factory=dict)
    observed_outcome: Label | None = Field(
        default=None, description="What the action led to (default: success or failure)."
    )
    strategy_id: Identifier | None = Field(default=None, description="The strategy applied.")
    trajectory: list[Text] | None = Field(
        default=None, min_length=1, max_length=50, description="The steps taken."
    )
    failure_reason: Text | None = Field(
        default=None, description="How it failed (a failed interaction only)."
    )
    goal_id: Identifier | None = Field(default=None, description="The goal it worked on.")
    progress_delta: Delta | None = Field(
        default=None, description="How far it moved the goal, in [-1, 1]."
    )
    preferences: list[Text] = Field(
        default_factory=list, max_length=20, description="Preferences the user stated."
    )
    entities: list[Identifier] = Field(
        default_factory=list, max_length=100, description="Who or what it involved."
    )
    domain: Text = Field(default="general", max_length=100)


@router.post("/synthesize")
async def synthesize(body: SynthesizeRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Everything memory holds for a query, from each paradigm it needs: facts,
    preferences, strategies ranked by competence x success rate, the prediction, related
    goals, competence and should-attempt advice, with a caveat for each conflict the
    matrix resolved (a contradicted prediction's confidence is halved; a weak domain's
    strategies are deprioritised). A read; a context naming one condition twice is
    refused (422)."""
    result = await engine.synthesize(
        body.query,
        task=body.task,
        action=body.action,
        context=body.context,
        limit=body.limit,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.synthesis_to_dict(result)


@router.post("/interactions", status_code=201)
async def post_interaction(body: InteractionRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Learn from one interaction in every paradigm, in one transaction: the experience,
    stated preferences, the used strategy's statistics and the trajectory's lessons, the
    world model, the self-model, the goal's progress and a new failure mode; then
    reliable patterns become facts. Answers what changed and the events written. An
    unknown strategy or goal is 404; a closed goal is 422, and so are a failure reason
    (for a failed interaction only), a progress_delta that needs the goal_id it moves,
    and a context naming one condition twice. Either way nothing is written."""
    learned = await engine.post_interaction(
        body.query,
        body.response,
        success=body.success,
        quality=body.quality,
        capability=body.capability,
        predicted=body.predicted,
        action=body.action,
        context=body.context,
        observed_outcome=body.observed_outcome,
        strategy_id=body.strategy_id,
        trajectory=body.trajectory,
        failure_reason=body.failure_reason,
        goal_id=body.goal_id,
        progress_delta=body.progress_delta,
        preferences=body.preferences,
        entities=body.entities,
        domain=body.domain,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.interaction_learning_to_dict(learned)
