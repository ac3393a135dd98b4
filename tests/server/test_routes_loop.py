"""The /v1 routes of cascading recall, conflicts and chat, decisions and outcomes, and the
event log, over the ASGI transport in local mode: the happy path and its errors."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from ucma.conflicts import SQLSourceOfTruth
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

from .conftest import BASE_URL, CONFIG, _app, error_of
from .test_routes import NOTES, A, observe_all

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

GAI = "customer_gai_123"
DAY = 86_400.0
FACTORS = {
    "semantic_relevance",
    "source_quality",
    "recency",
    "consistency",
    "completeness",
    "overall",
    "level",
}


async def test_recall_returns_confidence_cascade_path_and_retrieval_id(
    local: httpx.AsyncClient,
) -> None:
    await observe_all(local)
    response = await local.post(
        "/v1/recall",
        json={
            **A,
            "query": "when are deploys frozen?",
            "limit": 3,
            "explain": True,
            "reference_time": time.time(),
        },
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["retrieval_id"].startswith("ret_")
    assert isinstance(result["low_confidence"], bool)
    assert 0.0 <= result["confidence"] <= 1.0
    assert result["cascade_path"]["primary_layer"] and "cascaded_to" in result["cascade_path"]
    top = result["results"][0]
    assert "Fridays" in top["content"]
    assert set(top["confidence"]) == FACTORS and top["layer"]
    assert result["explanation"]["hits"][0]["id"] == top["id"]

    flat = await local.post(
        "/v1/recall", json={**A, "query": "payments API on-call", "cascade": False}
    )
    assert flat.status_code == 200
    assert flat.json()["cascade_path"]["cascaded_to"] == [] and flat.json()["explanation"] is None
    for bad in (
        {"confidence_threshold": 2},
        {"max_cascade_depth": -1},
        {"max_cascade_depth": 11},
        {"reference_time": "yesterday"},
        {"time_range": [10, 1]},
        {"cascade": "sometimes"},
        {"limit": 0},
    ):
        response = await local.post("/v1/recall", json={**A, "query": "deploys", **bad})
        assert response.status_code == 422, (bad, response.text)
        assert error_of(response)["code"] == "validation_error"
    assert (await local.post("/v1/recall", json={"query": "x"})).status_code == 422


async def test_a_pending_conflict_is_reported_listed_and_resolved(
    local: httpx.AsyncClient,
) -> None:
    # Real ambiguity: two different sources at about the same time, similar
    # confidence (the same source stating a new value later would supersede).
    fact = {**A, "subject": GAI, "predicate": "delivery_pref"}
    first = await local.post(
        "/v1/facts", json={**fact, "object": "Thursday", "metadata": {"source": "crm"}}
    )
    assert first.status_code == 201 and first.json()["conflicts_detected"] == []
    before_friday = time.time()
    second = await local.post(
        "/v1/facts", json={**fact, "object": "Friday", "metadata": {"source": "support_call"}}
    )
    assert second.status_code == 201, second.text
    report = second.json()
    assert report["disambiguation_required"] is True
    assert report["options"] == ["Thursday", "Friday"]
    [conflict] = report["conflicts_detected"]
    assert conflict["status"] == "pending" and conflict["resolution_strategy"] == "ask_user"

    pending = (await local.get("/v1/conflicts", params={**A, "status": "pending"})).json()
    assert [c["id"] for c in pending["items"]] == [conflict["id"]]
    assert pending["next_offset"] is None
    about = (await local.get("/v1/facts", params={**A, "entity": GAI})).json()
    assert {f["object"] for f in about["items"]} == {"Thursday", "Friday"}
    assert about["disambiguation_required"] is True
    assert [c["id"] for c in about["conflicts_detected"]] == [conflict["id"]]
    then = await local.get("/v1/facts", params={**A, "entity": GAI, "as_of": before_friday})
    assert [f["object"] for f in then.json()["items"]] == ["Thursday"]

    chat = await local.post(
        "/v1/chat",
        json={**A, "message": "Which day does Gai prefer for deliveries?", "entity": GAI},
    )
    assert chat.status_code == 200, chat.text
    assert chat.json()["disambiguation_required"] is True
    assert chat.json()["options"] == ["Thursday", "Friday"]
    assert chat.json()["conflicts_detected"][0]["id"] == conflict["id"]

    path = f"/v1/conflicts/{conflict['id']}/resolve"
    not_an_option = await local.post(path, json={**A, "chosen_value": "Monday"})
    assert not_an_option.status_code == 422
    chosen = await local.post(path, json={**A, "chosen_value": "friday"})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["fact"]["object"] == "Friday"
    assert chosen.json()["conflicts_detected"][0]["status"] == "user_resolved"
    again = await local.post(path, json={**A, "chosen_value": "Thursday"})
    assert again.status_code == 409 and error_of(again)["code"] == "conflict_not_pending"
    unknown = await local.post("/v1/conflicts/cfl_x/resolve", json={**A, "chosen_value": "x"})
    assert unknown.status_code == 404 and error_of(unknown)["code"] == "not_found"

    now = (await local.get("/v1/facts", params={**A, "entity": GAI})).json()
    assert [f["object"] for f in now["items"]] == ["Friday"]
    history = await local.get(
        "/v1/facts/history", params={**A, "subject": GAI, "predicate": "delivery_pref"}
    )
    assert history.status_code == 200
    assert [f["object"] for f in history.json()["items"]] == ["Thursday", "Friday"]
    assert history.json()["conflicts_detected"][0]["status"] == "user_resolved"
    flags = await local.get("/v1/review_flags", params=A)
    assert flags.status_code == 200 and flags.json()["next_offset"] is None

    for params in (
        {"status": "angry"},
        {"limit": 0},
        {"offset": -1},
    ):
        response = await local.get("/v1/conflicts", params={**A, **params})
        assert response.status_code == 422, params
    both = {**A, "entity": GAI, "as_of": before_friday, "include_history": True}
    assert (await local.get("/v1/facts", params=both)).status_code == 422
    assert (
        await local.get("/v1/facts", params={**A, "entity": GAI, "as_of": "then"})
    ).status_code == 422
    assert (await local.get("/v1/facts/history", params={**A, "subject": GAI})).status_code == 422
    assert (await local.post(path, json={**A, "chosen_value": 5})).status_code == 422
    assert (await local.post(path, json={**A, "chosen_value": ""})).status_code == 422


async def test_chat_reports_a_memory_vs_database_conflict(
    local: httpx.AsyncClient, engine: AsyncMemory, tmp_path: Path
) -> None:
    """Seed 002's chat endpoint test, on a real SQLite database of the user's."""
    shop = tmp_path / "shop.db"
    with closing(sqlite3.connect(shop)) as conn, conn:
        conn.execute("CREATE TABLE sales_orders (id TEXT PRIMARY KEY, status TEXT)")
        conn.execute("INSERT INTO sales_orders VALUES ('so_1001', 'in_fulfillment')")
    engine.add_source_of_truth(
        SQLSourceOfTruth.sqlite(
            shop,
            {"status": "SELECT status FROM sales_orders WHERE id = :id"},
            subject_pattern=r"sales_order_(?P<id>so_\d+)",
            name="sales_db",
        )
    )
    user = {"user_id": "ops_manager"}
    stored = await local.post(
        "/v1/facts",
        json={
            **user,
            "subject": "sales_order_so_1001",
            "predicate": "status",
            "object": "fulfilled",
            "confidence": 0.70,
        },
    )
    assert stored.status_code == 201
    response = await local.post(
        "/v1/chat",
        json={**user, "message": "Is SO-1001 complete?", "entity": "sales_order_so_1001"},
    )
    assert response.status_code == 200, response.text
    assert "in_fulfillment" in response.json()["response"]
    conflict = response.json()["conflicts_detected"][0]
    assert conflict["conflict_type"] == "memory_vs_db"
    assert conflict["resolution_strategy"] == "trust_db"

    for bad in ({"message": ""}, {"message": 5}, {"limit": 0}, {}):
        response = await local.post("/v1/chat", json={**user, **bad})
        assert response.status_code == 422, bad


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def timed(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> AsyncIterator[tuple[httpx.AsyncClient, Clock]]:
    """A local-mode client over an engine whose clock the test moves."""
    clock = Clock()
    async with AsyncMemory(
        tmp_path / "timed.db", config=CONFIG, embedder=local_embedder, clock=clock
    ) as memory:
        transport = httpx.ASGITransport(app=_app(memory, require_keys=False))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client, clock


async def test_decisions_outcomes_influence_and_events(
    timed: tuple[httpx.AsyncClient, Clock],
) -> None:
    local, clock = timed
    ids = await observe_all(local)
    recalled = (await local.post("/v1/recall", json={**A, "query": "staging database port"})).json()
    used = [hit["id"] for hit in recalled["results"][:2]]
    body = {
        **A,
        "memory_ids": used,
        "memory_scores": [0.7, 0.3],
        "summary": "Suggested port 5433 for staging",
        "confidence": 0.8,
        "retrieval_id": recalled["retrieval_id"],
    }
    created = await local.post("/v1/decisions", json=body)
    assert created.status_code == 201, created.text
    trace = created.json()
    assert trace["id"].startswith("trc_") and trace["outcome_observed"] is False
    assert trace["memory_scores"][used[0]] == pytest.approx(0.7)
    assert (await local.get(f"/v1/decisions/{trace['id']}", params=A)).json() == trace
    open_ones = (await local.get("/v1/decisions", params={**A, "observed": False})).json()
    assert [t["id"] for t in open_ones["items"]] == [trace["id"]]

    early = await local.post(f"/v1/decisions/{trace['id']}/counterfactuals", json=A)  # GET only
    assert early.status_code == 405
    no_outcome = await local.get(f"/v1/decisions/{trace['id']}/counterfactuals", params=A)
    assert no_outcome.status_code == 422

    outcome_path = f"/v1/decisions/{trace['id']}/outcome"
    done = await local.post(
        outcome_path, json={**A, "quality": 0.8, "signal": "user_accepted", "feedback": "good"}
    )
    assert done.status_code == 200, done.text
    report = done.json()
    assert report["trace"]["outcome_quality"] == 0.8
    assert {u["memory_id"] for u in report["salience_updates"]} == set(used)
    twice = await local.post(outcome_path, json={**A, "quality": -1, "signal": "task_failed"})
    assert twice.status_code == 409 and error_of(twice)["code"] == "outcome_already_recorded"
    assert (await local.get(f"/v1/decisions/{trace['id']}", params=A)).json()[
        "outcome_quality"
    ] == 0.8

    late = (await local.post("/v1/decisions", json={**body, "retrieval_id": None})).json()
    clock.now += 8 * DAY
    refused = await local.post(
        f"/v1/decisions/{late['id']}/outcome", json={**A, "quality": 1, "signal": "task_completed"}
    )
    assert refused.status_code == 409 and error_of(refused)["code"] == "outcome_window_closed"

    why = await local.get(f"/v1/decisions/{trace['id']}/counterfactuals", params=A)
    assert why.status_code == 200 and why.json()["trace"]["id"] == trace["id"]
    influence = await local.get(f"/v1/memories/{used[0]}/influence", params=A)
    assert influence.status_code == 200, influence.text
    assert influence.json()["decisions"] == 1
    assert [u["trace_id"] for u in influence.json()["salience_history"]] == [trace["id"]]
    untouched = (await local.get(f"/v1/memories/{ids[-1]}/influence", params=A)).json()
    if ids[-1] not in used:
        assert untouched["verdict"] == "insufficient" and untouched["salience_history"] == []

    page = (await local.get("/v1/events", params={**A, "limit": 2})).json()
    assert len(page["items"]) == 2 and page["next_after_seq"] == page["items"][-1]["seq"]
    seen, cursor = [], 0
    while cursor is not None:
        chunk = (await local.get("/v1/events", params={**A, "after_seq": cursor})).json()
        seen.extend(e["seq"] for e in chunk["items"])
        cursor = chunk["next_after_seq"]
    assert seen == sorted(seen) and len(seen) == len(set(seen)) > 2
    outcomes = (await local.get("/v1/events", params={**A, "types": "outcome.observed"})).json()
    assert [e["payload"].get("trace_id") for e in outcomes["items"]] == [trace["id"]]

    # unknown ids: 404 everywhere
    for path in (
        "/v1/decisions/trc_x",
        "/v1/decisions/trc_x/counterfactuals",
        "/v1/memories/ep_x/influence",
    ):
        response = await local.get(path, params=A)
        assert response.status_code == 404 and error_of(response)["code"] == "not_found", path
    missing = await local.post(
        "/v1/decisions/trc_x/outcome", json={**A, "quality": 1, "signal": "task_completed"}
    )
    assert missing.status_code == 404
    unknown_memory = await local.post(
        "/v1/decisions", json={**body, "memory_ids": ["ep_x"], "memory_scores": None}
    )
    assert unknown_memory.status_code == 404
    # wrong types and limits: 422
    for bad in (
        {"memory_ids": []},
        {"memory_ids": "ep_1"},
        {"memory_scores": [1.0]},
        {"confidence": 2},
        {"summary": ""},
        {"alternatives_count": -1},
        {"retrieval_id": "ret_unknown"},
    ):
        response = await local.post("/v1/decisions", json={**body, **bad})
        assert response.status_code in (404, 422), (bad, response.text)
    for bad in ({"quality": 2}, {"quality": 0.5, "signal": "meh"}, {"signal": "task_failed"}):
        response = await local.post(f"/v1/decisions/{late['id']}/outcome", json={**A, **bad})
        assert response.status_code == 422, bad
    for params in ({"observed": "maybe"}, {"limit": 0}, {"offset": -1}):
        assert (await local.get("/v1/decisions", params={**A, **params})).status_code == 422
    for params in ({"after_seq": -1}, {"limit": 5000}, {"after_seq": "start"}):
        assert (await local.get("/v1/events", params={**A, **params})).status_code == 422
    assert (await local.get("/v1/events")).status_code == 422  # no scope
    assert NOTES  # the notes observed above
