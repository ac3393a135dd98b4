"""Every /v1 endpoint over the ASGI transport in local mode: the happy path and its errors
(bad JSON, wrong types, oversized bodies, unknown ids)."""

from __future__ import annotations

import json

import httpx
import pytest

from .conftest import MAX_BODY, MAX_IMPORT, error_of

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

A = {"user_id": "alice"}

NOTES = [
    "The billing service deploy key rotates every 90 days.",
    "Deploys are frozen on Fridays after the outage in March.",
    "Alice moved the staging database to port 5433 for the upgrade.",
    "The design review for the search service is on Thursday at 10.",
    "Bob's team owns the payments API and its on-call rotation.",
]


async def observe_all(client: httpx.AsyncClient, notes: list[str] = NOTES) -> list[str]:
    response = await client.post(
        "/v1/observe/batch", json={**A, "items": [{"content": n} for n in notes]}
    )
    assert response.status_code == 201, response.text
    results = response.json()["results"]
    assert all(r["stored"] for r in results)
    return [r["id"] for r in results]


async def test_observe_single_and_batch(local: httpx.AsyncClient) -> None:
    single = await local.post(
        "/v1/observe",
        json={
            **A,
            "content": "Alice prefers dark mode in every editor.",
            "source": "user",
            "tags": ["preferences"],
            "participants": ["alice"],
            "provenance": "user_stated",
            "timestamp": 1_700_000_000,
        },
    )
    assert single.status_code == 201, single.text
    record = (await local.get(f"/v1/memories/{single.json()['id']}", params=A)).json()
    assert record["tags"] == ["preferences"] and record["timestamp"] == 1_700_000_000
    ids = await observe_all(local)
    assert len(set(ids)) == len(NOTES)


@pytest.mark.parametrize(
    "body",
    [
        {**A, "items": []},
        {**A, "items": "one"},
        {**A, "items": [{"content": 5}]},
        {**A, "items": [{"content": "x", "colour": "red"}]},
        {**A, "items": [{"content": "x", "provenance": "rumour"}]},
    ],
)
async def test_observe_batch_wrong_types(local: httpx.AsyncClient, body: object) -> None:
    response = await local.post("/v1/observe/batch", json=body)
    assert response.status_code == 422
    assert error_of(response)["code"] == "validation_error"


