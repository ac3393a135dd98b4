"""API keys and tenant isolation over the REST API.

Two users with one key each share one database. Bob's key must not let him read, find,
change, delete, link, export or import over Alice's records, even with her ids in hand:
every attempt answers like an unknown id (404) or an empty result, and Alice's export is
byte for byte the same afterwards.
"""

from __future__ import annotations

import json

import httpx
import pytest

from ucma.engine import AsyncMemory
from ucma.types import Scope, fact_id_for

from .conftest import KeyedClient, error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_keys_required_refuses_missing_wrong_and_revoked_keys(
    keyed: KeyedClient, engine: AsyncMemory
) -> None:
    anonymous = await keyed(None)
    health = await anonymous.get("/v1/health")
    assert health.status_code == 200
    assert health.json()["auth"] == "api_keys" and health.json()["database"] is None

    for path in ("/v1/stats", "/v1/memories", "/v1/export", "/v1/sessions/current"):
        response = await anonymous.get(path, params={"user_id": "alice"})
        assert response.status_code == 401, path
        assert error_of(response)["code"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
    post = await anonymous.post("/v1/observe", json={"user_id": "alice", "content": "hi"})
    assert post.status_code == 401

    alice = await keyed("alice")
    token = alice.headers["authorization"].removeprefix("Bearer ")
    for header in (
        "Bearer ucma_000000000000_" + "A" * 43,  # well-formed, unknown
        "Bearer " + token[:-1] + ("A" if token[-1] != "A" else "B"),  # right id, wrong secret
        "Bearer nonsense",
        "Basic " + token,
        "Bearer",
        token,
    ):
        response = await anonymous.get("/v1/stats", headers={"authorization": header})
        assert response.status_code == 401, header
        assert error_of(response)["message"]

    assert (await alice.get("/v1/stats")).status_code == 200
    [key] = [k for k in await engine.list_keys() if k.user_id == "alice"]
    await engine.revoke_key(key.id)
    revoked = await alice.get("/v1/stats")
    assert revoked.status_code == 401 and error_of(revoked)["code"] == "unauthorized"


async def test_the_scope_comes_from_the_key(keyed: KeyedClient) -> None:
    alice = await keyed("alice")
    observed = await alice.post("/v1/observe", json={"content": "Alice's cat is called Miso."})
    assert observed.status_code == 201, observed.text
    stats = (await alice.get("/v1/stats")).json()
    assert (stats["user_id"], stats["agent_id"]) == ("alice", "default")
    same = await alice.get("/v1/stats", params={"user_id": "alice"})
    assert same.status_code == 200
    other = await alice.get("/v1/stats", params={"user_id": "bob"})
    assert other.status_code == 404 and error_of(other)["code"] == "not_found"
    body = await alice.post("/v1/observe", json={"user_id": "bob", "content": "x y z"})
    assert body.status_code == 404
    # A key without an agent may act for any agent of its user.
    planner = await alice.get("/v1/stats", params={"agent_id": "planner"})
    assert planner.status_code == 200 and planner.json()["agent_id"] == "planner"


async def test_a_key_bound_to_an_agent_stays_in_it(keyed: KeyedClient) -> None:
    planner = await keyed("alice", agent="planner")
    stats = (await planner.get("/v1/stats")).json()
    assert (stats["user_id"], stats["agent_id"]) == ("alice", "planner")
    assert (await planner.get("/v1/stats", params={"agent_id": "planner"})).status_code == 200
    assert (await planner.get("/v1/stats", params={"agent_id": "default"})).status_code == 404
    wrong = await planner.post(
        "/v1/observe", json={"agent_id": "default", "content": "Deploys freeze on Fridays."}
    )
    assert wrong.status_code == 404


async def test_local_mode_still_checks_a_key_that_is_sent(
    local: httpx.AsyncClient, engine: AsyncMemory
) -> None:
    _, token = await engine.create_key("alice")
    auth = {"authorization": f"Bearer {token}"}
    assert (await local.get("/v1/stats", headers=auth)).json()["user_id"] == "alice"
    assert (
        await local.get("/v1/stats", params={"user_id": "bob"}, headers=auth)
    ).status_code == 404
    bad = await local.get("/v1/stats", headers={"authorization": "Bearer wrong"})
    assert bad.status_code == 401


async def alice_world(alice: httpx.AsyncClient) -> dict[str, str]:
    """Alice's records of every kind, linked; returns their ids."""
    batch = await alice.post(
        "/v1/observe/batch",
        json={
            "items": [
                {"content": "Alice's secret project Nightjar launches on 3 June."},
                {"content": "Alice keeps the Nightjar deploy key in the red vault."},
            ]
        },
    )
    ep1, ep2 = (r["id"] for r in batch.json()["results"])
    fact = await alice.post(
        "/v1/facts",
        json={
            "subject": "Nightjar",
            "predicate": "launches on",
            "object": "3 June",
            "source_episode_ids": [ep1],
        },
    )
    proc = await alice.post(
        "/v1/procedures",
        json={
            "name": "Launch Nightjar",
            "description": "Launch checklist",
            "trigger_tags": ["nightjar"],
        },
    )
    lrn = await alice.post(
        "/v1/learn",
        json={
            "insight": "Nightjar launches slip when QA is late.",
            "applicability": ["nightjar"],
            "evidence_ids": [ep2],
            "confidence": 0.9,
        },
    )
    await alice.post("/v1/links", json={"source_id": ep1, "target_id": ep2, "edge_type": "about"})
    for response in (batch, fact, proc, lrn):
        assert response.status_code == 201, response.text
    return {
        "ep1": ep1,
        "ep2": ep2,
        "fact": fact.json()["fact"]["id"],
        "procedure": proc.json()["id"],
        "learning": lrn.json()["id"],
    }


async def test_tenant_isolation_on_every_endpoint(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    ids = await alice_world(alice)
    alice_export = (await alice.get("/v1/export")).content
    before = (await alice.get("/v1/stats")).json()["memories"]

    as_alice = {"user_id": "alice"}
    # Naming Alice's scope with Bob's key: 404 everywhere, GET and POST alike.
    for path in (
        "/v1/stats",
        "/v1/memories",
        "/v1/export",
        "/v1/sessions/current",
        "/v1/context",
        f"/v1/memories/{ids['ep1']}",
    ):
        response = await bob.get(path, params=as_alice)
        assert response.status_code == 404, path
    for path, body in (
        ("/v1/observe", {"content": "Bob writes into Alice's memory."}),
        ("/v1/remember", {"query": "Nightjar"}),
        ("/v1/facts", {"subject": "a", "predicate": "b", "object": "c"}),
        ("/v1/sessions", {}),
    ):
        response = await bob.post(path, json={**as_alice, **body})
        assert response.status_code == 404, path

    # Guessing (knowing) Alice's ids with Bob's own scope: unknown ids.
    for memory_id in ids.values():
        assert (await bob.get(f"/v1/memories/{memory_id}")).status_code == 404
        assert (await bob.delete(f"/v1/memories/{memory_id}")).status_code == 404
        assert (await bob.get(f"/v1/memories/{memory_id}/related")).status_code == 404
    assert (
        await bob.post(f"/v1/procedures/{ids['procedure']}/outcome", json={"success": False})
    ).status_code == 404
    assert (
        await bob.post(f"/v1/learnings/{ids['learning']}/validate", json={"success": False})
    ).status_code == 404
    assert (
        await bob.post(
            "/v1/links",
            json={"source_id": ids["ep1"], "target_id": ids["ep2"], "edge_type": "stolen"},
        )
    ).status_code == 404
    assert (
        await bob.post(
            "/v1/facts",
            json={
                "subject": "x",
                "predicate": "y",
                "object": "z",
                "source_episode_ids": [ids["ep1"]],
            },
        )
    ).status_code == 404
    assert (
        await bob.post("/v1/learn", json={"insight": "x", "evidence_ids": [ids["ep1"]]})
    ).status_code == 404

    # Searching and listing from Bob's scope finds nothing of Alice's.
    search = await bob.post("/v1/remember", json={"query": "Nightjar launch deploy key vault"})
    assert search.status_code == 200 and search.json()["results"] == []
    assert (await bob.get("/v1/memories")).json()["items"] == []
    assert (await bob.get("/v1/facts", params={"entity": "Nightjar"})).json()["items"] == []
    assert (await bob.get("/v1/facts/traverse", params={"entity": "Nightjar"})).json()[
        "items"
    ] == []
    assert (await bob.get("/v1/procedures", params={"tags": ["nightjar"]})).json()["items"] == []
    assert (await bob.get("/v1/learnings", params={"tags": ["nightjar"]})).json()["items"] == []
    assert (await bob.get("/v1/episodes", params={"start": 0, "end": 9e12})).json()["items"] == []
    bob_export = (await bob.get("/v1/export")).text.splitlines()
    assert [json.loads(line)["type"] for line in bob_export] == ["header"]
    assert json.loads(bob_export[0])["user_id"] == "bob"

    # Importing Alice's export into Bob's scope gives Bob copies under ids of his own.
    copied = await bob.post(
        "/v1/import", content=alice_export, headers={"content-type": "application/x-ndjson"}
    )
    assert copied.status_code == 200
    assert copied.json()["imported"] == copied.json()["records"] >= len(ids)
    bob_ids = {item["id"] for item in (await bob.get("/v1/memories")).json()["items"]}
    assert bob_ids and not bob_ids & set(ids.values())
    for memory_id in ids.values():
        assert (await bob.get(f"/v1/memories/{memory_id}")).status_code == 404

    # Alice's memory is exactly as it was.
    assert (await alice.get("/v1/export")).content == alice_export
    assert (await alice.get("/v1/stats")).json()["memories"] == before


async def test_tenant_isolation_of_recall_conflicts_decisions_and_events(
    keyed: KeyedClient,
) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    ids = await alice_world(alice)
    gai = {"subject": "Nightjar", "predicate": "launch_day"}
    # Two different sources at about the same time: ambiguous, so it stays pending.
    await alice.post("/v1/facts", json={**gai, "object": "Tuesday", "metadata": {"source": "crm"}})
    pending = (
        await alice.post(
            "/v1/facts", json={**gai, "object": "Friday", "metadata": {"source": "standup"}}
        )
    ).json()
    [conflict] = pending["conflicts_detected"]
    assert conflict["status"] == "pending"
    recalled = (await alice.post("/v1/recall", json={"query": "Nightjar launch"})).json()
    trace = (
        await alice.post(
            "/v1/decisions",
            json={
                "memory_ids": [ids["ep1"]],
                "summary": "Planned the Nightjar launch",
                "retrieval_id": recalled["retrieval_id"],
            },
        )
    ).json()
    observed = (
        await alice.post(
            "/v1/decisions",
            json={"memory_ids": [ids["ep2"]], "summary": "Moved the deploy key"},
        )
    ).json()
    await alice.post(
        f"/v1/decisions/{observed['id']}/outcome", json={"quality": 0.5, "signal": "task_completed"}
    )
    alice_export = (await alice.get("/v1/export")).content
    alice_events = (await alice.get("/v1/events", params={"limit": 1000})).json()["items"]

    as_alice = {"user_id": "alice"}
    for path in (
        "/v1/conflicts",
        "/v1/decisions",
        "/v1/events",
        "/v1/review_flags",
        f"/v1/decisions/{trace['id']}",
        f"/v1/memories/{ids['ep1']}/influence",
    ):
        assert (await bob.get(path, params=as_alice)).status_code == 404, path
    for path, body in (
        ("/v1/recall", {"query": "Nightjar"}),
        ("/v1/chat", {"message": "When does Nightjar launch?"}),
        ("/v1/decisions", {"memory_ids": [ids["ep1"]], "summary": "x"}),
        (f"/v1/conflicts/{conflict['id']}/resolve", {"chosen_value": "Friday"}),
        (f"/v1/decisions/{trace['id']}/outcome", {"quality": -1, "signal": "task_failed"}),
    ):
        assert (await bob.post(path, json={**as_alice, **body})).status_code == 404, path

    # With Alice's ids in hand, from Bob's own scope: unknown ids, nothing changes.
    resolve = await bob.post(
        f"/v1/conflicts/{conflict['id']}/resolve", json={"chosen_value": "Friday"}
    )
    assert resolve.status_code == 404
    for trace_id in (trace["id"], observed["id"]):
        assert (await bob.get(f"/v1/decisions/{trace_id}")).status_code == 404
        assert (await bob.get(f"/v1/decisions/{trace_id}/counterfactuals")).status_code == 404
        late = await bob.post(
            f"/v1/decisions/{trace_id}/outcome", json={"quality": -1, "signal": "task_failed"}
        )
        assert late.status_code == 404
    assert (await bob.get(f"/v1/memories/{ids['ep1']}/influence")).status_code == 404
    stolen = await bob.post(
        "/v1/decisions", json={"memory_ids": [ids["ep1"]], "summary": "Bob uses Alice's memory"}
    )
    assert stolen.status_code == 404
    borrowed = await bob.post(
        "/v1/decisions",
        json={"memory_ids": [ids["ep1"]], "summary": "x", "retrieval_id": recalled["retrieval_id"]},
    )
    assert borrowed.status_code == 404

    # Searching and listing from Bob's scope finds nothing of Alice's.
    search = (await bob.post("/v1/recall", json={"query": "Nightjar launch deploy key"})).json()
    assert search["results"] == []
    chat = (await bob.post("/v1/chat", json={"message": "When does Nightjar launch?"})).json()
    assert chat["facts"] == [] and chat["conflicts_detected"] == [] and chat["memories"] == []
    assert (await bob.get("/v1/conflicts")).json()["items"] == []
    assert (await bob.get("/v1/review_flags")).json()["items"] == []
    assert (await bob.get("/v1/decisions")).json()["items"] == []
    bob_events = (await bob.get("/v1/events")).json()["items"]  # his own searches only
    assert {e["user_id"] for e in bob_events} <= {"bob"}
    assert not any(i in json.dumps(bob_events) for i in [*ids.values(), trace["id"]])
    history = await bob.get("/v1/facts/history", params=gai)
    assert history.json()["items"] == [] and history.json()["conflicts_detected"] == []

    # Alice's memory, decisions and events are exactly as they were.
    assert (await alice.get("/v1/export")).content == alice_export
    after = (await alice.get("/v1/events", params={"limit": 1000})).json()["items"]
    assert [e["id"] for e in after] == [e["id"] for e in alice_events]
    assert (await alice.get(f"/v1/decisions/{trace['id']}")).json()["outcome_observed"] is False
    still = (await alice.get("/v1/conflicts", params={"status": "pending"})).json()["items"]
    assert [c["id"] for c in still] == [conflict["id"]]


def _one_fact(fact_id: str, subject: str, predicate: str, object_: str) -> bytes:
    """A one-record export carrying a fact under an id of the sender's choosing."""
    record = {
        "kind": "semantic",
        "id": fact_id,
        "user_id": "bob",
        "content": f"{subject} {predicate} {object_}",
        "created_at": 1_700_000_000.0,
        "subject": subject,
        "predicate": predicate,
        "object": object_,
    }
    lines = [{"type": "header", "format": "ucma-jsonl", "version": 1}]
    lines.append({"type": "memory", "record": record})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


async def test_an_import_is_no_oracle_for_another_tenants_ids(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    fact = {"subject": "alice", "predicate": "lives in", "object": "Lisbon"}
    held = (await alice.post("/v1/facts", json=fact)).json()["fact"]["id"]
    free = fact_id_for(Scope("alice"), "alice", "works at", "Acme")  # computed, not held yet
    ndjson = {"content-type": "application/x-ndjson"}

    answers = []
    for guess, triple in (
        (held, ("alice", "lives in", "Lisbon")),
        (free, ("alice", "works at", "Acme")),
    ):
        response = await bob.post("/v1/import", content=_one_fact(guess, *triple), headers=ndjson)
        answers.append((response.status_code, response.json()))
        assert (await bob.get(f"/v1/memories/{guess}")).status_code == 404
    assert (
        answers[0]
        == answers[1]
        == (
            200,
            {"lines": 2, "records": 1, "imported": 1, "skipped": 0, "edges": 0, "vault_entries": 0},
        )
    )
    # A bad line is refused the same way whoever holds the id it names.
    broken = [_one_fact(guess, "x", "y", "z")[:-20] + b"\n" for guess in (held, free)]
    refusals = [await bob.post("/v1/import", content=body, headers=ndjson) for body in broken]
    assert refusals[0].status_code == refusals[1].status_code == 422
    assert error_of(refusals[0])["code"] == error_of(refusals[1])["code"]

    # Alice's next assert takes the id Bob guessed, and her sleep cycle runs.
    asserted = await alice.post(
        "/v1/facts", json={"subject": "alice", "predicate": "works at", "object": "Acme"}
    )
    assert asserted.status_code == 201 and asserted.json()["fact"]["id"] == free
    slept = await alice.post("/v1/sleep", json={})
    assert slept.status_code == 200, slept.text


async def test_stats_show_a_tenant_nothing_of_the_others(
    keyed: KeyedClient, local: httpx.AsyncClient, engine: AsyncMemory
) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    await bob.post("/v1/observe", json={"content": "Bob keeps his notes in a red binder."})
    question = {"query": "where does Bob keep his notes?"}
    await bob.post("/v1/remember", json=question)
    before = (await bob.get("/v1/stats")).json()
    assert "process" not in before and set(before["embedder"]) == {"model", "dimension"}

    # Alice writes and asks Bob's exact question, and others: Bob's view does not move.
    for i in range(3):
        await alice.post("/v1/observe", json={"content": f"Alice's note number {i} on tea."})
    await alice.post("/v1/remember", json=question)
    await alice.post("/v1/remember", json={"query": "what did Alice note about tea?"})
    assert (await bob.get("/v1/stats")).json() == before

    # The operator (local mode, no key) sees the process-wide counters.
    local_stats = (await local.get("/v1/stats", params={"user_id": "bob"})).json()
    cache = local_stats["process"]["embedding_cache"]
    assert cache["hits"] + cache["store_hits"] >= 1
    assert local_stats["process"]["sensory_buffer"]["total_ingested"] >= 4
    # A key sent in local mode is held to its scope and sees no process counters either.
    _, token = await engine.create_key("alice")
    keyed_local = await local.get("/v1/stats", headers={"authorization": f"Bearer {token}"})
    assert keyed_local.status_code == 200 and "process" not in keyed_local.json()
