"""The routes the memory inspector needs beyond the rest of the API, over the ASGI
transport: the scopes a caller may look at, archiving and unarchiving one memory, the
gardener schedule and the sleep runs."""

from __future__ import annotations

import httpx
import pytest

from ucma.engine import AsyncMemory

from .conftest import KeyedClient, error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}
NOTE = "The staging database listens on port 5433 since the upgrade."


async def _observe(client: httpx.AsyncClient, content: str, **scope: str) -> str:
    response = await client.post("/v1/observe", json={**scope, "content": content})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_archive_hides_a_memory_and_unarchive_brings_it_back(
    local: httpx.AsyncClient,
) -> None:
    memory_id = await _observe(local, NOTE, **A)
    archived = await local.post(f"/v1/memories/{memory_id}/archive", json=A)
    assert archived.status_code == 200, archived.text
    assert archived.json()["archived_at"] is not None

    listed = (await local.get("/v1/memories", params=A)).json()
    assert memory_id not in [m["id"] for m in listed["items"]]
    every = (await local.get("/v1/memories", params={**A, "include_archived": "true"})).json()
    assert memory_id in [m["id"] for m in every["items"]]
    found = (await local.post("/v1/memories/search", json={**A, "query": "staging port"})).json()
    assert memory_id not in [hit["id"] for hit in found["results"]]

    again = await local.post(f"/v1/memories/{memory_id}/archive", json=A)
    assert again.json()["archived_at"] == archived.json()["archived_at"]

    restored = await local.post(f"/v1/memories/{memory_id}/unarchive", json=A)
    assert restored.status_code == 200 and restored.json()["archived_at"] is None
    found = (await local.post("/v1/memories/search", json={**A, "query": "staging port"})).json()
    assert memory_id in [hit["id"] for hit in found["results"]]

    history = (await local.get(f"/v1/memories/{memory_id}/history", params=A)).json()
    events = [(e["event"], e["details"]) for e in history["history"]]
    assert events[-2:] == [
        ("archived", {"reason": "requested"}),
        ("restored", {"reason": "requested"}),
    ]


async def test_archive_of_an_unknown_memory_is_not_found(local: httpx.AsyncClient) -> None:
    for action in ("archive", "unarchive"):
        response = await local.post(f"/v1/memories/ep_nowhere/{action}", json=A)
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"
    missing_scope = await local.post("/v1/memories/ep_nowhere/archive")
    assert missing_scope.status_code == 422


async def test_scopes_in_local_mode_list_every_scope_or_one_users(
    local: httpx.AsyncClient,
) -> None:
    await _observe(local, NOTE, **A)
    await _observe(local, "Bob's tea tasting moved to Friday.", user_id="bob", agent_id="tea")
    every = (await local.get("/v1/scopes")).json()
    assert [(s["user_id"], s["agent_id"]) for s in every["items"]] == [
        ("alice", "default"),
        ("bob", "tea"),
    ]
    assert every["items"][0]["memories"]["episodic"] == 1
    assert every["next_offset"] is None
    bob = (await local.get("/v1/scopes", params={"user_id": "bob"})).json()
    assert [s["user_id"] for s in bob["items"]] == ["bob"]
    first = (await local.get("/v1/scopes", params={"limit": 1})).json()
    assert len(first["items"]) == 1 and first["next_offset"] == 1


async def test_scopes_with_a_key_show_only_the_keys_user(keyed: KeyedClient) -> None:
    alice = await keyed("alice")
    bob = await keyed("bob", agent="tea")
    await _observe(alice, NOTE)
    await _observe(alice, "Alice's second agent keeps the release notes.", agent_id="notes")
    await _observe(bob, "Bob's tea tasting moved to Friday.")
    mine = (await alice.get("/v1/scopes")).json()
    assert [(s["user_id"], s["agent_id"]) for s in mine["items"]] == [
        ("alice", "default"),
        ("alice", "notes"),
    ]
    only_agent = (await bob.get("/v1/scopes")).json()
    assert [(s["user_id"], s["agent_id"]) for s in only_agent["items"]] == [("bob", "tea")]
    other = await bob.get("/v1/scopes", params={"user_id": "alice"})
    assert other.status_code == 404
    assert (await (await keyed(None)).get("/v1/scopes")).status_code == 401


