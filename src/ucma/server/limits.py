"""Request body size limits as pure ASGI middleware (413 before the app reads too much)."""

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from ucma.server.errors import error_response

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_IMPORT_BYTES", "BodySizeLimit"]

#: Largest request body accepted (1 MiB); larger ones get 413.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Largest JSON Lines body accepted by ``POST /v1/import`` (1 GiB, streamed in chunks).
DEFAULT_MAX_IMPORT_BYTES = 1024 * 1024 * 1024

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


class BodySizeLimit:
    """Refuse request bodies larger than ``max_bytes`` (or a per-path limit) with 413.

    A declared Content-Length is checked before the app runs; a streamed body is counted as
    it is read, and the read fails with 413 as soon as it crosses the limit.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
        per_path: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.per_path = dict(per_path or {})

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.per_path.get(scope.get("path", ""), self.max_bytes)
        message = f"request body is larger than the limit of {limit} bytes"
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await error_response(413, "payload_too_large", message)(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> _Message:
            nonlocal received
            incoming = await receive()
            if incoming["type"] == "http.request":
                received += len(incoming.get("body", b""))
                if received > limit:
                    raise HTTPException(413, message)
            return incoming

        await self.app(scope, limited_receive, send)
