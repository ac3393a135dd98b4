"""Chat: answer a message from memory, with conflicts reported out loud (seed 002 "User
Experience", seed 000 "Response Synthesis"). Built from whole memories and clean facts
(``ucma.conflicts.answer``); when the engine's providers include an answer writer, that
model composes the response from the same numbered sources and cites them."""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ucma import serialization
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import ResultLimit, ScopedBody, Text

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["chat"])


class ChatRequest(ScopedBody):
    """A user's message to answer from memory."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"user_id": "ops_manager", "message": "Is SO-1001 complete?"}]
        },
    )

    message: Text = Field(description="The question, as the user asked it.")
    limit: ResultLimit | None = Field(
        default=None, description="Most memories to consult (default 10)."
    )
    entity: Text | None = Field(default=None, description="Restrict to memories about this.")


class ChatResponse(BaseModel):
    """The answer and every conflict it had to settle, with what the user must choose."""

    model_config = ConfigDict(extra="allow")

    query: str
    response: str
    confidence: float
    conflicts_detected: list[dict[str, Any]]
    disambiguation_required: bool
    options: list[str] | None = None
    facts: list[dict[str, Any]]
    procedures: list[dict[str, Any]]
    flagged_for_review: list[dict[str, Any]]
    caveats: list[str]
    memories: list[dict[str, Any]]
    low_confidence: bool = Field(
        default=False, description="Recall was not confident: the response says so."
    )
    sources: list[str] = Field(
        default_factory=list, description="The statements the response is built from ([1] ...)."
    )
    composed_by: str = Field(default="template", description="'template' or the model id.")


@router.post("/chat")
async def chat(body: ChatRequest, engine: Engine, key: Caller) -> ChatResponse:
    """Answer the message from memory: the best current memories (facts checked against
    the sources of truth), the conflicts that concern them, caveats about memories
    under review; "I don't know" when recall is not confident."""
    answer = await engine.answer(
        body.message,
        limit=body.limit,
        entity=body.entity,
        **scope_for(key, body.user_id, body.agent_id),
    )
    report = answer.to_dict()
    for kind in ("facts", "procedures"):
        report[kind] = [serialization.with_iso_times(record) for record in report[kind]]
    return ChatResponse(**report)
