"""Property-based fuzzing of the REST API from its own OpenAPI schema (schemathesis).

A few generated requests per operation, sent to the real app on a loopback uvicorn server
(local mode, real engine and embedder): whatever the input, the answer is never a server
error (5xx), and every error is the JSON envelope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings

from ucma.engine import AsyncMemory
from ucma.server import create_app

pytestmark = pytest.mark.integration


@schemathesis.serializer("application/x-ndjson", "application/jsonl", "application/json-lines")
def jsonl(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    """Import bodies are JSON Lines text; generated strings are sent as UTF-8."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


#: The schema is read from an app that is never started (an engine is opened lazily).
SCHEMA = schemathesis.openapi.from_dict(
    create_app(AsyncMemory(Path("unused-never-opened.db")), mcp=False).openapi()
)


@pytest.fixture(scope="module")
def base_url(
    tmp_path_factory: pytest.TempPathFactory,
    live_server: Callable[[object], AbstractContextManager[str]],
) -> Iterator[str]:
    app = create_app(home=tmp_path_factory.mktemp("fuzz"), mcp=False)
    with live_server(app) as url:
        yield url


@SCHEMA.parametrize()
@settings(
    max_examples=4,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_no_input_makes_the_server_fail(case: schemathesis.Case, base_url: str) -> None:
    response = case.call(base_url=base_url, timeout=30)
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["code"] and error["message"]
