"""The OpenAPI document says what the service requires in the mode it is in.

In local mode (no keys) a request without ``user_id`` is refused, so the document served
then makes ``user_id`` required, in the query and in every body; with keys the key fixes
the scope and ``user_id`` is optional. In the default mode (keys once one exists) the
document served follows the database.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.server.conftest import BASE_URL, KeyedClient, error_of

from ucma.engine import AsyncMemory
from ucma.server import create_app

pytestmark = pytest.mark.anyio


def scope_fields(document: dict[str, Any]) -> dict[str, bool]:
    """Where ``user_id`` appears (operation or component) -> whether it is required."""
    found: dict[str, bool] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "user_id":
                    found[f"{method.upper()} {path}"] = parameter["required"]
    for name, component in document["components"]["schemas"].items():
        if "user_id" in component.get("properties", {}):
            found[name] = "user_id" in component.get("required", [])
    return found


def nullable(schema: dict[str, Any]) -> bool:
    return {"type": "null"} in schema.get("anyOf", [])


async def test_local_mode_documents_user_id_as_required(local: httpx.AsyncClient) -> None:
    document = (await local.get("/openapi.json")).json()
    fields = scope_fields(document)
    assert len(fields) > 30 and all(fields.values()), fields
    observe = document["components"]["schemas"]["ObserveRequest"]["properties"]["user_id"]
    assert not nullable(observe)
    sleep = document["paths"]["/v1/sleep"]["post"]["requestBody"]
    assert sleep["required"] is True
    assert not nullable(sleep["content"]["application/json"]["schema"])
    # ... which is what the service does:
    refused = await local.post("/v1/sleep", json={})
    assert refused.status_code == 422 and error_of(refused)["code"] == "missing_scope"
    refused = await local.get("/v1/memories")
    assert refused.status_code == 422 and error_of(refused)["code"] == "missing_scope"


async def test_keyed_mode_documents_user_id_as_optional(keyed: KeyedClient) -> None:
    alice = await keyed("alice")
    document = (await alice.get("/openapi.json")).json()
    fields = scope_fields(document)
    assert fields and not any(fields.values()), fields
    assert (await alice.post("/v1/sleep")).status_code == 200


async def test_the_default_mode_serves_the_document_of_the_moment(engine: AsyncMemory) -> None:
    app = create_app(engine, mcp=False)  # keys required once one exists
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        before = scope_fields((await client.get("/openapi.json")).json())
        await engine.create_key("alice")
        after = scope_fields((await client.get("/openapi.json")).json())
    assert all(before.values())
    assert not any(after.values())
    assert before.keys() == after.keys()
