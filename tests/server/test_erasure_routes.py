"""Erasure and backup over the real app: a key forgets a person in its own scope only,
or its whole scope; the backup is streamed in local mode and hidden from every key."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest
from tests.server.conftest import KeyedClient, error_of

from ucma.engine import AsyncMemory

pytestmark = pytest.mark.anyio

EMAIL = "omar.haddad@example.net"


async def test_a_key_forgets_a_person_in_its_own_scope_only(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    for client in (alice, bob):
        for text in (f"Omar Haddad's email is {EMAIL}", "Omar Haddad plays the oud."):
            assert (await client.post("/v1/observe", json={"content": text})).status_code == 201
    kept = await alice.post("/v1/observe", json={"content": "Lena bakes rye bread on Fridays."})

    erased = await alice.post("/v1/erase", json={"identifiers": ["Omar Haddad", EMAIL]})

    assert erased.status_code == 200, erased.text
    body = erased.json()
    assert body["target"] == "person" and body["counts"]["episodic"] == 2
    assert body["counts"]["vault_entries"] == 1 and body["checkpointed"] and body["vacuumed"]
    left = (await alice.get("/v1/memories")).json()["items"]
    assert [m["id"] for m in left] == [kept.json()["id"]]
    theirs = (await bob.get("/v1/memories")).json()["items"]
    assert len(theirs) >= 2 and all("Omar" in m["content"] for m in theirs)
    # Naming another user's scope is answered as for anything not found.
    other = await alice.post("/v1/erase", json={"user_id": "bob", "identifiers": ["Omar"]})
    assert other.status_code == 404 and error_of(other)["code"] == "not_found"


async def test_bad_identifiers_are_422(keyed: KeyedClient) -> None:
    alice = await keyed("alice")
    for body in ({"identifiers": []}, {"identifiers": ["x"]}, {"identifiers": "Omar"}, {}):
        response = await alice.post("/v1/erase", json=body)
        assert response.status_code == 422, body
        assert error_of(response)["code"] == "validation_error"


async def test_a_key_erases_its_whole_scope_with_confirmation(keyed: KeyedClient) -> None:
    alice, bob = await keyed("alice"), await keyed("bob")
    await alice.post("/v1/observe", json={"content": "Alice's locker code is kept offline."})
    await bob.post("/v1/observe", json={"content": "Bob's bike is the green one."})
    bobs = (await bob.get("/v1/memories")).json()["items"]
    unconfirmed = await alice.post("/v1/erase/scope", json={"confirm": False})
    assert unconfirmed.status_code == 422
    assert (await alice.get("/v1/memories")).json()["items"]

    erased = await alice.post("/v1/erase/scope", json={"confirm": True})

    assert erased.status_code == 200 and erased.json()["target"] == "scope"
    assert (await alice.get("/v1/memories")).json()["items"] == []
    assert (await bob.get("/v1/memories")).json()["items"] == bobs
    # The key still works: the scope can be written again.
    assert (await alice.post("/v1/observe", json={"content": "A new note."})).status_code == 201


async def test_the_backup_streams_in_local_mode_and_is_hidden_from_keys(
    local: httpx.AsyncClient, keyed: KeyedClient, engine: AsyncMemory, tmp_path: Path
) -> None:
    await local.post("/v1/observe", json={"user_id": "u", "content": "The ferry leaves at 7."})
    response = await local.get("/v1/backup")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.sqlite3"
    copy = tmp_path / "downloaded.db"
    copy.write_bytes(response.content)
    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        contents = [r[0] for r in conn.execute("SELECT content FROM memories")]
    finally:
        conn.close()
    assert contents == ["The ferry leaves at 7."]

    alice = await keyed("alice")
    hidden = await alice.get("/v1/backup")
    unknown = await alice.get("/v1/no-such-route")
    assert hidden.status_code == unknown.status_code == 404
    assert error_of(hidden)["code"] == error_of(unknown)["code"] == "not_found"
