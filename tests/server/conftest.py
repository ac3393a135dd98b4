"""Fixtures of the service tests: the real app over an ASGI transport, real SQLite, real
embedder, in local mode and with API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from ucma.config import LimitsConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.server import ServiceConfig, create_app

BASE_URL = "http://ucma.test"
MAX_BODY = 64_000
MAX_IMPORT = 400_000
CONFIG = UCMAConfig(limits=LimitsConfig(max_content_chars=2_000))


def error_of(response: httpx.Response) -> dict[str, str]:
    """The error envelope every failure carries; fails the test if it is missing."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["code"], str)
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


@pytest.fixture
async def engine(tmp_path: Path, local_embedder: LocalEmbedder) -> AsyncIterator[AsyncMemory]:
    """An open engine without a default user: every request must bring its own scope."""
    async with AsyncMemory(tmp_path / "ucma.db", config=CONFIG, embedder=local_embedder) as mem:
        yield mem


def _app(engine: AsyncMemory, *, require_keys: bool) -> FastAPI:
    return create_app(
        engine,
        require_keys=require_keys,
        limits=ServiceConfig(max_body_bytes=MAX_BODY, max_import_bytes=MAX_IMPORT),
        mcp=False,
    )


@pytest.fixture
async def local(engine: AsyncMemory) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app in local mode (no keys)."""
    transport = httpx.ASGITransport(app=_app(engine, require_keys=False))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


KeyedClient = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def keyed(engine: AsyncMemory) -> AsyncIterator[KeyedClient]:
    """``await keyed("alice", agent=None)``: a client of the keys-required app holding a
    fresh key for that user; ``await keyed(None)`` is one without a key."""
    app = _app(engine, require_keys=True)
    clients: list[httpx.AsyncClient] = []

    async def make(user: str | None, agent: str | None = None) -> httpx.AsyncClient:
        headers = {}
        if user is not None:
            _, token = await engine.create_key(user, agent_id=agent)
            headers["authorization"] = f"Bearer {token}"
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE_URL, headers=headers
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
