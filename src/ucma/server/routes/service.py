"""Health, statistics and the scopes a caller may look at."""

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

import ucma
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, Offset, Page, UserQuery, page_of

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["service"])


class HealthResponse(BaseModel):
    status: str
    version: str
    embedder: str
    auth: str
    database: str | None


@router.get("/health")
async def health(engine: Engine, request: Request) -> HealthResponse:
    """Liveness, version and embedding model; needs no key. The database (its path, or its
    URL without the password) is shown in local mode only."""
    keys = await request.app.state.access.keys_required()
    return HealthResponse(
        status="ok",
        version=ucma.__version__,
        embedder=engine.embedder.model_id,
        auth="api_keys" if keys else "local",
        database=None if keys else str(engine.location),
    )


@router.get("/stats", tags=["memory"])
async def stats(
    engine: Engine,
    key: Caller,
    request: Request,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> dict[str, Any]:
    """Counts and sizes of one scope's memory: values of that scope only. In local mode,
    to a request without a key, ``process`` adds the whole process's counters (sensory
    buffer, query-embedding cache); to a key they are never shown, since they move with
    every tenant's writes and questions."""
    result = await engine.stats(**scope_for(key, user_id, agent_id))
    if key is None and not await request.app.state.access.keys_required():
        result["process"] = engine.process_stats()
    return result


@router.get("/scopes", tags=["memory"])
async def scopes(
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> Page:
    """The scopes (user and agent) that hold memories, with their memory counts per kind,
    ordered by user and agent. With a key: the key's user's agents (only the key's agent
    when the key names one). In local mode: the given user's agents, or without
    ``user_id`` every scope of the database."""
    if key is None and user_id is None:
        chosen: dict[str, str] = {}
    else:
        chosen = scope_for(key, user_id, None)
    found = await engine.scopes(limit=offset + limit + 1, **chosen)
    items = [
        {"user_id": scope.user_id, "agent_id": scope.agent_id, "memories": counts}
        for scope, counts in found[offset : offset + limit]
    ]
    return page_of(items, limit, offset, more=len(found) > offset + limit)
