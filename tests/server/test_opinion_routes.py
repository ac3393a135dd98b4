"""The /v1 routes of banks and opinions over the ASGI transport in local mode: retain,
the store-step fields of observe, bank filters, opinions found, evolved and listed."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}


async def test_opinions_over_rest(local: httpx.AsyncClient) -> None:
    stored = await local.post(
        "/v1/observe", json={**A, "content": "Alice prefers dark mode in every editor."}
    )
    assert stored.status_code == 201
    switched = await local.post(
        "/v1/observe", json={**A, "content": "Alice switched to light mode."}
    )
    found = await local.get("/v1/opinions/find", params={**A, "topic": "Alice editor theme"})
    opinion = found.json()["opinion"]
    assert opinion["stance"] == "light mode" and opinion["status"] == "current"
    assert opinion["memory_id"] == switched.json()["id"] and opinion["created_at_iso"]
    history = (await local.get(f"/v1/opinions/{opinion['id']}/history", params=A)).json()
    assert [o["status"] for o in history["items"]] == ["replaced", "current"]
    listed = (await local.get("/v1/opinions", params={**A, "include_replaced": "true"})).json()
    assert len(listed["items"]) == 2 and listed["next_offset"] is None
    up = await local.post(
        f"/v1/opinions/{opinion['id']}/reinforce", json={**A, "evidence": "Chose it again."}
    )
    assert up.json()["confidence"] == pytest.approx(0.7)
    down = await local.post(
        f"/v1/opinions/{opinion['id']}/weaken", json={**A, "weight": 1.0, "stance": "dark mode"}
    )
    assert down.json()["id"] == opinion["id"] and down.json()["confidence"] == pytest.approx(0.35)
    below = (await local.get("/v1/opinions/below", params={**A, "confidence": 0.4})).json()
    assert [o["id"] for o in below["items"]] == [opinion["id"]]
    got = (await local.get(f"/v1/opinions/{opinion['id']}", params=A)).json()
    assert [e["supports"] for e in got["evidence"]] == [True, True, False]

    missing = await local.get("/v1/opinions/op_missing", params=A)
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    elsewhere = await local.get(f"/v1/opinions/{opinion['id']}", params={"user_id": "bob"})
    assert elsewhere.status_code == 404
    zero = await local.post(f"/v1/opinions/{opinion['id']}/weaken", json={**A, "weight": 0})
    assert zero.status_code == 422
    none = await local.get("/v1/opinions/find", params={"user_id": "bob", "topic": "theme"})
    assert none.json() == {"opinion": None}


async def test_retain_banks_and_store_step_over_rest(local: httpx.AsyncClient) -> None:
    retained = await local.post(
        "/v1/retain",
        json={
            **A,
            "text": "The office Wi-Fi password rotates every Monday.",
            "bank": "world",
            "confidence": 0.8,
            "entities": ["office network"],
        },
    )
    assert retained.status_code == 201 and retained.json()["stored"]
    steered = await local.post(
        "/v1/observe",
        json={
            **A,
            "content": "I reset the office Wi-Fi router after lunch.",
            "temporal_level": 2,
            "salience": 0.5,
            "bank": "experience",
            "content_type": "event",
        },
    )
    assert steered.json()["temporal_level"] == 2
    hits = (
        await local.post("/v1/remember", json={**A, "query": "office Wi-Fi", "banks": ["world"]})
    ).json()["results"]
    assert [h["id"] for h in hits] == [retained.json()["id"]] and hits[0]["bank"] == "world"
    recalled = (
        await local.post("/v1/recall", json={**A, "query": "Wi-Fi", "banks": ["experience"]})
    ).json()["results"]
    assert [h["id"] for h in recalled] == [steered.json()["id"]]
    record = (await local.get(f"/v1/memories/{steered.json()['id']}", params=A)).json()
    assert (record["bank"], record["base_salience"]) == ("experience", 0.5)
    added = await local.post(
        "/v1/memories", json={**A, "messages": "Launch is on 3 May.", "temporal_level": 3}
    )
    assert added.json()["results"][0]["temporal_level"] == 3
    wrong = await local.post(
        "/v1/retain", json={**A, "text": "Tea.", "bank": "world", "topic": "drinks"}
    )
    assert (
        wrong.status_code == 422 and "topic is for the opinion bank" in error_of(wrong)["message"]
    )
    bad = await local.post("/v1/observe", json={**A, "content": "x y z", "temporal_level": 7})
    assert bad.status_code == 422
