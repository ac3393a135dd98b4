"""Sleep consolidation and forgetting for the caller's scope (issue 4).

The gardener runs its jobs over every scope, so it is an administration command
(``ucma gardener run``, and the scheduler inside ``ucma serve``), not a route.
"""

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from ucma.server.auth import Caller, Engine
from ucma.server.schemas import Flag, OptionalScope, ScopedBody, scope_of

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["lifecycle"])


class ForgetRequest(ScopedBody):
    dry_run: Flag = Field(
        default=False,
        description="List what would be archived and purged, and why; change nothing.",
    )


@router.post("/sleep")
async def sleep(engine: Engine, key: Caller, body: OptionalScope = None) -> dict[str, Any]:
    """Run one sleep cycle for the scope: compress expired episodes, abstract facts from
    them, reinforce the graph, forget, clean up. Answers what each phase changed."""
    report = await engine.sleep(**scope_of(key, body))
    return report.to_dict()


@router.post("/forget")
async def forget(engine: Engine, key: Caller, body: ForgetRequest | None = None) -> dict[str, Any]:
    """Run the forgetting engine for the scope: archive what it forgets (with the reason),
    purge archives past the retention period; ``dry_run`` only lists them."""
    report = await engine.forget(dry_run=bool(body and body.dry_run), **scope_of(key, body))
    return report.to_dict()
