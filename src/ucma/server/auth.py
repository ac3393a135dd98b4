"""Who may touch which scope: API keys sent as ``Authorization: Bearer <token>``.

Three modes, chosen when the app is built (``create_app(require_keys=...)``):

- **keys required** (``True``, what ``ucma serve`` uses on a non-loopback address): every
  ``/v1`` route except health, and ``/mcp``, needs a live key; a missing, unknown or
  revoked key gets 401.
- **local mode** (``False``, ``ucma serve --no-auth``, loopback only): a request without a
  key names its scope with ``user_id`` / ``agent_id``. A request that does send a key is
  still checked and held to it.
- **keys once one exists** (``None``, the default, and ``ucma serve`` on 127.0.0.1): local
  mode while the database holds no live key, keys required from the request after one is
  created, by this process or another (``ucma keys create`` while the service runs). The
  question is asked of the database on every request that brings no key: a count over the
  small key table, so there is no cache that could let an unkeyed request through after
  the first key exists. Revoking the last key returns the service to local mode.

A keyed request's scope comes from the key: its user, and its agent when the key has one
(otherwise the request's ``agent_id``, default "default"). A request that names another
user, or another agent than the key's, gets 404 ``not_found``: the same answer as for a
memory that does not exist, so a key cannot even learn whether another scope is in use.
Ids of other scopes are unreachable anyway: every engine read and write is scoped. Every
token is checked against the database on every request, so a revoked key fails at once.
"""

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from ucma.engine import AsyncMemory
from ucma.errors import AuthenticationError, NotFoundError, ScopeError
from ucma.server.errors import SCOPE_MESSAGE
from ucma.types import ApiKey

__all__ = [
    "Access",
    "Caller",
    "Engine",
    "OutOfScopeError",
    "authenticate",
    "bearer_token",
    "caller",
    "engine",
    "scope_for",
]


class OutOfScopeError(NotFoundError):
    """A keyed request named a scope its key is not bound to (answered like any 404)."""

    def __init__(self) -> None:
        super().__init__("scope", "")
        self.args = ("not found: nothing in this scope is visible to this API key",)


@dataclass(frozen=True, slots=True)
class Access:
    """The app's authentication mode and the engine that checks tokens.

    ``require_keys``: True always, False never, None while the database holds a live key.
    """

    engine: AsyncMemory
    require_keys: bool | None

    async def keys_required(self) -> bool:
        """Whether a request without a key is refused now (asked per request)."""
        if self.require_keys is not None:
            return self.require_keys
        return await self.engine.count_keys() > 0


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer`` header; AuthenticationError if malformed."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationError('the Authorization header must read "Bearer <API key>"')
    return token.strip()


async def authenticate(access: Access, authorization: str | None) -> ApiKey | None:
    """The caller's key, None in local mode without one; AuthenticationError otherwise."""
    token = bearer_token(authorization)
    if token is None:
        if await access.keys_required():
            raise AuthenticationError(
                "this service needs an API key: send the header Authorization: Bearer <key> "
                "(create one with: ucma keys create --user <user_id>)"
            )
        return None
    return await access.engine.authenticate(token)


async def caller(request: Request) -> ApiKey | None:
    """FastAPI dependency: the authenticated key of the request (None in local mode)."""
    access: Access = request.app.state.access
    return await authenticate(access, request.headers.get("authorization"))


Caller = Annotated[ApiKey | None, Depends(caller)]


def scope_for(key: ApiKey | None, user_id: str | None, agent_id: str | None) -> dict[str, str]:
    """The engine's ``user_id`` / ``agent_id`` keyword arguments for a request."""
    if key is None:
        if user_id is None:
            raise ScopeError(SCOPE_MESSAGE)
        scope = {"user_id": user_id}
        if agent_id is not None:
            scope["agent_id"] = agent_id
        return scope
    if user_id is not None and user_id != key.user_id:
        raise OutOfScopeError()
    if key.agent_id is not None:
        if agent_id is not None and agent_id != key.agent_id:
            raise OutOfScopeError()
        return {"user_id": key.user_id, "agent_id": key.agent_id}
    scope = {"user_id": key.user_id}
    if agent_id is not None:
        scope["agent_id"] = agent_id
    return scope


def engine(request: Request) -> AsyncMemory:
    """FastAPI dependency: the app's engine."""
    access: Access = request.app.state.access
    return access.engine


Engine = Annotated[AsyncMemory, Depends(engine)]
