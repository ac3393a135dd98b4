"""Sessions and working memory."""

from fastapi import APIRouter
from pydantic import BaseModel

from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, OptionalScope, UserQuery, scope_of

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["sessions"])


class SessionResponse(BaseModel):
    session_id: str


class ContextResponse(BaseModel):
    context: str


@router.post("/sessions", status_code=201)
async def new_session(engine: Engine, key: Caller, body: OptionalScope = None) -> SessionResponse:
    """Start a new session: later observations are filed under it, and the active and
    staging zones of working memory are cleared."""
    return SessionResponse(session_id=await engine.new_session(**scope_of(key, body)))


@router.get("/sessions/current")
async def current_session(
    engine: Engine, key: Caller, user_id: UserQuery = None, agent_id: AgentQuery = None
) -> SessionResponse:
    """The scope's current session (one is started on first use)."""
    return SessionResponse(session_id=engine.session_id(**scope_for(key, user_id, agent_id)))


@router.get("/context")
async def context(
    engine: Engine, key: Caller, user_id: UserQuery = None, agent_id: AgentQuery = None
) -> ContextResponse:
    """The scope's working memory rendered as LLM context (recent retrievals are staged):
    current material only, superseded and expired facts replaced by the current value,
    chit-chat left out, each statement once."""
    return ContextResponse(
        context=await engine.current_context(**scope_for(key, user_id, agent_id))
    )
