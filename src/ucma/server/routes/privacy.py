"""The content guard's originals for their owner: ``POST /v1/reveal`` turns a text's
tokens (``[email_3f2a9c1b]``) back into the values the scope's vault holds, and
``GET /v1/tokens/{token}`` reveals one token. A token of another scope is answered
exactly like one that never existed (404 for the single token; left as it is in a
text), so the routes tell nothing about other tenants."""

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ucma.privacy.tokens import TOKEN_PATTERN
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import Identifier, ScopedBody, Text

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["privacy"])


class RevealRequest(ScopedBody):
    """A text holding guard tokens, e.g. a memory's content from get or recall."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"user_id": "alice", "text": "Bob's email is [email_3f2a9c1b]"}]
        },
    )

    text: Text = Field(description="Text whose tokens of this scope are to be revealed.")


class RevealResponse(BaseModel):
    text: str = Field(description="The text with this scope's tokens replaced by originals.")


class TokenResponse(BaseModel):
    token: str
    value: str = Field(description="The original the token stands for.")


@router.post("/reveal")
async def reveal_text(body: RevealRequest, engine: Engine, key: Caller) -> RevealResponse:
    """The text with every token of the caller's scope replaced by its original."""
    text = await engine.detokenise(body.text, **scope_for(key, body.user_id, body.agent_id))
    return RevealResponse(text=text)


@router.get("/tokens/{token}", responses={404: {"description": "No such token in this scope."}})
async def reveal_token(
    token: Annotated[
        str,
        Path(
            max_length=80,
            pattern=f"^{TOKEN_PATTERN.pattern}$",
            description="A token, e.g. [email_3f2a9c1b].",
        ),
    ],
    engine: Engine,
    key: Caller,
    user_id: Annotated[Identifier | None, Query()] = None,
    agent_id: Annotated[Identifier | None, Query()] = None,
) -> TokenResponse:
    """The original of one token of the caller's scope; 404 for any other token."""
    value = await engine.reveal(token, **scope_for(key, user_id, agent_id))
    return TokenResponse(token=token, value=value)
