"""POST /v1/sleep and /v1/forget over the ASGI transport in local mode."""

from __future__ import annotations

import httpx
import pytest

from .conftest import error_of
from .test_routes import A, observe_all

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_sleep_reports_each_phase(local: httpx.AsyncClient) -> None:
    await observe_all(local)
    response = await local.post("/v1/sleep", json=A)
    assert response.status_code == 200, response.text
    report = response.json()
    assert report and isinstance(report, dict)
    missing = await local.post("/v1/sleep", json={})
    assert missing.status_code == 422 and error_of(missing)["code"] == "missing_scope"


async def test_forget_dry_run_changes_nothing(local: httpx.AsyncClient) -> None:
    await observe_all(local)
    before = (await local.get("/v1/memories", params={**A, "limit": 50})).json()["items"]
    response = await local.post("/v1/forget", json={**A, "dry_run": True})
    assert response.status_code == 200, response.text
    assert isinstance(response.json(), dict)
    after = (await local.get("/v1/memories", params={**A, "limit": 50})).json()["items"]
    assert [m["id"] for m in after] == [m["id"] for m in before]
    wrong = await local.post("/v1/forget", json={**A, "dry_run": "maybe"})
    assert wrong.status_code == 422
    unknown = await local.post("/v1/forget", json={**A, "surprise": 1})
    assert unknown.status_code == 422


async def test_keys_bind_sleep_and_forget_to_their_scope(keyed) -> None:
    alice = await keyed("alice")
    bob = await keyed("bob")
    note = await alice.post("/v1/observe", json={"content": "Alice's locker code is 4512."})
    assert note.status_code == 201, note.text
    # The note and the facts observe read from it, each linked to the note.
    before = (await alice.get("/v1/memories")).json()["items"]
    assert [m["id"] for m in before if m["kind"] == "episodic"] == [note.json()["id"]]
    assert all(
        m["source_episode_ids"] == [note.json()["id"]] for m in before if m["kind"] == "semantic"
    )
    for path in ("/v1/sleep", "/v1/forget"):
        response = await bob.post(path, json={"user_id": "alice"})
        assert response.status_code == 404 and error_of(response)["code"] == "not_found"
        assert (await bob.post(path)).status_code == 200  # bob's own scope
        assert (await (await keyed(None)).post(path, json=A)).status_code == 401
    listed = await alice.get("/v1/memories")
    assert listed.json()["items"] == before  # bob's sleep and forget left alice's scope alone
