"""The /v1 routes of the world model and the self-model over the ASGI transport in
local mode: transitions observed and listed, simulate, competences recorded and
listed, introspect, should-attempt and learning priorities."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}


async def test_world_model_over_rest(local: httpx.AsyncClient) -> None:
    for outcome in ("confirmation page", "confirmation page", "error page"):
        stored = await local.post(
            "/v1/world/transitions",
            json={**A, "action": "submit the form", "outcome": outcome, "context": {"cart": 2}},
        )
        assert stored.status_code == 201
    assert stored.json()["errors"] == 2 and stored.json()["reliability"] == pytest.approx(0.4)
    listed = await local.get("/v1/world/transitions", params={**A, "action": "submit the form"})
    assert [t["outcome"] for t in listed.json()["items"]] == ["confirmation page", "error page"]
    predicted = await local.post(
        "/v1/world/simulate", json={**A, "action": "submit the form", "context": {"cart": "2"}}
    )
    body = predicted.json()
    assert body["predicted"] == "confirmation page"
    assert body["confidence"] == pytest.approx(3 / 6) and body["exact_support"] == 3
    assert [o["outcome"] for o in body["outcomes"]] == ["confirmation page", "error page"]
    other = await local.post(
        "/v1/world/simulate", json={"user_id": "bob", "action": "submit the form"}
    )
    assert other.json()["predicted"] is None
    bad = await local.post(
        "/v1/world/transitions", json={**A, "action": "x", "outcome": "y", "context": {"k": []}}
    )
    assert bad.status_code == 422


async def test_self_model_over_rest(local: httpx.AsyncClient) -> None:
    for success in (True, True, False):
        body = {**A, "capability": "sql", "success": success, "predicted": 0.9}
        if not success:
            body["failure_reason"] = "recursive queries"
        recorded = await local.post("/v1/self/competences", json=body)
        assert recorded.status_code == 201
    assert recorded.json()["attempts"] == 3 and recorded.json()["successes"] == 2
    listed = (await local.get("/v1/self/competences", params=A)).json()
    assert [c["capability"] for c in listed["items"]] == ["sql"]
    [sql] = listed["items"]
    # What the counts say, as introspect says it: Beta(1, 1) after 2 of 3, predictions of
    # 0.9 against a rate of 2/3, Brier ((0.1^2) * 2 + 0.9^2) / 3.
    assert sql["accuracy"] == pytest.approx(0.6) and sql["low"] < 0.6 < sql["high"]
    assert sql["actual_rate"] == pytest.approx(2 / 3) and sql["mean_predicted"] == 0.9
    assert sql["calibration_error"] == pytest.approx(0.9 - 2 / 3)
    assert sql["brier"] == pytest.approx((0.01 * 2 + 0.81) / 3) and sql["is_weak"] is False
    assert recorded.json()["accuracy"] == sql["accuracy"] and sql["updated_at_iso"]
    answer = (
        await local.get("/v1/self/introspect", params={**A, "task": "Am I good at SQL queries?"})
    ).json()
    assert answer["capability"] == "sql" and answer["sample_size"] == 3
    assert answer["estimated_accuracy"] == pytest.approx(0.6)
    assert answer["known_failure_modes"][0]["mode"] == "recursive queries"
    advice = (
        await local.post(
            "/v1/self/should-attempt", json={**A, "task": "Write a recursive SQL query"}
        )
    ).json()
    assert advice["failure_modes_applied"] == ["recursive queries"]
    assert set(advice["inputs"]) == set(advice["weights"])
    assert advice["decision"] in {"attempt", "attempt_with_caveat", "ask_for_help", "decline"}
    priorities = (await local.get("/v1/self/learning-priorities", params=A)).json()
    assert priorities["items"] == []
    wrong = await local.post(
        "/v1/self/competences",
        json={**A, "capability": "sql", "success": True, "failure_reason": "x"},
    )
    assert wrong.status_code == 422 and error_of(wrong)["code"]
