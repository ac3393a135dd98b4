"""Cascading recall (seed 004): hits with their five confidence factors, the cascade path,
a low-confidence flag to abstain on, and the retrieval id to pass to a decision."""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import Identifier, ScopedBody, Text
from ucma.types import MemoryKind, QueryMode

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["memory"])


class RecallRequest(ScopedBody):
    """A cascading recall."""

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

    query: Text
    limit: int | None = Field(default=None, ge=1, description="Most results (engine default 10).")
    cascade: bool = Field(
        default=True,
        description="Search further memory layers when the primary layer's confidence is low.",
    )
    confidence_threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Cascade below this confidence (default 0.5)."
    )
    max_cascade_depth: int | None = Field(
        default=None, ge=0, le=10, description="Most secondary layers to search (default 2)."
    )
    reference_time: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description='"Last week", "yesterday"... are read relative to this (epoch seconds; '
        "default now).",
    )
    explain: bool = Field(default=False, description="Add the plan and per-hit channel scores.")
    mode: QueryMode | None = Field(default=None, description="Force a retrieval strategy.")
    kinds: list[MemoryKind] | None = None
    time_range: tuple[float, float] | None = Field(
        default=None, description="[start, end] in epoch seconds; only memories in it."
    )
    entity: Text | None = None
    tags: list[Identifier] | None = None
    include_graph_neighbors: bool = True
    min_importance: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered_range(self) -> "RecallRequest":
        if self.time_range is not None and self.time_range[0] > self.time_range[1]:
            raise ValueError("time_range must be [start, end] with start <= end")
        return self


class RecallResponse(BaseModel):
    query: str
    query_class: str
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
    """Recall with seed 004's cascade: the query is classified, searched in its primary
    layer and, below the confidence threshold, in secondary layers."""
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
        time_range=body.time_range,
        entity=body.entity,
        tags=body.tags,
        include_graph_neighbors=body.include_graph_neighbors,
        min_importance=body.min_importance,
        **scope_for(key, body.user_id, body.agent_id),
    )
    return RecallResponse(**serialization.recall_result_to_dict(result))
