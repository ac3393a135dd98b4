"""Decisions and their outcomes (seed 003's learning loop): record a decision with the
memories that fed it, report how it turned out (salience learns from it), read traces
back, and the causal views: a memory's influence, a decision's counterfactuals."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.learning.records import OutcomeSignal
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId
from ucma.server.schemas import (
    IDENTIFIER_PATTERN,
    MAX_ID_CHARS,
    AgentQuery,
    Count,
    Identifier,
    JsonObject,
    Number,
    Offset,
    Page,
    ScopedBody,
    Text,
    UserQuery,
    page_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["decisions"])

DecisionId = Annotated[
    str, Path(min_length=1, max_length=MAX_ID_CHARS, description="Decision trace id (trc_...).")
]


class DecideRequest(ScopedBody):
    """A decision and the memories (from a recall) that fed it."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "memory_ids": ["ep_0123456789abcdef", "fct_0123456789abcdef"],
                    "memory_scores": [0.7, 0.3],
                    "decision_type": "recommendation",
                    "summary": "Suggested port 5433 for the staging database",
                    "confidence": 0.8,
                    "retrieval_id": "ret_0123456789abcdef",
                }
            ]
        },
    )

    memory_ids: list[Identifier] = Field(
        min_length=1,
        max_length=100,
        json_schema_extra={"uniqueItems": True},
        description="Memories of this scope the decision used, each once.",
    )
    memory_scores: list[Number] | dict[Identifier, Number] | None = Field(
        default=None,
        description="How much each memory counted (one per id, a list in order or a map); "
        "normalised to sum 1. Default equal.",
    )
    decision_type: Identifier = "recommendation"
    summary: Text = Field(description="What was decided, without personal data.")
    confidence: Number = Field(default=0.5, ge=0.0, le=1.0)
    alternatives_count: Count = Field(default=0, ge=0, le=1_000_000)
    retrieval_id: Identifier | None = Field(
        default=None, description="The `retrieval_id` of the recall the memories came from."
    )
    metadata: JsonObject = None


class DecisionOutcomeRequest(ScopedBody):
    """How a decision turned out; each decision is judged once, within 7 days."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "quality": 0.8,
                    "signal": "user_accepted",
                    "feedback": "worked first time",
                }
            ]
        },
    )

    quality: Number = Field(ge=-1.0, le=1.0, description="-1 (harmful) to 1 (excellent).")
    signal: OutcomeSignal = Field(description="How the outcome was observed.")
    feedback: Text | None = None


class OutcomeResponse(BaseModel):
    trace: dict[str, Any]
    salience_updates: list[dict[str, Any]]
    procedures_updated: list[str]
    learnings_updated: list[str]
    skipped_memory_ids: list[str]


@router.post("/decisions", status_code=201)
async def decide(body: DecideRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Record a decision; returns its trace (pass its `id` to the outcome route).
    404 if a memory id is not in this scope; 422 unless `memory_scores` gives one score
    per memory id."""
    trace = await engine.decide(
        body.memory_ids,
        body.memory_scores,
        decision_type=body.decision_type,
        summary=body.summary,
        confidence=body.confidence,
        alternatives_count=body.alternatives_count,
        retrieval_id=body.retrieval_id,
        metadata=body.metadata,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return trace.to_dict()


@router.post(
    "/decisions/{decision_id}/outcome",
    responses={
        409: {
            "description": "The decision already has its outcome "
            "(`outcome_already_recorded`) or its window has closed (`outcome_window_closed`)."
        }
    },
)
async def outcome(
    decision_id: DecisionId, body: DecisionOutcomeRequest, engine: Engine, key: Caller
) -> OutcomeResponse:
    """Record the outcome; the memories behind the decision gain or lose salience.
    409 `outcome_already_recorded` for a second outcome, 409 `outcome_window_closed`
    after the window (7 days); nothing changes then."""
    report = await engine.outcome(
        decision_id,
        body.quality,
        body.signal,
        body.feedback,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return OutcomeResponse(**serialization.outcome_report_to_dict(report))


@router.get("/decisions")
async def list_decisions(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    observed: Annotated[bool | None, Query(description="Only with (or without) an outcome.")] = (
        None
    ),
    decision_type: Annotated[
        str | None, Query(min_length=1, max_length=MAX_ID_CHARS, pattern=IDENTIFIER_PATTERN)
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """Decision traces, newest first, a page at a time."""
    traces = await engine.traces(
        observed=observed,
        decision_type=decision_type,
        limit=offset + limit + 1,
        **scope_for(key, user_id, agent_id),
    )
    items = [t.to_dict() for t in traces[offset : offset + limit]]
    return page_of(items, limit, offset, more=len(traces) > offset + limit)


@router.get("/decisions/{decision_id}")
async def get_decision(
    decision_id: DecisionId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """One decision trace with its outcome, if recorded; 404 if not in this scope."""
    trace = await engine.trace(decision_id, **scope_for(key, user_id, agent_id))
    return trace.to_dict()


@router.get("/decisions/{decision_id}/counterfactuals")
async def counterfactuals(
    decision_id: DecisionId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """Similar past decisions that turned out differently, and the memories that
    differed. 422 if the decision has no outcome yet."""
    report = await engine.counterfactuals(decision_id, **scope_for(key, user_id, agent_id))
    return report.to_dict()


@router.get("/memories/{memory_id}/influence")
async def memory_influence(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    min_decisions: Annotated[
        int | None, Query(ge=1, le=1_000_000, description="Outcomes needed for a verdict.")
    ] = None,
) -> dict[str, Any]:
    """How the decisions this memory fed turned out (verdict helpful / misleading /
    mixed / insufficient) and every outcome-driven salience change; 404 if unknown."""
    scope = scope_for(key, user_id, agent_id)
    await engine.get(memory_id, **scope)
    influence = await engine.memory_influence(min_decisions=min_decisions, **scope)
    mine = next((i.to_dict() for i in influence if i.memory_id == memory_id), None)
    if mine is None:
        mine = {
            "memory_id": memory_id,
            "decisions": 0,
            "positive": 0,
            "negative": 0,
            "mean_quality": 0.0,
            "weighted_quality": 0.0,
            "verdict": "insufficient",
        }
    history = await engine.salience_history(memory_id, **scope)
    return {**mine, "salience_history": [u.to_dict() for u in history]}


class PatternsResponse(BaseModel):
    patterns: list[dict[str, Any]] = Field(
        description="Each: id, summary (its most central memory), terms, memory_ids, "
        "decisions, mean_quality."
    )


@router.get("/patterns")
async def extract_patterns(
    engine: Engine, key: Caller, user_id: UserQuery = None, agent_id: AgentQuery = None
) -> PatternsResponse:
    """Clusters of similar memories that consistently preceded good outcomes in this
    scope's decisions, each summarised by its most central memory and common terms."""
    found = await engine.extract_patterns(**scope_for(key, user_id, agent_id))
    return PatternsResponse(patterns=[p.to_dict() for p in found])
