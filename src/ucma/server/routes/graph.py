"""The memory graph: related memories, a memory's typed links, linking, graph importance."""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.routes.memories import MemoryId
from ucma.server.schemas import (
    AgentQuery,
    Identifier,
    Number,
    OptionalScope,
    ScopedBody,
    UserQuery,
    scope_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["graph"])


class Related(BaseModel):
    memory: dict[str, Any]
    weight: float = Field(description="Product of the edge weights along the best path.")
    hops: int


class RelatedResponse(BaseModel):
    results: list[Related]


class LinkRequest(ScopedBody):
    """A typed, weighted edge between two memories of the scope (replaced if it exists)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "source_id": "ep_0123",
                    "target_id": "ep_4567",
                    "edge_type": "caused",
                    "weight": 0.8,
                }
            ]
        },
    )

    source_id: Identifier
    target_id: Identifier
    edge_type: Identifier
    weight: Number = Field(default=1.0, ge=0.0, le=1.0)


class ImportanceResponse(BaseModel):
    nodes: int = Field(description="Memories whose graph importance was recomputed.")


@router.get("/memories/{memory_id}/related")
async def related(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    max_hops: Annotated[int, Query(ge=1, le=10)] = 2,
    edge_types: Annotated[list[Identifier] | None, Query()] = None,
    min_weight: Annotated[float, Query(ge=0.0, le=1.0)] = 0.0,
) -> RelatedResponse:
    """Memories reachable along outgoing edges, best path first; 404 for an unknown id."""
    found = await engine.related(
        memory_id,
        max_hops=max_hops,
        edge_types=edge_types,
        min_weight=min_weight,
        **scope_for(key, user_id, agent_id),
    )
    return RelatedResponse(
        results=[
            Related(memory=serialization.record_to_api_dict(record), weight=weight, hops=hops)
            for record, weight, hops in found
        ]
    )


class Link(BaseModel):
    edge_type: str
    weight: float = Field(ge=0.0, le=1.0)
    created_at: float = Field(description="When the link was made or last strengthened.")
    memory: dict[str, Any] = Field(description="The memory it points to.")


class LinksResponse(BaseModel):
    memory_id: str
    links: list[Link]


@router.get("/memories/{memory_id}/links")
async def links(
    memory_id: MemoryId,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    edge_types: Annotated[
        list[Identifier] | None, Query(max_length=100, description="Only links of these types.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> LinksResponse:
    """A memory's outgoing links one by one, strongest first: each with its type,
    weight and the memory it points to (left out when that memory is archived); what
    the inspector's graph draws. 404 for an unknown id."""
    found = await engine.links(
        memory_id, edge_types=edge_types, limit=limit, **scope_for(key, user_id, agent_id)
    )
    return LinksResponse(
        memory_id=memory_id,
        links=[Link(**serialization.link_to_dict(edge, record)) for edge, record in found],
    )


@router.post("/links", status_code=201)
async def link(body: LinkRequest, engine: Engine, key: Caller) -> dict[str, Any]:
    """Link two memories of the scope; 404 if either is not in it."""
    edge = await engine.link(
        body.source_id,
        body.target_id,
        body.edge_type,
        weight=body.weight,
        **scope_of(key, body),
    )
    return serialization.edge_to_dict(edge)


@router.post("/graph/importance")
async def update_graph_importance(
    engine: Engine, key: Caller, body: OptionalScope = None
) -> ImportanceResponse:
    """Recompute PageRank over the scope's memory graph (used by retrieval ranking)."""
    scores = await engine.update_graph_importance(**scope_of(key, body))
    return ImportanceResponse(nodes=len(scores))