async def test_memories_listed_by_bank_with_the_banks_total(local: httpx.AsyncClient) -> None:
    preference = await _observe(local, "Alice prefers dark mode in every editor.", **A)
    event = await _observe(local, NOTE, **A)
    opinions = (await local.get("/v1/memories", params={**A, "bank": "opinion"})).json()
    assert preference in [m["id"] for m in opinions["items"]]
    assert {m["bank"] for m in opinions["items"]} == {"opinion"}
    assert opinions["total"] == len(opinions["items"])
    episodes = (
        await local.get("/v1/memories", params={**A, "bank": "experience", "kind": "episodic"})
    ).json()
    assert [m["id"] for m in episodes["items"]] == [event] and episodes["total"] == 1
    filtered = (
        await local.get("/v1/memories", params={**A, "bank": "opinion", "run_id": "none"})
    ).json()
    assert filtered["items"] == [] and filtered["total"] == 0
    bad = await local.get("/v1/memories", params={**A, "bank": "dreams"})
    assert bad.status_code == 422


async def test_retention_with_its_curve_ahead(local: httpx.AsyncClient) -> None:
    memory_id = await _observe(local, NOTE, **A)
    now = (await local.get(f"/v1/memories/{memory_id}/retention", params=A)).json()
    assert now["curve"] is None
    ahead = await local.get(f"/v1/memories/{memory_id}/retention", params={**A, "days_ahead": 30})
    assert ahead.status_code == 200, ahead.text
    curve = ahead.json()["curve"]
    assert [p["days"] for p in curve] == [float(d) for d in range(31)]
    values = [p["retention"] for p in curve]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    assert abs(values[0] - ahead.json()["retention"]) < 1e-3
    long = (
        await local.get(f"/v1/memories/{memory_id}/retention", params={**A, "days_ahead": 365})
    ).json()["curve"]
    assert len(long) == 61 and long[-1]["days"] == 365.0
    for bad in (0, -1, 4000, "soon"):
        response = await local.get(
            f"/v1/memories/{memory_id}/retention", params={**A, "days_ahead": bad}
        )
        assert response.status_code == 422, bad


async def test_latest_events_newest_first(local: httpx.AsyncClient) -> None:
    for n in range(3):
        await _observe(local, f"Release {n} of the billing service shipped on time.", **A)
    latest = (
        await local.get("/v1/events", params={**A, "newest_first": "true", "limit": 2})
    ).json()
    seqs = [e["seq"] for e in latest["items"]]
    every = (await local.get("/v1/events", params={**A, "limit": 1000})).json()["items"]
    assert seqs == [e["seq"] for e in every][::-1][:2]
    assert latest["next_after_seq"] is None
    newer = (await local.get("/v1/events", params={**A, "after_seq": seqs[0]})).json()
    assert newer["items"] == []


async def test_the_gardener_schedule_hides_cross_user_sums_from_a_key(
    engine: AsyncMemory, local: httpx.AsyncClient, keyed: KeyedClient
) -> None:
    await _observe(local, NOTE, **A)
    before = (await local.get("/v1/gardener")).json()["jobs"]
    assert [j["job"] for j in before] == ["decay", "consolidate", "prune", "identity"]
    assert all(
        j["last_run_at"] is None and j["next_due_at"] is None and not j["running"] for j in before
    )
    await engine.run_gardener("decay")
    after = {j["job"]: j for j in (await local.get("/v1/gardener")).json()["jobs"]}
    decay = after["decay"]
    assert decay["last_run_at"] is not None and decay["period_days"] == 1.0
    assert decay["next_due_at"] == pytest.approx(decay["last_run_at"] + 86_400)
    assert decay["last_summary"]["scopes"] == 1
    seen_by_key = (await (await keyed("bob")).get("/v1/gardener")).json()["jobs"]
    assert {j["job"]: j["last_run_at"] for j in seen_by_key}["decay"] == decay["last_run_at"]
    assert all(j["last_summary"] is None for j in seen_by_key)


