"""The familiar calls over HTTP: add chat messages, search with filters, list with a
total, update with history, delete a run or a scope with confirmation; scoped by key."""

from __future__ import annotations

import httpx
import pytest
from tests.server.conftest import KeyedClient, error_of

pytestmark = pytest.mark.anyio

CHAT = [
    {"role": "user", "content": "I'm vegetarian and allergic to peanuts."},
    {"role": "assistant", "content": "Noted: vegetarian dishes without peanuts.", "name": "Ada"},
]


async def test_add_search_update_history_delete_all(local: httpx.AsyncClient) -> None:
    added = await local.post(
        "/v1/memories",
        json={"user_id": "alice", "messages": CHAT, "run_id": "onboarding",
              "metadata": {"topic": "food"}},
    )  # fmt: skip
    assert added.status_code == 201, added.text
    ids = [r["id"] for r in added.json()["results"]]
    assert len(ids) == 2
    first = (await local.get(f"/v1/memories/{ids[0]}", params={"user_id": "alice"})).json()
    assert (first["source"], first["session_id"]) == ("user", "onboarding")
    assert first["metadata"] == {"topic": "food", "run_id": "onboarding"}
    text = await local.post("/v1/memories", json={"user_id": "alice", "messages": "Standup 9:30."})
    assert text.status_code == 201

    found = await local.post(
        "/v1/memories/search",
        json={"user_id": "alice", "query": "food allergies", "filters": {"topic": "food"}},
    )
    assert found.status_code == 200, found.text
    assert {r["id"] for r in found.json()["results"]} == set(ids)
    none = await local.post(
        "/v1/memories/search",
        json={"user_id": "alice", "query": "food", "filters": {"topic": "travel"}},
    )
    assert none.json()["results"] == []
    # The schema states the engine's bound on limit (1 to 100), so a larger one is a 422
    # from the request's validation and the document says why.
    too_many = await local.post(
        "/v1/memories/search", json={"user_id": "alice", "query": "food", "limit": 101}
    )
    assert too_many.status_code == 422
    schema = (await local.get("/openapi.json")).json()["components"]["schemas"]
    assert {"type": "integer", "minimum": 1, "maximum": 100} in schema["SearchRequest"][
        "properties"
    ]["limit"]["anyOf"]

    listed = (await local.get("/v1/memories", params={"user_id": "alice", "limit": 1})).json()
    assert listed["limit"] == 1 and listed["next_offset"] == 1 and listed["total"] >= 3
    run = await local.get("/v1/memories", params={"user_id": "alice", "run_id": "onboarding"})
    assert (run.json()["total"], run.json()["next_offset"]) == (2, None)

    changed = await local.put(
        f"/v1/memories/{ids[0]}",
        json={"user_id": "alice", "text": "I'm vegan and allergic to peanuts."},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["content"] == "I'm vegan and allergic to peanuts."
    history = (
        await local.get(f"/v1/memories/{ids[0]}/history", params={"user_id": "alice"})
    ).json()["history"]
    assert [(h["event"], h["details"]["previous"], h["details"]["new"]) for h in history] == [
        ("updated", CHAT[0]["content"], "I'm vegan and allergic to peanuts.")
    ]
    assert history[0]["at_iso"].endswith("Z")

    refused = await local.delete("/v1/memories", params={"user_id": "alice"})
    assert refused.status_code == 422 and "confirm" in error_of(refused)["message"]
    gone = await local.delete(
        "/v1/memories", params={"user_id": "alice", "run_id": "onboarding", "confirm": "true"}
    )
    assert gone.json() == {"deleted": 2}
    everything = await local.delete("/v1/memories", params={"user_id": "alice", "confirm": True})
    assert everything.json()["deleted"] >= 1
    assert (await local.get("/v1/memories", params={"user_id": "alice"})).json()["total"] == 0


@pytest.mark.parametrize(
    "body",
    [
        {"user_id": "alice", "messages": []},
        {"user_id": "alice", "messages": [{"role": "user"}]},
        {"user_id": "alice", "messages": [{"role": "user", "content": "x", "extra": 1}]},
        {"user_id": "alice", "messages": 42},
        {"user_id": "alice", "messages": "x", "metadata": "not an object"},
    ],
)
async def test_add_refuses_malformed_bodies(local: httpx.AsyncClient, body: object) -> None:
    response = await local.post("/v1/memories", json=body)
    assert response.status_code == 422, response.text
    error_of(response)
    assert (await local.get("/v1/memories", params={"user_id": "alice"})).json()["total"] == 0


async def test_update_errors_are_typed(local: httpx.AsyncClient) -> None:
    missing = await local.put("/v1/memories/ep_nope", json={"user_id": "alice", "text": "x y"})
    assert missing.status_code == 404
    fact = (
        await local.post(
            "/v1/facts",
            json={"user_id": "alice", "subject": "Alice", "predicate": "likes", "object": "tea"},
        )
    ).json()
    fact_id = fact.get("id") or fact["fact"]["id"]
    refused = await local.put(f"/v1/memories/{fact_id}", json={"user_id": "alice", "text": "x"})
    assert refused.status_code == 422 and "assert_fact" in error_of(refused)["message"]


async def test_a_key_confines_every_call_to_its_user(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    [added] = (
        await alice.post("/v1/memories", json={"messages": "Alice's locker code is in the safe."})
    ).json()["results"]
    memory_id = added["id"]
    put = await bob.put(f"/v1/memories/{memory_id}", json={"text": "Bob was here."})
    assert put.status_code == 404
    assert (await bob.get(f"/v1/memories/{memory_id}/history")).json()["history"] == []
    assert (await bob.delete("/v1/memories", params={"confirm": True})).json() == {"deleted": 0}
    found = await bob.post("/v1/memories/search", json={"query": "locker code"})
    assert found.json()["results"] == []
    mine = await alice.get(f"/v1/memories/{memory_id}")
    assert mine.json()["content"] == "Alice's locker code is in the safe."


async def test_a_page_offset_is_bounded_where_the_store_can_hold_it(
    local: httpx.AsyncClient,
) -> None:
    # Deep pages of the store's own lists are allowed (an inspector pages 100,000
    # memories); an offset no SQLite integer holds is refused by the schema.
    deep = await local.get("/v1/memories", params={"user_id": "alice", "offset": 2**62})
    assert deep.status_code == 200, deep.text
    too_deep = await local.get("/v1/memories", params={"user_id": "alice", "offset": 2**65})
    assert too_deep.status_code == 422
    assert ["query", "offset"] in [d["loc"] for d in error_of(too_deep)["details"]]
