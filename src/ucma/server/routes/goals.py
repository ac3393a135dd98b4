"""Goals (seed 000's predictive paradigm): add, list, decompose, progress, resume,
abandon, anticipate what a goal lacks, and plan it (composition pattern 2)."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from pydantic import ConfigDict, Field

from ucma import serialization
from ucma.paradigms.goal_records import GoalStatus
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import (
    MAX_ID_CHARS,
    AgentQuery,
    Fraction,
    Identifier,
    Moment,
    Offset,
    OptionalScope,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    page_of,
    scope_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["goals"])

GoalId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS, description="Goal id.")]
Delta = Annotated[float, Field(ge=-1.0, le=1.0)]


class AddGoalRequest(ScopedBody):
    """A goal, or a subgoal of ``parent_id``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "description": "Book flights, reserve a hotel and buy a rail pass for the "
                    "Japan trip",
                    "priority": 0.8,
                }
            ]
        },
    )

    description: Text
    priority: Fraction = Field(default=0.5, description="In [0, 1]; higher comes first.")
    deadline: Moment | None = Field(default=None, description="Epoch seconds.")
    parent_id: Identifier | None = Field(default=None, description="Make it a subgoal of this.")


class DecomposeRequest(ScopedBody):
    """The caller's subgoals, in order; without them the offline rules (or a strategy
    memory holds, or a configured LLM) split the goal."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"user_id": "alice", "steps": ["Pick a name"]}]},
    )

    steps: Annotated[list[Text], Field(min_length=1, max_length=12)] | None = None


class ProgressRequest(ScopedBody):
    """Exactly one of ``progress`` (set) or ``delta`` (move); 422 otherwise."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"user_id": "alice", "progress": 0.5}]}
    )

    progress: Fraction | None = Field(default=None, description="The new progress, in [0, 1].")
    delta: Delta | None = Field(default=None, description="A change of progress, in [-1, 1].")


@router.post("/goals", status_code=201)
async def add_goal(body: AddGoalRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Add a goal. If memory contradicts it, it comes back ``suspended`` with the
    memories that do in ``conflicts``."""
    goal = await engine.add_goal(
        body.description,
        priority=body.priority,
        deadline=body.deadline,
        parent_id=body.parent_id,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.goal_to_api_dict(goal)


@router.get("/goals")
async def goals(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    status: GoalStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """The scope's goals of one status (all without one), highest priority first, then
    the nearest deadline."""
    found = await engine.goals(
        status=status, limit=limit + 1, offset=offset, **scope_for(key, user_id, agent_id)
    )
    items = [serialization.goal_to_api_dict(g) for g in found[:limit]]
    return page_of(items, limit, offset, more=len(found) > limit)


@router.get("/goals/active")
async def active_goals(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Page:
    """The active goals and subgoals, highest priority first, then the nearest deadline
    (none last); suspended goals are left out."""
    found = await engine.get_active_goals(limit=limit, **scope_for(key, user_id, agent_id))
    items = [serialization.goal_to_api_dict(g) for g in found]
    return page_of(items, limit, 0, more=False)


@router.get("/goals/{goal_id}")
async def get_goal(
    goal_id: GoalId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """One goal; 404 if unknown in this scope."""
    goal = await engine.get_goal(goal_id, **scope_for(key, user_id, agent_id))
    return serialization.goal_to_api_dict(goal)


@router.post("/goals/{goal_id}/decompose")
async def decompose_goal(
    goal_id: GoalId,
    engine: Engine,
    key: Caller,
    body: Annotated[DecomposeRequest | None, Body(description="Optional.")] = None,
) -> Page:
    """Split a goal into subgoals (once; asked again, the same subgoals). Empty when it
    has no structure to split and memory holds no strategy for it."""
    subgoals = await engine.decompose_goal(
        goal_id, steps=body.steps if body else None, **scope_of(key, body)
    )
    items = [serialization.goal_to_api_dict(g) for g in subgoals]
    return page_of(items, max(len(items), 1), 0, more=False)


@router.post("/goals/{goal_id}/progress")
async def update_progress(
    goal_id: GoalId, body: ProgressRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Set or move a goal's progress; at 1 it is completed, and its parents follow.
    Pass exactly one of progress or delta (422 otherwise); a goal with subgoals takes its
    progress from them (422)."""
    goal = await engine.update_progress(
        goal_id,
        progress=body.progress,
        delta=body.delta,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.goal_to_api_dict(goal)


@router.post("/goals/{goal_id}/resume")
async def resume_goal(
    goal_id: GoalId, engine: Engine, key: Caller, body: OptionalScope = None
) -> dict[str, Any]:
    """Pursue a suspended goal anyway: what contradicted it is accepted."""
    goal = await engine.resume_goal(goal_id, **scope_of(key, body))
    return serialization.goal_to_api_dict(goal)


@router.post("/goals/{goal_id}/abandon")
async def abandon_goal(
    goal_id: GoalId, engine: Engine, key: Caller, body: OptionalScope = None
) -> dict[str, Any]:
    """Give a goal up, with its open subgoals (kept, with their history)."""
    goal = await engine.abandon_goal(goal_id, **scope_of(key, body))
    return serialization.goal_to_api_dict(goal)


@router.get("/goals/{goal_id}/anticipate")
async def anticipate(
    goal_id: GoalId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """What a goal needs that memory lacks: knowledge gaps and skill gaps."""
    found = await engine.anticipate(goal_id, **scope_for(key, user_id, agent_id))
    return serialization.anticipation_to_dict(found)


@router.post("/goals/{goal_id}/pursue")
async def pursue_goal(
    goal_id: GoalId, engine: Engine, key: Caller, body: OptionalScope = None
) -> dict[str, Any]:
    """Plan a goal: decompose it, find its gaps, give each open subgoal its strategy and
    what blocks it, and record what blocks the goal."""
    plan = await engine.pursue_goal(goal_id, **scope_of(key, body))
    return serialization.goal_plan_to_dict(plan)