async def test_sleep_runs_list_each_cycle_of_the_callers_scope_only(
    engine: AsyncMemory, local: httpx.AsyncClient, keyed: KeyedClient
) -> None:
    await _observe(local, NOTE, **A)
    assert (await local.get("/v1/sleep/runs", params=A)).json()["items"] == []
    slept = await local.post("/v1/sleep", json=A)
    assert slept.status_code == 200, slept.text
    await engine.run_gardener("consolidate")
    page = (await local.get("/v1/sleep/runs", params=A)).json()
    gardener, requested = page["items"]
    assert (gardener["trigger"], requested["trigger"]) == ("gardener", "request")
    assert gardener["id"] > requested["id"] and page["next_offset"] is None
    report = slept.json()
    assert (
        requested["phases"]
        == report["phases"]
        == [
            "compress",
            "abstract",
            "reinforce",
            "prune",
            "clean",
        ]
    )
    assert requested["changes"]["abstract"] == report["abstract"]
    assert requested["changes"]["prune"] == report["prune"]
    assert requested["seconds"] == pytest.approx(report["seconds"], abs=1e-3)
    assert requested["started_at_iso"] and not requested["interrupted"] and not requested["error"]
    second = (await local.get("/v1/sleep/runs", params={**A, "limit": 1, "offset": 1})).json()
    assert [r["id"] for r in second["items"]] == [requested["id"]]

    # Bob's key sees Bob's runs (none), and may not ask for Alice's.
    bob = await keyed("bob")
    assert (await bob.get("/v1/sleep/runs")).json()["items"] == []
    refused = await bob.get("/v1/sleep/runs", params=A)
    assert refused.status_code == 404 and error_of(refused)["code"] == "not_found"
    assert (await local.get("/v1/sleep/runs", params={"user_id": "bob"})).json()["items"] == []


async def test_links_list_a_memorys_typed_edges_one_by_one(
    local: httpx.AsyncClient, keyed: KeyedClient
) -> None:
    first = await _observe(local, NOTE, **A)
    second = await _observe(local, "The production database still listens on 5432.", **A)
    third = await _observe(local, "Backups of staging run nightly at two.", **A)
    for target, edge_type, weight in ((second, "contrasts", 0.7), (second, "supports", 0.2),
                                      (third, "explains", 0.9)):  # fmt: skip
        made = await local.post(
            "/v1/links",
            json={
                **A,
                "source_id": first,
                "target_id": target,
                "edge_type": edge_type,
                "weight": weight,
            },  # fmt: skip
        )
        assert made.status_code == 201, made.text
    answer = (await local.get(f"/v1/memories/{first}/links", params=A)).json()
    shown = [(x["edge_type"], x["weight"], x["memory"]["id"]) for x in answer["links"]]
    # Both links to the second memory show, each with its type, strongest first.
    assert [s for s in shown if s[0] != "followed_by"] == [
        ("explains", 0.9, third),
        ("contrasts", 0.7, second),
        ("supports", 0.2, second),
    ]
    only = await local.get(
        f"/v1/memories/{first}/links",
        params={**A, "edge_types": ["supports", "explains"], "limit": 1},
    )
    assert [(x["edge_type"], x["memory"]["id"]) for x in only.json()["links"]] == [
        ("explains", third)
    ]
    await local.post(f"/v1/memories/{third}/archive", json=A)
    after = (await local.get(f"/v1/memories/{first}/links", params=A)).json()
    assert third not in {x["memory"]["id"] for x in after["links"]}

    missing = await local.get("/v1/memories/ep_nowhere/links", params=A)
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    bob = await keyed("bob")
    hidden = await bob.get(f"/v1/memories/{first}/links")
    assert hidden.status_code == 404 and error_of(hidden)["code"] == "not_found"
