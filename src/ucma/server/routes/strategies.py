"""Strategies (seed 000's procedural paradigm): learning them from trajectories and
finding the ones that fit a task, grounded in known facts."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    AgentQuery,
    FactId,
    Flag,
    Offset,
    Page,
    ScopedBody,
    Text,
    TextQuery,
    UserQuery,
    page_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["strategies"])

DomainQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=100,
        pattern=IDENTIFIER_PATTERN,
        description="Keep one domain's (the domain trajectories were learned in).",
    ),
]


class Triple(BaseModel):
    """A fact as a condition: ``subject predicate object``."""

    model_config = ConfigDict(extra="forbid")

    subject: Text = Field(max_length=500)
    predicate: Text = Field(max_length=500)
    object: Text = Field(max_length=500)


class TrajectoryRequest(ScopedBody):
    """One attempt at a task: what was done and how it ended."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "task": "Collect every review from the shop",
                    "steps": ["follow the next links", "parse the items"],
                    "success": True,
                    "domain": "scraping",
                    "context": [{"subject": "shop", "predicate": "pagination", "object": "links"}],
                }
            ]
        },
    )

    task: Text
    steps: list[Text] = Field(min_length=1, max_length=50)
    success: Flag
    failure_reason: Text | None = None
    domain: Text = Field(default="general", max_length=100)
    context: list[Triple | FactId] = Field(
        default_factory=list,
        max_length=50,
        description="What held while it ran: fact ids or triples (become preconditions).",
    )


@router.post("/trajectories", status_code=201)
async def learn_from_trajectory(
    body: TrajectoryRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Distil strategies (from a success) or pitfalls (from a failure) from one
    trajectory; near-duplicates merge. Answers the trajectory id, the items kept, the
    ids of existing items they merged into, and the pitfalls a success refuted.
    ``failure_reason`` is for a failed trajectory only.
    A fact id in ``context`` must be a fact of this scope (404)."""
    learned = await engine.learn_from_trajectory(
        body.task,
        body.steps,
        body.success,
        body.failure_reason,
        domain=body.domain,
        context=[c if isinstance(c, str) else c.model_dump() for c in body.context],
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.trajectory_learning_to_dict(learned)


@router.get("/strategies")
async def strategies_for(
    engine: Engine,
    key: Caller,
    task: TextQuery,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    domain: DomainQuery = None,
    contradicted: Annotated[
        Literal["filter", "flag"],
        Query(description="Leave out strategies whose preconditions contradict facts, or flag"),
    ] = "filter",
    limit: Annotated[int, Query(ge=1, le=100)] = 5,
    offset: Offset = 0,
) -> Page:
    """Strategies and pitfalls for a task, best first: relevance times the Wilson lower
    bound of their success when applied, grounded in known facts."""
    wanted = min(offset + limit + 1, 100)
    found = await engine.strategies_for(
        task,
        domain=domain,
        limit=wanted,
        contradicted=contradicted,
        **scope_for(key, user_id, agent_id),
    )
    items = [serialization.strategy_match_to_dict(m) for m in found[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(found) > offset + limit)


class HasStrategy(BaseModel):
    has_strategy: bool


@router.get("/strategies/exists")
async def has_strategy_for(
    engine: Engine,
    key: Caller,
    task: TextQuery,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    domain: DomainQuery = None,
) -> HasStrategy:
    """Whether a strategy (not a pitfall) applies to the task."""
    found = await engine.has_strategy_for(task, domain=domain, **scope_for(key, user_id, agent_id))
    return HasStrategy(has_strategy=found)
