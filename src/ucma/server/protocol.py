"""uvicorn's HTTP/1.1 protocol (h11) with a deadline for each request's headers.

uvicorn bounds the idle time between two requests of a kept-alive connection, but not the
time a client takes to send a request's headers: a client that sends half a request line
and stalls (slowloris) holds its connection open for as long as it likes, and enough of
them exhaust the process's sockets. ``header_deadline_protocol(seconds)`` is uvicorn's
own h11 protocol with a timer: armed when a connection opens and again after each
response, disarmed when a request's headers are complete. When it fires with no request
in progress, the client gets ``408`` with the JSON error envelope and the connection is
closed. ``ucma serve`` uses it (``--body-timeout``; the same number of seconds bounds the
headers), so the ASGI app (``ucma.server.limits``) bounds bodies and this bounds headers.
"""

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["header_deadline_protocol"]


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """A uvicorn ``http`` protocol class that answers 408 to headers slower than ``seconds``."""
    body = json.dumps(
        {
            "error": {
                "code": "request_timeout",
                "message": f"the request headers did not arrive within {seconds:g} s",
            }
        }
    ).encode()
    answer = (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )

    class HeaderDeadlineProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_progress():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and not self._in_progress():
                self._arm()

        def _in_progress(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self._in_progress() or self.transport.is_closing():
                return
            self.transport.write(answer)
            self.transport.close()

    return HeaderDeadlineProtocol
