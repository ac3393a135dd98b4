"""POST /v1/import bounds the work of one request: deep JSON, overlong lines and floods of
blank lines are refused with a 4xx naming the limit, before they are parsed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from ucma.engine import AsyncMemory
from ucma.server import ServiceConfig, create_app

from .conftest import BASE_URL, error_of

pytestmark = pytest.mark.anyio

HEADER = b'{"type": "header", "format": "ucma-jsonl", "version": 1}\n'
NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture
async def client(engine: AsyncMemory) -> AsyncIterator[httpx.AsyncClient]:
    """Local mode with a 16 MiB import limit, so the bodies below reach the reader."""
    limits = ServiceConfig(max_import_bytes=16 * 1024 * 1024)
    app = create_app(engine, limits=limits, mcp=False, maintenance=False)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


@pytest.mark.parametrize("levels", [1_000, 400_000])
async def test_deeply_nested_lines_are_a_413_not_a_server_error(
    client: httpx.AsyncClient, levels: int
) -> None:
    for line in (b"[" * levels + b"]" * levels, b'{"type": "memory", "record": ' + b"{" * levels):
        response = await client.post(
            "/v1/import", params={"user_id": "alice"}, content=HEADER + line, headers=NDJSON
        )
        assert response.status_code == 413, response.text
        error = error_of(response)
        assert error["code"] == "input_limit_exceeded"
        assert "request body:2: the line nests" in error["message"]
        assert "LimitsConfig.max_json_depth" in error["message"]


async def test_ten_megabytes_of_blank_lines_are_refused_early(client: httpx.AsyncClient) -> None:
    read = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal read
        yield HEADER
        for _ in range(160):  # 160 chunks of 64 KiB of newlines: 10 MiB
            read += 1
            yield b"\n" * 65_536

    response = await client.post(
        "/v1/import", params={"user_id": "alice"}, content=body(), headers=NDJSON
    )
    assert response.status_code == 413
    assert error_of(response)["code"] == "input_limit_exceeded"
    assert "blank lines" in error_of(response)["message"]
    assert read == 1  # refused within the first chunk: the rest was never read


async def test_an_overlong_line_is_refused_before_it_is_read_whole(
    client: httpx.AsyncClient, engine: AsyncMemory
) -> None:
    limit = engine.config.limits.max_import_line_bytes
    line = b'{"type": "memory", "record": {"content": "' + b"x" * (limit + 10) + b'"}}\n'
    response = await client.post(
        "/v1/import", params={"user_id": "alice"}, content=HEADER + line, headers=NDJSON
    )
    assert response.status_code == 413
    assert "LimitsConfig.max_import_line_bytes" in error_of(response)["message"]
