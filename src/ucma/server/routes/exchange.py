"""Export and import of one scope as JSON Lines, streamed both ways.

The server never reads or writes a path a client names: ``GET /v1/export`` streams the
scope's export in the response, and ``POST /v1/import`` reads the export from the request
body (``application/x-ndjson``) a chunk at a time, so neither side holds a whole scope in
memory. Import bodies have their own size limit (``ServiceConfig.max_import_bytes``).
"""

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from ucma.config import LimitsConfig
from ucma.engine import AsyncMemory
from ucma.errors import InputLimitError
from ucma.exchange_vault import transfer_cipher
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import AgentQuery, UserQuery
from ucma.validation import check_scope

__all__ = ["JSONL_TYPES", "MAX_LINE_BYTES", "router"]

router = APIRouter(prefix="/v1", tags=["exchange"])

JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")
#: Longest line accepted in an import body by default (a record's content, metadata and
#: vector fit well within it); the engine's ``LimitsConfig.max_import_line_bytes`` rules.
MAX_LINE_BYTES = LimitsConfig().max_import_line_bytes
#: The smallest export: a header and no records (an export names each record's fields).
_EXAMPLE = '{"type": "header", "format": "ucma-jsonl", "version": 1}\n'


class ImportResponse(BaseModel):
    lines: int
    records: int
    imported: int
    skipped: int
    edges: int
    vault_entries: int


#: A Fernet key in a header (never in the URL, which logs keep): with it an export carries
#: the originals of the scope's tokens sealed with it, and an import opens them. Declared
#: here rather than as a parameter: an optional header would be documented as "string or
#: null", and a client generated from the schema would send the word "null".
TRANSFER_KEY_HEADER = "x-ucma-transfer-key"
_TRANSFER_PARAMETER = {
    "name": TRANSFER_KEY_HEADER,
    "in": "header",
    "required": False,
    "description": (
        "A Fernet key (urlsafe base64 of 32 random bytes). Export: the scope's vault "
        "entries (originals of its tokens) follow the header, each encrypted with this "
        "key; without it an export holds tokens only. Import: opens those entries, "
        "which are re-encrypted with this store's vault key (docs/privacy.md)."
    ),
    # No "$": generators read it as Python's, which lets a newline end the string.
    "schema": {
        "type": "string",
        "minLength": 44,
        "maxLength": 44,
        "pattern": "^[A-Za-z0-9_-]{43}=",
    },
}


def _transfer_key(request: Request) -> str | None:
    """The request's transfer key, checked (422 when it is not a Fernet key)."""
    key = request.headers.get(TRANSFER_KEY_HEADER)
    if key is not None:
        transfer_cipher(key)
    return key


async def _export(
    engine: AsyncMemory, scope: dict[str, str], transfer_key: str | None
) -> AsyncIterator[bytes]:
    async for line in engine.export_lines(transfer_key=transfer_key, **scope):
        yield line.encode("utf-8")


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}}}},
    openapi_extra={"parameters": [_TRANSFER_PARAMETER]},
)
async def export(
    request: Request,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> StreamingResponse:
    """The scope's memories, vectors, retention and edges as JSON Lines (streamed); with
    an ``x-ucma-transfer-key`` header, the vault's originals too, sealed with that key
    (422 when the header is not a Fernet key)."""
    scope = scope_for(key, user_id, agent_id)
    check_scope(scope["user_id"], scope.get("agent_id"))  # refuse before the first byte
    transfer_key = _transfer_key(request)
    return StreamingResponse(
        _export(engine, scope, transfer_key),
        media_type="application/x-ndjson",
        headers={"content-disposition": 'attachment; filename="ucma-export.jsonl"'},
    )


async def _lines(request: Request, max_line_bytes: int) -> AsyncIterator[bytes]:
    """The request body split into lines, without reading it whole; a line growing past
    ``max_line_bytes`` is refused before the rest of it is read."""
    pending = b""
    async for chunk in request.stream():
        buffer = pending + chunk if pending else chunk
        start = 0  # lines are cut one at a time: a refused line stops the cutting
        while (end := buffer.find(b"\n", start)) != -1:
            yield buffer[start:end]
            start = end + 1
        pending = buffer[start:]
        if len(pending) > max_line_bytes:
            raise InputLimitError(
                f"an import line is longer than {max_line_bytes} bytes", "max_import_line_bytes"
            )
    if pending:
        yield pending


@router.post(
    "/import",
    openapi_extra={
        "parameters": [_TRANSFER_PARAMETER],
        "requestBody": {
            "required": True,
            "content": {
                media: {"schema": {"type": "string"}, "example": _EXAMPLE} for media in JSONL_TYPES
            },
        },
    },
)
async def import_(
    request: Request,
    engine: Engine,
    key: Caller,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> ImportResponse:
    """Load an export (the body, JSON Lines) into the scope, keeping ids.

    Records already present are skipped, so re-sending an interrupted import resumes it;
    vectors from another embedding model are recomputed. A body that is not an export
    (no header first, or a line that is not a record of one) is a 422 whose message
    begins "request body" and names the line (the chunks before it stay written). A
    line nested deeper, longer, or more lines or blank lines than ``LimitsConfig``
    allows is a 413 ``input_limit_exceeded``, refused before it is parsed. An export
    carrying vault entries needs the ``x-ucma-transfer-key`` it was made with (422
    otherwise, before anything is written); a header that is not a Fernet key is a 422.
    """
    scope = scope_for(key, user_id, agent_id)
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in JSONL_TYPES:
        raise HTTPException(
            415,
            "send the export as JSON Lines with content-type: application/x-ndjson "
            f"(got {media_type or 'none'!r})",
        )
    transfer_key = _transfer_key(request)
    lines = _lines(request, engine.config.limits.max_import_line_bytes)
    report = await engine.import_lines(
        lines, source="request body", transfer_key=transfer_key, **scope
    )
    fields: dict[str, Any] = {name: getattr(report, name) for name in ImportResponse.model_fields}
    return ImportResponse(**fields)
