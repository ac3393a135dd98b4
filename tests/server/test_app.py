"""The REST app end to end: the real FastAPI app over ASGI, a real SQLite file, the real engine.

ASGI test transports do not run the lifespan, so the engine is opened by a fixture and
passed to ``create_app`` (an engine passed in stays the caller's to open and close).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from ucma.config import LimitsConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import (
    ConfigError,
    EmbeddingError,
    NotFoundError,
    ProviderError,
    ScopeError,
    StorageError,
    UCMAError,
    ValidationError,
)
from ucma.server import ServiceConfig, create_app

pytestmark = pytest.mark.anyio

MAX_CONTENT = 2_000
CONFIG = UCMAConfig(limits=LimitsConfig(max_content_chars=MAX_CONTENT))
BASE_URL = "http://ucma.test"


@pytest.fixture
async def memory(tmp_path: Path, local_embedder: LocalEmbedder) -> AsyncIterator[AsyncMemory]:
    """An open engine without a default user: every request must bring its own scope."""
    async with AsyncMemory(tmp_path / "ucma.db", config=CONFIG, embedder=local_embedder) as mem:
        yield mem


@pytest.fixture
def app(memory: AsyncMemory) -> FastAPI:
    return create_app(memory, limits=ServiceConfig(max_body_bytes=64_000))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


def error_of(response: httpx.Response) -> dict[str, str]:
    """The error envelope every failure carries; fails the test if it is missing."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["code"], str)
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


async def test_health(client: httpx.AsyncClient, tmp_path: Path) -> None:
    response = await client.get("/v1/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["version"]
    assert body["embedder"]
    assert Path(body["database"]) == tmp_path / "ucma.db"


async def test_lifespan_opens_and_closes_its_own_engine(tmp_path: Path) -> None:
    home = tmp_path / "home"
    app = create_app(home=home)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            response = await client.get("/v1/stats", params={"user_id": "alice"})
            health = (await client.get("/v1/health")).json()
    assert response.status_code == 200, response.text
    assert Path(health["database"]) == home / "ucma.db"
    assert (home / "ucma.db").exists()


@pytest.mark.integration
async def test_observe_then_remember(client: httpx.AsyncClient) -> None:
    observed = await client.post(
        "/v1/observe",
        json={
            "content": "Alice's staging database moved to port 5433 after the upgrade.",
            "source": "user",
            "metadata": {"ticket": "OPS-12"},
            "user_id": "alice",
        },
    )
    assert observed.status_code == 201, observed.text
    observation = observed.json()
    assert observation["stored"] is True
    assert set(observation) == {"id", "stored", "importance", "temporal_level", "merged_into"}
    assert observation["merged_into"] is None

    recalled = await client.post(
        "/v1/remember",
        json={"query": "which port does the staging database use", "user_id": "alice"},
    )
    assert recalled.status_code == 200, recalled.text
    results = recalled.json()["results"]
    assert results[0]["id"] == observation["id"]
    assert "5433" in results[0]["content"]

    # Another user's scope sees nothing of Alice's.
    other = await client.post(
        "/v1/remember", json={"query": "staging database port", "user_id": "bob"}
    )
    assert other.status_code == 200
    assert other.json()["results"] == []

    stats = await client.get("/v1/stats", params={"user_id": "alice"})
    assert stats.status_code == 200
    assert json.dumps(stats.json())


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/observe", {"content": "hello"}),
        ("/v1/observe", {"content": "hello", "user_id": ""}),
        ("/v1/observe", {"content": "hello", "user_id": None}),
        ("/v1/remember", {"query": "hello"}),
    ],
)
async def test_missing_user_id_is_refused(
    client: httpx.AsyncClient, path: str, body: dict[str, object]
) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "missing_scope"
    assert "user_id" in error["message"]


async def test_stats_needs_a_user(client: httpx.AsyncClient) -> None:
    for params in ({}, {"user_id": ""}):
        response = await client.get("/v1/stats", params=params)
        assert response.status_code == 422
        assert error_of(response)["code"] == "missing_scope"