async def test_remember_with_filters(local: httpx.AsyncClient) -> None:
    await observe_all(local)
    response = await local.post(
        "/v1/remember",
        json={
            **A,
            "query": "when are deploys frozen",
            "limit": 2,
            "kinds": ["episodic"],
            "min_importance": 0.0,
            "include_graph_neighbors": False,
        },
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert 1 <= len(results) <= 2 and "Fridays" in results[0]["content"]
    for bad in (
        {"mode": "psychic"},
        {"kinds": ["dreams"]},
        {"min_importance": 2},
        {"limit": 10_000},
    ):
        response = await local.post("/v1/remember", json={**A, "query": "x", **bad})
        assert response.status_code == 422, (bad, response.text)


async def test_memories_are_listed_a_page_at_a_time(local: httpx.AsyncClient) -> None:
    episodes = await observe_all(local)
    # observe also stores the facts the notes assert, each linked to its episode.
    facts = (await local.get("/v1/memories", params={**A, "kind": "semantic"})).json()
    assert (facts["limit"], facts["offset"], facts["next_offset"]) == (100, 0, None)
    assert facts["items"] and all(f["kind"] == "semantic" for f in facts["items"])
    assert all(set(f["source_episode_ids"]) <= set(episodes) for f in facts["items"])
    listed = (await local.get("/v1/memories", params={**A, "kind": "episodic"})).json()
    assert sorted(m["id"] for m in listed["items"]) == sorted(episodes)
    # One batch: same created_at, then by id.
    ids = sorted(episodes + [f["id"] for f in facts["items"]])
    assert len(ids) > 2
    first = (await local.get("/v1/memories", params={**A, "limit": 2})).json()
    assert [m["id"] for m in first["items"]] == ids[:2]
    assert (first["limit"], first["offset"], first["next_offset"]) == (2, 0, 2)
    pages, offset = [], 0
    while offset is not None:
        page = (await local.get("/v1/memories", params={**A, "limit": 2, "offset": offset})).json()
        pages.extend(m["id"] for m in page["items"])
        offset = page["next_offset"]
    assert pages == ids
    none = (await local.get("/v1/memories", params={**A, "kind": "procedural"})).json()
    assert none == {"items": [], "limit": 100, "offset": 0, "next_offset": None, "total": 0}
    for params in (
        {"limit": 0},
        {"limit": 5000},
        {"offset": -1},
        {"kind": "dreams"},
        {"limit": "many"},
    ):
        response = await local.get("/v1/memories", params={**A, **params})
        assert response.status_code == 422, params
        assert error_of(response)["code"] == "validation_error"


async def test_get_and_delete_a_memory(local: httpx.AsyncClient) -> None:
    ids = await observe_all(local)
    got = await local.get(f"/v1/memories/{ids[0]}", params=A)
    assert got.status_code == 200 and got.json()["content"] == NOTES[0]
    assert got.json()["kind"] == "episodic"
    deleted = await local.delete(f"/v1/memories/{ids[0]}", params=A)
    assert deleted.status_code == 204 and deleted.content == b""
    for response in (
        await local.get(f"/v1/memories/{ids[0]}", params=A),
        await local.delete(f"/v1/memories/{ids[0]}", params=A),
        await local.get("/v1/memories/ep_does_not_exist", params=A),
    ):
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"


async def test_episodes_in_a_time_range(local: httpx.AsyncClient) -> None:
    await local.post("/v1/observe", json={**A, "content": NOTES[0], "timestamp": 1000.0})
    await local.post("/v1/observe", json={**A, "content": NOTES[1], "timestamp": 5000.0})
    page = (await local.get("/v1/episodes", params={**A, "start": 0, "end": 2000})).json()
    assert [e["content"] for e in page["items"]] == [NOTES[0]]
    assert page["next_offset"] is None
    both = (
        await local.get("/v1/episodes", params={**A, "start": 0, "end": 9e9, "limit": 1})
    ).json()
    assert len(both["items"]) == 1 and both["next_offset"] == 1
    bad = await local.get("/v1/episodes", params={**A, "start": 10, "end": 1})
    assert bad.status_code == 422
    missing = await local.get("/v1/episodes", params=A)
    assert missing.status_code == 422


async def test_facts_assert_lookup_and_traverse(local: httpx.AsyncClient) -> None:
    [episode] = await observe_all(local, NOTES[2:3])
    created = await local.post(
        "/v1/facts",
        json={
            **A,
            "subject": "staging database",
            "predicate": "listens on",
            "object": "port 5433",
            "source_episode_ids": [episode],
            "confidence": 0.7,
        },
    )
    assert created.status_code == 201, created.text
    report = created.json()
    assert report["conflicts_detected"] == [] and report["disambiguation_required"] is False
    assert report["response"] == "Noted: staging database listens on port 5433"
    fact = report["fact"]
    assert fact["kind"] == "semantic" and fact["source_episode_ids"] == [episode]
    again = await local.post(
        "/v1/facts",
        json={**A, "subject": "staging database", "predicate": "listens on", "object": "port 5433"},
    )
    assert again.json()["fact"]["id"] == fact["id"]
    assert again.json()["fact"]["reinforcement_count"] > fact["reinforcement_count"]
    await local.post(
        "/v1/facts", json={**A, "subject": "port 5433", "predicate": "serves", "object": "postgres"}
    )
    about = (await local.get("/v1/facts", params={**A, "entity": "Staging Database"})).json()
    assert [f["id"] for f in about["items"]] == [fact["id"]]
    walk = (
        await local.get("/v1/facts/traverse", params={**A, "entity": "staging database"})
    ).json()
    assert [f["object"] for f in walk["items"]] == ["port 5433", "postgres"]
    page = (
        await local.get(
            "/v1/facts/traverse", params={**A, "entity": "staging database", "limit": 1}
        )
    ).json()
    assert len(page["items"]) == 1 and page["next_offset"] == 1

    unknown = await local.post(
        "/v1/facts",
        json={**A, "subject": "a", "predicate": "b", "object": "c", "source_episode_ids": ["ep_x"]},
    )
    assert unknown.status_code == 404
    for bad in (
        {"confidence": 2},
        {"subject": ""},
        {"provenance": "rumour"},
        {"valid_from": 10, "valid_until": 1},
    ):
        body = {**A, "subject": "a", "predicate": "b", "object": "c", **bad}
        response = await local.post("/v1/facts", json=body)
        assert response.status_code == 422, (bad, response.text)
    assert (await local.get("/v1/facts", params=A)).status_code == 422  # entity is required


async def test_procedures_add_outcome_find(local: httpx.AsyncClient) -> None:
    created = await local.post(
        "/v1/procedures",
        json={
            **A,
            "name": "Rotate the deploy key",
            "description": "Rotate the billing key",
            "steps": [
                {"description": "generate"},
                {"description": "update CI", "action_type": "tool_call"},
            ],
            "trigger_tags": ["Deploy"],
            "status": "active",
        },
    )
    assert created.status_code == 201, created.text
    procedure = created.json()
    assert [s["description"] for s in procedure["steps"]] == ["generate", "update CI"]
    outcome = await local.post(
        f"/v1/procedures/{procedure['id']}/outcome", json={**A, "success": True}
    )
    assert outcome.status_code == 200 and outcome.json()["execution_count"] == 1
    found = (await local.get("/v1/procedures", params={**A, "tags": ["deploy"]})).json()
    assert [p["id"] for p in found["items"]] == [procedure["id"]]

    [episode] = await observe_all(local, NOTES[:1])
    for target in ("proc_unknown", episode):  # an episode is not a procedure
        response = await local.post(f"/v1/procedures/{target}/outcome", json={**A, "success": True})
        assert response.status_code == 404
    assert (
        await local.post(
            f"/v1/procedures/{procedure['id']}/outcome", json={**A, "success": "yes please"}
        )
    ).status_code == 422
    assert (await local.get("/v1/procedures", params=A)).status_code == 422  # tags required
    assert (
        await local.post(
            "/v1/procedures", json={**A, "name": "x", "description": "y", "status": "forgotten"}
        )
    ).status_code == 422


async def test_learn_validate_find(local: httpx.AsyncClient) -> None:
    [episode] = await observe_all(local, NOTES[1:2])
    created = await local.post(
        "/v1/learn",
        json={
            **A,
            "insight": "Check the freeze calendar before deploying.",
            "learning_type": "failure_analysis",
            "evidence_ids": [episode],
            "applicability": ["deploy"],
            "confidence": 0.6,
        },
    )
    assert created.status_code == 201, created.text
    learning = created.json()
    validated = await local.post(
        f"/v1/learnings/{learning['id']}/validate", json={**A, "success": True}
    )
    assert validated.status_code == 200
    assert validated.json()["confidence"] == pytest.approx(0.7)
    found = (await local.get("/v1/learnings", params={**A, "tags": ["deploy"]})).json()
    assert [lr["id"] for lr in found["items"]] == [learning["id"]]

    assert (
        await local.post("/v1/learn", json={**A, "insight": "x", "evidence_ids": ["ep_nope"]})
    ).status_code == 404
    assert (
        await local.post("/v1/learn", json={**A, "insight": "x", "learning_type": "vibes"})
    ).status_code == 422
    assert (
        await local.post("/v1/learnings/lrn_nope/validate", json={**A, "success": False})
    ).status_code == 404


async def test_graph_link_related_importance(local: httpx.AsyncClient) -> None:
    ids = await observe_all(local, NOTES[:3])
    linked = await local.post(
        "/v1/links",
        json={
            **A,
            "source_id": ids[0],
            "target_id": ids[2],
            "edge_type": "explains",
            "weight": 0.9,
        },
    )
    assert linked.status_code == 201, linked.text
    assert linked.json()["edge_type"] == "explains"
    related = (
        await local.get(f"/v1/memories/{ids[0]}/related", params={**A, "edge_types": ["explains"]})
    ).json()
    assert [(r["memory"]["id"], r["hops"]) for r in related["results"]] == [(ids[2], 1)]
    # Every memory is a node: the three notes and the facts observe read from them.
    stored = (await local.get("/v1/memories", params=A)).json()["items"]
    assert {m["kind"] for m in stored} == {"episodic", "semantic"} and len(stored) > 3
    importance = await local.post("/v1/graph/importance", json=A)
    assert importance.status_code == 200 and importance.json()["nodes"] == len(stored)

    assert (await local.get("/v1/memories/ep_nope/related", params=A)).status_code == 404
    assert (
        await local.post(
            "/v1/links", json={**A, "source_id": ids[0], "target_id": "ep_nope", "edge_type": "x"}
        )
    ).status_code == 404
    assert (
        await local.post(
            "/v1/links",
            json={**A, "source_id": ids[0], "target_id": ids[1], "edge_type": "x", "weight": 7},
        )
    ).status_code == 422


async def test_sessions_and_context(local: httpx.AsyncClient) -> None:
    current = (await local.get("/v1/sessions/current", params=A)).json()["session_id"]
    created = await local.post("/v1/sessions", json=A)
    assert created.status_code == 201
    new = created.json()["session_id"]
    assert new != current
    assert (await local.get("/v1/sessions/current", params=A)).json()["session_id"] == new
    await observe_all(local, NOTES[:2])
    await local.post("/v1/remember", json={**A, "query": "deploy key"})
    context = (await local.get("/v1/context", params=A)).json()["context"]
    assert "deploy key" in context
    assert (await local.post("/v1/sessions")).status_code == 422  # no key, no user: no scope


async def test_health_and_stats(local: httpx.AsyncClient) -> None:
    health = (await local.get("/v1/health")).json()
    assert health["status"] == "ok" and health["auth"] == "local" and health["database"]
    await observe_all(local, NOTES[:2])
    stats = (await local.get("/v1/stats", params=A)).json()
    assert stats["memories"]["episodic"] == 2 and stats["user_id"] == "alice"


async def test_export_then_import_over_http(
    local: httpx.AsyncClient, tmp_path, local_embedder
) -> None:
    from ucma.engine import AsyncMemory
    from ucma.server import create_app

    ids = await observe_all(local)
    await local.post("/v1/facts", json={**A, "subject": "a", "predicate": "b", "object": "c"})
    # The notes, the facts observe read from them and the asserted fact.
    stored = (await local.get("/v1/memories", params=A)).json()["items"]
    read = [m for m in stored if m["id"] not in ids and m["subject"] != "a"]
    assert read and all(set(m["source_episode_ids"]) <= set(ids) for m in read)
    count = len(ids) + len(read) + 1
    assert len(stored) == count
    exported = await local.get("/v1/export", params=A)
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = exported.text.splitlines()
    assert json.loads(lines[0])["type"] == "header"
    assert sum(json.loads(x)["type"] == "memory" for x in lines) == count

    # The same scope already holds every record: nothing new, nothing duplicated.
    same = await local.post(
        "/v1/import",
        params=A,
        content=exported.content,
        headers={"content-type": "application/x-ndjson"},
    )
    assert same.status_code == 200, same.text
    assert (same.json()["imported"], same.json()["skipped"]) == (0, count)

    async with AsyncMemory(tmp_path / "copy.db", embedder=local_embedder) as other:
        app = create_app(other, mcp=False)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://copy.test"
        ) as copy:

            async def chunks():
                for start in range(0, len(exported.content), 1000):
                    yield exported.content[start : start + 1000]

            imported = await copy.post(
                "/v1/import",
                params=A,
                content=chunks(),
                headers={"content-type": "application/x-ndjson"},
            )
            assert imported.status_code == 200, imported.text
            assert imported.json()["imported"] == count
            again = await copy.get("/v1/export", params=A)
            assert again.content == exported.content


