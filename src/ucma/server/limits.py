"""What one request may cost the service, enforced before the app parses anything.

``RequestLimits`` is pure ASGI middleware in front of every route:

====================================  ======  ===========================================
a request that ...                    status  code
====================================  ======  ===========================================
has headers larger than the limit     431     ``headers_too_large``
arrives while the service is full     503     ``overloaded``, with ``Retry-After``
has a body larger than the limit      413     ``payload_too_large``
has a JSON body nested too deep       413     ``input_limit_exceeded``
stalls while sending its body         408     ``request_timeout``; the connection closes
====================================  ======  ===========================================

An ordinary body (at most ``max_body_bytes``) is read whole here, within
``body_timeout`` and with no pause longer than ``body_idle_timeout``, and its JSON nesting
is counted without parsing (``ucma.validation.json_depth``) before the route's parser
sees it: a client that sends a few bytes and stalls gets 408 and its connection closed,
instead of holding a worker. An import body (``/v1/import``) is streamed to the route a
chunk at a time, so only the pause between chunks is bounded; its lines are bounded by the
engine's ``LimitsConfig``. ``max_concurrent_requests`` bounds the requests in progress at
once, counted from when the body is whole (an import from its first chunk), so clients
that send slowly do not take the places of those that have sent; one more is answered
503 at once, never queued (``/v1/health`` is not counted, so a liveness probe still
answers under load). When the last request in progress ends, freed memory is given back
to the operating system (``ucma.server.trim``; ``trim_memory_when_idle``).

Headers are read by the HTTP server before any of this runs; ``ucma serve`` passes
``max_header_bytes`` to it as well (uvicorn's ``h11_max_incomplete_event_size``) and
bounds the time to send them (``ucma.server.protocol``).
"""

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from starlette.exceptions import HTTPException

from ucma.config import ServiceConfig
from ucma.server.errors import error_response
from ucma.server.trim import IdleTrim
from ucma.validation import json_depth

__all__ = ["IMPORT_PATH", "RequestLimits"]

#: The one route whose body is streamed (JSON Lines) rather than read whole.
IMPORT_PATH = "/v1/import"
_UNCOUNTED = frozenset({"/v1/health"})

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


class _Stalled(Exception):
    """The client paused too long while sending a body."""


class RequestLimits:
    """Enforce ``ServiceConfig`` (and the engine's JSON depth) on every HTTP request."""

    def __init__(self, app: ASGIApp, limits: ServiceConfig, max_json_depth: int) -> None:
        self.app = app
        self.limits = limits
        self.max_json_depth = max_json_depth
        self.in_flight = 0
        self.idle_trim = IdleTrim() if limits.trim_memory_when_idle else None

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        headers = scope.get("headers") or ()
        if sum(len(name) + len(value) for name, value in headers) > limits.max_header_bytes:
            message = f"request headers are over the limit of {limits.max_header_bytes} bytes"
            await _refuse(431, "headers_too_large", message, scope, receive, send)
            return
        path = scope.get("path", "")
        if path in _UNCOUNTED:
            await self.app(scope, receive, send)
            return
        await self._limited(scope, receive, send, path, dict(headers))

    async def _counted(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """Run the app as one of the requests in progress, or answer 503 if it is full."""
        limits = self.limits
        if self.in_flight >= limits.max_concurrent_requests:
            response = error_response(
                503,
                "overloaded",
                f"the service is at its limit of {limits.max_concurrent_requests} requests "
                f"in progress; retry after {limits.retry_after_seconds} s",
            )
            response.headers["retry-after"] = str(limits.retry_after_seconds)
            await response(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            if self.idle_trim is not None:
                await self.idle_trim.request_done(self.in_flight)

    async def _limited(
        self,
        scope: _Scope,
        receive: _Receive,
        send: _Send,
        path: str,
        headers: dict[bytes, bytes],
    ) -> None:
        limit = self.limits.max_import_bytes if path == IMPORT_PATH else self.limits.max_body_bytes
        too_large = f"request body is larger than the limit of {limit} bytes"
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(413, "payload_too_large", too_large, scope, receive, send, close=True)
            return
        if path == IMPORT_PATH:
            await self._counted(scope, self._streamed(receive, limit, too_large), send)
            return
        try:
            with anyio.fail_after(self.limits.body_timeout):
                body, complete = await self._read_body(receive, limit)
        except (TimeoutError, _Stalled):
            message = (
                f"the request body did not arrive within {self.limits.body_timeout:g} s "
                f"(or paused over {self.limits.body_idle_timeout:g} s); send it without stalling"
            )
            await _refuse(408, "request_timeout", message, scope, receive, send, close=True)
            return
        if not complete:
            return  # the client went away: nobody to answer
        if body is None:
            await _refuse(413, "payload_too_large", too_large, scope, receive, send, close=True)
            return
        if _is_json(headers) and (body.count(b"[") + body.count(b"{")) > self.max_json_depth:
            depth = json_depth(body.decode("utf-8", "replace"))
            if depth > self.max_json_depth:
                message = (
                    f"the request body nests {depth} levels deep; the limit is "
                    f"{self.max_json_depth} (LimitsConfig.max_json_depth)"
                )
                await _refuse(413, "input_limit_exceeded", message, scope, receive, send)
                return
        await self._counted(scope, _replay(body, receive), send)

    async def _read_body(self, receive: _Receive, limit: int) -> tuple[bytes | None, bool]:
        """(body, True) once it is whole; (None, True) past ``limit`` (the rest unread);
        (b"", False) when the client disconnected. Raises _Stalled on a long pause."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self._next(receive)
            if message["type"] != "http.request":
                return b"", False
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None, True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True

    async def _next(self, receive: _Receive) -> _Message:
        with anyio.move_on_after(self.limits.body_idle_timeout) as waited:
            return await receive()
        assert waited.cancelled_caught
        raise _Stalled

    def _streamed(self, receive: _Receive, limit: int, too_large: str) -> _Receive:
        """``receive`` for a streamed body: 413 past ``limit``, 408 on a long pause."""
        received = 0

        async def limited_receive() -> _Message:
            nonlocal received
            try:
                message = await self._next(receive)
            except _Stalled:
                raise HTTPException(
                    408,
                    f"the request body paused over {self.limits.body_idle_timeout:g} s; "
                    "send it without stalling",
                    headers={"connection": "close"},
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, too_large, headers={"connection": "close"})
            return message

        return limited_receive


def _replay(body: bytes, receive: _Receive) -> _Receive:
    """A ``receive`` that gives the app the body already read, then the client's own."""
    pending: list[_Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> _Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed


def _is_json(headers: dict[bytes, bytes]) -> bool:
    media_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
    return media_type == b"application/json" or media_type.endswith(b"+json")


async def _refuse(
    status: int,
    code: str,
    message: str,
    scope: _Scope,
    receive: _Receive,
    send: _Send,
    *,
    close: bool = False,
) -> None:
    response = error_response(status, code, message)
    if close:
        response.headers["connection"] = "close"
    await response(scope, receive, send)
