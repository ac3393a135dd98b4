"""Request and response pieces shared by the route modules.

Bodies refuse unknown fields (typo protection) and check types; the engine checks every
value against its configured limits and answers with a ValidationError (422) that says
what to fix, so the limits live in one place (``LimitsConfig``).
"""

import json
from typing import Annotated, Any

from fastapi import Body, Query
from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
)

from ucma.server.auth import scope_for
from ucma.types import ApiKey
from ucma.validation import MAX_STORE_OFFSET

__all__ = [
    "MAX_ID_CHARS",
    "MAX_OFFSET",
    "AgentQuery",
    "CascadeDepth",
    "Count",
    "ErrorBody",
    "FactId",
    "Flag",
    "Fraction",
    "IDENTIFIER_PATTERN",
    "Identifier",
    "JsonObject",
    "Moment",
    "Number",
    "Offset",
    "StoreOffset",
    "OptionalScope",
    "Page",
    "ResultLimit",
    "ScopedBody",
    "TemporalLevel",
    "Text",
    "TextQuery",
    "UserQuery",
    "Weight",
    "page_of",
    "scope_of",
]

#: Longest user_id, agent_id, session_id, memory id or source accepted.
MAX_ID_CHARS = 256
#: Deepest page offset of the lists the engine bounds at 10,000 results (offset + limit
#: + 1 must fit): beyond it, narrow the query instead of paging further.
MAX_OFFSET = 8_999


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


def _not_a_boolean(value: Any) -> Any:
    """JSON ``true`` / ``false`` are not numbers (Python would read them as 1 and 0)."""
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


#: A JSON number (never a boolean, never NaN or infinity).
Number = Annotated[float, AllowInfNan(False), BeforeValidator(_not_a_boolean)]
#: A JSON integer (never a boolean).
Count = Annotated[int, BeforeValidator(_not_a_boolean)]
#: A moment in epoch seconds, between the years 1 and 9999 (UTC), never a boolean.
Moment = Annotated[
    float,
    Field(ge=-62_135_596_800, le=253_402_300_799),
    BeforeValidator(_not_a_boolean),
]
#: A JSON boolean (never 0, 1 or a string).
Flag = Annotated[bool, Strict()]
# Bounds of optional numbers go before the check, so that the schema states them.
#: How many results a search returns (1 to 100), never a boolean.
ResultLimit = Annotated[int, Field(ge=1, le=100), BeforeValidator(_not_a_boolean)]
#: A number in [0, 1], never a boolean.
Fraction = Annotated[float, Field(ge=0.0, le=1.0), BeforeValidator(_not_a_boolean)]
#: The weight of a piece of evidence, in (0, 1], never a boolean.
Weight = Annotated[float, Field(gt=0.0, le=1.0), BeforeValidator(_not_a_boolean)]
#: A temporal level (seed 003 R1: 1 immediate to 4 identity), never a boolean.
TemporalLevel = Annotated[int, Field(ge=1, le=4), BeforeValidator(_not_a_boolean)]
#: How many cascade layers to search (0 to 10), never a boolean.
CascadeDepth = Annotated[int, Field(ge=0, le=10), BeforeValidator(_not_a_boolean)]

#: Characters ``str.strip`` removes; an identifier needs one character outside them.
_BLANK = r"\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: Not blank, no NUL (the engine refuses both).
IDENTIFIER_PATTERN = rf"^[^\x00]*[^\x00{_BLANK}][^\x00]*$"

Identifier = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_ID_CHARS, pattern=IDENTIFIER_PATTERN),
    AfterValidator(_encodable),
]
#: A fact's id, as facts and assert_fact return it.
FactId = Annotated[
    str,
    StringConstraints(min_length=6, max_length=MAX_ID_CHARS, pattern=r"^fact_[^\x00]*$"),
    AfterValidator(_encodable),
]
#: Free text given in a query string: not blank, no NUL, at most 1,000 characters. The
#: HTTP server refuses a request line and headers over 16 KiB before the app sees them
#: (h11's limit; ``max_header_bytes``), and percent-encoded a character takes up to 12
#: bytes: 1,000 always fit. Longer text goes in a request body.
TextQuery = Annotated[
    str,
    Query(min_length=1, max_length=1_000, pattern=IDENTIFIER_PATTERN),
    AfterValidator(_encodable),
]
Text = Annotated[
    str, StringConstraints(min_length=1, pattern=IDENTIFIER_PATTERN), AfterValidator(_encodable)
]
JsonObject = Annotated[dict[str, Any] | None, AfterValidator(_encodable_json)]

UserQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_ID_CHARS,
        pattern=IDENTIFIER_PATTERN,
        description="Whose memory; optional with an API key (which fixes it).",
    ),
]
AgentQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_ID_CHARS,
        pattern=IDENTIFIER_PATTERN,
        description='Agent of that user; "default".',
    ),
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


Offset = Annotated[
    int, Query(ge=0, le=MAX_OFFSET, description="Items to skip: the start of the page.")
]
StoreOffset = Annotated[
    int,
    Query(ge=0, le=MAX_STORE_OFFSET, description="Records to skip: the start of the page."),
]
"""The offset of a list paged in the store itself (memories, facts, procedures)."""


class ErrorDetail(BaseModel):
    code: str = Field(description='What went wrong, for programs: "not_found", ...')
    message: str = Field(description="What went wrong and how to fix it, for people.")
    kinds: list[str] | None = Field(
        default=None, description="Kinds of content refused (never the values)."
    )
    details: list[dict[str, Any]] | None = Field(
        default=None, description="Per-field validation errors (location, message, type)."
    )


class ErrorBody(BaseModel):
    """Every failure's body."""

    error: ErrorDetail


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
