"""Health and statistics."""

import os
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

import ucma
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, UserQuery

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
    """Liveness, version and embedding model; needs no key. The database path is shown in
    local mode only."""
    keys = await request.app.state.access.keys_required()
    return HealthResponse(
        status="ok",
        version=ucma.__version__,
        embedder=engine.embedder.model_id,
        auth="api_keys" if keys else "local",
        database=None if keys else os.fspath(engine.path),
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
