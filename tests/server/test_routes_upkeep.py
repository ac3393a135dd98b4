"""The routes of a memory's upkeep and checks, over the ASGI transport in local mode:
retention, merged sources, the duplicate log, clearing a review flag, event replay and
the scope's outcome patterns. Each calls the engine method of its name."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}
NOTE = "The staging database listens on port 5433 since the upgrade."


async def _observe(client: httpx.AsyncClient, content: str) -> dict[str, object]:
    response = await client.post("/v1/observe", json={**A, "content": content})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_merged_repeat_shows_in_sources_duplicates_and_retention(
    local: httpx.AsyncClient,
) -> None:
    first = await _observe(local, NOTE)
    await _observe(local, NOTE)
    memory_id = first["id"]

    sources = await local.get(f"/v1/memories/{memory_id}/sources", params=A)
    assert sources.status_code == 200, sources.text
    assert sources.json()["memory_id"] == memory_id
    assert sources.json()["sources"] and sources.json()["sources"][0]["at_iso"].endswith("Z")

    duplicates = await local.get("/v1/duplicates", params=A)
    assert duplicates.status_code == 200, duplicates.text
    page = duplicates.json()
    assert [d["existing_id"] for d in page["items"]] == [memory_id]
    assert page["items"][0]["content"] == NOTE and page["next_offset"] is None

    retention = await local.get(f"/v1/memories/{memory_id}/retention", params=A)
    assert retention.status_code == 200, retention.text
    assert 0.0 < retention.json()["retention"] <= 1.0


async def test_unknown_ids_are_404(local: httpx.AsyncClient) -> None:
    await _observe(local, NOTE)
    for path in ("/v1/memories/ep_missing/retention", "/v1/memories/ep_missing/sources"):
        response = await local.get(path, params=A)
        assert response.status_code == 404, path
        assert error_of(response)["code"] == "not_found"
    cleared = await local.post("/v1/review_flags/ep_missing/clear", json=A)
    assert cleared.status_code == 404
    assert error_of(cleared)["code"] == "not_found"


async def test_clear_review_of_an_unflagged_memory_closes_nothing(
    local: httpx.AsyncClient,
) -> None:
    memory_id = (await _observe(local, NOTE))["id"]
    response = await local.post(f"/v1/review_flags/{memory_id}/clear", json=A)
    assert response.status_code == 200, response.text
    assert response.json() == {"memory_id": memory_id, "cleared": 0}


async def test_replay_rebuilds_salience_that_matches_the_live_records(
    local: httpx.AsyncClient,
) -> None:
    memory_id = (await _observe(local, NOTE))["id"]
    decided = await local.post(
        "/v1/decisions", json={**A, "memory_ids": [memory_id], "summary": "Used port 5433"}
    )
    assert decided.status_code in (200, 201), decided.text
    outcome = await local.post(
        f"/v1/decisions/{decided.json()['id']}/outcome",
        json={**A, "quality": 0.9, "signal": "user_accepted"},
    )
    assert outcome.status_code == 200, outcome.text

    replay = await local.get("/v1/events/replay", params=A)
    assert replay.status_code == 200, replay.text
    report = replay.json()
    assert report["matches_live"] is True and report["mismatches"] == {}
    assert report["events_applied"] >= 1 and report["memories"] >= 1

    patterns = await local.get("/v1/patterns", params=A)
    assert patterns.status_code == 200, patterns.text
    assert isinstance(patterns.json()["patterns"], list)
