"""Cascading recall (seed 004): hits with their five confidence factors, the cascade path,
a low-confidence flag to abstain on, and the retrieval id to pass to a decision."""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import RememberRequest
from ucma.server.schemas import CascadeDepth, Flag, Fraction, Moment

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["memory"])


class RecallRequest(RememberRequest):
    """A cascading recall: remember's filters plus the cascade's settings."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "query": "what did Alice decide about the staging database last week?",
                    "limit": 5,
                    "explain": True,
                }
            ]
        },
    )

    cascade: Flag = Field(
        default=True,
        description="Search further memory layers when the primary layer's confidence is low.",
    )
    confidence_threshold: Fraction | None = Field(
        default=None, description="Cascade below this confidence (default 0.5)."
    )
    max_cascade_depth: CascadeDepth | None = Field(
        default=None, description="Most secondary layers to search (default 2)."
    )
    reference_time: Moment | None = Field(
        default=None,
        description='"Last week", "yesterday"... are read relative to this (epoch seconds; '
        "default now).",
    )
    explain: Flag = Field(default=False, description="Add the plan and per-hit channel scores.")


class RecallResponse(BaseModel):
    query: str
    query_class: str
    paradigms: list[str] = Field(
        default_factory=list,
        description="The memory paradigms the query needs: declarative, procedural, predictive.",
    )
    retrieval_id: str | None = Field(description="Pass to POST /v1/decisions.")
    confidence: float = Field(description="Final confidence after the cascade, in [0, 1].")
    low_confidence: bool = Field(
        description="True when even the cascade found no confident answer: consider abstaining."
    )
    cascade_path: dict[str, Any]
    results: list[dict[str, Any]] = Field(
        description="Best first; each with `confidence` (five factors and overall) and `layer`."
    )
    explanation: dict[str, Any] | None = None


@router.post("/recall")
async def recall(body: RecallRequest, engine: Engine, key: Caller) -> RecallResponse:
    """Cascading recall: the query is classified, searched in its primary memory layer
    and, below the confidence threshold, in secondary layers.

    A `time_range` is [start, end] with start <= end (422 otherwise)."""
    result = await engine.recall(
        body.query,
        limit=body.limit,
        cascade=body.cascade,
        confidence_threshold=body.confidence_threshold,
        max_cascade_depth=body.max_cascade_depth,
        reference_time=body.reference_time,
        explain=body.explain,
        mode=body.mode,
        kinds=body.kinds,
        banks=body.banks,
        time_range=body.time_range,
        entity=body.entity,
        tags=body.tags,
        include_graph_neighbors=body.include_graph_neighbors,
        min_importance=body.min_importance,
        include_superseded=body.include_superseded,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return RecallResponse(**serialization.recall_result_to_dict(result))