async def test_import_errors(local: httpx.AsyncClient) -> None:
    header = b'{"type": "header", "format": "ucma-jsonl", "version": 1}\n'
    ndjson = {"content-type": "application/x-ndjson"}
    wrong_type = await local.post(
        "/v1/import", params=A, content=header, headers={"content-type": "text/csv"}
    )
    assert wrong_type.status_code == 415
    assert error_of(wrong_type)["code"] == "unsupported_media_type"
    bad_line = await local.post("/v1/import", params=A, content=header + b"{oops\n", headers=ndjson)
    assert bad_line.status_code == 422
    assert "request body:2" in error_of(bad_line)["message"]
    empty = await local.post("/v1/import", params=A, content=b"", headers=ndjson)
    assert empty.status_code == 422
    too_big = await local.post(
        "/v1/import", params=A, content=header * (MAX_IMPORT // len(header) + 1), headers=ndjson
    )
    assert too_big.status_code == 413
    assert error_of(too_big)["code"] == "payload_too_large"
    # The import limit is the import route's own: other routes keep the small one.
    assert MAX_IMPORT > MAX_BODY
    no_scope = await local.post("/v1/import", content=header, headers=ndjson)
    assert no_scope.status_code == 422 and error_of(no_scope)["code"] == "missing_scope"


POSTS = [
    "/v1/observe",
    "/v1/observe/batch",
    "/v1/remember",
    "/v1/facts",
    "/v1/procedures",
    "/v1/procedures/proc_x/outcome",
    "/v1/learn",
    "/v1/learnings/lrn_x/validate",
    "/v1/links",
    "/v1/graph/importance",
    "/v1/sessions",
    "/v1/recall",
    "/v1/chat",
    "/v1/conflicts/cfl_x/resolve",
    "/v1/decisions",
    "/v1/decisions/trc_x/outcome",
]


@pytest.mark.parametrize("path", POSTS)
async def test_every_post_refuses_bad_json_unknown_fields_and_big_bodies(
    local: httpx.AsyncClient, path: str
) -> None:
    headers = {"content-type": "application/json"}
    bad = await local.post(path, content=b'{"user_id": "alice", ', headers=headers)
    assert bad.status_code == 400 and error_of(bad)["code"] == "malformed_json"
    unknown = await local.post(path, json={**A, "colour": "red"})
    assert unknown.status_code == 422 and error_of(unknown)["code"] == "validation_error"
    not_object = await local.post(path, json=["alice"])
    assert not_object.status_code == 422
    big = await local.post(
        path, content=json.dumps({**A, "x": "y" * MAX_BODY}).encode(), headers=headers
    )
    assert big.status_code == 413 and error_of(big)["code"] == "payload_too_large"


async def test_unknown_routes_and_methods_are_json(local: httpx.AsyncClient) -> None:
    missing = await local.get("/v1/nothing")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    wrong = await local.put("/v1/observe", json=A)
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "method_not_allowed"


async def test_openapi_documents_every_route_with_examples(local: httpx.AsyncClient) -> None:
    schema = (await local.get("/openapi.json")).json()
    expected = {
        "/v1/health",
        "/v1/stats",
        "/v1/observe",
        "/v1/observe/batch",
        "/v1/remember",
        "/v1/memories",
        "/v1/memories/{memory_id}",
        "/v1/episodes",
        "/v1/facts",
        "/v1/facts/traverse",
        "/v1/procedures",
        "/v1/procedures/{procedure_id}/outcome",
        "/v1/learn",
        "/v1/learnings",
        "/v1/learnings/{learning_id}/validate",
        "/v1/memories/{memory_id}/related",
        "/v1/links",
        "/v1/graph/importance",
        "/v1/sessions",
        "/v1/sessions/current",
        "/v1/context",
        "/v1/export",
        "/v1/import",
        "/v1/recall",
        "/v1/facts/history",
        "/v1/conflicts",
        "/v1/conflicts/{conflict_id}/resolve",
        "/v1/review_flags",
        "/v1/chat",
        "/v1/decisions",
        "/v1/decisions/{decision_id}",
        "/v1/decisions/{decision_id}/outcome",
        "/v1/decisions/{decision_id}/counterfactuals",
        "/v1/memories/{memory_id}/influence",
        "/v1/events",
    }
    assert expected <= set(schema["paths"])
    bodies = schema["components"]["schemas"]
    for name in (
        "ObserveRequest",
        "RememberRequest",
        "AssertFactRequest",
        "LearnRequest",
        "AddProcedureRequest",
        "LinkRequest",
        "RecallRequest",
        "ResolveConflictRequest",
        "ChatRequest",
        "DecideRequest",
        "DecisionOutcomeRequest",
    ):
        assert bodies[name].get("examples"), name
    assert (await local.get("/docs")).status_code == 200
