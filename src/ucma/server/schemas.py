"""Request and response pieces shared by the route modules.

Bodies refuse unknown fields (typo protection) and check types; the engine checks every
value against its configured limits and answers with a ValidationError (422) that says
what to fix, so the limits live in one place (``LimitsConfig``).
"""

import json
from typing import Annotated, Any

from fastapi import Body, Query
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from ucma.server.auth import scope_for
from ucma.types import ApiKey

__all__ = [
    "MAX_ID_CHARS",
    "AgentQuery",
    "Identifier",
    "JsonObject",
    "OptionalScope",
    "Page",
    "ScopedBody",
    "Text",
    "UserQuery",
    "page_of",
    "scope_of",
]

#: Longest user_id, agent_id, session_id, memory id or source accepted.
MAX_ID_CHARS = 256


def _encodable(value: str) -> str:
    """Reject strings that cannot be stored as UTF-8 (lone surrogates sent as JSON escapes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (it contains a lone surrogate)") from exc
    return value


def _encodable_json(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None:
        _encodable(json.dumps(value, ensure_ascii=False))
    return value


Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_encodable)
]
Text = Annotated[str, StringConstraints(min_length=1), AfterValidator(_encodable)]
JsonObject = Annotated[dict[str, Any] | None, AfterValidator(_encodable_json)]

UserQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Whose memory; optional with an API key (which fixes it).",
    ),
]
AgentQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=MAX_ID_CHARS, description='Agent of that user; "default".'),
]


class ScopedBody(BaseModel):
    """Fields every scoped request body carries; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(
        default=None,
        description="Whose memory. Required without an API key; with one it may be left out "
        "and must otherwise equal the key's user.",
    )
    agent_id: Identifier | None = Field(
        default=None, description='Which agent of that user; the engine default is "default".'
    )


OptionalScope = Annotated[
    ScopedBody | None, Body(description="Optional with an API key, which fixes the scope.")
]


def scope_of(key: ApiKey | None, body: ScopedBody | None) -> dict[str, str]:
    """The engine scope of a request whose whole body is an optional ``ScopedBody``."""
    return scope_for(key, body.user_id if body else None, body.agent_id if body else None)


class Page(BaseModel):
    """One page of a list; ``next_offset`` is null on the last page."""

    items: list[dict[str, Any]]
    limit: int
    offset: int
    next_offset: int | None


def page_of(items: list[dict[str, Any]], limit: int, offset: int, *, more: bool) -> Page:
    return Page(
        items=items, limit=limit, offset=offset, next_offset=offset + limit if more else None
    )
