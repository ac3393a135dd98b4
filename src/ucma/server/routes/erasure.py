"""Erasure and backup: ``POST /v1/erase`` forgets a person in the caller's scope,
``POST /v1/erase/scope`` the whole scope; ``GET /v1/backup`` streams an online backup of
the whole store, to the operator only.

Erasure is for good: the records go, the database's files are scrubbed, and the answer
counts what went per kind (never the values). A key erases only in its own scope, like
every other write; what another scope holds about the same person is untouched.

A backup holds every scope, so it is not a tenant's to take: with API keys in use the
route answers 404 to every key, as for an unknown route; in local mode (no key) it
streams the backup file. ``ucma backup`` is the operator's command either way.
"""

import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from starlette.background import BackgroundTask

from ucma.errors import NotFoundError
from ucma.privacy.erasure import MAX_IDENTIFIERS
from ucma.server.auth import Caller, Engine, scope_for
from ucma.server.schemas import Identifier, ScopedBody

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["privacy"])


def _a_boolean(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError("must be true")
    return value


class ErasePersonRequest(ScopedBody):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "user_id": "alice",
                    "identifiers": ["Greta Lindqvist", "greta@example.org", "+46 70 123 45 67"],
                }
            ]
        },
    )

    identifiers: list[Identifier] = Field(
        min_length=1,
        max_length=MAX_IDENTIFIERS,
        description="Every identifier of the person: names, emails, phone numbers, "
        "customer numbers ... Matched case-insensitively on word boundaries, numbers in "
        "any grouping, tokens of the content guard through their originals.",
    )


class EraseScopeRequest(ScopedBody):
    confirm: Annotated[Literal[True], BeforeValidator(_a_boolean)] = Field(
        description="Must be true: every memory, fact, decision and event of the scope "
        "is erased for good."
    )


class ErasureResponse(BaseModel):
    target: str = Field(description='"person" or "scope".')
    counts: dict[str, int] = Field(
        description="Records erased per kind: episodic, semantic, procedural, learning, "
        "vault_entries, conflicts, decisions, events_redacted, ..."
    )
    total: int
    checkpointed: bool = Field(description="The write-ahead log was emptied and truncated.")
    vacuumed: bool = Field(description="The database file was rewritten without free pages.")


@router.post("/erase")
async def erase_person(body: ErasePersonRequest, engine: Engine, key: Caller) -> ErasureResponse:
    """Forget a person in the caller's scope: every memory, fact, lesson, procedure,
    decision, conflict, vault entry and event payload naming them is erased and the
    database's files are scrubbed. Others' memories stay.

    Each identifier needs at least two letters or digits, in any alphabet (422 otherwise:
    it is too short to name a person, it would match almost every text)."""
    report = await engine.forget_person(
        body.identifiers, **scope_for(key, body.user_id, body.agent_id)
    )
    return ErasureResponse(**report.to_dict())


@router.post("/erase/scope")
async def erase_scope(body: EraseScopeRequest, engine: Engine, key: Caller) -> ErasureResponse:
    """Forget the caller's whole scope (``confirm`` must be true). API keys stay."""
    report = await engine.forget_scope(**scope_for(key, body.user_id, body.agent_id))
    return ErasureResponse(**report.to_dict())


@router.get(
    "/backup",
    response_class=FileResponse,
    responses={
        200: {"content": {"application/vnd.sqlite3": {"schema": {"type": "string"}}}},
        404: {"description": "Not offered to API keys: backups are the operator's."},
    },
)
async def backup(engine: Engine, key: Caller, request: Request) -> Any:
    """An online backup of the whole store as one SQLite file, taken while writes go on
    (local mode only; with API keys use ``ucma backup``)."""
    if key is not None or request.app.state.access.require_keys:
        hidden = NotFoundError("route", "/v1/backup")
        hidden.args = ("not found: backups are the operator's (ucma backup)",)
        raise hidden
    folder = Path(tempfile.mkdtemp(prefix="ucma-backup-"))
    try:
        report = await engine.backup(folder / "ucma-backup.db")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return FileResponse(
        report.path,
        media_type="application/vnd.sqlite3",
        filename="ucma-backup.db",
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )
