"""What one request may cost: stalled bodies, requests in progress, JSON depth, headers.

The limits are ASGI middleware (``ucma.server.limits.RequestLimits``): tested around a
small app that holds a request open until told to finish (so "in progress" is a fact the
test controls, not a race), around the real app, and over a real socket for the stalled
body, whose connection must close.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from tests.server.conftest import BASE_URL, error_of

from ucma.errors import ConfigError
from ucma.server import ServiceConfig, create_app
from ucma.server.limits import RequestLimits
from ucma.server.protocol import header_deadline_protocol
from ucma.server.trim import malloc_trim

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


class HeldApp:
    """An ASGI app whose requests stay in progress until ``release`` is set."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.bodies.append(message.get("body", b""))
        self.entered.set()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)


async def test_a_request_beyond_the_concurrency_limit_gets_503_with_retry_after() -> None:
    held = HeldApp()
    limits = ServiceConfig(max_concurrent_requests=1, retry_after_seconds=3)
    async with _client(RequestLimits(held, limits, max_json_depth=64)) as client:
        first = asyncio.create_task(client.post("/v1/observe", content=b"{}"))
        await held.entered.wait()
        refused = await client.post("/v1/observe", content=b"{}")
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "3"
        assert error_of(refused)["code"] == "overloaded"
        health = asyncio.create_task(client.get("/v1/health"))  # never counted
        held.release.set()
        assert (await first).status_code == 200
        assert (await health).status_code == 200
        assert (await client.post("/v1/observe", content=b"{}")).status_code == 200


async def test_a_body_that_stalls_gets_408_and_the_app_never_runs() -> None:
    held = HeldApp()
    held.release.set()
    stalled = asyncio.Event()  # never set: the client sends one chunk, then nothing

    async def receive() -> dict[str, Any]:
        if not stalled.is_set():
            stalled.set()
            return {"type": "http.request", "body": b'{"content": "he', "more_body": True}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    limits = ServiceConfig(body_idle_timeout=0.05)
    scope = {"type": "http", "method": "POST", "path": "/v1/observe", "headers": []}
    await RequestLimits(held, limits, max_json_depth=64)(scope, receive, send)
    start = sent[0]
    assert start["status"] == 408
    assert (b"connection", b"close") in start["headers"]
    assert json.loads(sent[1]["body"])["error"]["code"] == "request_timeout"
    assert held.bodies == []


async def test_the_app_reads_the_body_the_limits_read_first() -> None:
    held = HeldApp()
    held.release.set()
    async with _client(RequestLimits(held, ServiceConfig(), max_json_depth=64)) as client:
        response = await client.post("/v1/observe", json={"content": "x" * 5000})
    assert response.status_code == 200
    assert json.loads(held.bodies[0]) == {"content": "x" * 5000}


@pytest.mark.parametrize("depth", [65, 1_000, 30_000])
async def test_deeply_nested_json_is_refused_before_it_is_parsed(
    local: httpx.AsyncClient, depth: int
) -> None:
    body = b'{"user_id": "alice", "content": ' + b"[" * depth + b"]" * depth + b"}"
    response = await local.post(
        "/v1/observe", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "input_limit_exceeded"
    assert f"nests {depth + 1} levels" in error["message"]


async def test_nesting_inside_strings_is_not_counted(local: httpx.AsyncClient) -> None:
    content = "brackets in prose: " + "[" * 200 + " are only text"
    response = await local.post("/v1/observe", json={"user_id": "alice", "content": content})
    assert response.status_code == 201


async def test_oversized_headers_get_431(local: httpx.AsyncClient) -> None:
    response = await local.get("/v1/stats", headers={"x-padding": "a" * 20_000})
    assert response.status_code == 431
    assert error_of(response)["code"] == "headers_too_large"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_body_bytes": 10},
        {"body_timeout": 0},
        {"body_idle_timeout": float("nan")},
        {"max_concurrent_requests": 0},
        {"retry_after_seconds": 0},
    ],
)
def test_invalid_limits_raise_config_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ServiceConfig(**kwargs)


def test_a_stalled_body_on_a_real_socket_gets_408_and_the_connection_closes(
    tmp_path: Path, live_server: Callable[[object], AbstractContextManager[str]]
) -> None:
    limits = ServiceConfig(body_timeout=2.0, body_idle_timeout=0.5)
    app = create_app(home=tmp_path, require_keys=False, mcp=False, maintenance=False, limits=limits)
    with live_server(app) as url:
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=60) as sock:
            sock.sendall(
                b"POST /v1/observe HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b'content-length: 200\r\n\r\n{"user_id": "al'
            )
            received = b""
            while chunk := sock.recv(65536):  # until the server closes the connection
                received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "request_timeout"


def test_headers_that_stall_get_408_and_the_connection_closes(
    tmp_path: Path, live_server: Callable[..., AbstractContextManager[str]]
) -> None:
    app = create_app(home=tmp_path, require_keys=False, mcp=False, maintenance=False)
    with live_server(app, http=header_deadline_protocol(0.5)) as url:
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=60) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n")  # kept alive after
            sock.sendall(b"POST /v1/observe HTTP/1.1\r\nhost: x\r\nx-slow: ")
            received = b""
            while chunk := sock.recv(65536):  # until the server closes the connection
                received += chunk
    first, _, second = received.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 200")
    head, _, body = second[second.index(b"HTTP/1.1") :].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["error"]["code"] == "request_timeout"


async def test_freed_memory_is_trimmed_when_the_last_request_ends() -> None:
    if malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (not glibc)")
    held = HeldApp()
    guard = RequestLimits(held, ServiceConfig(), max_json_depth=64)
    assert guard.idle_trim is not None
    async with _client(guard) as client:
        first = asyncio.create_task(client.post("/v1/observe", content=b"{}"))
        await held.entered.wait()
        held.entered.clear()
        second = asyncio.create_task(client.post("/v1/observe", content=b"{}"))
        await held.entered.wait()
        assert guard.in_flight == 2
        held.release.set()
        await asyncio.gather(first, second)
    assert guard.in_flight == 0
    assert guard.idle_trim.trims == 1  # only the request that left the service idle


def test_trimming_can_be_turned_off() -> None:
    guard = RequestLimits(HeldApp(), ServiceConfig(trim_memory_when_idle=False), 64)
    assert guard.idle_trim is None


_MMAPPED_AFTER_A_LARGER_FREE = """
import ctypes, sys
from ucma.server.trim import limit_arenas

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
if sys.argv[1] == "limited":
    assert limit_arenas()
big = bytearray(8 * 1024 * 1024)  # freed below: glibc's own threshold rises past 8 MiB
del big
before = libc.mallinfo2().hblks
buffer = bytearray(1024 * 1024)
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.parametrize(("mode", "mapped"), [("limited", "1"), ("default", "0")])
def test_with_limited_arenas_a_large_buffer_is_a_mapping_of_its_own(mode: str, mapped: str) -> None:
    if malloc_trim() is None:
        pytest.skip("this C library is not glibc")
    out = subprocess.run(
        [sys.executable, "-c", _MMAPPED_AFTER_A_LARGER_FREE, mode],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ).stdout
    assert out.strip() == mapped
