"""The /v1 goal routes over the ASGI transport in local mode: add, decompose, progress,
the active order, suspension by an observed statement and resumption, anticipate and
pursue, and their errors."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}
TRIP = "Book flights, reserve a hotel and buy a rail pass for the Japan trip"


async def test_goals_over_rest(local: httpx.AsyncClient) -> None:
    added = await local.post("/v1/goals", json={**A, "description": TRIP, "priority": 0.8})
    assert added.status_code == 201
    goal = added.json()
    assert goal["status"] == "active" and goal["created_at_iso"]
    parts = (await local.post(f"/v1/goals/{goal['id']}/decompose", json=A)).json()["items"]
    assert [p["description"] for p in parts][0] == "Book flights for the Japan trip"
    done = await local.post(f"/v1/goals/{parts[0]['id']}/progress", json={**A, "progress": 1})
    assert done.json()["status"] == "completed"
    parent = (await local.get(f"/v1/goals/{goal['id']}", params=A)).json()
    assert parent["progress"] == pytest.approx(1 / 3)
    both = await local.post(
        f"/v1/goals/{parts[1]['id']}/progress", json={**A, "progress": 0.5, "delta": 0.1}
    )
    assert both.status_code == 422 and "exactly one" in error_of(both)["message"]
    active = (await local.get("/v1/goals/active", params=A)).json()["items"]
    assert [g["id"] for g in active][0] == goal["id"]

    await local.post("/v1/observe", json={**A, "content": "The Japan trip got cancelled."})
    suspended = (await local.get("/v1/goals", params={**A, "status": "suspended"})).json()
    assert goal["id"] in [g["id"] for g in suspended["items"]]
    assert (await local.get("/v1/goals/active", params=A)).json()["items"] == []
    resumed = await local.post(f"/v1/goals/{goal['id']}/resume", json=A)
    assert resumed.json()["status"] == "active" and resumed.json()["accepted"]

    gaps = (await local.get(f"/v1/goals/{goal['id']}/anticipate", params=A)).json()
    assert {g["topic"] for g in gaps["knowledge_gaps"]} >= {"hotel", "rail pass"}
    plan = (await local.post(f"/v1/goals/{goal['id']}/pursue", json=A)).json()
    assert len(plan["steps"]) == 2 and plan["goal"]["blocking_on"] == gaps["gaps"]
    abandoned = await local.post(f"/v1/goals/{goal['id']}/abandon", json=A)
    assert abandoned.json()["status"] == "abandoned"

    missing = await local.get("/v1/goals/goal_missing", params=A)
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    elsewhere = await local.get(f"/v1/goals/{goal['id']}", params={"user_id": "bob"})
    assert elsewhere.status_code == 404
    bad = await local.post("/v1/goals", json={**A, "description": "x", "priority": 2})
    assert bad.status_code == 422