@pytest.mark.parametrize("content", ["", "   \n\t "])
async def test_empty_content_is_refused(client: httpx.AsyncClient, content: str) -> None:
    response = await client.post("/v1/observe", json={"content": content, "user_id": "alice"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "validation_error"
    assert "content" in error["message"]


async def test_oversized_content_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/observe", json={"content": "x" * (MAX_CONTENT + 1), "user_id": "alice"}
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "validation_error"
    assert str(MAX_CONTENT) in error["message"]
    assert "x" * 100 not in response.text  # the submitted value is not echoed back


@pytest.mark.parametrize(
    "raw", [b'{"content": "hi", "user_id": ', b"{'content': 'hi'}", b"not json at all"]
)
async def test_malformed_json_is_400(client: httpx.AsyncClient, raw: bytes) -> None:
    response = await client.post(
        "/v1/observe", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "malformed_json"


async def test_invalid_utf8_is_400(client: httpx.AsyncClient) -> None:
    raw = b'{"content": "caf\xe9 \xff\xfe", "user_id": "alice"}'
    response = await client.post(
        "/v1/observe", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_utf8"
    assert "UTF-8" in error["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
async def test_body_not_sent_as_json_is_415(client: httpx.AsyncClient, content_type: str) -> None:
    response = await client.post(
        "/v1/observe",
        content=b"content=hello&user_id=alice",
        headers={"content-type": content_type},
    )
    assert response.status_code == 415
    error = error_of(response)
    assert error["code"] == "unsupported_media_type"
    assert "application/json" in error["message"]


async def test_lone_surrogate_is_refused(client: httpx.AsyncClient) -> None:
    raw = b'{"content": "broken \\ud800 text", "user_id": "alice"}'
    response = await client.post(
        "/v1/observe", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "validation_error"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/observe", {"content": 123, "user_id": "alice"}),
        ("/v1/observe", {"content": "hi", "user_id": "alice", "timestamp": "noon"}),
        ("/v1/observe", {"content": "hi", "user_id": "alice", "metadata": ["a"]}),
        ("/v1/observe", {"content": "hi", "user_id": "alice", "colour": "red"}),
        ("/v1/observe", ["hi"]),
        ("/v1/remember", {"query": "hi", "user_id": "alice", "limit": "many"}),
        ("/v1/remember", {"query": "hi", "user_id": "alice", "limit": 0}),
        ("/v1/remember", {"query": "hi", "user_id": "alice", "time_range": [5, 1]}),
        ("/v1/remember", {"query": ["hi"], "user_id": "alice"}),
    ],
)
async def test_wrong_types_are_422(client: httpx.AsyncClient, path: str, body: object) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["code"] == "validation_error"


async def test_oversized_body_is_413(client: httpx.AsyncClient) -> None:
    body = json.dumps({"content": "y" * 100_000, "user_id": "alice"}).encode()
    response = await client.post(
        "/v1/observe", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


async def test_oversized_streamed_body_is_413(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"user_id": "alice", "content": "'
        for _ in range(20):
            yield b"z" * 8_192
        yield b'"}'

    response = await client.post(
        "/v1/observe", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


async def test_unknown_route_is_json_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/nothing-here")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ValidationError("content must not be empty"), 422),
        (ScopeError("user_id is required"), 422),
        (ConfigError("bad provider string"), 400),
        (NotFoundError("episode", "ep_123"), 404),
        (EmbeddingError("model failed"), 503),
        (ProviderError("LLM timed out"), 502),
        (StorageError("disk I/O error"), 500),
        (UCMAError("something"), 500),
    ],
)
async def test_engine_errors_map_to_json(
    app: FastAPI, client: httpx.AsyncClient, error: UCMAError, status: int
) -> None:
    async def fail() -> None:
        raise error

    app.add_api_route("/v1/fail", fail)
    response = await client.get("/v1/fail")
    assert response.status_code == status
    body = error_of(response)
    assert body == {"code": error.code, "message": str(error)}


async def test_root_page_is_the_inspector_shell(client: httpx.AsyncClient) -> None:
    page = await client.get("/", params={"user_id": "<alice>"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert '<script type="module" src="/inspector/main.js">' in page.text
    assert "/docs" in page.text and "alice" not in page.text
    script = await client.get("/inspector/main.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert (await client.get("/inspector/views/memory.js")).status_code == 200
    assert (await client.get("/inspector/../inspector.py")).status_code == 404


async def test_openapi_documents_the_routes(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert {"/v1/health", "/v1/observe", "/v1/remember", "/v1/stats"} <= set(schema["paths"])
    docs = await client.get("/docs")
    assert docs.status_code == 200
