"""What people read in REST answers: ISO 8601 times beside the epoch seconds, rounded
scores, what observe did; exports keep the plain form that import reads back."""

from __future__ import annotations

import math

import httpx
import pytest

from ucma import serialization
from ucma.serialization import iso_time, record_from_dict, record_to_dict, with_iso_times
from ucma.types import Episode, Provenance

pytestmark = pytest.mark.anyio


def test_iso_time() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00Z"
    assert iso_time(1_746_280_800.75) == "2025-05-03T14:00:00Z"
    assert iso_time(None) is None
    assert iso_time(math.inf) is None
    assert iso_time(1e20) is None  # beyond any calendar: no copy rather than an error


def test_iso_copies_sit_beside_the_epochs_and_exports_stay_plain() -> None:
    episode = Episode(
        id="ep_1",
        user_id="alice",
        agent_id="default",
        content="Alice moved to Lyon.",
        provenance=Provenance.OBSERVED,
        temporal_level=2,
        base_salience=0.5,
        created_at=1_746_280_800.0,
        timestamp=1_746_280_800.0,
        source="user",
        session_id="ses_1",
    )
    plain = record_to_dict(episode)
    assert not any(name.endswith("_iso") for name in plain)
    assert record_from_dict(plain) == episode
    shown = serialization.record_to_api_dict(episode)
    assert shown["created_at"] == 1_746_280_800.0
    assert shown["created_at_iso"] == shown["timestamp_iso"] == "2025-05-03T14:00:00Z"
    assert "updated_at_iso" not in shown  # unset times get no copy
    keys = list(shown)
    assert keys.index("created_at_iso") == keys.index("created_at") + 1
    assert with_iso_times({"metadata": {"created_at": 1.0}})["metadata"] == {"created_at": 1.0}


@pytest.mark.integration
async def test_rest_answers_carry_iso_times_and_rounded_scores(local: httpx.AsyncClient) -> None:
    observed = await local.post(
        "/v1/observe",
        json={"user_id": "alice", "content": "Alice prefers dark mode in every editor."},
    )
    assert observed.status_code == 201, observed.text
    memory_id = observed.json()["id"]
    again = await local.post(
        "/v1/observe",
        json={"user_id": "alice", "content": "Alice prefers dark mode in every editor."},
    )
    assert again.json()["merged_into"] == memory_id  # says it merged, not just "stored"

    record = (await local.get(f"/v1/memories/{memory_id}", params={"user_id": "alice"})).json()
    assert record["created_at_iso"] == iso_time(record["created_at"])

    listed = (await local.get("/v1/memories", params={"user_id": "alice"})).json()["items"]
    assert all(item["created_at_iso"] == iso_time(item["created_at"]) for item in listed)

    hits = (
        await local.post("/v1/recall", json={"user_id": "alice", "query": "editor theme"})
    ).json()["results"]
    assert hits
    for hit in hits:
        for value in (hit["score"], hit["relevance"], *hit["channels"].values()):
            assert value == round(value, 4)
        assert hit["memory"]["created_at_iso"] == iso_time(hit["memory"]["created_at"])
