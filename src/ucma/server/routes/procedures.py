"""Procedural memory: reusable workflows, their outcomes, and finding them by tag."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId
from ucma.server.schemas import (
    AgentQuery,
    Count,
    Flag,
    Fraction,
    Identifier,
    JsonObject,
    Page,
    ScopedBody,
    StoreOffset,
    Text,
    UserQuery,
    page_of,
)
from ucma.types import ProcedureStatus

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["procedures"])


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: Text
    action_type: Identifier = "llm_reasoning"
    action_spec: JsonObject = None
    success_criteria: str = ""
    on_failure: Identifier = "retry"
    max_retries: Count = Field(default=3, ge=0, le=100)


class AddProcedureRequest(ScopedBody):
    """A workflow the agent can reuse, found later by its trigger tags or its text."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "name": "Rotate the deploy key",
                    "description": "How to rotate the billing service deploy key",
                    "steps": [{"description": "generate a new key"}, {"description": "update CI"}],
                    "trigger_tags": ["deploy", "security"],
                }
            ]
        },
    )

    name: Text
    description: Text
    steps: list[Step] = Field(default_factory=list)
    trigger_tags: list[Identifier] = Field(default_factory=list)
    status: ProcedureStatus = ProcedureStatus.DRAFT
    metadata: JsonObject = None


class Discovery(BaseModel):
    """A pattern an application revealed, kept as a fact."""

    model_config = ConfigDict(extra="forbid")

    subject: Text = Field(max_length=500)
    predicate: Text = Field(max_length=500)
    object: Text = Field(max_length=500)
    confidence: Fraction = 0.8


class OutcomeRequest(ScopedBody):
    """One application's result, folded into the statistics; with ``task``, also an
    experience and the facts it revealed."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"user_id": "alice", "success": True}]}
    )

    success: Flag
    task: Text | None = None
    failure_reason: Text | None = None
    discoveries: list[Discovery] = Field(default_factory=list, max_length=50)


@router.post("/procedures", status_code=201)
async def add_procedure(body: AddProcedureRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Store a procedure; returns it with its id."""
    procedure = await engine.add_procedure(
        body.name,
        body.description,
        steps=[step.model_dump(exclude_none=True) for step in body.steps],
        trigger_tags=body.trigger_tags,
        status=body.status,
        metadata=body.metadata,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.record_to_api_dict(procedure)


@router.post("/procedures/{procedure_id}/outcome")
async def record_outcome(
    procedure_id: MemoryId, body: OutcomeRequest, engine: Engine, key: Caller
) -> dict[str, Any]:
    """Record one application of a procedure or strategy; 404 if it is not a procedure of
    this scope. With ``task``, the application is kept as an experience and each
    discovery as a fact.
    ``failure_reason`` is for a failed application only.
    Discoveries need the task they were discovered in."""
    procedure = await engine.record_procedure_outcome(
        procedure_id,
        body.success,
        task=body.task,
        failure_reason=body.failure_reason,
        discoveries=[d.model_dump() for d in body.discoveries],
        **scope_for(key, body.user_id, body.agent_id),
    )
    return serialization.record_to_api_dict(procedure)


@router.get("/procedures")
async def find_procedures(
    engine: Engine,
    key: Caller,
    tags: Annotated[list[Identifier], Query(min_length=1, description="Trigger tags to match.")],
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    min_success_rate: Annotated[float, Query(ge=0.0, le=1.0)] = 0.0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: StoreOffset = 0,
) -> Page:
    """Procedures sharing a tag, best confidence-weighted success rate first."""
    found = await engine.find_procedures(
        tags, min_success_rate=min_success_rate, **scope_for(key, user_id, agent_id)
    )
    items = [serialization.record_to_api_dict(p) for p in found[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(found) > offset + limit)
