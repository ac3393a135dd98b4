"""The predictive paradigm (seed 000): the world model (transitions, simulate), the
self-model (competences, introspect), and the patterns that rest on them
(should-attempt, learning priorities)."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import AllowInfNan, ConfigDict, Field, Strict, StringConstraints

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    AgentQuery,
    Flag,
    Fraction,
    Offset,
    Page,
    ScopedBody,
    Text,
    TextQuery,
    UserQuery,
    page_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["predictive"])

Label = Annotated[Text, StringConstraints(max_length=500)]
#: A condition's value as a number: strict, so a numeric string stays a string (and is
#: held to a string's length).
Amount = Annotated[float, Strict(), AllowInfNan(False)]
Context = Annotated[
    dict[Label, Label | Flag | Amount],
    Field(
        max_length=50,
        description='What holds: conditions to values, {"logged in": true, "site": "shop"}.',
        # Every condition's name matches the pattern of its patternProperties.
        json_schema_extra={"additionalProperties": False},
    ),
]
LabelQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=500, pattern=IDENTIFIER_PATTERN),
]


class TransitionRequest(ScopedBody):
    """Doing an action while a context held led to an outcome."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "action": "submit the order form",
                    "outcome": "confirmation page",
                    "context": {"logged in": True, "site": "shop"},
                }
            ]
        },
    )

    action: Label
    outcome: Label
    context: Context = Field(default_factory=dict)


class SimulateRequest(ScopedBody):
    """An action and the context it would be done in."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "action": "submit the order form",
                    "context": {"logged in": True},
                }
            ]
        },
    )

    action: Label
    context: Context = Field(default_factory=dict)


class CompetenceRequest(ScopedBody):
    """One attempt of a capability and how it went."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "capability": "sql queries",
                    "success": False,
                    "predicted": 0.8,
                    "failure_reason": "recursive queries",
                }
            ]
        },
    )

    capability: Label
    success: Flag
    predicted: Fraction | None = Field(
        default=None, description="The success probability expected before the attempt."
    )
    failure_reason: Text | None = Field(
        default=None, description="How it failed (a failed attempt only): a failure mode."
    )


class AttemptRequest(ScopedBody):
    """A task to attempt or to ask for help with."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"user_id": "alice", "task": "Write a recursive SQL query", "capability": "sql"}
            ]
        },
    )

    task: Text
    capability: Label | None = Field(default=None, description="The capability it needs.")
    action: Label | None = Field(
        default=None, description="The action to simulate (default: the capability)."
    )
    context: Context = Field(default_factory=dict)


@router.post("/world/transitions", status_code=201)
async def observe_transition(
    body: TransitionRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Record an observed outcome of an action; answers the confirmed transition with
    its confirmations, errors and reliability. A context naming one condition twice
    (case and spacing aside) is refused (422)."""
    found = await engine.observe_transition(
        body.action,
        body.outcome,
        context=body.context,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return found.to_api_dict()


@router.get("/world/transitions")
async def transitions(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    action: LabelQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """The world model's transitions, most observed first (of one action when given)."""
    found = await engine.transitions(
        action=action, limit=limit + 1, offset=offset, **scope_for(key, user_id, agent_id)
    )
    items = [t.to_api_dict() for t in found[:limit]]
    return page_of(items, limit, offset, more=len(found) > limit)


@router.post("/world/simulate")
async def simulate(body: SimulateRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Predicted outcomes of an action in a context, with probabilities, intervals,
    a confidence that is low on little evidence, the evidence and the caveats. A context
    naming one condition twice (case and spacing aside) is refused (422)."""
    result = await engine.simulate(
        body.action, body.context, **scope_for(key, body.user_id, body.agent_id)
    )
    return result.to_dict()


@router.post("/self/competences", status_code=201)
async def record_competence(body: CompetenceRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Record one attempt of a capability; answers its competence. A failure reason is
    for a failed attempt only (422 otherwise)."""
    found = await engine.record_competence(
        body.capability,
        body.success,
        predicted=body.predicted,
        failure_reason=body.failure_reason,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.competence_to_api_dict(found, engine.config.predictive)


@router.get("/self/competences")
async def competences(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """The self-model: each capability's attempts, successes, estimated accuracy with
    its credible interval, calibration and failure modes, most attempted first."""
    found = await engine.competences(
        limit=limit + 1, offset=offset, **scope_for(key, user_id, agent_id)
    )
    items = [
        serialization.competence_to_api_dict(c, engine.config.predictive) for c in found[:limit]
    ]
    return page_of(items, limit, offset, more=len(found) > limit)


@router.get("/self/introspect")
async def introspect(
    engine: Engine,
    key: Caller,
    task: TextQuery,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    capability: LabelQuery = None,
) -> dict[str, Any]:
    """Am I good at this? The estimated accuracy with sample size and interval,
    calibration, failure modes, weak domains and the evidence."""
    result = await engine.introspect(
        task, capability=capability, **scope_for(key, user_id, agent_id)
    )
    return result.to_dict()


@router.post("/self/should-attempt")
async def should_attempt(body: AttemptRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Attempt, attempt with a caveat, ask for help or decline,
    with every input, weight and failure mode it used. A context naming one condition
    twice (case and spacing aside) is refused (422)."""
    advice = await engine.should_attempt(
        body.task,
        capability=body.capability,
        action=body.action,
        context=body.context,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return advice.to_dict()


@router.get("/self/learning-priorities")
async def learning_priorities(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> Page:
    """What to learn next, highest impact first: recurring failures and weak domains."""
    found = await engine.learning_priorities(limit=limit, **scope_for(key, user_id, agent_id))
    return page_of([p.to_dict() for p in found], limit, 0, more=False)
