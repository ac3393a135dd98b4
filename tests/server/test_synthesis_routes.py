"""POST /v1/synthesize and POST /v1/interactions over the ASGI transport in local mode:
the synthesis with its caveats, one interaction learned in every paradigm, typed
errors that leave nothing written."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}


async def test_synthesis_and_post_interaction_over_rest(local: httpx.AsyncClient) -> None:
    for _ in range(5):
        learned = await local.post(
            "/v1/interactions",
            json={
                **A,
                "query": "Submit the order form",
                "response": "Submitted.",
                "success": True,
                "capability": "orders",
                "action": "submit the order form",
                "context": {"logged in": True},
                "observed_outcome": "confirmation page",
                "trajectory": ["fill the form", "press submit"],
                "preferences": ["I prefer express shipping."],
                "domain": "orders",
            },
        )
        assert learned.status_code == 201
    body = learned.json()
    assert body["transition"]["outcome"] == "confirmation page"
    assert body["competence"]["attempts"] == 5 and body["opinions"]
    assert "self.attempt_recorded" in body["events"] and body["strategy_id"]

    await local.post(
        "/v1/facts",
        json={**A, "subject": "submit the order form", "predicate": "leads to",
              "object": "error page"},
    )  # fmt: skip
    answer = await local.post(
        "/v1/synthesize",
        json={
            **A,
            "query": "What happens if I submit the order form?",
            "task": "submit the order form",
            "action": "submit the order form",
            "context": {"logged in": True},
        },
    )
    assert answer.status_code == 200
    found = answer.json()
    assert found["paradigms"] == ["declarative", "procedural", "predictive"]
    assert found["prediction"]["predicted"] == "confirmation page"
    assert any("error page" in c for c in found["caveats"])
    assert found["competence"]["capability"] == "orders"
    assert found["advice"]["decision"] in {"attempt", "attempt_with_caveat"}
    assert found["strategies"][0]["domain"] == "orders"
    shipping = await local.post(
        "/v1/synthesize", json={**A, "query": "Which shipping do I prefer for my orders?"}
    )
    assert [p["stance"] for p in shipping.json()["preferences"]] == ["express shipping"]

    other = await local.post("/v1/synthesize", json={"user_id": "bob", "query": "What happens?"})
    assert other.json()["preferences"] == [] and other.json()["facts"] == []


async def test_bad_interactions_are_refused_and_write_nothing(local: httpx.AsyncClient) -> None:
    before = (await local.get("/v1/events", params=A)).json()
    base = {**A, "query": "Book a table", "response": "Booked."}
    cases = [
        ({**base, "success": True, "failure_reason": "full"}, 422, "failed interaction only"),
        ({**base, "success": True, "progress_delta": 0.5}, 422, "needs the goal_id"),
        ({**base, "success": "yes"}, 422, None),
        ({**base, "success": True, "goal_id": "goal_nowhere"}, 404, None),
        ({**base, "success": True, "strategy_id": "proc_nowhere"}, 404, None),
        ({**base, "success": True, "context": {"a": 1, "A": 2}}, 422, "twice"),
    ]
    for body, status, words in cases:
        response = await local.post("/v1/interactions", json=body)
        assert response.status_code == status, body
        if words:
            assert words in error_of(response)["message"]
    assert (await local.get("/v1/events", params=A)).json() == before
    empty = await local.post("/v1/synthesize", json={**A, "query": " "})
    assert empty.status_code == 422
